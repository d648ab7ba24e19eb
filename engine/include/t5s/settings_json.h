#pragma once
// A settings table's JSON (t5s/settings_fields.h), both ways: every field by its JSON name, enums by
// their names (t5s/enum_names.h). Included only by the files that define a table's JSON functions
// (it brings nlohmann/json.hpp). Torch-free.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "t5s/enum_names.h"
#include "t5s/error.h"
#include "t5s/settings_fields.h"

namespace t5s {
namespace settings_detail {

template <class T>
struct IsStringList : std::false_type {};
template <>
struct IsStringList<std::vector<std::string>> : std::true_type {};

// One JSON value into one field, type-checked: a float into an int field, a number out of the
// field's type or an unknown enum name is InvalidArgument naming the field.
template <class T>
void read_value(const nlohmann::json& v, const std::string& what, const char* name, T* out) {
    auto bad = [&](const char* expected) {
        throw Error(ErrorCode::InvalidArgument, what + ": '" + name + "' must be " + expected);
    };
    if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) bad("a string");
        *out = v.get<std::string>();
    } else if constexpr (IsStringList<T>::value) {
        if (!v.is_array()) bad("a list of strings");
        out->clear();
        for (const auto& e : v) {
            if (!e.is_string()) bad("a list of strings");
            out->push_back(e.get<std::string>());
        }
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) bad("true or false");
        *out = v.get<bool>();
    } else if constexpr (std::is_enum_v<T>) {
        if (!v.is_string()) bad(("one of " + enum_names_text<T>()).c_str());
        const auto e = try_parse_enum<T>(v.get<std::string>());
        if (!e) bad((enum_names_text<T>() + " (got '" + v.get<std::string>() + "')").c_str());
        *out = *e;
    } else if constexpr (std::is_integral_v<T>) {
        using limits = std::numeric_limits<T>;
        if (!v.is_number_integer()) bad("an integer");
        bool fits;
        if (v.is_number_unsigned()) fits = v.get<uint64_t>() <= static_cast<uint64_t>(limits::max());
        else
            fits = v.get<int64_t>() >= static_cast<int64_t>(limits::min()) &&
                   (std::is_unsigned_v<T> || v.get<int64_t>() <= static_cast<int64_t>(limits::max()));
        if (!fits) bad("an integer in range");
        *out = v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>()) : static_cast<T>(v.get<int64_t>());
    } else {
        if (!v.is_number()) bad("a number");
        const double d = v.get<double>();
        if (!std::isfinite(d)) bad("a finite number");
        *out = static_cast<T>(d);
    }
}

}  // namespace settings_detail

// Every field but the secret ones, by its JSON name (nlohmann::json: keys in name order).
template <class Table, class S>
nlohmann::json settings_to_json(const Table& fields, const S& s) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& f : fields) {
        if (f.secret) continue;
        std::visit(
            [&](auto member) {
                const auto& v = field_ref(s, member);
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_enum_v<T>) j[f.json] = to_string(v);
                else j[f.json] = v;
            },
            f.member);
    }
    return j;
}

// `text` over the defaults of S: fields absent or null keep their defaults, unknown names are
// ignored (newer files); not an object, malformed or a wrong type is InvalidArgument starting with `what`.
template <class Table, class S>
S settings_from_json(const Table& fields, const std::string& text, const std::string& what, S s = S{}) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) throw Error(ErrorCode::InvalidArgument, what + ": not valid JSON");
    if (!j.is_object()) throw Error(ErrorCode::InvalidArgument, what + ": expected a JSON object");
    for (const auto& f : fields) {
        const auto it = j.find(f.json);
        if (it == j.end() || it->is_null()) continue;
        std::visit([&](auto member) { settings_detail::read_value(*it, what, f.json, &field_ref(s, member)); }, f.member);
    }
    return s;
}

}  // namespace t5s
