// Quality-aware generation (t5s/candidate_scores.h): rounds of decoding over Model::generate_ids;
// each round's screening, scoring and the final selection are the steps of quality/scored_rounds.h.
#include <algorithm>

#include "quality/scored_rounds.h"
#include "t5s/candidate_scores.h"
#include "t5s/error.h"
#include "t5s/seed.h"

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

std::vector<GenerationResult> generate_scored(const Model& model, const Embedder* embedder, const std::vector<std::string>& texts,
                                              const GenerationOptions& options, GenerationControl* control) {
    return generate_scored(model, embedder, texts, {}, options, control);
}

std::vector<GenerationResult> generate_scored(const Model& model, const Embedder* embedder, const std::vector<std::string>& texts,
                                              const std::vector<std::vector<Span>>& spans, const GenerationOptions& options,
                                              GenerationControl* control) {
    validate_generation_options(options);
    require_scores_available(options, embedder);
    if (!spans.empty() && spans.size() != texts.size())
        throw Error(ErrorCode::InvalidArgument, "generate: spans must be given for every text or for none");
    const Tokenizer& tok = model.tokenizer();
    std::vector<GenerationResult> results(texts.size());
    std::vector<InputRounds> inputs(texts.size());
    GenerationOptions o = options;
    IdBatch ids;
    for (size_t i = 0; i < texts.size(); ++i) {
        const std::string masked = plan_input(&inputs[i], texts[i], spans.empty() ? std::vector<Span>() : spans[i], options);
        ids.push_back(tok.encode(options.task_prefix + masked));
        results[i].input = texts[i];
        results[i].spans = source_spans(inputs[i]);
        o.keep_sentinels = o.keep_sentinels || inputs[i].plan.active();
    }

    if (o.do_sample) o.seed = resolve_seed(o.seed);
    const int rounds = rounds_allowed(o);
    std::vector<size_t> pending(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) pending[i] = i;
    for (int round = 0; round < rounds && !pending.empty(); ++round) {
        GenerationOptions ro = o;
        if (round > 0) ro.seed = o.seed + round;  // deterministic: same seed -> same rounds
        IdBatch batch;
        for (size_t i : pending) batch.push_back(ids[i]);
        auto cands = model.generate_ids(batch, ro, control);
        if (control && control->live_settings) o = merge_step_settings(o, control->live_settings->get());
        std::vector<RoundCandidates> fresh;
        for (size_t k = 0; k < pending.size(); ++k) {
            const size_t i = pending[k];
            results[i].seed = o.do_sample ? o.seed : -1;
            results[i].rounds = round + 1;
            decode_round(tok, inputs[i], o, &cands[k]);
            fresh.push_back({&inputs[i], screen_round(&inputs[i], std::move(cands[k]), o), &o});
        }
        score_round(model, embedder, &fresh, std::max(1, o.batch_size) * std::max(1, o.num_return_sequences));
        std::vector<size_t> still;
        for (size_t i : pending) {
            if (needs_more(inputs[i], o, effective_rank(o.rank, embedder))) still.push_back(i);
        }
        pending = std::move(still);
    }
    for (size_t i = 0; i < texts.size(); ++i) finish_result(std::move(inputs[i]), o, effective_rank(o.rank, embedder), &results[i]);
    return results;
}

}  // namespace t5s
