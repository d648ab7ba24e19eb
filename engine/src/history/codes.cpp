// Names and stored codes of the history's enums (public to_string / parse functions and the
// integer codes of the candidates.state column).
#include "history/codes.h"

#include "t5s/error.h"

namespace t5s {

namespace history {

CandidateState state_from_int(int64_t v) {
    switch (v) {
        case 1: return CandidateState::Accepted;
        case 2: return CandidateState::Rejected;
        case 3: return CandidateState::Edited;
        default: return CandidateState::None;
    }
}

int state_to_int(CandidateState s) {
    switch (s) {
        case CandidateState::Accepted: return 1;
        case CandidateState::Rejected: return 2;
        case CandidateState::Edited: return 3;
        case CandidateState::None: return 0;
    }
    return 0;
}

}  // namespace history
}  // namespace t5s
