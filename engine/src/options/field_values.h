#pragma once
// JSON codecs of the list-valued generation fields (kListValued in t5s/generation_fields.h), in
// transformers' forms. Reading checks the shape and every token id (an integer from 0 to 2^31 - 1)
// and throws Error(InvalidArgument) "generation settings: '<name>' must be ..." naming the field.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "t5s/generation_options.h"

namespace t5s::field_values {

nlohmann::json to_json(const TokenIds& ids);
nlohmann::json to_json(const TokenIdLists& lists);
nlohmann::json to_json(const SequenceBias& bias);
nlohmann::json to_json(const std::optional<LengthDecay>& decay);
nlohmann::json to_json(const std::vector<std::string>& strings);
nlohmann::json to_json(const ForcedWords& words);

// A list of ids; one id alone reads as a list of it (transformers' forced_eos_token_id: an id or a list).
void from_json(const nlohmann::json& v, const std::string& name, TokenIds* out);
// A list of non-empty id lists: [[12, 7], [9]].
void from_json(const nlohmann::json& v, const std::string& name, TokenIdLists* out);
// A list of [[ids], bias] pairs: [[[12, 7], -2.0]].
void from_json(const nlohmann::json& v, const std::string& name, SequenceBias* out);
// [start_index, decay_factor]; null is none.
void from_json(const nlohmann::json& v, const std::string& name, std::optional<LengthDecay>* out);
// A list of non-empty strings; one string alone reads as a list of it (transformers' stop_strings).
void from_json(const nlohmann::json& v, const std::string& name, std::vector<std::string>* out);
// A list of constraints, each a non-empty id list (phrasal) or a list of them (disjunctive).
void from_json(const nlohmann::json& v, const std::string& name, ForcedWords* out);

}  // namespace t5s::field_values
