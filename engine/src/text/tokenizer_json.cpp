#include "text/tokenizer_json.h"

#include "base/file_io.h"
#include "base/json_text.h"
#include "t5s/error.h"
#include "text/unicode_space.h"

namespace t5s {
namespace {

using nlohmann::json;
using TJ = TokenizerJson;
using Prepend = MetaspaceRule::Prepend;

[[noreturn]] void unsupported(const TJ& tj, const std::string& what) {
    throw Error(ErrorCode::Unsupported, tj.file + ": " + what + " is not supported");
}
[[noreturn]] void corrupt(const TJ& tj, const std::string& what) { throw Error(ErrorCode::CorruptFile, tj.file + ": " + what); }

std::string type_of(const TJ& tj, const json& j, const char* part) {
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) corrupt(tj, std::string(part) + " has no \"type\"");
    return j["type"].get<std::string>();
}

template <class T>
T field(const TJ& tj, const json& j, const char* key, const T& fallback) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    try {
        return j[key].get<T>();
    } catch (const json::exception&) {
        corrupt(tj, std::string("\"") + key + "\" has the wrong type");
    }
}

std::string base64_decode(const TJ& tj, const std::string& in) {
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        int v = c >= 'A' && c <= 'Z'   ? c - 'A'
                : c >= 'a' && c <= 'z' ? c - 'a' + 26
                : c >= '0' && c <= '9' ? c - '0' + 52
                : c == '+'             ? 62
                : c == '/'             ? 63
                : c == '='             ? -2
                                       : -1;
        if (v == -2) break;
        if (v < 0) corrupt(tj, "Precompiled.precompiled_charsmap is not base64");
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xFF));
        }
    }
    return out;
}

void read_unigram(TJ& tj, const json& m) {
    const json& vocab = m.contains("vocab") ? m["vocab"] : json();
    if (!vocab.is_array() || vocab.empty()) corrupt(tj, "Unigram model has no vocab");
    tj.pieces.reserve(vocab.size());
    for (const json& e : vocab) {
        if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number()) {
            corrupt(tj, "Unigram vocab entry " + std::to_string(tj.pieces.size()) + " is not [piece, score]");
        }
        tj.pieces.emplace_back(e[0].get<std::string>(), e[1].get<double>());
    }
    tj.unk_id = field<int>(tj, m, "unk_id", -1);
    if (tj.unk_id < 0 || tj.unk_id >= static_cast<int>(tj.pieces.size())) corrupt(tj, "Unigram model has no valid unk_id");
    tj.byte_fallback = field<bool>(tj, m, "byte_fallback", false);
}

void read_wordpiece(TJ& tj, const json& m) {
    const json& vocab = m.contains("vocab") ? m["vocab"] : json();
    if (!vocab.is_object() || vocab.empty()) corrupt(tj, "WordPiece model has no vocab");
    for (const auto& [token, id] : vocab.items()) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > (1 << 24)) {
            corrupt(tj, "WordPiece vocab id of '" + token + "' is not a valid id");
        }
        const auto i = static_cast<size_t>(id.get<int64_t>());
        if (i >= tj.vocab.size()) tj.vocab.resize(i + 1);
        tj.vocab[i] = token;
    }
    tj.unk_token = field<std::string>(tj, m, "unk_token", "[UNK]");
    tj.subword_prefix = field<std::string>(tj, m, "continuing_subword_prefix", "##");
    tj.max_input_chars_per_word = field<int>(tj, m, "max_input_chars_per_word", 100);
}

void read_model(TJ& tj, const json& m) {
    const std::string type = type_of(tj, m, "model");
    if (type == "Unigram") {
        tj.model = TJ::Model::Unigram;
        read_unigram(tj, m);
    } else if (type == "WordPiece") {
        tj.model = TJ::Model::WordPiece;
        read_wordpiece(tj, m);
    } else {
        unsupported(tj, "model type " + type + " (Unigram and WordPiece are)");
    }
}

