#pragma once
// Derives each candidate's current state from its generation's event log (oldest first).
// Undo revokes the latest still-effective decision; redo restores the latest undone one; a new
// decision clears what could be redone. Edit = accept with the edited text.
#include <cstdint>
#include <string>
#include <vector>

#include "t5s/history_store.h"

namespace t5s::history {

struct EventRow {
    int64_t id = 0;
    EventKind kind = EventKind::Accept;
    int rank = 0;
    std::string text;
};

struct DerivedState {
    CandidateState state = CandidateState::None;
    std::string edited_text;  // set while state == Edited
};

struct DecisionLog {
    std::vector<const EventRow*> done;    // effective decisions, oldest first
    std::vector<const EventRow*> undone;  // redo stack, top = back()
};

// Replays `events` (which must outlive the result) into the undo/redo stacks.
DecisionLog replay(const std::vector<EventRow>& events);

// Applies the effective decisions to `candidate_count` candidates.
std::vector<DerivedState> derive_states(const DecisionLog& log, int candidate_count);

}  // namespace t5s::history
