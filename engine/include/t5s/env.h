#pragma once
// Every T5S_* environment switch is read through these helpers (docs/performance.md, "Environment
// switches" table lists them all), with one convention: values are case-insensitive; booleans
// accept 1/on/true/yes and 0/off/false/no; unset or empty means the default. An unknown value
// is reported once on stderr (naming the variable and what it accepts) and the default is used.
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace t5s {

// "1", "on", "true", "yes" -> true; "0", "off", "false", "no" -> false; anything else -> nullopt.
std::optional<bool> parse_bool_word(std::string_view value);

// The raw value; `fallback` when unset or empty.
std::string read_string_from_env(const char* name, const std::string& fallback = "");

bool read_bool_from_env(const char* name, bool fallback);

// One of `choices` (lower case). Boolean words are first normalised to "on" / "off", so a switch
// whose choices include "off" also accepts 0/false/no. Unset, empty or unknown -> `fallback`.
std::string read_choice_from_env(const char* name, std::initializer_list<std::string_view> choices, const std::string& fallback);

}  // namespace t5s