void read_replace(TJ& tj, const json& n) {
    const json& p = n.contains("pattern") ? n["pattern"] : json();
    const std::string content = field<std::string>(tj, n, "content", "");
    const bool spaces = p.is_object() && p.contains("Regex") && p["Regex"] == " {2,}";
    if (!spaces || (content != "\xE2\x96\x81" && content != " ")) {
        unsupported(tj, "normalizer Replace with pattern " + p.dump() + " (only \" {2,}\", SentencePiece's whitespace rule, is)");
    }
    tj.metaspace.collapse_spaces = true;
}

void read_normalizer(TJ& tj, const json& n) {
    if (n.is_null()) return;
    const std::string type = type_of(tj, n, "normalizer");
    if (type == "Sequence") {
        for (const json& sub : field<json>(tj, n, "normalizers", json::array())) read_normalizer(tj, sub);
    } else if (type == "Precompiled") {
        tj.charsmap = base64_decode(tj, field<std::string>(tj, n, "precompiled_charsmap", ""));
    } else if (type == "Strip") {
        if (field<bool>(tj, n, "strip_left", false)) unsupported(tj, "normalizer Strip with strip_left");
    } else if (type == "Replace") {
        read_replace(tj, n);
    } else if (type == "BertNormalizer") {
        tj.clean_text = field<bool>(tj, n, "clean_text", true);
        tj.handle_chinese_chars = field<bool>(tj, n, "handle_chinese_chars", true);
        tj.lowercase = field<bool>(tj, n, "lowercase", true);
        if (n.contains("strip_accents") && !n["strip_accents"].is_null())
            tj.strip_accents = field<bool>(tj, n, "strip_accents", false);
    } else {
        unsupported(tj, "normalizer type " + type);
    }
}

void read_metaspace(TJ& tj, const json& p) {
    if (field<std::string>(tj, p, "replacement", "\xE2\x96\x81") != "\xE2\x96\x81")
        unsupported(tj, "Metaspace replacement other than \"\xE2\x96\x81\"");
    const std::string scheme = field<std::string>(tj, p, "prepend_scheme", "");
    if (scheme.empty()) {
        tj.metaspace.prepend = field<bool>(tj, p, "add_prefix_space", true) ? Prepend::Always : Prepend::Never;
    } else if (scheme == "always" || scheme == "first" || scheme == "never") {
        tj.metaspace.prepend = scheme == "always" ? Prepend::Always : scheme == "first" ? Prepend::First : Prepend::Never;
    } else {
        unsupported(tj, "Metaspace prepend_scheme " + scheme);
    }
}

// What the pre-tokenizer may be for each model: Metaspace (+ WhitespaceSplit) for Unigram,
// BertPreTokenizer for WordPiece. Returns whether the expected main pre-tokenizer was seen.
bool read_pre_tokenizer(TJ& tj, const json& p) {
    if (p.is_null()) return false;
    const std::string type = type_of(tj, p, "pre_tokenizer");
    const bool unigram = tj.model == TJ::Model::Unigram;
    if (type == "Sequence") {
        bool seen = false;
        for (const json& sub : field<json>(tj, p, "pretokenizers", json::array())) seen = read_pre_tokenizer(tj, sub) || seen;
        return seen;
    }
    if (unigram && type == "Metaspace") {
        read_metaspace(tj, p);
        return true;
    }
    if (unigram && type == "WhitespaceSplit") {
        tj.metaspace.whitespace_split = tj.metaspace.collapse_spaces = true;
        return false;
    }
    if (!unigram && type == "BertPreTokenizer") return true;
    unsupported(tj, "pre_tokenizer type " + type + (unigram ? " with a Unigram model" : " with a WordPiece model"));
}

void read_decoder(const TJ& tj, const json& d) {
    if (d.is_null()) return;
    const std::string type = type_of(tj, d, "decoder");
    if (type == "Sequence") {
        for (const json& sub : field<json>(tj, d, "decoders", json::array())) read_decoder(tj, sub);
        return;
    }
    static const char* const kKnown[] = {"Metaspace", "WordPiece", "ByteFallback", "Fuse", "Strip", "Replace"};
    for (const char* k : kKnown) {
        if (type == k) return;
    }
    unsupported(tj, "decoder type " + type);
}

