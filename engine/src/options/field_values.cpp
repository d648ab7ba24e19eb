// The list-valued generation fields in transformers' JSON forms, both ways (field_values.h).
#include "options/field_values.h"

#include <cmath>
#include <limits>

#include "t5s/error.h"

namespace t5s::field_values {
namespace {

[[noreturn]] void bad(const std::string& name, const std::string& expected) {
    throw Error(ErrorCode::InvalidArgument, "generation settings: '" + name + "' must be " + expected);
}

// An unsigned above 2^63 read as int64_t would wrap to a negative number (found by fuzz_pasted_settings).
bool is_token_id(const nlohmann::json& id) {
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int>::max());
    if (id.is_number_unsigned()) return id.get<uint64_t>() <= kMax;
    return id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() <= static_cast<int64_t>(kMax);
}

// A non-empty list of token ids, or nullopt when `v` is not one.
std::optional<std::vector<int>> id_list(const nlohmann::json& v) {
    if (!v.is_array() || v.empty()) return std::nullopt;
    std::vector<int> ids;
    for (const auto& id : v) {
        if (!is_token_id(id)) return std::nullopt;
        ids.push_back(static_cast<int>(id.get<int64_t>()));
    }
    return ids;
}

// Finite as the float it is stored in (a bias of -3e72 would be -inf: found by fuzz_pasted_settings).
bool is_finite_number(const nlohmann::json& v) {
    return v.is_number() && std::isfinite(v.get<double>()) && std::fabs(v.get<double>()) <= std::numeric_limits<float>::max();
}

}  // namespace

nlohmann::json to_json(const TokenIds& ids) { return ids; }
nlohmann::json to_json(const TokenIdLists& lists) { return lists; }
nlohmann::json to_json(const std::vector<std::string>& strings) { return strings; }

nlohmann::json to_json(const SequenceBias& bias) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& entry : bias) out.push_back(nlohmann::json::array({entry.ids, entry.bias}));
    return out;
}

nlohmann::json to_json(const std::optional<LengthDecay>& decay) {
    if (!decay) return nullptr;
    return nlohmann::json::array({decay->start_index, decay->decay_factor});
}

nlohmann::json to_json(const ForcedWords& words) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& constraint : words) {
        if (constraint.disjunctive || constraint.alternatives.size() != 1) out.push_back(constraint.alternatives);
        else out.push_back(constraint.alternatives.front());
    }
    return out;
}

void from_json(const nlohmann::json& v, const std::string& name, TokenIds* out) {
    if (is_token_id(v)) {
        *out = {static_cast<int>(v.get<int64_t>())};
        return;
    }
    if (v.is_array() && v.empty()) {
        out->clear();
        return;
    }
    const auto ids = id_list(v);
    if (!ids) bad(name, "a list of token ids (integers from 0 to 2^31 - 1), e.g. [12, 7]");
    *out = *ids;
}

void from_json(const nlohmann::json& v, const std::string& name, TokenIdLists* out) {
    auto refuse = [&] { bad(name, "a list of non-empty lists of token ids, e.g. [[12, 7], [9]]"); };
    if (!v.is_array()) refuse();
    TokenIdLists lists;
    for (const auto& list : v) {
        const auto ids = id_list(list);
        if (!ids) refuse();
        lists.push_back(*ids);
    }
    *out = std::move(lists);
}

void from_json(const nlohmann::json& v, const std::string& name, SequenceBias* out) {
    auto refuse = [&] { bad(name, "a list of [token ids, bias] pairs, e.g. [[[12, 7], -2.0], [[9], 1.5]]"); };
    if (!v.is_array()) refuse();
    SequenceBias bias;
    for (const auto& pair : v) {
        if (!pair.is_array() || pair.size() != 2 || !is_finite_number(pair[1])) refuse();
        const auto ids = id_list(pair[0]);
        if (!ids) refuse();
        bias.push_back({*ids, pair[1].get<float>()});
    }
    *out = std::move(bias);
}

void from_json(const nlohmann::json& v, const std::string& name, std::optional<LengthDecay>* out) {
    if (v.is_null()) {
        out->reset();
        return;
    }
    const bool start_ok = v.is_array() && v.size() == 2 && is_token_id(v[0]);  // an index, in the same range as an id
    if (!start_ok || !is_finite_number(v[1]))
        bad(name, "[start_index, decay_factor]: an integer >= 0 and a finite number, e.g. [8, 1.2]");
    *out = LengthDecay{static_cast<int>(v[0].get<int64_t>()), v[1].get<double>()};
}

void from_json(const nlohmann::json& v, const std::string& name, std::vector<std::string>* out) {
    auto refuse = [&] { bad(name, "a list of non-empty strings, e.g. [\".\", \"\\n\"]"); };
    if (v.is_string()) {
        if (v.get<std::string>().empty()) refuse();
        *out = {v.get<std::string>()};
        return;
    }
    if (!v.is_array()) refuse();
    std::vector<std::string> strings;
    for (const auto& s : v) {
        if (!s.is_string() || s.get<std::string>().empty()) refuse();
        strings.push_back(s.get<std::string>());
    }
    *out = std::move(strings);
}

void from_json(const nlohmann::json& v, const std::string& name, ForcedWords* out) {
    auto refuse = [&] {
        bad(name,
            "a list of constraints, each a list of token ids (a phrase) or a list of such lists (any one of them), e.g. [[12, "
            "7], [[9], [4, 5]]]");
    };
    if (!v.is_array()) refuse();
    ForcedWords words;
    for (const auto& constraint : v) {
        if (const auto phrase = id_list(constraint)) {
            words.push_back({{*phrase}, false});
            continue;
        }
        if (!constraint.is_array() || constraint.empty()) refuse();
        ForcedWordsConstraint any_of{{}, true};
        for (const auto& alternative : constraint) {
            const auto ids = id_list(alternative);
            if (!ids) refuse();
            any_of.alternatives.push_back(*ids);
        }
        words.push_back(std::move(any_of));
    }
    *out = std::move(words);
}

}  // namespace t5s::field_values
