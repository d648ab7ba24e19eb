#include "decode/stop_strings.h"

#include <algorithm>

#include "t5s/error.h"
#include "t5s/text_offsets.h"
#include "t5s/tokenizer.h"

namespace t5s {
namespace {

// Python's str.isspace(), which str.strip() removes.
bool python_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// HF: the token's last n = min(len(token), len(stop) - pos) characters equal stop's n characters
// that end `pos` characters before its end (a token longer than that runs off stop's start).
bool fits_at(const std::u32string& token, const std::u32string& stop, int64_t pos) {
    const int64_t end = static_cast<int64_t>(stop.size()) - pos;
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(token.size()), end);
    return std::equal(token.end() - n, token.end(), stop.begin() + (end - n));
}

}  // namespace

TokenTexts stop_string_token_texts(const Tokenizer& tokenizer) {
    // transformers decodes each token after "abcdef" and keeps what follows it.
    const std::string prefix = "abcdef";
    const std::vector<int> base = tokenizer.encode(prefix, /*add_eos=*/false);
    TokenTexts texts(static_cast<size_t>(tokenizer.vocab_size()));
    for (int id = 0; id < tokenizer.vocab_size(); ++id) {
        std::u32string text;
        if (tokenizer.is_special(id)) {
            text = decode_code_points(tokenizer.id_to_token(id));  // not decoded: written as it is
        } else {
            std::vector<int> ids = base;
            ids.push_back(id);
            const std::string all = tokenizer.decode(ids, /*skip_special_tokens=*/false);
            const size_t at = all.find(prefix);
            text = decode_code_points(at == std::string::npos ? std::string() : all.substr(at + prefix.size()));
            while (!text.empty() && python_space(text.back())) text.pop_back();  // the slow tokenizer's strip()
        }
        texts[static_cast<size_t>(id)] = std::move(text);
    }
    return texts;
}

StopStrings::StopStrings(std::shared_ptr<const TokenTexts> texts, const std::vector<std::string>& stop_strings)
    : texts_(std::move(texts)) {
    for (const std::string& s : stop_strings) {
        stops_.push_back(decode_code_points(s));
        window_ = std::max<int64_t>(window_, static_cast<int64_t>(stops_.back().size()));
    }
    // transformers' preprocessing refuses strings no token can end.
    bool any_end = false;
    for (const std::u32string& stop : stops_) {
        for (const std::u32string& token : *texts_) {
            for (size_t m = 1; m <= token.size() && !any_end; ++m) {
                const size_t n = std::min(m, stop.size());
                any_end = n > 0 &&
                          std::equal(token.begin() + static_cast<std::ptrdiff_t>(m - n),
                                     token.begin() + static_cast<std::ptrdiff_t>(m), stop.end() - static_cast<std::ptrdiff_t>(n));
            }
            if (any_end) break;
        }
    }
    if (!any_end)
        throw Error(ErrorCode::InvalidArgument,
                    "stop_strings: no token of the model's tokenizer can end any of them (characters outside its vocabulary?)");
}

const std::u32string* StopStrings::text(int64_t id) const {
    return id >= 0 && id < static_cast<int64_t>(texts_->size()) ? &(*texts_)[static_cast<size_t>(id)] : nullptr;
}

bool StopStrings::ends(const int64_t* ids, int64_t length) const {
    const int64_t window = std::min(length, window_);
    const int64_t* tail = ids + (length - window);
    return std::any_of(stops_.begin(), stops_.end(), [&](const std::u32string& s) { return ends_with(s, tail, window); });
}

// HF's tensor algorithm, token by token from the end: the last token starts with a suffix of the
// stop string (or holds it whole), each earlier token fits where the matched part begins, until
// the matched length reaches the string's.
bool StopStrings::ends_with(const std::u32string& stop, const int64_t* ids, int64_t window) const {
    const std::u32string* last = window > 0 ? text(ids[window - 1]) : nullptr;
    if (!last || stop.empty()) return false;
    const int64_t need = static_cast<int64_t>(stop.size());
    for (size_t m = 1; m <= last->size(); ++m) {
        // End overlap: the token's first m characters end with stop's last min(m, |stop|).
        const int64_t n = std::min<int64_t>(static_cast<int64_t>(m), need);
        if (!std::equal(last->begin() + static_cast<std::ptrdiff_t>(m) - n, last->begin() + static_cast<std::ptrdiff_t>(m),
                        stop.end() - n))
            continue;
        int64_t matched = n;
        for (int64_t j = window - 2; matched < need && j >= 0; --j) {
            const std::u32string* token = text(ids[j]);
            if (!token || !fits_at(*token, stop, matched)) break;
            matched += static_cast<int64_t>(token->size());
        }
        if (matched >= need) return true;
    }
    return false;
}

std::vector<char> StopCriteria::rows_ending(const int64_t* ids, int64_t rows, int64_t length) const {
    std::vector<char> out(static_cast<size_t>(rows), 0);
    if (!strings) return out;
    for (int64_t r = 0; r < rows; ++r) out[static_cast<size_t>(r)] = strings->ends(ids + r * length, length) ? 1 : 0;
    return out;
}

}  // namespace t5s
