// A request's settings resolved against the model (request_settings.h).
#include "decode/request_settings.h"

#include <string>

#include "decode/beam_constraints.h"
#include "decode/logits_processors.h"
#include "decode/token_processors.h"
#include "t5s/error.h"

namespace t5s {
namespace {

std::string outside_vocab(const char* field, int64_t id, int64_t vocab) {
    return std::string(field) + ": token id " + std::to_string(id) + " is outside the vocabulary (" + std::to_string(vocab) +
           " tokens)";
}

// bad_words as token sequences, appended to bad_words_ids (neither changes while a group decodes).
void resolve_bad_words(GenerationOptions* o, const Tokenizer* tokenizer, int64_t vocab) {
    if (!o->bad_words.empty()) {
        if (!tokenizer) throw Error(ErrorCode::InvalidArgument, "bad_words needs the model's tokenizer");
        TokenIdLists words =
            bad_words_token_ids(o->bad_words, [&](const std::string& w) { return tokenizer->encode(w, /*add_eos=*/false); });
        o->bad_words_ids.insert(o->bad_words_ids.end(), words.begin(), words.end());
        o->bad_words.clear();
    }
    if (const int64_t id = token_outside_vocab(o->bad_words_ids, vocab); id >= 0)
        throw Error(ErrorCode::InvalidArgument, outside_vocab("bad_words_ids", id, vocab));
}

// force_words as constraints, appended to force_words_ids, which are then checked as a request's
// are (a word list may make an alternative the start of another).
void resolve_force_words(GenerationOptions* o, const Tokenizer* tokenizer, int64_t vocab) {
    if (!o->force_words.empty()) {
        if (!tokenizer) throw Error(ErrorCode::InvalidArgument, "force_words needs the model's tokenizer");
        ForcedWords words =
            force_words_token_ids(o->force_words, [&](const std::string& w) { return tokenizer->encode(w, /*add_eos=*/false); });
        if (words.empty()) throw Error(ErrorCode::InvalidArgument, "force_words: no word in \"" + o->force_words + "\"");
        o->force_words_ids.insert(o->force_words_ids.end(), words.begin(), words.end());
        o->force_words.clear();
        validate_generation_options(*o);
    }
    for (const auto& c : o->force_words_ids) {
        if (const int64_t id = token_outside_vocab(c.alternatives, vocab); id >= 0)
            throw Error(ErrorCode::InvalidArgument, outside_vocab("force_words_ids", id, vocab));
    }
}

}  // namespace

void resolve_model_settings(GenerationOptions* o, const Tokenizer* tokenizer, int64_t vocab) {
    resolve_bad_words(o, tokenizer, vocab);
    if (const std::string outside = token_settings_outside_vocab(*o, vocab); !outside.empty())
        throw Error(ErrorCode::InvalidArgument, outside);
    resolve_force_words(o, tokenizer, vocab);
    if (is_contrastive_search(*o) && o->top_k > vocab)
        throw Error(ErrorCode::InvalidArgument, "top_k (" + std::to_string(o->top_k) + ") must be <= the vocabulary (" +
                                                    std::to_string(vocab) + " tokens) for contrastive search");
}

}  // namespace t5s
