#include "text/embed_common.h"

#include <nlohmann/json.hpp>

#include "base/file_io.h"
#include "t5s/error.h"
#include "t5s/tokenizer.h"
#include "text/unicode_space.h"

namespace t5s::embed_detail {
namespace {

// Special tokens are written as a string or as an AddedToken object {"content": ...}.
std::optional<std::string> token_field(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    const auto& v = j[key];
    if (v.is_object() && v.contains("content")) return v["content"].get<std::string>();
    return v.get<std::string>();
}

std::optional<bool> bool_field(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    return j[key].get<bool>();
}

}  // namespace

TokenizerConfig read_tokenizer_config(const std::filesystem::path& path) {
    TokenizerConfig cfg;
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(path, ec)) return cfg;
    try {
        const nlohmann::json j = nlohmann::json::parse(read_text(path));
        if (!j.is_object()) throw std::runtime_error("not a JSON object");
        cfg.do_lower_case = bool_field(j, "do_lower_case");
        cfg.strip_accents = bool_field(j, "strip_accents");
        cfg.tokenize_chinese_chars = bool_field(j, "tokenize_chinese_chars");
        if (j.contains("never_split") && !j["never_split"].is_null()) {
            cfg.never_split = j["never_split"].get<std::vector<std::string>>();
        }
        cfg.unk_token = token_field(j, "unk_token");
        cfg.cls_token = token_field(j, "cls_token");
        cfg.sep_token = token_field(j, "sep_token");
        cfg.pad_token = token_field(j, "pad_token");
        cfg.mask_token = token_field(j, "mask_token");
        if (j.contains("model_max_length") && j["model_max_length"].is_number()) {
            const double n = j["model_max_length"].get<double>();
            if (n < 2) throw std::runtime_error("model_max_length below 2");
            cfg.model_max_length = n > 1e9 ? 0 : static_cast<int>(n);
        }
    } catch (const t5s::Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error(ErrorCode::CorruptFile, path.string() + ": bad tokenizer config (" + e.what() + ")");
    }
    return cfg;
}

std::vector<TextChunk> split_special_tokens(std::string_view text, const std::vector<SpecialToken>& specials) {
    std::vector<TextChunk> chunks;
    size_t plain_start = 0;
    bool strip_next = false;  // the token before eats the whitespace that starts the next text
    for (size_t i = 0; i < text.size();) {
        const SpecialToken* best = nullptr;
        for (const SpecialToken& s : specials) {
            if (!s.text.empty() && text.compare(i, s.text.size(), s.text) == 0 && (!best || s.text.size() > best->text.size())) {
                best = &s;
            }
        }
        if (!best) {
            ++i;
            continue;
        }
        std::string_view before = text.substr(plain_start, i - plain_start);
        if (strip_next) before = python_lstrip(before);
        if (best->lstrip) before = python_rstrip(before);
        if (!before.empty()) chunks.push_back({before});
        chunks.push_back({text.substr(i, best->text.size()), best->id});
        i += best->text.size();
        plain_start = i;
        strip_next = best->rstrip;
    }
    std::string_view rest = text.substr(plain_start);
    if (strip_next) rest = python_lstrip(rest);
    if (!rest.empty()) chunks.push_back({rest});
    return chunks;
}

std::vector<int> encode_around_specials(std::string_view text, const std::vector<SpecialToken>& specials,
                                        const std::function<void(std::string_view, std::vector<int>&)>& encode_chunk) {
    require_valid_utf8(text, "input text");
    std::vector<int> ids;
    for (const TextChunk& chunk : split_special_tokens(text, specials)) {
        if (chunk.special_id >= 0) ids.push_back(chunk.special_id);
        else encode_chunk(chunk.text, ids);
    }
    return ids;
}

}  // namespace t5s::embed_detail
