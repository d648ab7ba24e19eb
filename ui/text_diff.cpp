#include "text_diff.h"

#include <algorithm>
#include <cstdint>

namespace t5s::ui {

namespace {

void push(std::vector<DiffSegment>& out, DiffOp op, std::string_view text) {
    if (text.empty()) return;
    if (!out.empty() && out.back().op == op) out.back().text.append(text);
    else out.push_back(DiffSegment{op, std::string(text)});
}

}  // namespace

std::vector<DiffSegment> diff_chars(std::string_view source, std::string_view target, size_t max_cells) {
    const auto a = split_code_points(source);
    const auto b = split_code_points(target);
    size_t pre = 0;
    while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
    size_t suf = 0;
    while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
    std::vector<DiffSegment> out;
    for (size_t i = 0; i < pre; ++i) push(out, DiffOp::Equal, a[i]);
    const size_t n = a.size() - pre - suf, m = b.size() - pre - suf;
    if (n * m > max_cells) {
        for (size_t i = 0; i < n; ++i) push(out, DiffOp::Delete, a[pre + i]);
        for (size_t j = 0; j < m; ++j) push(out, DiffOp::Insert, b[pre + j]);
    } else if (n > 0 || m > 0) {
        // lcs[i][j] = LCS length of a[pre+i..] and b[pre+j..]
        std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
        auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
        for (size_t i = n; i-- > 0;)
            for (size_t j = m; j-- > 0;)
                at(i, j) = a[pre + i] == b[pre + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
        size_t i = 0, j = 0;
        while (i < n || j < m) {
            if (i < n && j < m && a[pre + i] == b[pre + j]) {
                push(out, DiffOp::Equal, a[pre + i]);
                ++i, ++j;
            } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
                push(out, DiffOp::Delete, a[pre + i]);
                ++i;
            } else {
                push(out, DiffOp::Insert, b[pre + j]);
                ++j;
            }
        }
    }
    for (size_t k = a.size() - suf; k < a.size(); ++k) push(out, DiffOp::Equal, a[k]);
    return out;
}

size_t changed_code_points(const std::vector<DiffSegment>& diff) {
    size_t n = 0;
    for (const auto& s : diff)
        if (s.op != DiffOp::Equal) n += split_code_points(s.text).size();
    return n;
}

}  // namespace t5s::ui
