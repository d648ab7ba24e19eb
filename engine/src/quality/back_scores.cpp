// The model-side scores of quality-aware generation (t5s/candidate_scores.h): back_score's batched
// teacher-forced passes. generate_scored itself runs through the scheduler (scheduler/scheduled_generation.cpp).
#include <algorithm>

#include "t5s/candidate_scores.h"
#include "t5s/error.h"

namespace t5s {

std::vector<double> Model::mean_log_probs(const IdBatch& input_ids, const IdBatch& labels) const {
    if (input_ids.size() != labels.size())
        throw Error(ErrorCode::InvalidArgument, "mean_log_probs: inputs and labels differ in rows");
    std::vector<double> out;
    for (size_t i = 0; i < input_ids.size(); ++i) out.push_back(-score({input_ids[i]}, {labels[i]}).loss);
    return out;
}

std::vector<double> mean_log_probs_in_passes(const Model& model, const IdBatch& inputs, const IdBatch& labels,
                                             int rows_per_pass) {
    if (inputs.size() != labels.size())
        throw Error(ErrorCode::InvalidArgument, "mean_log_probs_in_passes: inputs and labels differ in rows");
    std::vector<double> out;
    out.reserve(inputs.size());
    const size_t chunk = static_cast<size_t>(std::max(rows_per_pass, 1));
    for (size_t start = 0; start < inputs.size(); start += chunk) {
        const size_t end = std::min(inputs.size(), start + chunk);
        const auto scores = model.mean_log_probs(IdBatch(inputs.begin() + start, inputs.begin() + end),
                                                 IdBatch(labels.begin() + start, labels.begin() + end));
        out.insert(out.end(), scores.begin(), scores.end());
    }
    return out;
}

std::vector<double> back_scores(const Model& model, const std::vector<std::string>& candidates,
                                const std::vector<std::string>& sources, const std::string& task_prefix, int batch_size) {
    if (candidates.size() != sources.size())
        throw Error(ErrorCode::InvalidArgument, "back_scores: candidates and sources differ in count");
    const Tokenizer& tok = model.tokenizer();
    IdBatch inputs, labels;
    for (size_t i = 0; i < candidates.size(); ++i) {
        inputs.push_back(tok.encode(task_prefix + candidates[i]));
        labels.push_back(tok.encode(sources[i]));
    }
    return mean_log_probs_in_passes(model, inputs, labels, batch_size);
}

}  // namespace t5s
