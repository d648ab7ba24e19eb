#include "t5s/tokenizer.h"

#include <sentencepiece_processor.h>

#include <fstream>
#include <iterator>

#include "t5s/error.h"
#include "text/sentencepiece_model.h"
#include "text/spiece_validate.h"
#include "text/tokenizer_impl.h"
#include "text/unicode_space.h"

namespace t5s {

namespace {

// A piece of input text: either plain text for SentencePiece or one special token.
struct Chunk {
    std::string_view text;
    int special_id = -1;         // >= 0 for <pad>, </s>, <unk>, <extra_id_N>
    bool strips_around = false;  // sentinels eat whitespace on both sides (lstrip=rstrip=True in HF)
};

// Matches a special token at s[i] (which is '<'); returns its length or 0.
size_t match_special(std::string_view s, size_t i, int sp_size, int extra_ids, int* id, bool* strips) {
    static const std::pair<std::string_view, int> kFixed[] = {{"<pad>", 0}, {"</s>", 1}, {"<unk>", 2}};
    for (const auto& [tok, tok_id] : kFixed) {
        if (s.compare(i, tok.size(), tok) == 0) {
            *id = tok_id;
            *strips = false;
            return tok.size();
        }
    }
    static const std::string_view kExtra = "<extra_id_";
    if (s.compare(i, kExtra.size(), kExtra) != 0) return 0;
    size_t j = i + kExtra.size();
    size_t digits_start = j;
    while (j < s.size() && j - digits_start < 6 && s[j] >= '0' && s[j] <= '9') ++j;
    if (j == digits_start || j >= s.size() || s[j] != '>') return 0;
    const std::string digits(s.substr(digits_start, j - digits_start));
    if (digits.size() > 1 && digits[0] == '0') return 0;  // "<extra_id_01>" is not a token
    int n = std::stoi(digits);
    if (n >= extra_ids) return 0;
    *id = sp_size + extra_ids - 1 - n;
    *strips = true;
    return j + 1 - i;
}

}  // namespace

Tokenizer::Tokenizer() : impl_(std::make_unique<Impl>()) {}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

namespace {

// The model file's bytes; refuses what cannot be a SentencePiece model before reading it whole.
std::string read_sentencepiece_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        throw Error(ErrorCode::FileNotFound, path.string() + ": SentencePiece model not found");
    }
    // Real models are a few MB (mT5's 250k pieces: 4.3 MB); anything this big is not one.
    constexpr uintmax_t kMaxModelBytes = uintmax_t{256} << 20;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec || size > kMaxModelBytes) {
        throw Error(ErrorCode::CorruptFile, path.string() + ": not a SentencePiece model (" +
                                                (ec ? ec.message() : std::to_string(size) + " bytes, over 256 MB") + ")");
    }
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw Error(ErrorCode::FileNotFound, path.string() + ": cannot read");
    return bytes;
}

}  // namespace

// The library trusts the model; check what it would read before handing it over.
void load_serialized_sentencepiece(std::string_view model, const std::string& name, sentencepiece::SentencePieceProcessor& sp) {
    validate_spiece_model(model, name);
    auto status = sp.LoadFromSerializedProto(model);
    if (!status.ok()) {
        throw Error(ErrorCode::CorruptFile, name + ": not a valid SentencePiece model (" + std::string(status.message()) + ")");
    }
}

void load_sentencepiece(const std::filesystem::path& path, sentencepiece::SentencePieceProcessor& sp) {
    load_serialized_sentencepiece(read_sentencepiece_file(path), path.string(), sp);
}

Tokenizer Tokenizer::load(const std::filesystem::path& spiece_model, int extra_ids) {
    Tokenizer t = from_serialized(read_sentencepiece_file(spiece_model), spiece_model.string(), extra_ids);
    t.impl_->path = spiece_model;
    return t;
}

Tokenizer Tokenizer::from_serialized(std::string_view model, const std::string& name, int extra_ids) {
    Tokenizer t;
    load_serialized_sentencepiece(model, name, t.impl_->sp);
    t.impl_->path = name;
    t.impl_->sp_size = t.impl_->sp.GetPieceSize();
    t.impl_->extra_ids = extra_ids;
    const int byte0 = t.impl_->sp.PieceToId("<0x00>");
    t.impl_->byte_fallback = byte0 != t.impl_->sp.unk_id() && t.impl_->sp.IsByte(byte0);
    if (t.impl_->sp_size < 3 || t.impl_->sp.IdToPiece(1) != "</s>") {
        throw Error(ErrorCode::Unsupported, name + ": not a T5-layout SentencePiece model (expected <pad>=0, </s>=1, <unk>=2)");
    }
    return t;
}

