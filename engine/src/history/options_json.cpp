// What the history's settings_json carries beside the options (t5s/generation_fields.h writes those):
// the adapter, its version, the protected spans and the recipe.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "hub/sha256.h"
#include "t5s/error.h"
#include "t5s/history_store.h"
#include "t5s/recipe.h"

namespace t5s {

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

namespace {

std::string recipe_record(const std::string& file, const std::string& sha256) {
    const nlohmann::ordered_json j = {{"file", file}, {"sha256", sha256}};
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

std::string recipe_record_json(const std::filesystem::path& file) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(file, ec);
    if (ec) throw Error(ErrorCode::FileNotFound, "recipe " + file.string() + ": cannot be read (" + ec.message() + ")");
    if (size > static_cast<std::uintmax_t>(kMaxRecipeBytes))
        throw Error(ErrorCode::InvalidArgument, "recipe " + file.string() + ": larger than 256 KiB");
    const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
    return recipe_record((ec ? file : absolute).lexically_normal().string(), hub::sha256_file(file));
}

std::string recipe_text_record_json(const std::string& name, const std::string& text) {
    hub::Sha256 sha;
    sha.update(text.data(), text.size());
    return recipe_record(name, sha.hex_digest());
}

std::string settings_json_with_recipe(const std::string& settings_json, const std::string& recipe_json) {
    if (recipe_json.empty()) return settings_json;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(settings_json.empty() ? "{}" : settings_json, nullptr, false);
    if (j.is_discarded() || !j.is_object()) j = nlohmann::ordered_json::object();
    const nlohmann::ordered_json recipe = nlohmann::ordered_json::parse(recipe_json, nullptr, false);
    if (recipe.is_discarded() || !recipe.is_object())
        throw Error(ErrorCode::InvalidArgument, "history: the recipe record is not a JSON object: " + recipe_json.substr(0, 200));
    j["recipe"] = recipe;
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string recipe_of_settings_json(const std::string& settings_json) {
    const nlohmann::json j = nlohmann::json::parse(settings_json, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return {};
    const auto it = j.find("recipe");
    if (it == j.end() || !it->is_object()) return {};
    auto text = [&](const char* key) {
        const auto f = it->find(key);
        return f != it->end() && f->is_string() ? f->get<std::string>() : std::string();
    };
    const std::string file = text("file"), sha = text("sha256");
    return sha.empty() ? file : file + " (sha256:" + sha + ")";
}

}  // namespace t5s
