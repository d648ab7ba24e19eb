// BERT WordPiece, as transformers' slow BertTokenizer (BasicTokenizer + WordpieceTokenizer).
#include <fstream>
#include <unordered_map>
#include <unordered_set>

#include "base/file_io.h"
#include "t5s/error.h"
#include "t5s/text_offsets.h"
#include "t5s/tokenizer.h"
#include "text/embed_common.h"
#include "text/embed_tokenizers.h"
#include "text/unicode_space.h"
#include "text/unicode_text.h"

namespace t5s::embed_detail {
namespace {

bool is_cjk(char32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// BertTokenizer's _is_punctuation: ASCII non-alphanumerics count even where Unicode says symbol.
bool is_punctuation(char32_t cp) {
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
        return true;
    }
    return char_class(cp) == kPunct;
}

// Python's str.split(): runs of whitespace separate, ends trimmed.
std::vector<std::u32string> split_whitespace(const std::u32string& text) {
    std::vector<std::u32string> out;
    std::u32string cur;
    for (char32_t cp : text) {
        if (is_python_space(cp)) {
            if (!cur.empty()) out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur.push_back(cp);
        }
    }
    if (!cur.empty()) out.push_back(std::move(cur));
    return out;
}

std::u32string strip_accents(const std::u32string& text) {
    std::u32string out;
    for (char32_t cp : nfd(text)) {
        if (char_class(cp) != kMn) out.push_back(cp);
    }
    return out;
}

class WordPieceTokenizer final : public EmbedTokenizer {
public:
    explicit WordPieceTokenizer(WordPieceSpec spec);
    std::vector<int> encode_plain(std::string_view text) const override;
    std::string token(int id) const override {
        return id >= 0 && id < static_cast<int>(tokens_.size()) ? tokens_[id] : std::string();
    }

private:
    int require_token(const std::string& text) const;
    std::u32string clean_and_space_cjk(const std::u32string& text) const;
    std::vector<std::u32string> basic_tokenize(std::string_view text) const;
    void wordpiece(const std::u32string& word, std::vector<int>& ids) const;
    int lookup(const std::string& piece) const {
        auto it = vocab_.find(piece);
        return it == vocab_.end() ? -1 : it->second;
    }

