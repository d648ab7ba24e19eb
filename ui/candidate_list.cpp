#include "candidate_list.h"

#include <algorithm>

namespace t5s::ui {

const char* state_label(CandidateState state) {
    return state == CandidateState::None ? "pending" : to_string(state);
}

void CandidateList::reset(std::string source, GenerationId generation_id, const std::vector<Candidate>& candidates) {
    source_ = std::move(source);
    generation_id_ = generation_id;
    items_.clear();
    for (const auto& c : candidates) {
        CandidateVm vm;
        vm.text = c.text;
        vm.score = c.score;
        vm.diff = diff_chars(source_, c.text);
        items_.push_back(std::move(vm));
    }
    selected_ = 0;
    undo_.clear();
    redo_.clear();
}

void CandidateList::clear() { reset({}, 0, {}); }

void CandidateList::select(int index) {
    if (items_.empty()) {
        selected_ = 0;
        return;
    }
    selected_ = std::clamp(index, 0, int(items_.size()) - 1);
}

void CandidateList::set_state(int index, CandidateState state, const std::string& edited) {
    auto& c = items_[size_t(index)];
    c.state = state;
    c.edited = state == CandidateState::Edited ? edited : std::string();
    c.diff = diff_chars(source_, c.final_text());
}

std::optional<DecisionOut> CandidateList::apply(int index, CandidateState state, std::string edited, DecisionOut decision) {
    if (index < 0 || index >= int(items_.size())) return std::nullopt;
    const auto& c = items_[size_t(index)];
    if (c.state == state && c.edited == edited) return std::nullopt;  // no-op: nothing recorded
    Change ch{index, c.state, state, c.edited, edited, decision};
    set_state(index, state, edited);
    undo_.push_back(std::move(ch));
    redo_.clear();
    return decision;
}

std::optional<DecisionOut> CandidateList::accept(int index) {
    return apply(index, CandidateState::Accepted, {}, DecisionOut{EventKind::Accept, index, {}});
}

std::optional<DecisionOut> CandidateList::reject(int index) {
    return apply(index, CandidateState::Rejected, {}, DecisionOut{EventKind::Reject, index, {}});
}

std::optional<DecisionOut> CandidateList::edit(int index, const std::string& text) {
    if (index < 0 || index >= int(items_.size())) return std::nullopt;
    if (text == items_[size_t(index)].text) return accept(index);
    return apply(index, CandidateState::Edited, text, DecisionOut{EventKind::Edit, index, text});
}

std::optional<DecisionOut> CandidateList::undo() {
    if (undo_.empty()) return std::nullopt;
    Change ch = std::move(undo_.back());
    undo_.pop_back();
    set_state(ch.index, ch.before_state, ch.before_edit);
    selected_ = ch.index;
    DecisionOut out{EventKind::Undo, ch.index, {}};
    redo_.push_back(std::move(ch));
    return out;
}

std::optional<DecisionOut> CandidateList::redo() {
    if (redo_.empty()) return std::nullopt;
    Change ch = std::move(redo_.back());
    redo_.pop_back();
    set_state(ch.index, ch.after_state, ch.after_edit);
    selected_ = ch.index;
    DecisionOut out{EventKind::Redo, ch.index, {}};
    undo_.push_back(std::move(ch));
    return out;
}

std::vector<std::pair<std::string, std::string>> CandidateList::accepted_pairs() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& c : items_)
        if (c.state == CandidateState::Accepted || c.state == CandidateState::Edited) out.emplace_back(source_, c.final_text());
    return out;
}

}  // namespace t5s::ui
