#pragma once
// The annotator's candidate list for one generation: states, edit in place, accept / reject,
// undo / redo. Pure logic (no ImGui). Each action returns the decision to record in the history
// (EventKind + text); undo/redo mirror HistoryStore::undo/redo, which act on the latest
// decision of the generation, so the local stack and the stored state stay in step.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t5s/engine_thread.h"
#include "text_diff.h"

namespace t5s::ui {

// Candidate states are the history's CandidateState (None = not decided yet).
// The workspace's word for a state: "pending" for None, else the history's name.
const char* state_label(CandidateState state);

struct CandidateVm {
    std::string text;          // as generated
    std::string edited;        // final text when Edited
    double score = 0.0;
    CandidateState state = CandidateState::None;
    std::vector<DiffSegment> diff;  // source -> final text
    const std::string& final_text() const { return state == CandidateState::Edited ? edited : text; }
};

struct DecisionOut {
    EventKind kind = EventKind::Accept;
    int index = 0;
    std::string text;
};

class CandidateList {
public:
    void reset(std::string source, GenerationId generation_id, const std::vector<Candidate>& candidates);
    void clear();

    const std::string& source() const { return source_; }
    GenerationId generation_id() const { return generation_id_; }
    void set_generation_id(GenerationId id) { generation_id_ = id; }
    const std::vector<CandidateVm>& items() const { return items_; }
    size_t size() const { return items_.size(); }
    bool empty() const { return items_.empty(); }

    int selected() const { return selected_; }
    void select(int index);
    void select_next() { select(selected_ + 1); }
    void select_prev() { select(selected_ - 1); }

    // Each returns the decision to record, or nothing when the action does not apply.
    std::optional<DecisionOut> accept(int index);
    std::optional<DecisionOut> reject(int index);
    std::optional<DecisionOut> edit(int index, const std::string& text);  // text == original -> accept
    std::optional<DecisionOut> undo();
    std::optional<DecisionOut> redo();
    bool can_undo() const { return !undo_.empty(); }
    bool can_redo() const { return !redo_.empty(); }

    // Accepted or edited (source, final text) pairs, in candidate order.
    std::vector<std::pair<std::string, std::string>> accepted_pairs() const;

private:
    struct Change {
        int index;
        CandidateState before_state, after_state;
        std::string before_edit, after_edit;
        DecisionOut decision;
    };
    std::optional<DecisionOut> apply(int index, CandidateState state, std::string edited, DecisionOut decision);
    void set_state(int index, CandidateState state, const std::string& edited);

    std::string source_;
    GenerationId generation_id_ = 0;
    std::vector<CandidateVm> items_;
    int selected_ = 0;
    std::vector<Change> undo_, redo_;
};

}  // namespace t5s::ui
