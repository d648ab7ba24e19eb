#pragma once
// JSON of the HTTP API: POST /augment bodies in, `generate --json`-shaped answers out, and
// PUT /v1/settings updates. Options use their JSON names and parser from the field table
// (t5s/generation_fields.h), so every generation option and filter is accepted as it is added.
//
// A field that is no option is refused (400) with one rule for bodies and settings alike: a setting
// of transformers' generate() that T5 Studio cannot apply yet is "'num_beam_groups' is not supported
// yet", unless it holds transformers' neutral value (num_beam_groups 1, typical_p 1.0, min_p null),
// which changes nothing and is accepted; max_length / min_length point to max_new_tokens /
// min_new_tokens; anything else is "unknown field 'x'" ("unknown setting" for PUT /v1/settings).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "t5s/scheduler.h"

namespace t5s::serve {

constexpr size_t kMaxTextsPerRequest = 256;
// Bytes per input text, checked before tokenising (far above any source-token limit: a token is
// rarely more than 16 bytes).
constexpr size_t kMaxTextBytes = 64 << 10;

struct AugmentRequest {
    ServeRequest request;
    bool stream = false;
    bool keep_dropped = false;  // results list their dropped candidates, as generate --keep-dropped
    // "recipe": a configured recipe's name or an inline recipe object (serve/serve_recipes.h
    // resolves it); null: none.
    nlohmann::json recipe;
};

// Throws t5s::Error(InvalidArgument) naming the field ("texts[2]") when `text` is over kMaxTextBytes.
void check_text_bytes(const std::string& text, const std::string& field);

// Throws t5s::Error(InvalidArgument) naming the field: malformed JSON (or over the size and depth
// limits of bounded_json.h), unknown fields, wrong types, texts over kMaxTextBytes.
AugmentRequest parse_augment(const std::string& body);
// The settings after applying a PUT body (option fields only) to `current`; throws like above.
GenerationOptions apply_settings_update(const GenerationOptions& current, const std::string& body);

// {"model", "results": [generate --json results], "usage": {...}, "timing": {...}}.
nlohmann::json outcome_json(const RequestOutcome& outcome, const std::string& model, int replica, bool keep_dropped = false);
// A streamed candidate: {"index", "input", "candidate": {"text", "ids", "score", and its scores}}.
nlohmann::json candidate_json(size_t text_index, const std::string& input, const Candidate& candidate);

}  // namespace t5s::serve