    std::unordered_map<std::string, int> vocab_;
    std::vector<std::string> tokens_;
    std::unordered_set<std::u32string> never_split_;
    WordPieceSpec spec_;
};

WordPieceTokenizer::WordPieceTokenizer(WordPieceSpec spec) : spec_(std::move(spec)) {
    kind_ = Kind::WordPiece;
    tokens_ = std::move(spec_.tokens);
    // transformers' load_vocab: a repeated token keeps its last id.
    for (size_t id = 0; id < tokens_.size(); ++id) {
        if (!tokens_[id].empty()) vocab_[tokens_[id]] = static_cast<int>(id);
    }
    if (vocab_.empty()) throw Error(ErrorCode::CorruptFile, spec_.source + ": empty vocabulary");
    vocab_size_ = static_cast<int>(tokens_.size());
    model_max_length_ = spec_.model_max_length;
    unk_id_ = require_token(spec_.unk);
    start_id_ = require_token(spec_.cls);
    end_id_ = require_token(spec_.sep);
    pad_id_ = require_token(spec_.pad);
    for (const std::string& s : spec_.never_split) never_split_.insert(decode_code_points(s));
    // Special tokens without an id yet are looked up; those missing from the vocabulary are [UNK].
    for (SpecialToken& s : spec_.specials) {
        if (s.id < 0) s.id = lookup(s.text) < 0 ? unk_id_ : lookup(s.text);
    }
}

int WordPieceTokenizer::require_token(const std::string& text) const {
    const int id = lookup(text);
    if (id < 0) throw Error(ErrorCode::CorruptFile, spec_.source + ": vocabulary has no " + text + " token");
    return id;
}

// _clean_text (drop NUL, U+FFFD and control characters; whitespace to spaces) and
// _tokenize_chinese_chars (spaces around CJK ideographs).
std::u32string WordPieceTokenizer::clean_and_space_cjk(const std::u32string& text) const {
    std::u32string out;
    out.reserve(text.size());
    for (char32_t cp : text) {
        const bool is_space = cp == U' ' || cp == U'\t' || cp == U'\n' || cp == U'\r';
        const CharClass cls = char_class(cp);
        if (spec_.clean_text && (cp == 0 || cp == 0xFFFD || (!is_space && (cls == kCc || cls == kCf)))) continue;
        if (spec_.clean_text && (is_space || cls == kZs)) {
            out.push_back(U' ');
        } else if (spec_.chinese_chars && is_cjk(cp)) {
            out += U' ';
            out.push_back(cp);
            out += U' ';
        } else {
            out.push_back(cp);
        }
    }
    return out;
}

std::vector<std::u32string> WordPieceTokenizer::basic_tokenize(std::string_view text) const {
    std::vector<std::u32string> out;
    // PreTrainedTokenizer.tokenize lower-cases the text one character at a time (so no final-sigma
    // context) before the BasicTokenizer sees it; never_split entries must then be lower case.
    std::u32string chars = decode_code_points(text);
    if (spec_.lower) chars = to_lower(chars);
    const std::u32string cleaned = clean_and_space_cjk(chars);
    for (std::u32string& tok : split_whitespace(spec_.nfc ? nfc(cleaned) : cleaned)) {
        if (never_split_.count(tok)) {
            out.push_back(std::move(tok));
            continue;
        }
        if (spec_.lower) tok = to_lower(tok);
        if (spec_.strip_accents) tok = strip_accents(tok);
        std::u32string cur;
        for (char32_t cp : tok) {
            if (is_punctuation(cp)) {
                if (!cur.empty()) out.push_back(std::move(cur));
                cur.clear();
                out.push_back(std::u32string(1, cp));
            } else {
                cur.push_back(cp);
            }
        }
        if (!cur.empty()) out.push_back(std::move(cur));
    }
    return out;
}

// Greedy longest-match-first; a word with any unmatched rest, or over 100 characters, is [UNK].
void WordPieceTokenizer::wordpiece(const std::u32string& word, std::vector<int>& ids) const {
    if (word.size() > static_cast<size_t>(spec_.max_input_chars_per_word)) {
        ids.push_back(unk_id_);
        return;
    }
    std::vector<int> pieces;
    size_t start = 0;
    while (start < word.size()) {
        int found = -1;
        size_t end = word.size();
        for (; end > start; --end) {
            const std::string piece = (start > 0 ? spec_.subword_prefix : "") + u32_to_utf8(word.substr(start, end - start));
            found = lookup(piece);
            if (found >= 0) break;
        }
        if (found < 0) {
            ids.push_back(unk_id_);
            return;
        }
        pieces.push_back(found);
        start = end;
    }
    ids.insert(ids.end(), pieces.begin(), pieces.end());
}

std::vector<int> WordPieceTokenizer::encode_plain(std::string_view text) const {
    return encode_around_specials(text, spec_.specials, [&](std::string_view chunk, std::vector<int>& ids) {
        for (const std::u32string& word : basic_tokenize(chunk)) {
            if (never_split_.count(word)) {
                const int id = lookup(u32_to_utf8(word));
                ids.push_back(id < 0 ? unk_id_ : id);
            } else {
                wordpiece(word, ids);
            }
        }
    });
}

}  // namespace

WordPieceSpec wordpiece_spec_from_files(const std::filesystem::path& vocab_txt, const std::filesystem::path& config_path) {
    WordPieceSpec spec;
    spec.source = vocab_txt.string();
    const std::string raw = read_text(vocab_txt);  // throws FileNotFound naming the file
    require_valid_utf8(raw, vocab_txt.string());
    // transformers' load_vocab: one token per line, only the "\n" removed.
    size_t start = 0;
    while (start < raw.size()) {
        size_t end = raw.find('\n', start);
        if (end == std::string::npos) end = raw.size();
        spec.tokens.push_back(raw.substr(start, end - start));
        start = end + 1;
    }
    const TokenizerConfig cfg = read_tokenizer_config(config_path);
    spec.lower = cfg.do_lower_case.value_or(true);
    spec.strip_accents = cfg.strip_accents.has_value() ? *cfg.strip_accents : spec.lower;
    spec.chinese_chars = cfg.tokenize_chinese_chars.value_or(true);
    spec.model_max_length = cfg.model_max_length;
    spec.unk = cfg.unk_token.value_or("[UNK]");
    spec.cls = cfg.cls_token.value_or("[CLS]");
    spec.sep = cfg.sep_token.value_or("[SEP]");
    spec.pad = cfg.pad_token.value_or("[PAD]");
    spec.never_split = cfg.never_split;
    // Special tokens present in the vocabulary are matched in the text and never split.
    for (const std::string& s : {spec.unk, spec.cls, spec.sep, spec.pad, cfg.mask_token.value_or("[MASK]")}) {
        spec.specials.push_back({s, -1});
    }
    return spec;
}

std::unique_ptr<EmbedTokenizer> make_wordpiece_tokenizer(WordPieceSpec spec) {
    return std::make_unique<WordPieceTokenizer>(std::move(spec));
}

}  // namespace t5s::embed_detail
