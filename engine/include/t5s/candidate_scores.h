#pragma once
// Quality-aware generation: every candidate gets its scores (fluency, back_score, change and, with a
// sentence embedder, similarity), the filters of GenerationOptions drop the ones outside their
// bounds (kept in GenerationResult::dropped with the reason), and the rest are ranked.
//
// Ranking (GenerationOptions::rank): auto ranks by similarity when an embedder is given, else by
// back_score; similarity / back_score / fluency sort by that score, best first; none keeps
// the decoding order (beam order, or sampling order). Filters apply first, so the ranking is among
// the candidates inside the change / similarity / back_score window; then near_duplicate walks the
// ranked list and drops a candidate whose chrF with an already kept, better-ranked one is above it.
// With sampling, rounds are re-generated (up to max_rounds) until num_return_sequences candidates
// pass; without sampling a second round would repeat the first, so there is one.
#include <optional>
#include <string>
#include <vector>

#include "t5s/embedder.h"
#include "t5s/generation_options.h"
#include "t5s/model.h"

namespace t5s {

// texts: sources without the task prefix (options.task_prefix is prepended to each). embedder may be
// null: similarity stays empty and a similarity filter or rank is an InvalidArgument error.
std::vector<GenerationResult> generate_scored(const Model& model, const Embedder* embedder, const std::vector<std::string>& texts,
                                              const GenerationOptions& options, GenerationControl* control = nullptr);
// The same with protected spans given per text (t5s/spans.h; code points; empty: none for all,
// else one list per text); options.protect / protect_regex add the detected ones.
std::vector<GenerationResult> generate_scored(const Model& model, const Embedder* embedder, const std::vector<std::string>& texts,
                                              const std::vector<std::vector<Span>>& spans, const GenerationOptions& options,
                                              GenerationControl* control = nullptr);

// back_score of each (candidate, source) pair: the mean log-probability per token of the source
// given task_prefix + candidate, teacher-forced, in one batched pass (chunks of batch_size rows).
// An empty candidate or source gets -infinity.
std::vector<double> back_scores(const Model& model, const std::vector<std::string>& candidates,
                                const std::vector<std::string>& sources, const std::string& task_prefix, int batch_size = 64);
// The same over rows already encoded: Model::mean_log_probs in passes of up to rows_per_pass rows.
std::vector<double> mean_log_probs_in_passes(const Model& model, const IdBatch& inputs, const IdBatch& labels, int rows_per_pass);

// The ranking key GenerationOptions::rank selects: auto resolved (similarity with an embedder, else
// back_score); never Auto.
RankBy effective_rank(RankBy rank, bool has_embedder);

// Why the active score bounds of `o` drop `c` (printed "similarity<0.8", "change>0.9",
// "back_score<-2.5"), or nullopt when it passes them all; a bound on a score `c` lacks drops
// nothing. Front ends use it to show which candidates they already hold fall outside thresholds
// moved since they were generated.
std::optional<DropCause> filter_reason(const Candidate& c, const GenerationOptions& o);

// The order of `candidates` ranked by `key` (an effective_rank: Similarity, BackScore or Fluency),
// best first, as indices; stable, a candidate without that score last; None (or an unresolved
// Auto) keeps the order.
std::vector<size_t> rank_order(const std::vector<Candidate>& candidates, RankBy key);

}  // namespace t5s
