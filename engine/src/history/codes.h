#pragma once
// How the history stores its enums: event kinds as text, candidate states as small integers
// (0 none, 1 accepted, 2 rejected, 3 edited: the schema's CHECK and partial index rely on them).
#include <cstdint>
#include <string>

#include "t5s/history_store.h"

namespace t5s::history {

CandidateState state_from_int(int64_t value);  // unknown values read as None
int state_to_int(CandidateState state);

}  // namespace t5s::history
