#pragma once
// `generate`'s flags for the generation options, derived from the field table
// (t5s/generation_fields.h): the flag names, --help lines and parsing all come from there.
#include <string>
#include <vector>

#include "common/args.h"
#include "t5s/generation_fields.h"

namespace t5s::cli {

// One flag per field that has one, in the table's order, each followed by its transformers'
// spelling where the field has one (--num-beams, --max-length: GenerationField::alias).
std::vector<Flag> generation_flags();
// The JSON names of the fields whose flag was given.
std::vector<std::string> generation_flags_given(const Args& args);
// The given flags over `options`: integers out of their type (or, where the field says so, of its
// range) and malformed numbers are usage errors naming the flag; an unknown enum name (--rank) is
// InvalidArgument in its table's wording; the rest is validated later.
void apply_generation_flags(const Args& args, GenerationOptions* options);

}  // namespace t5s::cli
