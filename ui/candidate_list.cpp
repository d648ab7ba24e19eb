#include "candidate_list.h"

#include <algorithm>

#include "span_view.h"
#include "t5s/candidate_scores.h"

namespace t5s::ui {

const char* state_label(CandidateState state) { return state == CandidateState::None ? "pending" : to_string(state); }

CandidateVm candidate_vm(const Candidate& c) {
    CandidateVm vm;
    vm.text = c.text;
    vm.score = c.score;
    vm.scores = c.scores;
    vm.spans = c.spans;
    vm.forced_spans = c.forced_spans;
    vm.route = c.route;
    return vm;
}

Candidate candidate_scores(const CandidateVm& vm) {
    Candidate c;
    c.text = vm.text;
    c.score = vm.score;
    c.scores = vm.scores;
    return c;
}

void CandidateList::reset(std::string source, GenerationId generation_id, const std::vector<Candidate>& candidates,
                          std::optional<double> diversity, std::vector<DroppedCandidate> dropped) {
    source_ = std::move(source);
    source_spans_.clear();
    generation_id_ = generation_id;
    items_.clear();
    for (const auto& c : candidates) {
        CandidateVm vm = candidate_vm(c);
        vm.index = int(items_.size());
        vm.diff = diff_chars(source_, c.text);
        items_.push_back(std::move(vm));
    }
    diversity_ = diversity;
    dropped_ = std::move(dropped);
    selected_ = 0;
    undo_.clear();
    redo_.clear();
}

void CandidateList::clear() { reset({}, 0, {}); }

void CandidateList::sort(RankBy key) {
    const int selected_index = items_.empty() ? -1 : items_[size_t(selected_)].index;
    std::sort(items_.begin(), items_.end(), [](const CandidateVm& a, const CandidateVm& b) { return a.index < b.index; });
    std::vector<Candidate> scores;
    for (const auto& vm : items_) scores.push_back(candidate_scores(vm));
    std::vector<CandidateVm> ranked;
    for (size_t i : rank_order(scores, key)) ranked.push_back(std::move(items_[i]));
    items_ = std::move(ranked);
    if (selected_index >= 0) selected_ = position_of(selected_index);
}

bool CandidateList::all_have_similarity() const {
    return !items_.empty() &&
           std::all_of(items_.begin(), items_.end(), [](const CandidateVm& c) { return c.scores.similarity.has_value(); });
}

int CandidateList::position_of(int index) const {
    for (size_t p = 0; p < items_.size(); ++p)
        if (items_[p].index == index) return int(p);
    return 0;
}

void CandidateList::select(int index) {
    if (items_.empty()) {
        selected_ = 0;
        return;
    }
    selected_ = std::clamp(index, 0, int(items_.size()) - 1);
}

void CandidateList::set_state(int position, CandidateState state, const std::string& edited) {
    auto& c = items_[size_t(position)];
    c.state = state;
    c.edited = state == CandidateState::Edited ? edited : std::string();
    c.edited_spans = state == CandidateState::Edited ? carry_spans(c.text, c.spans, c.edited) : std::vector<Span>();
    c.diff = diff_chars(source_, c.final_text());
}

// `position` in the shown order; the change and the decision name the candidate's generation index.
std::optional<DecisionOut> CandidateList::apply(int position, CandidateState state, std::string edited, DecisionOut decision) {
    if (position < 0 || position >= int(items_.size())) return std::nullopt;
    const auto& c = items_[size_t(position)];
    if (c.state == state && c.edited == edited) return std::nullopt;  // no-op: nothing recorded
    decision.index = c.index;
    Change ch{c.index, c.state, state, c.edited, edited, decision};
    set_state(position, state, edited);
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

std::optional<DecisionOut> CandidateList::undo() { return replay(undo_, redo_, EventKind::Undo); }

std::optional<DecisionOut> CandidateList::redo() { return replay(redo_, undo_, EventKind::Redo); }

// Undo and redo are one move in opposite directions: take the last change off one stack, select its
// candidate and put it in the state on that side of the change, and keep the change on the other stack.
std::optional<DecisionOut> CandidateList::replay(std::vector<Change>& from, std::vector<Change>& to, EventKind kind) {
    if (from.empty()) return std::nullopt;
    Change ch = std::move(from.back());
    from.pop_back();
    selected_ = position_of(ch.index);
    if (kind == EventKind::Undo) set_state(selected_, ch.before_state, ch.before_edit);
    else set_state(selected_, ch.after_state, ch.after_edit);
    DecisionOut out{kind, ch.index, {}};
    to.push_back(std::move(ch));
    return out;
}

std::vector<std::pair<std::string, std::string>> CandidateList::accepted_pairs() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& c : items_)
        if (c.state == CandidateState::Accepted || c.state == CandidateState::Edited) out.emplace_back(source_, c.final_text());
    return out;
}

}  // namespace t5s::ui
