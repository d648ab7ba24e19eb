// The range words and checks every settings table shares (t5s/settings_fields.h).
#include "t5s/settings_fields.h"

#include <cstdio>

namespace t5s {

std::string settings_number_text(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.15g", v);  // 0.05, 1e-08, 1000000
    return text;
}

std::string settings_range_words(const FieldRange& r) {
    if (r.words) return r.words;
    const bool has_min = std::isfinite(r.min), has_max = std::isfinite(r.max);
    if (has_min && has_max)
        return std::string("in ") + (r.min_open ? "(" : "[") + settings_number_text(r.min) + ", " + settings_number_text(r.max) +
               (r.max_open ? ")" : "]");
    if (has_min) return (r.min_open ? "> " : ">= ") + settings_number_text(r.min);
    if (has_max) return (r.max_open ? "< " : "<= ") + settings_number_text(r.max);
    return "a finite number";
}

bool settings_in_range(const FieldRange& r, double v) {
    if (!std::isfinite(v)) return false;
    if (v < r.min || (r.min_open && v == r.min)) return false;
    return !(v > r.max || (r.max_open && v == r.max));
}

std::string range_message(std::string_view name, const FieldRange& range, std::string_view got) {
    return std::string(name) + " must be " + settings_range_words(range) + " (got " + std::string(got) + ")";
}

std::string range_message(std::string_view name, const FieldRange& range, double got) {
    return range_message(name, range, settings_number_text(got));
}

}  // namespace t5s
