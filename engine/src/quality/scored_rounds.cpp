// The per-input steps of quality-aware generation (quality/scored_rounds.h): screening a round
// (invalid text, lost spans, no_copy / distinct), scoring it, deciding on another round, the final selection.
#include "quality/scored_rounds.h"

#include <algorithm>

#include "quality/candidate_filters.h"
#include "spans/sentinel_guard.h"
#include "spans/span_restore.h"
#include "t5s/candidate_scores.h"
#include "t5s/error.h"
#include "t5s/quality.h"
#include "t5s/text_offsets.h"
#include "text/text_normalize.h"

namespace t5s {
namespace {

constexpr const char* kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

size_t replacement_chars(const std::string& text) {
    size_t n = 0;
    for (size_t at = text.find(kReplacementChar); at != std::string::npos; at = text.find(kReplacementChar, at + 3)) ++n;
    return n;
}

// A decoded text that is not text: byte-fallback pieces that formed no character decode to U+FFFD
// (or, from a decoder that passes bytes through, to invalid UTF-8). A U+FFFD the source itself
// holds may be copied: only more of them than the source has is broken.
bool is_broken_text(const std::string& text, const std::string& source) {
    return !is_valid_utf8(text) || replacement_chars(text) > replacement_chars(source);
}

bool filters_active(const GenerationOptions& o) {
    return o.no_copy || o.distinct || o.min_similarity || o.max_similarity || o.min_change || o.max_change || o.min_back_score ||
           o.near_duplicate;
}

// Whether a candidate under `o` gets the model-based score `key` (BackScore or Similarity):
// always by default; with model_scores off only where a filter or the ranking reads it.
bool wants_model_score(const GenerationOptions& o, RankBy key, bool has_embedder) {
    if (o.model_scores || effective_rank(o.rank, has_embedder) == key) return true;
    return key == RankBy::BackScore ? o.min_back_score.has_value() : o.min_similarity || o.max_similarity;
}

// The inputs of the round whose source wants embedding and has none yet, each once.
std::vector<InputRounds*> unembedded_sources(std::vector<RoundCandidates>* round) {
    std::vector<InputRounds*> out;
    for (auto& r : *round) {
        if (wants_model_score(*r.options, RankBy::Similarity, true) && r.input->source_embedding.empty() &&
            std::find(out.begin(), out.end(), r.input) == out.end())
            out.push_back(r.input);
    }
    return out;
}

// Similarity of each candidate of the round whose settings want it. One embedding call takes the
// sources not embedded yet and the candidates whose encoding their input has not scored yet; the
// rest reuse their input's score.
void add_similarities(const Embedder& embedder, std::vector<RoundCandidates>* round) {
    std::vector<std::string> candidate_texts;
    for (const auto& r : *round) {
        if (!wants_model_score(*r.options, RankBy::Similarity, true)) continue;
        for (const auto& c : r.candidates) candidate_texts.push_back(c.text);
    }
    if (candidate_texts.empty()) return;
    const std::vector<std::vector<int>> keys = embedder.token_ids(candidate_texts);
    const std::vector<InputRounds*> sources = unembedded_sources(round);
    std::vector<std::string> texts;  // the sources, then the candidates to embed
    for (const InputRounds* input : sources) texts.push_back(input->source);
    std::set<std::pair<InputRounds*, std::vector<int>>> queued;
    std::vector<std::pair<InputRounds*, const std::vector<int>*>> missing;  // per candidate text embedded
    size_t k = 0;
    for (auto& r : *round) {
        if (!wants_model_score(*r.options, RankBy::Similarity, true)) continue;
        for (const auto& c : r.candidates) {
            const std::vector<int>& key = keys[k++];
            if (r.input->similarity_of.count(key) || !queued.insert({r.input, key}).second) continue;
            texts.push_back(c.text);
            missing.push_back({r.input, &key});
        }
    }
    std::vector<std::vector<float>> embeddings = missing.empty() ? std::vector<std::vector<float>>() : embedder.embed(texts);
    for (size_t s = 0; s < sources.size() && !embeddings.empty(); ++s) sources[s]->source_embedding = std::move(embeddings[s]);
    for (size_t m = 0; m < missing.size(); ++m) {
        InputRounds* input = missing[m].first;
        input->similarity_of[*missing[m].second] = cosine_similarity(embeddings[sources.size() + m], input->source_embedding);
    }
    k = 0;
    for (auto& r : *round) {
        if (!wants_model_score(*r.options, RankBy::Similarity, true)) continue;
        for (auto& c : r.candidates) c.scores.similarity = r.input->similarity_of.at(keys[k++]);
    }
}

// back_score of each candidate of the round whose settings want it: the mean log-prob of its
// input's source given task prefix + candidate, computed (t5s/candidate_scores.h's passes) for the
// encodings the input has not scored yet, the rest reused.
void add_back_scores(const Model& model, bool has_embedder, std::vector<RoundCandidates>* round, int rows_per_pass) {
    const Tokenizer& tok = model.tokenizer();
    std::vector<std::vector<int>> keys;
    std::set<std::pair<InputRounds*, std::vector<int>>> queued;
    std::map<const InputRounds*, std::vector<int>> source_ids;  // each source encoded once
    IdBatch inputs, labels;
    std::vector<std::pair<InputRounds*, size_t>> owners;  // (input, key index) per row of inputs
    for (auto& r : *round) {
        if (!wants_model_score(*r.options, RankBy::BackScore, has_embedder)) continue;
        for (const auto& c : r.candidates) {
            keys.push_back(tok.encode(r.options->task_prefix + c.text));
            if (r.input->back_score_of.count(keys.back()) || !queued.insert({r.input, keys.back()}).second) continue;
            auto source = source_ids.find(r.input);
            if (source == source_ids.end()) source = source_ids.emplace(r.input, tok.encode(r.input->source)).first;
            inputs.push_back(keys.back());
            labels.push_back(source->second);
            owners.push_back({r.input, keys.size() - 1});
        }
    }
    const std::vector<double> scores = mean_log_probs_in_passes(model, inputs, labels, rows_per_pass);
    for (size_t i = 0; i < scores.size(); ++i) owners[i].first->back_score_of[keys[owners[i].second]] = scores[i];
    size_t k = 0;
    for (auto& r : *round) {
        if (!wants_model_score(*r.options, RankBy::BackScore, has_embedder)) continue;
        for (auto& c : r.candidates) c.scores.back_score = r.input->back_score_of.at(keys[k++]);
    }
}

}  // namespace

std::string plan_input(InputRounds* input, const std::string& text, const std::vector<Span>& spans, const GenerationOptions& o) {
    input->source = text;
    input->plan = spans::plan_spans(text, spans, o);
    return input->plan.masked;
}

std::vector<Span> source_spans(const InputRounds& input) {
    std::vector<Span> out;
    for (const auto& s : input.plan.spans) out.push_back(s.source);
    return out;
}

void decode_round(const Tokenizer& tok, const InputRounds& input, const GenerationOptions& o, std::vector<Candidate>* decoded) {
    if (!input.plan.active()) {
        for (auto& c : *decoded) c.text = tok.decode(c.ids, true);
        return;
    }
    const spans::SentinelRange range = spans::sentinel_range(tok);
    std::vector<int> required;
    for (const auto& s : input.plan.spans) required.push_back(spans::sentinel_id(tok, s.sentinel));
    for (auto& c : *decoded) {
        spans::RestoredText r = spans::restore_spans(input.plan, c.ids, tok);
        c.text = std::move(r.text);
        c.spans = std::move(r.spans);
        c.forced_spans = spans::count_forced(required, c.ids, o.max_new_tokens, range);
    }
}

int rounds_allowed(const GenerationOptions& o) { return (filters_active(o) && o.do_sample) ? o.max_rounds : 1; }

void require_scores_available(const GenerationOptions& o, const Embedder* embedder) {
    if (embedder) return;
    if (o.rank == RankBy::Similarity)
        throw Error(ErrorCode::InvalidArgument, "invalid generation setting: rank similarity needs an embedder");
    if (o.min_similarity || o.max_similarity)
        throw Error(ErrorCode::InvalidArgument, "invalid generation setting: min_similarity/max_similarity need an embedder");
}

std::vector<Candidate> screen_round(InputRounds* input, std::vector<Candidate> decoded, const GenerationOptions& o) {
    const std::string source = normalize_for_compare(input->source);
    std::vector<Candidate> fresh;
    for (auto& c : decoded) {
        const std::string key = normalize_for_compare(c.text);
        const bool kept =
            c.spans.size() == input->plan.spans.size() && spans::keeps_spans(input->source, c.text, input->plan.spans);
        if (o.drop_invalid_text && is_broken_text(c.text, input->source))
            input->dropped.push_back({std::move(c), {DropReason::InvalidText}});
        else if (!kept) input->dropped.push_back({std::move(c), {DropReason::LostSpan}});
        else if (o.no_copy && key == source) input->dropped.push_back({std::move(c), {DropReason::Copy}});
        else if (o.distinct && !input->seen.insert(key).second) input->dropped.push_back({std::move(c), {DropReason::Duplicate}});
        else fresh.push_back(std::move(c));
    }
    return fresh;
}

void score_round(const Model& model, const Embedder* embedder, std::vector<RoundCandidates>* round, int rows_per_pass) {
    add_back_scores(model, embedder != nullptr, round, rows_per_pass);
    if (embedder) add_similarities(*embedder, round);
    for (auto& r : *round) {
        for (auto& c : r.candidates) {
            c.scores.fluency = fluency_of(c, *r.options);
            c.scores.change = change_score(c.text, r.input->source);
            r.input->pool.push_back(std::move(c));
        }
        r.candidates.clear();
    }
}

bool needs_more(const InputRounds& input, const GenerationOptions& o, RankBy rank_key) {
    const size_t wanted = static_cast<size_t>(o.num_return_sequences);
    return select_candidates(input.pool, o, rank_key, wanted).kept.size() < wanted;
}

std::vector<Candidate> settled_candidates(const InputRounds& input, const GenerationOptions& o, RankBy rank_key) {
    if (rank_key != RankBy::None) return {};
    return select_candidates(input.pool, o, rank_key, static_cast<size_t>(o.num_return_sequences)).kept;
}

void finish_result(InputRounds input, const GenerationOptions& o, RankBy rank_key, GenerationResult* result) {
    CandidateSelection s = select_candidates(std::move(input.pool), o, rank_key, static_cast<size_t>(o.num_return_sequences));
    result->candidates = std::move(s.kept);
    result->dropped = std::move(input.dropped);
    for (auto& d : s.dropped) result->dropped.push_back(std::move(d));
    std::vector<std::string> kept_texts;
    for (const auto& c : result->candidates) kept_texts.push_back(c.text);
    result->diversity = diversity_score(kept_texts);
}

}  // namespace t5s
