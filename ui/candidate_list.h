#pragma once
// The annotator's candidate list for one generation: states, edit in place, accept / reject,
// undo / redo, the quality scores and the order shown. Pure logic (no ImGui). Each action returns
// the decision to record in the history (EventKind + text); undo/redo mirror HistoryStore::undo/redo,
// which act on the latest decision of the generation, so the local stack and the stored state stay
// in step. Positions (select, accept, edit...) are places in the shown order; a decision names the
// candidate by its index in the generation, whatever order it is shown in.
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
    int index = 0;       // place in the generation (the history's candidate index)
    std::string text;    // as generated
    std::string edited;  // final text when Edited
    double score = 0.0;
    CandidateScores scores;  // quality scores (t5s/score_names.h); empty when not computed
    CandidateState state = CandidateState::None;
    std::vector<DiffSegment> diff;  // source -> final text
    // Protected spans: at their offsets in `text`, and carried into `edited` (span_view.h's
    // carry_spans: a span the edit removed is not shown); spans the decoder had to force.
    std::vector<Span> spans, edited_spans;
    int forced_spans = 0;
    Route route;  // a recipe's candidate: the steps it came through and their texts; else empty
    const std::string& final_text() const { return state == CandidateState::Edited ? edited : text; }
    const std::vector<Span>& final_spans() const { return state == CandidateState::Edited ? edited_spans : spans; }
};

// A generated candidate as a row (text, score, quality scores; index, state and diff left to the
// caller), and back: a row's text and scores as the engine's Candidate, for its filter and ranking rules.
CandidateVm candidate_vm(const Candidate& c);
Candidate candidate_scores(const CandidateVm& vm);

struct DecisionOut {
    EventKind kind = EventKind::Accept;
    int index = 0;
    std::string text;
};

class CandidateList {
public:
    void reset(std::string source, GenerationId generation_id, const std::vector<Candidate>& candidates,
               std::optional<double> diversity = {}, std::vector<DroppedCandidate> dropped = {});
    void clear();

    // Shows the candidates ranked by `key` (Similarity, BackScore, Fluency; None = the generation's
    // order), best first, as t5s::rank_order ranks them; the selection stays on its candidate.
    void sort(RankBy key);
    bool all_have_similarity() const;
    std::optional<double> diversity() const { return diversity_; }
    const std::vector<DroppedCandidate>& dropped() const { return dropped_; }

    const std::string& source() const { return source_; }
    // The generation's protected spans in the source (GenerationResult::spans).
    const std::vector<Span>& source_spans() const { return source_spans_; }
    void set_source_spans(std::vector<Span> spans) { source_spans_ = std::move(spans); }
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
    std::optional<DecisionOut> accept(int position);
    std::optional<DecisionOut> reject(int position);
    std::optional<DecisionOut> edit(int position, const std::string& text);  // text == original -> accept
    std::optional<DecisionOut> undo();
    std::optional<DecisionOut> redo();
    bool can_undo() const { return !undo_.empty(); }
    bool can_redo() const { return !redo_.empty(); }

    // Accepted or edited (source, final text) pairs, in candidate order.
    std::vector<std::pair<std::string, std::string>> accepted_pairs() const;

private:
    struct Change {
        int index;  // the candidate's index in the generation
        CandidateState before_state, after_state;
        std::string before_edit, after_edit;
        DecisionOut decision;
    };
    std::optional<DecisionOut> apply(int position, CandidateState state, std::string edited, DecisionOut decision);
    void set_state(int position, CandidateState state, const std::string& edited);
    std::optional<DecisionOut> replay(std::vector<Change>& from, std::vector<Change>& to, EventKind kind);
    int position_of(int index) const;

    std::string source_;
    std::vector<Span> source_spans_;
    GenerationId generation_id_ = 0;
    std::vector<CandidateVm> items_;  // in the order shown
    std::optional<double> diversity_;
    std::vector<DroppedCandidate> dropped_;
    int selected_ = 0;
    std::vector<Change> undo_, redo_;
};

}  // namespace t5s::ui
