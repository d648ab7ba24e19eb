#pragma once
// The default a field's help line states, taken from the settings struct itself: a row writes
// "(default {default})" and the line is produced with the default-constructed struct's value, so a
// default changed in the struct cannot leave --help (a contract) saying the old one. Used by the
// generation table's field_help and by every settings table's flags (app/cli/settings_flags.h).
//
// {default}        the value's text: an integer in digits (64, -1), a float in the shortest form
//                  that reads back as the same value (0.05, 0.999, 1, 120; below 0.01 in e-notation:
//                  5e-4, 1e-8), a string as it is (q,v), a named enum by its name (cpu).
// {default:point}  a float's text with a decimal point (1.0, 0.0; 0.05 stays 0.05).
// A help line holds one placeholder at most; a line without one is returned as written. Torch-free.
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "t5s/enum_names.h"
#include "t5s/settings_fields.h"  // field_ref

namespace t5s {

inline constexpr std::string_view kDefaultMark = "{default}";
inline constexpr std::string_view kDefaultPointMark = "{default:point}";

// An integer's or a float's text as {default} writes it; `single` reads it back as a float (a float
// member), else as a double.
std::string default_number_text(double v, bool single = false);
std::string default_integer_text(long long v);
std::string default_integer_text(unsigned long long v);

// `help` with its placeholder replaced by `text`; `point` is what {default:point} gives (empty: the
// field has no float value, and the placeholder is a mistake of the table: std::logic_error naming `field`).
std::string fill_default_mark(std::string_view help, const std::string* text, const std::string& point, const char* field);

// `help` stating `value`, the field's default (the placeholder in a help line of a field whose type
// has no plain text, a list or a switch, is std::logic_error naming `field`).
template <class T>
std::string help_with_default(std::string_view help, const T& value, const char* field) {
    if constexpr (std::is_floating_point_v<T>) {
        const std::string text = default_number_text(static_cast<double>(value), std::is_same_v<T, float>);
        const bool plain = text.find_first_of(".e") == std::string::npos;
        return fill_default_mark(help, &text, plain ? text + ".0" : text, field);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        const std::string text = default_integer_text(static_cast<long long>(value));
        return fill_default_mark(help, &text, "", field);
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        const std::string text = default_integer_text(static_cast<unsigned long long>(value));
        return fill_default_mark(help, &text, "", field);
    } else if constexpr (std::is_same_v<T, std::string>) {
        return fill_default_mark(help, &value, "", field);
    } else if constexpr (kHasEnumNames<T>) {
        const std::string text = to_string(value);
        return fill_default_mark(help, &text, "", field);
    } else {
        return fill_default_mark(help, nullptr, "", field);
    }
}

// A settings table row's help line (t5s/settings_fields.h), stating the default `defaults` holds.
template <class Row, class S>
std::string settings_field_help(const Row& f, const S& defaults) {
    return std::visit([&](auto member) { return help_with_default(f.help, field_ref(defaults, member), f.json); }, f.member);
}

}  // namespace t5s
