// The model-side scores of quality-aware generation (t5s/candidate_scores.h): back_score's batched
// teacher-forced passes. generate_scored itself runs through the scheduler (scheduler/scheduled_generation.cpp).
#include <algorithm>

#include "t5s/candidate_scores.h"
#include "t5s/error.h"

namespace t5s {

std::vector<double> Model::mean_log_probs(const IdBatch& input_ids, const IdBatch& labels) const {
    if (input_ids.size() != labels.size()) throw Error(ErrorCode::InvalidArgument, "mean_log_probs: inputs and labels differ in rows");
    std::vector<double> out;
    for (size_t i = 0; i < input_ids.size(); ++i) out.push_back(-score({input_ids[i]}, {labels[i]}).loss);
    return out;
}

std::vector<double> back_scores(const Model& model, const std::vector<std::string>& candidates,
                                const std::vector<std::string>& sources, const std::string& task_prefix, int batch_size) {
    if (candidates.size() != sources.size()) throw Error(ErrorCode::InvalidArgument, "back_scores: candidates and sources differ in count");
    const Tokenizer& tok = model.tokenizer();
    std::vector<double> out;
    out.reserve(candidates.size());
    const size_t chunk = static_cast<size_t>(std::max(batch_size, 1));
    for (size_t start = 0; start < candidates.size(); start += chunk) {
        IdBatch inputs, labels;
        for (size_t i = start; i < std::min(candidates.size(), start + chunk); ++i) {
            inputs.push_back(tok.encode(task_prefix + candidates[i]));
            labels.push_back(tok.encode(sources[i]));
        }
        const auto scores = model.mean_log_probs(inputs, labels);
        out.insert(out.end(), scores.begin(), scores.end());
    }
    return out;
}

}  // namespace t5s
