// One served request's rounds through the steps of quality/scored_rounds.h (scheduler/request_rounds.h).
#include "scheduler/request_rounds.h"

#include <algorithm>

#include "t5s/candidate_scores.h"
#include "t5s/error.h"

namespace t5s::scheduler {

RequestRounds::RequestRounds(const std::vector<std::string>& texts, const std::vector<std::vector<Span>>& spans,
                             const GenerationOptions& options, const Embedder* embedder)
    : options_(options),
      has_embedder_(embedder != nullptr),
      rank_key_(effective_rank(options.rank, embedder != nullptr)),
      rounds_allowed_(rounds_allowed(options)),
      inputs_(texts.size()),
      streamed_(texts.size(), 0) {
    if (!spans.empty() && spans.size() != texts.size())
        throw Error(ErrorCode::InvalidArgument, "'spans' must have one list per text");
    for (size_t i = 0; i < texts.size(); ++i)
        plan_input(&inputs_[i], texts[i], spans.empty() ? std::vector<Span>() : spans[i], options);
}

bool RequestRounds::protects() const {
    return std::any_of(inputs_.begin(), inputs_.end(), [](const InputRounds& in) { return in.plan.active(); });
}

std::vector<RoundCandidates> RequestRounds::screen(std::vector<FinishedRound> rounds, std::vector<GenerationResult>* results) {
    std::vector<RoundCandidates> fresh;
    for (auto& r : rounds) {
        (*results)[r.input].rounds = r.round + 1;
        fresh.push_back({&inputs_[r.input], screen_round(&inputs_[r.input], std::move(r.candidates), options_), &options_});
        screened_.push_back({r.input, r.round});
    }
    return fresh;
}

RoundsOutcome RequestRounds::decide(std::vector<GenerationResult>* results) {
    RoundsOutcome out;
    for (const auto& [i, round] : screened_) {
        if (round + 1 < rounds_allowed_ && needs_more(inputs_[i], options_, rank_key_)) {
            const std::vector<Candidate> settled = settled_candidates(inputs_[i], options_, rank_key_);
            for (size_t k = streamed_[i]; k < settled.size(); ++k) out.settled.push_back({i, settled[k]});
            streamed_[i] = std::max(streamed_[i], settled.size());
            out.retries.push_back({i, round + 1});
            continue;
        }
        GenerationResult& result = (*results)[i];
        finish_result(std::move(inputs_[i]), options_, rank_key_, &result);
        for (size_t k = streamed_[i]; k < result.candidates.size(); ++k) out.settled.push_back({i, result.candidates[k]});
        streamed_[i] = result.candidates.size();
        out.finished.push_back(i);
    }
    screened_.clear();
    return out;
}

void RequestRounds::merge_live(const GenerationOptions& live) {
    options_ = merge_step_settings(options_, live);
    rank_key_ = effective_rank(options_.rank, has_embedder_);
}

}  // namespace t5s::scheduler
