#include "history/decisions.h"

namespace t5s::history {

DecisionLog replay(const std::vector<EventRow>& events) {
    DecisionLog log;
    for (const EventRow& e : events) {
        switch (e.kind) {
            case EventKind::Accept:
            case EventKind::Reject:
            case EventKind::Edit:
                log.done.push_back(&e);
                log.undone.clear();
                break;
            case EventKind::Undo:
                if (!log.done.empty()) {
                    log.undone.push_back(log.done.back());
                    log.done.pop_back();
                }
                break;
            case EventKind::Redo:
                if (!log.undone.empty()) {
                    log.done.push_back(log.undone.back());
                    log.undone.pop_back();
                }
                break;
        }
    }
    return log;
}

std::vector<DerivedState> derive_states(const DecisionLog& log, int candidate_count) {
    struct Acc {
        int decision = 0;  // 0 none, 1 accepted, 2 rejected
        bool edited = false;
        std::string text;
    };
    std::vector<Acc> acc(static_cast<size_t>(candidate_count > 0 ? candidate_count : 0));
    for (const EventRow* e : log.done) {
        if (e->rank < 0 || e->rank >= candidate_count) continue;
        Acc& a = acc[static_cast<size_t>(e->rank)];
        if (e->kind == EventKind::Accept) {
            a.decision = 1;
        } else if (e->kind == EventKind::Reject) {
            a.decision = 2;
        } else if (e->kind == EventKind::Edit) {
            a.decision = 1;
            a.edited = true;
            a.text = e->text;
        }
    }
    std::vector<DerivedState> out(acc.size());
    for (size_t i = 0; i < acc.size(); ++i) {
        if (acc[i].decision == 1 && acc[i].edited) {
            out[i].state = CandidateState::Edited;
            out[i].edited_text = acc[i].text;
        } else if (acc[i].decision == 1) {
            out[i].state = CandidateState::Accepted;
        } else if (acc[i].decision == 2) {
            out[i].state = CandidateState::Rejected;
        }
    }
    return out;
}

}  // namespace t5s::history