static std::vector<Chunk> split_special(std::string_view text, int sp_size, int extra_ids) {
    std::vector<Chunk> chunks;
    size_t start = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '<') continue;
        int id;
        bool strips;
        size_t len = match_special(text, i, sp_size, extra_ids, &id, &strips);
        if (!len) continue;
        if (i > start) chunks.push_back({text.substr(start, i - start)});
        chunks.push_back({text.substr(i, len), id, strips});
        start = i + len;
        i = start - 1;
    }
    if (start < text.size()) chunks.push_back({text.substr(start)});
    // Sentinels swallow the whitespace next to them (transformers' AddedToken lstrip/rstrip).
    for (size_t i = 0; i < chunks.size(); ++i) {
        if (!chunks[i].strips_around) continue;
        if (i + 1 < chunks.size() && chunks[i + 1].special_id < 0) chunks[i + 1].text = python_lstrip(chunks[i + 1].text);
        if (i > 0 && chunks[i - 1].special_id < 0) chunks[i - 1].text = python_rstrip(chunks[i - 1].text);
    }
    return chunks;
}

std::vector<int> Tokenizer::encode(std::string_view text, bool add_eos) const {
    require_valid_utf8(text, "input text");
    if (impl_->fast) {  // T5TokenizerFast: its post-processor always appends </s>
        std::vector<int> ids = encode_fast(*impl_, text);
        if (add_eos) ids.push_back(eos_id());
        return ids;
    }
    std::vector<int> ids;
    for (const Chunk& c : split_special(text, impl_->sp_size, impl_->extra_ids)) {
        if (c.special_id >= 0) {
            ids.push_back(c.special_id);
        } else if (!c.text.empty()) {
            std::vector<int> part;
            impl_->sp.Encode(c.text, &part);
            ids.insert(ids.end(), part.begin(), part.end());
        }
    }
    // Like T5Tokenizer: no second </s> when the text already ends with one.
    if (add_eos && (ids.empty() || ids.back() != eos_id())) ids.push_back(eos_id());
    return ids;
}

std::vector<std::string> Tokenizer::tokens(std::string_view text, bool add_eos) const {
    std::vector<std::string> out;
    for (int id : encode(text, add_eos)) out.push_back(id_to_token(id));
    return out;
}

std::string Tokenizer::id_to_token(int id) const {
    if (id >= 0 && id < impl_->sp_size) return impl_->sp.IdToPiece(id);
    if (id >= impl_->sp_size && id < vocab_size()) return "<extra_id_" + std::to_string(vocab_size() - 1 - id) + ">";
    return "";  // rows of the model's embedding beyond the tokenizer (mT5 pads its vocab); they decode to nothing
}

bool Tokenizer::is_special(int id) const {
    return id == pad_id() || id == eos_id() || id == unk_id() || (id >= impl_->sp_size && id < vocab_size());
}

std::string Tokenizer::decode(const std::vector<int>& ids, bool skip_special_tokens) const {
    // transformers' slow-tokenizer _decode: sentinels (ids above the SentencePiece vocabulary) split
    // the text into runs joined by spaces; each run goes through T5Tokenizer.convert_tokens_to_string.
    std::vector<std::string> parts;
    std::vector<int> run;
    for (int id : ids) {
        if (skip_special_tokens && is_special(id)) continue;
        if (id < 0 || id >= vocab_size()) continue;  // rows beyond the tokenizer (mT5 pads its vocab)
        if (id >= impl_->sp_size) {
            if (!run.empty()) {
                std::string text = run_to_string(run);
                if (!text.empty()) parts.push_back(std::move(text));
                run.clear();
            }
            parts.push_back(id_to_token(id));
        } else {
            run.push_back(id);
        }
    }
    if (!run.empty()) parts.push_back(run_to_string(run));
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? " " : "") + parts[i];
    return out;
}

std::string Tokenizer::run_to_string(const std::vector<int>& ids) const {
    // T5Tokenizer.convert_tokens_to_string: pieces go through SentencePiece; <pad>, </s>, <unk> are
    // written as-is, preceded by a space unless they follow another special token.
    std::vector<std::string> pieces;
    for (int id : ids) pieces.push_back(impl_->sp.IdToPiece(id));
    static const std::string kUnderline = "\xE2\x96\x81";  // "▁": the prefix space transformers removes
    if (pieces[0].rfind(kUnderline, 0) == 0) pieces[0] = pieces[0].substr(kUnderline.size());
    std::string out;
    std::vector<std::string> pending;
    bool prev_special = false;
    auto flush = [&]() {
        std::string text;
        if (!pending.empty()) impl_->sp.Decode(pending, &text);
        pending.clear();
        return text;
    };
    for (size_t i = 0; i < ids.size(); ++i) {
        if (is_special(ids[i])) {
            if (!prev_special) out += " ";
            out += flush() + pieces[i];
            prev_special = true;
        } else {
            pending.push_back(pieces[i]);
            prev_special = false;
        }
    }
    out += flush();
    return std::string(python_strip(out));
}

int Tokenizer::sp_size() const { return impl_->sp_size; }
int Tokenizer::vocab_size() const { return impl_->sp_size + impl_->extra_ids; }
int Tokenizer::extra_ids() const { return impl_->extra_ids; }
bool Tokenizer::byte_fallback() const { return impl_->byte_fallback; }
const std::filesystem::path& Tokenizer::path() const { return impl_->path; }

}  // namespace t5s
