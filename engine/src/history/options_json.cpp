// GenerationOptions <-> JSON for the history's settings_json column. Every field by its C++ name.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "t5s/error.h"
#include "t5s/history_store.h"

namespace t5s {

#define T5S_OPTION_FIELDS(X)                                                                         \
    X(max_new_tokens) X(min_new_tokens) X(num_beams) X(length_penalty) X(early_stopping)             \
    X(num_return_sequences) X(do_sample) X(temperature) X(top_k) X(top_p) X(repetition_penalty)      \
    X(no_repeat_ngram_size) X(seed) X(no_copy) X(distinct) X(max_rounds) X(batch_size) X(max_source_tokens)   \
    X(task_prefix) X(rank) X(min_similarity) X(max_similarity) X(min_change) X(max_change) X(min_back_score) \
    X(near_duplicate) X(model_scores) X(protect) X(protect_regex)

namespace {

template <class T>
nlohmann::ordered_json option_value(const T& v) {
    return v;
}
nlohmann::ordered_json option_value(const std::optional<double>& v) {  // an empty filter is null (off)
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

std::string generation_options_to_json(const GenerationOptions& options) {
    nlohmann::ordered_json j;
#define T5S_WRITE(name) j[#name] = option_value(options.name);
    T5S_OPTION_FIELDS(T5S_WRITE)
#undef T5S_WRITE
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace {

// One option, type- and range-checked: a float or an out-of-range number cast into an int field
// was undefined behaviour (found by tests/fuzz/fuzz_generation_options).
template <class T>
void read_option(const nlohmann::json& v, const char* name, T* out) {
    auto bad = [&](const char* expected) {
        throw Error(ErrorCode::InvalidArgument, std::string("generation settings: '") + name + "' must be " + expected);
    };
    if constexpr (std::is_same_v<T, std::optional<double>>) {
        double d = 0.0;
        read_option(v, name, &d);
        *out = d;
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) bad("a string");
        *out = v.get<std::string>();
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) bad("true or false");
        *out = v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
        using limits = std::numeric_limits<T>;
        if (!v.is_number_integer()) bad("an integer");
        const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(limits::max())
                                                 : v.get<int64_t>() >= limits::min() && v.get<int64_t>() <= limits::max();
        if (!fits) bad("an integer in range");
        *out = static_cast<T>(v.get<int64_t>());
    } else {
        if (!v.is_number()) bad("a number");
        const double d = v.get<double>();
        if (!std::isfinite(d) || std::fabs(d) > static_cast<double>(std::numeric_limits<T>::max())) bad("a finite number");
        *out = static_cast<T>(d);
    }
}

}  // namespace

GenerationOptions generation_options_from_json(const std::string& json) {
    nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
        throw Error(ErrorCode::InvalidArgument, "generation settings: not a JSON object");
    GenerationOptions options;
    try {
#define T5S_READ(name) \
    if (auto it = j.find(#name); it != j.end() && !it->is_null()) read_option(*it, #name, &options.name);
        T5S_OPTION_FIELDS(T5S_READ)
#undef T5S_READ
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorCode::InvalidArgument, std::string("generation settings: ") + e.what());
    }
    return options;
}

#undef T5S_OPTION_FIELDS

std::string settings_json_with_adapter(const std::string& settings_json, const std::string& adapter) {
    if (adapter.empty()) return settings_json;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(settings_json.empty() ? "{}" : settings_json, nullptr, false);
    if (j.is_discarded() || !j.is_object()) j = nlohmann::ordered_json::object();
    j["adapter"] = adapter;
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace {

nlohmann::ordered_json spans_array(const std::vector<Span>& spans) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& s : spans) out.push_back({s.start, s.end, s.label});
    return out;
}

std::vector<Span> spans_of(const nlohmann::json& j) {
    std::vector<Span> out;
    if (!j.is_array()) return out;
    for (const auto& s : j) {
        if (s.is_array() && s.size() == 3 && s[0].is_number_integer() && s[1].is_number_integer() && s[2].is_string())
            out.push_back(Span{s[0].get<int64_t>(), s[1].get<int64_t>(), s[2].get<std::string>()});
    }
    return out;
}

}  // namespace

std::string settings_json_with_spans(const std::string& settings_json, const GenerationResult& result) {
    if (result.spans.empty()) return settings_json;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(settings_json.empty() ? "{}" : settings_json, nullptr, false);
    if (j.is_discarded() || !j.is_object()) j = nlohmann::ordered_json::object();
    nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
    for (const auto& c : result.candidates) candidates.push_back(spans_array(c.spans));
    j["spans"] = {{"input", spans_array(result.spans)}, {"candidates", candidates}};
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

RecordSpans spans_of_settings_json(const std::string& settings_json) {
    RecordSpans out;
    const nlohmann::json j = nlohmann::json::parse(settings_json, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("spans") || !j["spans"].is_object()) return out;
    const auto& s = j["spans"];
    if (s.contains("input")) out.input = spans_of(s["input"]);
    if (s.contains("candidates") && s["candidates"].is_array()) {
        for (const auto& c : s["candidates"]) out.candidates.push_back(spans_of(c));
    }
    return out;
}

std::string adapter_of_settings_json(const std::string& settings_json) {
    const nlohmann::json j = nlohmann::json::parse(settings_json, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return {};
    const auto it = j.find("adapter");
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string settings_json_with_adapter_version(const std::string& settings_json, int64_t version) {
    if (version <= 0) return settings_json;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(settings_json.empty() ? "{}" : settings_json, nullptr, false);
    if (j.is_discarded() || !j.is_object()) j = nlohmann::ordered_json::object();
    j["adapter_version"] = version;
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

int64_t adapter_version_of_settings_json(const std::string& settings_json) {
    const nlohmann::json j = nlohmann::json::parse(settings_json, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return 0;
    const auto it = j.find("adapter_version");
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace t5s
