#pragma once
// JSON of the HTTP API: POST /augment bodies in, `generate --json`-shaped answers out, and
// PUT /v1/settings updates. Options use their JSON names and parser from the field table
// (t5s/generation_fields.h), so every generation option and filter is accepted as it is added.
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
