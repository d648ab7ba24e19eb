#include "decode/beam_constraints.h"

#include <algorithm>

namespace t5s {
namespace {

int longest(const TokenIdLists& alternatives) {
    size_t n = 0;
    for (const auto& a : alternatives) n = std::max(n, a.size());
    return static_cast<int>(n);
}

}  // namespace

ForcedConstraint::ForcedConstraint(const ForcedWordsConstraint& spec)
    : spec_(&spec), seqlen_(longest(spec.alternatives)), walked_(std::make_shared<std::vector<int>>()) {}

// Phrasal: the next phrase token. Disjunctive: the trie's children of the walked path, in the
// order the alternatives first reach them (the order of transformers' dict keys).
std::vector<int> ForcedConstraint::advance() const {
    if (!spec_->disjunctive) {
        if (completed_) return {};
        return {spec_->alternatives[0][static_cast<size_t>(fulfilled_ + 1)]};
    }
    const std::vector<int>& path = *walked_;
    std::vector<int> next;
    for (const auto& a : spec_->alternatives) {
        if (a.size() <= path.size() || !std::equal(path.begin(), path.end(), a.begin())) continue;
        const int token = a[path.size()];
        if (std::find(next.begin(), next.end(), token) == next.end()) next.push_back(token);
    }
    return next;
}

bool ForcedConstraint::does_advance(int token) const {
    if (spec_->disjunctive) {
        const std::vector<int> next = advance();
        return std::find(next.begin(), next.end(), token) != next.end();
    }
    return !completed_ && token == spec_->alternatives[0][static_cast<size_t>(fulfilled_ + 1)];
}

ForcedConstraint::Update ForcedConstraint::update(int token) {
    Update u;
    if (does_advance(token)) {
        u.stepped = true;
        if (spec_->disjunctive) {
            walked_->push_back(token);  // the shared list: see copy()
        } else {
            fulfilled_ += 1;
            u.completed = fulfilled_ == seqlen_ - 1;
            completed_ = u.completed;
        }
    } else {
        u.reset = true;
        reset();
    }
    if (spec_->disjunctive) {  // transformers asks the trie after either branch
        u.completed = advance().empty();
        completed_ = u.completed;
    }
    return u;
}

// transformers' PhrasalConstraint.reset sets fulfilled_idx to 0, not -1. ConstraintListState
// replaces a constraint that resets by a fresh copy, so the 0 is never read there.
void ForcedConstraint::reset() {
    completed_ = false;
    if (spec_->disjunctive) {
        walked_ = std::make_shared<std::vector<int>>();  // a new list: the sharing ends here
    } else {
        fulfilled_ = 0;
    }
}

int ForcedConstraint::remaining() const {
    if (spec_->disjunctive) return completed_ ? 0 : seqlen_ - static_cast<int>(walked_->size());
    return seqlen_ - (fulfilled_ + 1);
}

ForcedConstraint ForcedConstraint::copy(bool stateful) const {
    ForcedConstraint c(*spec_);
    if (!stateful) return c;
    c.fulfilled_ = fulfilled_;
    c.walked_ = walked_;
    c.completed_ = completed_;
    return c;
}

ConstraintListState::ConstraintListState(const ForcedWords& constraints) : constraints_(&constraints) {
    for (const auto& c : constraints) max_seqlen_ = std::max(max_seqlen_, longest(c.alternatives));
    init_state();
}

void ConstraintListState::init_state() {
    complete_.clear();
    in_progress_.reset();
    pending_.clear();
    for (const auto& c : *constraints_) pending_.emplace_back(c);
}

void ConstraintListState::reset(const std::vector<int>& tokens) {
    init_state();
    for (int token : tokens) {
        add(token);
        if (completed_) break;
    }
}

void ConstraintListState::add(int token) {
    if (completed_) return;
    if (!in_progress_) return add_to_pending(token);
    const ForcedConstraint::Update u = in_progress_->update(token);
    if (u.reset) {
        pending_.push_back(in_progress_->copy(false));  // a fresh one goes to the back of the queue
        in_progress_.reset();
    }
    if (u.completed && in_progress_) {
        complete_.push_back(std::move(*in_progress_));
        in_progress_.reset();
        if (pending_.empty()) completed_ = true;
    }
}

// No constraint in progress: the first pending one that `token` advances takes it (one only).
void ConstraintListState::add_to_pending(int token) {
    for (size_t i = 0; i < pending_.size(); ++i) {
        if (!pending_[i].does_advance(token)) continue;
        const ForcedConstraint::Update u = pending_[i].update(token);
        if (u.completed) {
            complete_.push_back(std::move(pending_[i]));
        } else {
            in_progress_ = std::move(pending_[i]);
        }
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        if (pending_.empty() && !in_progress_) completed_ = true;
        return;
    }
}

std::vector<int> ConstraintListState::advance() const {
    if (in_progress_) return in_progress_->advance();
    std::vector<int> tokens;
    for (const auto& c : pending_) {
        const std::vector<int> next = c.advance();
        tokens.insert(tokens.end(), next.begin(), next.end());
    }
    return tokens;
}

int ConstraintListState::bank() const {
    const int in_progress = in_progress_ ? max_seqlen_ - in_progress_->remaining() : 0;
    return static_cast<int>(complete_.size()) * max_seqlen_ + in_progress;
}

ConstraintListState ConstraintListState::copy() const {
    ConstraintListState s(*constraints_);
    s.complete_.clear();
    for (const auto& c : complete_) s.complete_.push_back(c.copy(true));
    if (in_progress_) s.in_progress_ = in_progress_->copy(true);
    s.pending_.clear();
    for (const auto& c : pending_) s.pending_.push_back(c.copy(false));
    return s;
}

bool completes_constraints(const ForcedWords& constraints, const std::vector<int>& tokens) {
    ConstraintListState state(constraints);
    state.reset(tokens);
    return state.completed();
}

std::vector<std::string> trimmed_parts(const std::string& text, char separator) {
    std::vector<std::string> parts;
    size_t begin = 0;
    while (begin <= text.size()) {
        size_t end = text.find(separator, begin);
        if (end == std::string::npos) end = text.size();
        const std::string part = text.substr(begin, end - begin);
        const size_t first = part.find_first_not_of(" \t"), last = part.find_last_not_of(" \t");
        if (first != std::string::npos) parts.push_back(part.substr(first, last - first + 1));
        begin = end + 1;
    }
    return parts;
}

}  // namespace t5s
