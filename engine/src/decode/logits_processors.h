#pragma once
// Logits processors and samplers with transformers' semantics, each a small function on a batch
// of scores [N, V] (float32) given the decoder sequences so far [N, L] (start token included).
// Tested on synthetic logits without a model (tests/test_logits_processors.cpp).
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "spans/sentinel_guard.h"
#include "t5s/generation_options.h"

namespace t5s {

// HF RepetitionPenaltyLogitsProcessor: scores of tokens already in `sequences` are divided by
// `penalty` if positive, multiplied if negative.
void apply_repetition_penalty(at::Tensor& scores, const at::Tensor& sequences, float penalty);
// HF NoRepeatNGramLogitsProcessor: bans tokens that would repeat an n-gram of the sequence.
void apply_no_repeat_ngram(at::Tensor& scores, const at::Tensor& sequences, int ngram_size);
// Each row's source (its encoder input ids, </s> included) for the processors that read it; one
// entry per row of the scores. transformers' generate() passes the same ids (its encoder input).
using RowSources = std::vector<const std::vector<int>*>;
// HF EncoderRepetitionPenaltyLogitsProcessor: scores of the row's source tokens are multiplied by
// `penalty` if positive, divided if negative (> 1 favours copying). transformers gathers with the
// unexpanded encoder ids, so with several rows per input (beams, samples) it penalises the first
// rows of the batch only; here every row of an input gets its source's penalty.
void apply_encoder_repetition_penalty(at::Tensor& scores, const RowSources& sources, float penalty);
// HF EncoderNoRepeatNGramLogitsProcessor: bans a token that would make the row's last n-gram one of
// its source's (n = 1: every source token).
void apply_encoder_no_repeat_ngram(at::Tensor& scores, const at::Tensor& sequences, const RowSources& sources, int ngram_size);
// HF NoBadWordsLogitsProcessor: the last token of a sequence is banned where the row ends with the
// rest of it (a one-token sequence: always; [eos] alone is ignored, as there).
void apply_bad_words(at::Tensor& scores, const at::Tensor& sequences, const TokenIdLists& bad_words_ids, int64_t eos_id);
// The token ids a bad_words list stands for ("w1,w2"): each word as transformers' docs tokenize it,
// tokenizer(word, add_special_tokens=False), which for SentencePiece is the word as it reads
// mid-sentence (with its leading "▁"). `encode(word)` gives a word's ids without </s>.
template <class Encode>
TokenIdLists bad_words_token_ids(const std::string& words, Encode encode);
// Is `id` outside [0, vocab) in any list: the first such id, else -1.
int64_t token_outside_vocab(const TokenIdLists& lists, int64_t vocab);
// HF MinNewTokensLengthLogitsProcessor: </s> forbidden until `min_new_tokens` tokens exist.
void apply_min_new_tokens(at::Tensor& scores, int64_t new_tokens, int min_new_tokens, int64_t eos_id);
// Warpers (sampling only), in HF's order: temperature, top-k, top-p, min-p, typical, epsilon, eta.
void apply_temperature(at::Tensor& scores, float temperature);
void apply_top_k(at::Tensor& scores, int top_k);
void apply_top_p(at::Tensor& scores, float top_p);
void apply_min_p(at::Tensor& scores, float min_p);             // HF MinPLogitsWarper (0: off)
void apply_typical_p(at::Tensor& scores, float typical_p);     // HF TypicalLogitsWarper (1: off)
void apply_epsilon_cutoff(at::Tensor& scores, float epsilon);  // HF EpsilonLogitsWarper (0: off)
void apply_eta_cutoff(at::Tensor& scores, float eta);          // HF EtaLogitsWarper (0: off)
// The warpers of `options`, in that order.
void apply_warpers(at::Tensor& scores, const GenerationOptions& options);

// The sampling warpers computed on the top-k candidates only, instead of masking the whole
// vocabulary: `scores` [N, V] has had the penalties applied. On success `ids` [N, k] and `warped`
// [N, k] hold the candidates and their warped scores, whose softmax is exactly the softmax of the
// full-vocabulary path restricted to its non-zero entries. Returns false (outputs untouched) when
// top-k is off or covers the vocabulary, or when a tie at the k-th score would keep more than k
// tokens (apply_top_k keeps every tie); the caller then takes the full-vocabulary path.
bool warp_top_k_candidates(const at::Tensor& scores, const GenerationOptions& options, at::Tensor* ids, at::Tensor* warped);

// One token per row drawn from the warped distribution of `scores` [N, V] (penalties already
// applied; on the full-vocabulary path the warpers are applied to `scores` in place). Returns the
// tokens [N]; *logprob gets their log-probabilities under that distribution.
at::Tensor sample_tokens(at::Tensor& scores, const GenerationOptions& options, at::Generator& generator, at::Tensor* logprob);

// at::topk(scores, k) (largest, sorted): a one-pass heap per row for contiguous float CPU scores
// [N, V] when the top k+1 values of every row are distinct (the result is then unique); at::topk
// itself otherwise, so that ties keep its order. Used by beam search.
std::tuple<at::Tensor, at::Tensor> topk_distinct_fast(const at::Tensor& scores, int64_t k);

// Protected spans (spans/sentinel_guard.h): row r must emit each sentinel of *row_required[r]
// (nullptr or empty: none) exactly once, in any order; every other sentinel of `range` is banned,
// </s> is banned while one remains and its score goes to the owed sentinels (each keeps the larger
// of its own and </s>'s: where the model would end, it places a span), and the next one is forced
// (all other scores -inf) when only as many steps are left. Applied after the other processors,
// before the warpers.
void apply_sentinel_guard(at::Tensor& scores, const at::Tensor& sequences,
                          const std::vector<const std::vector<int>*>& row_required, spans::SentinelRange range,
                          int max_new_tokens, int64_t eos_id);

// All processors of `options` in HF's order (sequence bias, penalties, the forcing and suppressing
// ones of decode/token_processors.h; then warpers when sampling; renormalize_logits last). `sources`
// (one per row) is needed only by the encoder processors; without it they are an error. Group beam
// search applies the sequence bias itself, before its diversity penalty (`sequence_bias_done`).
// `scores` may be replaced by a new tensor (renormalize_logits).
void process_logits(at::Tensor& scores, const at::Tensor& sequences, const GenerationOptions& options, int64_t eos_id,
                    bool include_warpers, const RowSources& sources = {}, bool sequence_bias_done = false);

template <class Encode>
TokenIdLists bad_words_token_ids(const std::string& words, Encode encode) {
    TokenIdLists out;
    size_t begin = 0;
    while (begin <= words.size()) {
        size_t end = words.find(',', begin);
        if (end == std::string::npos) end = words.size();
        std::string word = words.substr(begin, end - begin);
        const size_t first = word.find_first_not_of(" \t"), last = word.find_last_not_of(" \t");
        word = first == std::string::npos ? std::string() : word.substr(first, last - first + 1);
        if (!word.empty()) {
            std::vector<int> ids = encode(word);
            if (!ids.empty()) out.push_back(std::move(ids));
        }
        begin = end + 1;
    }
    return out;
}

}  // namespace t5s
