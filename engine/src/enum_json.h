#pragma once
// Enums with a name table (t5s/enum_names.h) in nlohmann JSON: written as their name, read through
// parse_enum (an unknown name is InvalidArgument naming the accepted ones). Found by ADL, so a
// struct's JSON can list enum fields beside plain ones.
#include <nlohmann/json.hpp>
#include <string>

#include "t5s/enum_names.h"

namespace t5s {

// One overload per JSON type: more specialised than nlohmann's own enum (as integer) conversion,
// which a generic one would tie with.
template <class E, std::enable_if_t<kHasEnumNames<E>, int> = 0>
void to_json(nlohmann::json& j, E value) {
    j = to_string(value);
}
template <class E, std::enable_if_t<kHasEnumNames<E>, int> = 0>
void to_json(nlohmann::ordered_json& j, E value) {
    j = to_string(value);
}
template <class E, std::enable_if_t<kHasEnumNames<E>, int> = 0>
void from_json(const nlohmann::json& j, E& value) {
    value = parse_enum<E>(j.get<std::string>());
}
template <class E, std::enable_if_t<kHasEnumNames<E>, int> = 0>
void from_json(const nlohmann::ordered_json& j, E& value) {
    value = parse_enum<E>(j.get<std::string>());
}

}  // namespace t5s
