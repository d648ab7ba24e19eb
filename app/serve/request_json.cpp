#include "serve/request_json.h"

#include <algorithm>
#include <cmath>

#include "common/json_output.h"
#include "common/span_json.h"
#include "serve/bounded_json.h"
#include "t5s/error.h"
#include "t5s/generation_config.h"
#include "t5s/generation_fields.h"
#include "t5s/source_text.h"

namespace t5s::serve {
namespace {

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

nlohmann::json parse_object(const std::string& body, const char* what) {
    nlohmann::json j = parse_bounded_json(body, what);
    if (!j.is_object()) bad(std::string(what) + ": the body must be a JSON object");
    return j;
}

// Checked before anything tokenises the text, whose cost grows with its bytes, not its tokens.
std::string text_of(const nlohmann::json& v, const std::string& field) {
    if (!v.is_string()) bad("'" + field + "' must be a string");
    std::string text = v.get<std::string>();
    check_text_bytes(text, field);
    require_source_text(text, "'" + field + "'");  // the rule and words of --text and file rows
    return text;
}

bool is_option(const std::string& key) { return find_generation_field(key) != nullptr; }

// A field that is no option: transformers' setting that T5 Studio cannot apply yet is refused as
// such, its neutral value (guidance_scale 1: it changes nothing) is accepted, transformers'
// length counting the start token points to its option; anything else stays unknown (a contract).
// Returns whether the field may be skipped.
bool skip_foreign_field(const std::string& key, const nlohmann::json& value, const char* unknown_words) {
    if (const std::string option = new_tokens_name_of(key); !option.empty())
        bad("'" + key + "' is not supported: give '" + option + "' (transformers' " + key +
            " counts the decoder start token: " + option + " = " + key + " - 1)");
    switch (classify_foreign_setting(key, value.dump())) {
        case ForeignSetting::Neutral: return true;
        case ForeignSetting::Unsupported: {
            std::string shown = value.dump();
            if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
            bad("'" + key + "' is not supported yet (" + shown +
                " would change the output; only transformers' default, which turns it off, is accepted)");
        }
        default: bad(std::string(unknown_words) + " '" + key + "'");
    }
}

// The option fields of `j` (type-checked by the field table's parser, which names the field).
GenerationOptions options_of(const nlohmann::json& j, std::vector<std::string>* named) {
    nlohmann::json options = nlohmann::json::object();
    for (const auto& [key, value] : j.items()) {
        if (!is_option(key)) continue;
        options[key] = value;
        named->push_back(key);
    }
    return generation_options_from_json(options.dump());
}

// "spans", else "entities", under the file reader's rule (t5s/span_json.h spans_field): with
// "text" a list of [start, end, label]; with "texts" one such list per text. None given: no
// explicit spans.
std::vector<std::vector<Span>> request_spans(const nlohmann::json& j, size_t texts, bool single) {
    const char* key = nullptr;
    const nlohmann::json* given = spans_field(j, &key);
    if (!given) return {};
    const nlohmann::json& v = *given;
    if (single) return {cli::spans_from_json(v, std::string("'") + key + "'")};
    if (!v.is_array() || v.size() != texts) bad(std::string("'") + key + "' must have one list of spans per text");
    std::vector<std::vector<Span>> out;
    for (size_t i = 0; i < texts; ++i)
        out.push_back(cli::spans_from_json(v[i], std::string("'") + key + "[" + std::to_string(i) + "]'"));
    return out;
}

}  // namespace

void check_text_bytes(const std::string& text, const std::string& field) {
    if (text.size() > kMaxTextBytes)
        bad("'" + field + "' is " + std::to_string(text.size()) + " bytes; at most " + std::to_string(kMaxTextBytes) +
            " bytes per text");
}

AugmentRequest parse_augment(const std::string& body) {
    const nlohmann::json j = parse_object(body, "/augment body");
    AugmentRequest a;
    for (const auto& [key, value] : j.items()) {
        if (key == "text" || key == "texts" || key == "stream" || key == "keep_dropped" || key == "timeout_s" ||
            is_span_field(key) || key == "recipe" || is_option(key))
            continue;
        skip_foreign_field(key, value, "unknown field");
    }
    if (j.contains("text") == j.contains("texts")) bad("give 'text' (a string) or 'texts' (an array of strings)");
    if (j.contains("text")) {
        a.request.texts.push_back(text_of(j["text"], "text"));
    } else {
        const auto& texts = j["texts"];
        if (!texts.is_array() || texts.empty()) bad("'texts' must be a non-empty array of strings");
        if (texts.size() > kMaxTextsPerRequest) bad("'texts' has more than " + std::to_string(kMaxTextsPerRequest) + " entries");
        for (size_t i = 0; i < texts.size(); ++i) {
            a.request.texts.push_back(text_of(texts[i], "texts[" + std::to_string(i) + "]"));
        }
    }
    if (j.contains("stream")) {
        if (!j["stream"].is_boolean()) bad("'stream' must be true or false");
        a.stream = j["stream"].get<bool>();
    }
    if (j.contains("keep_dropped")) {
        if (!j["keep_dropped"].is_boolean()) bad("'keep_dropped' must be true or false");
        a.keep_dropped = j["keep_dropped"].get<bool>();
    }
    if (j.contains("timeout_s")) {
        const auto& t = j["timeout_s"];
        if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() <= 0)
            bad("'timeout_s' must be a positive number");
        a.request.timeout_s = t.get<double>();
    }
    if (j.contains("recipe") && !j["recipe"].is_null()) a.recipe = j["recipe"];
    a.request.options = options_of(j, &a.request.named);
    imply_sampling(&a.request.options, &a.request.named);
    imply_contrastive_top_k(&a.request.options, &a.request.named);
    a.request.spans = request_spans(j, a.request.texts.size(), j.contains("text"));
    return a;
}

GenerationOptions apply_settings_update(const GenerationOptions& current, const std::string& body) {
    const nlohmann::json j = parse_object(body, "PUT /v1/settings body");
    for (const auto& [key, value] : j.items()) {
        if (!is_option(key)) skip_foreign_field(key, value, "unknown setting");
    }
    std::vector<std::string> named;
    const GenerationOptions given = options_of(j, &named);
    GenerationOptions merged = with_named_fields(current, given, named);
    validate_generation_options(merged);
    return merged;
}

nlohmann::json outcome_json(const RequestOutcome& o, const std::string& model, int replica, bool keep_dropped) {
    nlohmann::json results = nlohmann::json::array();
    for (const auto& r : o.results) results.push_back(cli::result_json(r, keep_dropped));
    return {
        {"model", model},
        {"results", results},
        {"usage", {{"input_tokens", o.input_tokens}, {"output_tokens", o.output_tokens}}},
        {"timing",
         {{"queued_s", o.queued_s}, {"first_candidate_s", o.first_candidate_s}, {"total_s", o.total_s}, {"replica", replica}}}};
}

nlohmann::json candidate_json(size_t text_index, const std::string& input, const Candidate& c) {
    nlohmann::json candidate = {{"text", c.text}, {"ids", c.ids}, {"score", c.score}};
    cli::add_candidate_scores(c, &candidate);
    if (!c.spans.empty()) cli::add_candidate_spans(c, &candidate);
    cli::add_candidate_route(c, &candidate);
    return {{"index", text_index}, {"input", input}, {"candidate", std::move(candidate)}};
}

}  // namespace t5s::serve
