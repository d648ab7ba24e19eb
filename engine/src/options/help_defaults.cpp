// The one text of a default in a help line (t5s/help_defaults.h).
#include "t5s/help_defaults.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace t5s {
namespace {

bool reads_back(const char* text, double v, bool single) {
    return single ? std::strtof(text, nullptr) == static_cast<float>(v) : std::strtod(text, nullptr) == v;
}

// The significant digits ("5", "999", "12") and decimal exponent of the shortest text that reads back as `v` (> 0).
void shortest_digits(double v, bool single, std::string* digits, int* exponent) {
    char text[40];
    for (int decimals = 0; decimals < 17; ++decimals) {
        std::snprintf(text, sizeof text, "%.*e", decimals, v);  // "9.99e-01"
        if (reads_back(text, v, single)) break;
    }
    const std::string s = text;
    const size_t e = s.find('e');
    *exponent = std::atoi(s.c_str() + e + 1);
    digits->clear();
    for (size_t i = 0; i < e; ++i)
        if (s[i] != '.') digits->push_back(s[i]);
    while (digits->size() > 1 && digits->back() == '0') digits->pop_back();
}

}  // namespace

std::string default_number_text(double v, bool single) {
    if (v == 0 || !std::isfinite(v)) return v == 0 ? "0" : std::to_string(v);
    std::string digits;
    int exponent = 0;
    shortest_digits(std::fabs(v), single, &digits, &exponent);
    const std::string sign = v < 0 ? "-" : "";
    const int count = static_cast<int>(digits.size());
    if (exponent <= -3)  // below 0.01: 5e-4, 1.5e-8
        return sign + digits[0] + (count > 1 ? "." + digits.substr(1) : "") + "e" + std::to_string(exponent);
    if (exponent < 0) return sign + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;             // 0.05
    if (exponent >= count - 1) return sign + digits + std::string(static_cast<size_t>(exponent - (count - 1)), '0');  // 120
    return sign + digits.substr(0, static_cast<size_t>(exponent) + 1) + "." +
           digits.substr(static_cast<size_t>(exponent) + 1);  // 2.5
}

std::string default_integer_text(long long v) { return std::to_string(v); }
std::string default_integer_text(unsigned long long v) { return std::to_string(v); }

std::string fill_default_mark(std::string_view help, const std::string* text, const std::string& point, const char* field) {
    const bool pointed = help.find(kDefaultPointMark) != std::string_view::npos;
    const std::string_view mark = pointed ? kDefaultPointMark : kDefaultMark;
    const size_t at = help.find(mark);
    if (at == std::string_view::npos) return std::string(help);
    const std::string* value = pointed ? (point.empty() ? nullptr : &point) : text;
    if (!value)
        throw std::logic_error(std::string("field ") + field + ": its help holds " + std::string(mark) +
                               " but its default has no such text");
    return std::string(help.substr(0, at)) + *value + std::string(help.substr(at + mark.size()));
}

}  // namespace t5s
