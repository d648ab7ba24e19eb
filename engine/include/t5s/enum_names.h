#pragma once
// One name table per enum, from which printing, parsing, error messages, --help lists and the UI's
// combo boxes all derive. An enum with names declares them once, right after itself:
//
//   template <> struct EnumNames<Device> {
//       static constexpr const char* kWhat = "device";   // the noun of "unknown device 'x' (...)"
//       static constexpr EnumName<Device> kNames[] = {
//           {Device::Auto, "auto"}, {Device::Cpu, "cpu"}, {Device::Cuda, "cuda"}, {Device::Cuda, "gpu", kAlias}};
//   };
//
// to_string(value) gives the value's first non-alias name (its stored and printed name, a
// contract); parse_enum<E>(text) accepts every name, aliases included, and refuses anything else
// with InvalidArgument naming the accepted ones. Header-only but for the message; torch-free.
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace t5s {

constexpr bool kAlias = true;

template <class E>
struct EnumName {
    E value;
    const char* name;
    bool alias = false;  // accepted when parsing, never printed or listed
};

template <class E>
struct EnumNames;  // specialised once per enum, beside its declaration

template <class E, class = void>
struct HasEnumNames : std::false_type {};
template <class E>
struct HasEnumNames<E, std::void_t<decltype(EnumNames<E>::kNames)>> : std::true_type {};
template <class E>
constexpr bool kHasEnumNames = HasEnumNames<E>::value;

namespace detail {
// "unknown device 'gpux' (expected auto, cpu or cuda)", thrown as t5s::Error(InvalidArgument).
[[noreturn]] void throw_unknown_name(const char* what, std::string_view text, const std::vector<std::string>& accepted);
// "a, b or c"
std::string list_names(const std::vector<std::string>& names, const char* last_separator = " or ");
}  // namespace detail

template <class E, std::enable_if_t<kHasEnumNames<E>, int> = 0>
const char* to_string(E value) {
    for (const auto& n : EnumNames<E>::kNames)
        if (n.value == value && !n.alias) return n.name;
    return "?";
}

template <class E>
std::optional<E> try_parse_enum(std::string_view text) {
    for (const auto& n : EnumNames<E>::kNames)
        if (text == n.name) return n.value;
    return std::nullopt;
}

// The printed names in table order: for --help, combo boxes and messages.
template <class E>
std::vector<std::string> enum_names() {
    std::vector<std::string> out;
    for (const auto& n : EnumNames<E>::kNames)
        if (!n.alias) out.push_back(n.name);
    return out;
}

// The index of `value` among enum_names<E>() (a combo box's selection), 0 when absent.
template <class E>
int enum_index(E value) {
    int i = 0;
    for (const auto& n : EnumNames<E>::kNames) {
        if (n.alias) continue;
        if (n.value == value) return i;
        ++i;
    }
    return 0;
}

// The value at `index` of enum_names<E>(); the first one when out of range.
template <class E>
E enum_at(int index) {
    int i = 0;
    for (const auto& n : EnumNames<E>::kNames) {
        if (n.alias) continue;
        if (i++ == index) return n.value;
    }
    return EnumNames<E>::kNames[0].value;
}

// "auto, cpu or cuda"
template <class E>
std::string enum_names_text() {
    return detail::list_names(enum_names<E>());
}

template <class E>
E parse_enum(std::string_view text) {
    if (const auto v = try_parse_enum<E>(text)) return *v;
    detail::throw_unknown_name(EnumNames<E>::kWhat, text, enum_names<E>());
}

}  // namespace t5s
