// Quality-aware generation (t5s/candidate_scores.h): rounds of decoding, the candidates' scores,
// no_copy / distinct, then the score filters, ranking and near-duplicate selection.
#include <cmath>
#include <set>

#include "quality/candidate_filters.h"
#include "t5s/candidate_scores.h"
#include "t5s/error.h"
#include "t5s/quality.h"
#include "t5s/seed.h"
#include "text_normalize.h"

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

namespace {

void require_scores_available(const GenerationOptions& o, const Embedder* embedder) {
    if (embedder) return;
    if (o.rank == "similarity") throw Error(ErrorCode::InvalidArgument, "invalid generation setting: rank similarity needs an embedder");
    if (o.min_similarity || o.max_similarity)
        throw Error(ErrorCode::InvalidArgument, "invalid generation setting: min_similarity/max_similarity need an embedder");
}

bool filters_active(const GenerationOptions& o) {
    return o.no_copy || o.distinct || o.min_similarity || o.max_similarity || o.min_change || o.max_change || o.min_back_score ||
           o.near_duplicate;
}

// Scores every candidate of one round in place: change, back_score (one batched pass over all of
// them) and similarity (one embedding call).
struct NewCandidate {
    size_t input;
    Candidate candidate;
};

void score_round(const Model& model, const Embedder* embedder, const std::vector<std::string>& sources,
                 const std::vector<std::vector<float>>& source_embeddings, const GenerationOptions& o,
                 std::vector<NewCandidate>* fresh) {
    if (fresh->empty()) return;
    std::vector<std::string> texts, their_sources;
    for (const auto& f : *fresh) {
        texts.push_back(f.candidate.text);
        their_sources.push_back(sources[f.input]);
    }
    const int rows = std::max(1, o.batch_size) * std::max(1, o.num_return_sequences);
    const auto back = back_scores(model, texts, their_sources, o.task_prefix, rows);
    std::vector<std::vector<float>> embeddings;
    if (embedder) embeddings = embedder->embed(texts);
    for (size_t k = 0; k < fresh->size(); ++k) {
        Candidate& c = (*fresh)[k].candidate;
        c.fluency = fluency_of(c, o);
        c.back_score = back[k];
        c.change = change_score(c.text, their_sources[k]);
        if (embedder) c.similarity = cosine_similarity(embeddings[k], source_embeddings[(*fresh)[k].input]);
    }
}

}  // namespace

std::vector<GenerationResult> generate_scored(const Model& model, const Embedder* embedder, const std::vector<std::string>& texts,
                                              const GenerationOptions& options, GenerationControl* control) {
    validate_generation_options(options);
    require_scores_available(options, embedder);
    const Tokenizer& tok = model.tokenizer();
    IdBatch ids;
    for (const auto& t : texts) ids.push_back(tok.encode(options.task_prefix + t));
    std::vector<GenerationResult> results(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) results[i].input = texts[i];
    std::vector<std::vector<float>> source_embeddings;
    if (embedder && !texts.empty()) source_embeddings = embedder->embed(texts);

    GenerationOptions o = options;
    if (o.do_sample) o.seed = resolve_seed(o.seed);
    // Without sampling, re-running gives the same candidates: one round only.
    const int rounds = (filters_active(o) && o.do_sample) ? o.max_rounds : 1;
    const size_t wanted = static_cast<size_t>(o.num_return_sequences);
    std::vector<std::set<std::string>> seen(texts.size());
    std::vector<std::vector<Candidate>> pool(texts.size());
    std::vector<size_t> pending(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) pending[i] = i;
    for (int round = 0; round < rounds && !pending.empty(); ++round) {
        GenerationOptions ro = o;
        if (round > 0) ro.seed = o.seed + round;  // deterministic: same seed -> same rounds
        IdBatch batch;
        for (size_t i : pending) batch.push_back(ids[i]);
        auto cands = model.generate_ids(batch, ro, control);
        if (control && control->live_settings) o = merge_step_settings(o, control->live_settings->get());
        std::vector<NewCandidate> fresh;
        for (size_t k = 0; k < pending.size(); ++k) {
            const size_t i = pending[k];
            results[i].seed = o.do_sample ? o.seed : -1;
            results[i].rounds = round + 1;
            const std::string source = normalize_for_compare(texts[i]);
            for (auto& c : cands[k]) {
                c.text = tok.decode(c.ids, true);
                const std::string key = normalize_for_compare(c.text);
                if (o.no_copy && key == source) results[i].dropped.push_back({std::move(c), "copy"});
                else if (o.distinct && !seen[i].insert(key).second) results[i].dropped.push_back({std::move(c), "duplicate"});
                else fresh.push_back({i, std::move(c)});
            }
        }
        score_round(model, embedder, texts, source_embeddings, o, &fresh);
        for (auto& f : fresh) pool[f.input].push_back(std::move(f.candidate));
        std::vector<size_t> still;
        for (size_t i : pending) {
            if (select_candidates(pool[i], o, effective_rank(o.rank, embedder), wanted).kept.size() < wanted) still.push_back(i);
        }
        pending = std::move(still);
    }
    for (size_t i = 0; i < texts.size(); ++i) {
        CandidateSelection s = select_candidates(std::move(pool[i]), o, effective_rank(o.rank, embedder), wanted);
        GenerationResult& r = results[i];
        r.candidates = std::move(s.kept);
        for (auto& d : s.dropped) r.dropped.push_back(std::move(d));
        std::vector<std::string> kept_texts;
        for (const auto& c : r.candidates) kept_texts.push_back(c.text);
        r.diversity = diversity_score(kept_texts);
    }
    return results;
}

}  // namespace t5s
