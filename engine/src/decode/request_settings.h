#pragma once
// What a request's settings need the model for, resolved once before its group joins the batch.
#include <cstdint>

#include "t5s/generation_options.h"
#include "t5s/tokenizer.h"

namespace t5s {

// Word lists (bad_words, force_words) become token ids with `tokenizer` (appended to bad_words_ids /
// force_words_ids, the text cleared), and every token id the settings hold, and contrastive search's
// top_k, is checked against the vocabulary: InvalidArgument naming the field, before anything is
// allocated. `tokenizer` may be null when no word list is given.
void resolve_model_settings(GenerationOptions* options, const Tokenizer* tokenizer, int64_t vocab);

}  // namespace t5s
