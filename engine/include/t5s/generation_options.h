#pragma once
// Every knob of one generation request. Each field has a default and its neutral value in the
// comment; validate_generation_options() rejects bad combinations with a clear message.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "t5s/drop_reason.h"
#include "t5s/enum_names.h"
#include "t5s/route.h"
#include "t5s/score_names.h"
#include "t5s/spans.h"

namespace t5s {

// How candidates are ordered (GenerationOptions::rank; see t5s/candidate_scores.h): auto =
// similarity with an embedder, else back_score; none = the decoding order. The names are stored
// (settings JSON, history) and accepted by --rank and HTTP bodies.
enum class RankBy { Auto, Similarity, BackScore, Fluency, None };
template <>
struct EnumNames<RankBy> {
    static constexpr const char* kWhat = "rank";
    static constexpr EnumName<RankBy> kNames[] = {{RankBy::Auto, "auto"},
                                                  {RankBy::Similarity, "similarity"},
                                                  {RankBy::BackScore, "back_score"},
                                                  {RankBy::Fluency, "fluency"},
                                                  {RankBy::None, "none"}};
};

// Lists of token ids (bad_words_ids): [[12, 7], [9]].
using TokenIdLists = std::vector<std::vector<int>>;
// Token ids (suppress_tokens): [12, 7].
using TokenIds = std::vector<int>;
// transformers' sequence_bias, one entry per sequence: the bias goes to the sequence's last token
// where a row ends with the rest of it. JSON [[[12, 7], -2.0], [[9], 1.5]].
struct SequenceBiasEntry {
    std::vector<int> ids;
    float bias = 0.0f;
    bool operator==(const SequenceBiasEntry& o) const { return ids == o.ids && bias == o.bias; }
};
using SequenceBias = std::vector<SequenceBiasEntry>;
// transformers' exponential_decay_length_penalty: from start_index on, </s> gains exponentially.
// JSON [start_index, decay_factor].
struct LengthDecay {
    int start_index = 0;
    double decay_factor = 1.0;  // a Python float in transformers: a double, so that its powers match
    bool operator==(const LengthDecay& o) const { return start_index == o.start_index && decay_factor == o.decay_factor; }
};
// One force_words_ids constraint: phrasal (one phrase, JSON [1, 2]) or disjunctive (any one of its
// phrases, JSON [[1, 2], [4]]), as transformers builds PhrasalConstraint / DisjunctiveConstraint.
struct ForcedWordsConstraint {
    TokenIdLists alternatives;
    bool disjunctive = false;
    bool operator==(const ForcedWordsConstraint& o) const {
        return alternatives == o.alternatives && disjunctive == o.disjunctive;
    }
};
using ForcedWords = std::vector<ForcedWordsConstraint>;

struct GenerationOptions {
    int max_new_tokens = 64;       // hard cap on generated tokens (>= 1)
    int min_new_tokens = 0;        // </s> is forbidden before this many tokens (neutral 0)
    int num_beams = 1;             // 1 = greedy / plain sampling; > 1 = beam search
    float length_penalty = 1.0f;   // beam scores = logprob / length^length_penalty (neutral 1.0)
    bool early_stopping = false;   // beam: stop as soon as num_beams hypotheses are done (HF semantics)
    int num_return_sequences = 1;  // candidates per input (<= num_beams without sampling)
    // Group (diverse) beam search, transformers' num_beam_groups / diversity_penalty: the beams split
    // into groups searched one after another at each step, each group's scores lowered by
    // diversity_penalty per earlier group that picked the same token at this step (Hamming diversity).
    int num_beam_groups = 1;          // groups of num_beams / num_beam_groups beams (1 = plain beam search)
    float diversity_penalty = 0.0f;   // per earlier group's pick of a token (> 0 with groups; 0 = off)
    bool do_sample = false;           // sample instead of argmax
    float temperature = 1.0f;         // logits / temperature when sampling (neutral 1.0, must be > 0)
    int top_k = 0;                    // keep the k most likely tokens when sampling (0 = off)
    float top_p = 1.0f;               // nucleus: smallest set with mass >= top_p (1.0 = off; in (0, 1])
    float repetition_penalty = 1.0f;  // HF CTRL penalty on tokens already generated (neutral 1.0, > 0)
    int no_repeat_ngram_size = 0;     // forbid repeating any n-gram of this size (0 = off)
    // More of transformers' logits processors, under its names and with its semantics
    // (decode/logits_processors.h; docs/generation-controls.md):
    int encoder_no_repeat_ngram_size = 0;     // forbid any n-gram of this size that the input holds (0 = off)
    float encoder_repetition_penalty = 1.0f;  // HF's penalty on the input's tokens: > 1 favours them (neutral 1.0)
    TokenIdLists bad_words_ids;               // token sequences never generated (empty = none)
    std::string bad_words;                    // words never generated, comma-separated; each tokenized as it reads mid-sentence
    float min_p = 0.0f;                       // sampling: drop tokens below min_p x the top probability (0 = off)
    float typical_p = 1.0f;                   // sampling: locally typical set of this mass (1.0 = off)
    float epsilon_cutoff = 0.0f;              // sampling: drop tokens of probability below this (0 = off)
    float eta_cutoff = 0.0f;                  // sampling: eta sampling's entropy-scaled cutoff (0 = off)
    TokenIds suppress_tokens;                 // tokens never generated (empty = none)
    TokenIds begin_suppress_tokens;           // tokens not generated as the first token (empty = none)
    int forced_bos_token_id = -1;             // the first generated token (-1 = none)
    TokenIds forced_eos_token_id;             // one of these ends a candidate that reaches the length limit (empty = none)
    SequenceBias sequence_bias;               // biases on token sequences (empty = none)
    std::optional<LengthDecay> exponential_decay_length_penalty;  // </s> favoured more and more after start_index (none = off)
    bool renormalize_logits = false;                              // log-softmax the scores after every processor
    std::optional<double> max_time;         // seconds: the batch stops when they have passed (none = no limit)
    std::vector<std::string> stop_strings;  // a candidate ends once its text ends with one (empty = none)
    // Constrained beam search: every candidate holds each constraint (empty = none).
    ForcedWords force_words_ids;
    std::string force_words;     // text form: constraints comma-separated, a constraint's alternatives '|'-separated
    float penalty_alpha = 0.0f;  // contrastive search with top_k > 1 and no sampling (0 = off)
    int64_t seed = -1;           // sampling RNG seed per request (-1 = random)
    // What annotators need on top of HF:
    bool no_copy = false;       // drop candidates identical to the source (whitespace/width normalised)
    bool distinct = false;      // drop duplicate candidates (same normalisation)
    int max_rounds = 4;         // with no_copy/distinct and sampling: re-generate up to this many rounds
    int batch_size = 8;         // inputs encoded and decoded together
    int max_source_tokens = 0;  // longest input in tokens (0 = the model's n_positions, else 512); longer is an error
    // Quality scores, filters and ranking (t5s/candidate_scores.h). An empty filter is off.
    std::string task_prefix;               // prepended to every input, and to each candidate for its back_score
    RankBy rank = RankBy::None;            // auto: similarity with an embedder, else back_score. Default none: the
                                           // decoding order, so that existing outputs (HF's beam order) and the
                                           // server's stay as they were
    std::optional<double> min_similarity;  // drop a candidate whose cosine similarity to its source is lower ([-1, 1])
    std::optional<double> max_similarity;  // ... higher: near copies ([-1, 1])
    std::optional<double> min_change;      // drop a candidate whose change (1 - chrF) is lower ([0, 1])
    std::optional<double> max_change;      // ... higher ([0, 1])
    std::optional<double> min_back_score;  // drop a candidate whose back_score (mean log-prob, <= 0) is lower
    std::optional<double> near_duplicate;  // drop a candidate whose chrF with a better-ranked one is above this ((0, 1])
    // back_score and similarity cost a model pass per candidate (on t5-small about as much as
    // decoding it); false computes them only where a filter or the ranking uses them, else they stay
    // empty. fluency and change are cheap and always computed.
    bool model_scores = true;
    // A candidate whose decoded text holds U+FFFD or invalid UTF-8 (byte-fallback pieces that do not
    // form a character) is dropped as "invalid_text"; false keeps it.
    bool drop_invalid_text = true;
    // Protected spans (t5s/spans.h): detected spans, and the spans given with an input, are masked
    // to sentinels, kept exactly once in every candidate and restored (a candidate that lost one is
    // dropped as "lost_span").
    std::string protect;        // detectors, comma-separated: placeholders,numbers,urls,emails ("" = none)
    std::string protect_regex;  // a regex (RE2 syntax) whose matches are protected too, label "regex" ("" = none)
    // Set by the engine when it masked spans (callers of generate_ids may set it): every sentinel
    // <extra_id_N> of an input is then emitted exactly once in each of its candidates, forced
    // before the length runs out. Not a user setting (not in the settings JSON).
    bool keep_sentinels = false;
};

// Throws t5s::Error(InvalidArgument) naming the first bad field.
void validate_generation_options(const GenerationOptions& options);

// The decoding method the options select, as transformers' GenerationConfig.get_generation_mode
// decides: constrained beam search with forced words, else beams (groups) when num_beams > 1,
// contrastive search without sampling when top_k > 1 and penalty_alpha > 0, else greedy or sampling.
bool is_contrastive_search(const GenerationOptions& options);
// The decoder rows each input takes: its beams, its top_k candidates (contrastive), its samples, or 1.
// The batch decoder lays rows out by it and the memory estimate counts them by it.
int decoding_rows_per_input(const GenerationOptions& options);

// transformers' generate() gives contrastive search top_k 50 when it is not named: a request or
// flags with penalty_alpha > 0 and neither top_k nor sampling nor beams get top_k 50 ("top_k" is
// appended to `named`), rather than decoding greedily with penalty_alpha ignored. One rule for
// serve, generate and the app, applied with imply_sampling. Returns whether it did.
bool imply_contrastive_top_k(GenerationOptions* options, std::vector<std::string>* named);

// Sampling controls imply sampling: a request that names temperature, top_k, top_p, min_p, typical_p,
// epsilon_cutoff or eta_cutoff but neither
// do_sample nor num_beams (and whose settings ask for no beams) samples (so {"num_return_sequences": 3, "temperature": 0.85,
// "top_p": 0.92} returns 3 sampled candidates instead of a refusal). `named` holds the option names given (their
// generation_options_to_json names); do_sample is set and "do_sample" appended to it when the rule
// applies. Returns whether it did. One rule for serve, generate and the app.
bool imply_sampling(GenerationOptions* options, std::vector<std::string>* named);

// The settings a running request takes from a hot swap at its next decoding step (sampling knobs,
// penalties, min tokens capped at the request's max); everything else keeps the request's shape.
GenerationOptions merge_step_settings(GenerationOptions running, const GenerationOptions& live);

// Thread-safe holder of settings that a running request re-reads at every decoding step:
// a change made while generating takes effect at the next step ("hot swap").
class SettingsHandle {
public:
    explicit SettingsHandle(GenerationOptions options = {}) : options_(std::move(options)) {}
    void set(const GenerationOptions& options) {  // validated by the caller
        std::lock_guard<std::mutex> lock(mutex_);
        options_ = options;
        version_.fetch_add(1, std::memory_order_release);
    }
    GenerationOptions get() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return options_;
    }
    uint64_t version() const { return version_.load(std::memory_order_acquire); }

private:
    mutable std::mutex mutex_;
    GenerationOptions options_;
    std::atomic<uint64_t> version_{0};
};

