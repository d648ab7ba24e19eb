#pragma once
// Character-level diff on UTF-8 code points (so CJK characters are never split), for highlighting
// what a candidate changed relative to its source. Code points are split as t5s/text_offsets.h
// splits them (split_code_points: an ill-formed subpart of malformed bytes is one piece).
#include <string>
#include <string_view>
#include <vector>

#include "t5s/text_offsets.h"

namespace t5s::ui {

enum class DiffOp { Equal, Insert, Delete };

struct DiffSegment {
    DiffOp op = DiffOp::Equal;
    std::string text;  // whole code points
};

// Minimal edit script (LCS) from `source` to `target`; adjacent segments of one op are merged.
// Very long inputs (> max_cells DP cells after trimming common ends) fall back to delete+insert.
std::vector<DiffSegment> diff_chars(std::string_view source, std::string_view target, size_t max_cells = 4'000'000);

// Counts of changed code points (inserted + deleted) in a diff.
size_t changed_code_points(const std::vector<DiffSegment>& diff);

}  // namespace t5s::ui
