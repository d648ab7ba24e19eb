#include "t5s/env.h"

#include <cctype>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>

namespace t5s {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// A switch is usually read once per process; a wrong value is still worth one line, not one per read.
void warn_once(const char* name, const std::string& value, const std::string& accepted) {
    static std::mutex mutex;
    static std::set<std::string> warned;
    std::lock_guard<std::mutex> lock(mutex);
    if (!warned.insert(name).second) return;
    std::cerr << "t5studio: ignoring " << name << "=" << value << " (expected " << accepted << ")\n";
}

}  // namespace

std::optional<bool> parse_bool_word(std::string_view value) {
    const std::string v = lower(value);
    if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
    if (v == "0" || v == "off" || v == "false" || v == "no") return false;
    return std::nullopt;
}

std::string read_string_from_env(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

bool read_bool_from_env(const char* name, bool fallback) {
    const std::string raw = read_string_from_env(name);
    if (raw.empty()) return fallback;
    if (auto b = parse_bool_word(raw)) return *b;
    warn_once(name, raw, "1/on/true/yes or 0/off/false/no");
    return fallback;
}

std::string read_choice_from_env(const char* name, std::initializer_list<std::string_view> choices, const std::string& fallback) {
    const std::string raw = read_string_from_env(name);
    if (raw.empty()) return fallback;
    std::string v = lower(raw);
    if (auto b = parse_bool_word(v)) v = *b ? "on" : "off";
    std::string accepted;
    for (std::string_view c : choices) {
        if (v == c) return v;
        accepted += (accepted.empty() ? "" : "|") + std::string(c);
    }
    warn_once(name, raw, accepted);
    return fallback;
}

}  // namespace t5s