void read_post_processor(TJ& tj, const json& p) {
    if (p.is_null()) return;
    const std::string type = type_of(tj, p, "post_processor");
    if (type == "TemplateProcessing") {
        bool after = false;
        for (const json& piece : field<json>(tj, p, "single", json::array())) {
            if (piece.contains("Sequence")) after = true;
            if (!piece.contains("SpecialToken")) continue;
            const std::string tok = field<std::string>(tj, piece["SpecialToken"], "id", "");
            (after ? tj.suffix_tokens : tj.prefix_tokens).push_back(tok);
        }
    } else if (type == "BertProcessing" || type == "RobertaProcessing") {
        const json cls = field<json>(tj, p, "cls", json()), sep = field<json>(tj, p, "sep", json());
        if (!cls.is_array() || !sep.is_array() || cls.empty() || sep.empty() || !cls[0].is_string() || !sep[0].is_string()) {
            corrupt(tj, type + " has no cls/sep tokens");
        }
        tj.prefix_tokens = {cls[0].get<std::string>()};
        tj.suffix_tokens = {sep[0].get<std::string>()};
    } else {
        unsupported(tj, "post_processor type " + type);
    }
}

void read_added_tokens(TJ& tj, const json& added) {
    if (added.is_null()) return;
    if (!added.is_array()) corrupt(tj, "\"added_tokens\" is not a list");
    for (const json& a : added) {
        TJ::AddedToken t;
        t.id = field<int>(tj, a, "id", -1);
        t.content = field<std::string>(tj, a, "content", "");
        if (t.id < 0 || t.content.empty()) corrupt(tj, "an added token has no id or content");
        t.special = field<bool>(tj, a, "special", false);
        t.lstrip = field<bool>(tj, a, "lstrip", false);
        t.rstrip = field<bool>(tj, a, "rstrip", false);
        tj.added_tokens.push_back(std::move(t));
    }
}

}  // namespace

bool MetaspaceRule::prefix(std::string_view chunk, bool at_start) const {
    const bool want = prepend == Prepend::Always || (prepend == Prepend::First && at_start);
    char32_t first = 0;
    if (!chunk.empty()) utf8_decode(chunk, 0, &first);
    const bool leading_space = is_python_space(first);
    if (whitespace_split) return want;                  // words lose their spaces; each gets "▁" when wanted
    if (collapse_spaces) return want || leading_space;  // a run of leading spaces becomes one "▁"
    return want && !leading_space;                      // a leading space is the "▁" itself
}

int TokenizerJson::added_id(const std::string& content) const {
    for (const AddedToken& a : added_tokens) {
        if (a.content == content) return a.id;
    }
    return -1;
}

TokenizerJson read_tokenizer_json(const std::filesystem::path& path) {
    TJ tj;
    tj.file = path.string();
    const json j = parse_json_text(read_text(path), tj.file);
    if (!j.is_object() || !j.contains("model")) corrupt(tj, "not a tokenizers file (no \"model\")");
    auto part = [&](const char* key) { return j.contains(key) ? j[key] : json(); };
    read_model(tj, j["model"]);
    read_normalizer(tj, part("normalizer"));
    if (!read_pre_tokenizer(tj, part("pre_tokenizer"))) {
        unsupported(tj, tj.model == TJ::Model::Unigram ? "a Unigram model without a Metaspace pre_tokenizer"
                                                       : "a WordPiece model without a BertPreTokenizer");
    }
    read_decoder(tj, part("decoder"));
    read_post_processor(tj, part("post_processor"));
    read_added_tokens(tj, part("added_tokens"));
    if (tj.metaspace.whitespace_split && tj.metaspace.prepend != Prepend::Always) {
        unsupported(tj, "WhitespaceSplit with a Metaspace that adds no prefix");
    }
    return tj;
}

}  // namespace t5s