struct StepInfo {
    int step = 0;                  // decoding steps done so far in this batch
    int active_rows = 0;           // rows (or beams) still decoding
    int64_t tokens_generated = 0;  // tokens produced in this step across the batch
};

// Per-request controls shared with the caller.
struct GenerationControl {
    std::atomic<bool> cancel{false};                // checked every decoding step
    std::function<void(const StepInfo&)> on_step;   // called after every step (progress, streaming)
    std::shared_ptr<SettingsHandle> live_settings;  // if set, re-read every step (sampling knobs, penalties)
};

struct Candidate {
    std::string text;
    std::vector<int> ids;    // without the decoder start token; ends with </s> when produced
    double score = 0.0;      // beam: HF sequence score; greedy/sampling: sum of token log-probs
    CandidateScores scores;  // quality scores (t5s/score_names.h); empty when not computed
    // Protected spans at their offsets in `text` (code points), in the order they appear there.
    std::vector<Span> spans;
    int forced_spans = 0;  // spans whose sentinel the decoder had to force before the length ran out
    Route route;           // a recipe's steps that produced it (t5s/route.h); empty outside recipes
};

// A candidate a filter removed, with why (t5s/drop_reason.h); printed "similarity<0.8", "change>0.9",
// "near_duplicate>0.7", "copy" (no_copy), "duplicate" (distinct), "lost_span" (a protected span not
// kept exactly once), "invalid_text" (U+FFFD or invalid UTF-8, unless drop_invalid_text is off).
struct DroppedCandidate {
    Candidate candidate;
    DropCause reason;
};

struct GenerationResult {
    std::string input;
    std::vector<Candidate> candidates;
    int64_t seed = -1;                      // the seed actually used (sampling), so a result can be reproduced
    int rounds = 1;                         // generation rounds needed to find enough distinct candidates
    std::optional<double> diversity;        // mean pairwise 1 - chrF among the candidates (empty for < 2)
    std::vector<DroppedCandidate> dropped;  // in the order they were dropped
    std::vector<Span> spans;                // the input's protected spans (given and detected), in its text
};

}  // namespace t5s
