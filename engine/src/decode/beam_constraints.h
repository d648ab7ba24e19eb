#pragma once
// force_words_ids constraints as transformers 4.55 tracks them (generation/beam_constraints.py):
// PhrasalConstraint and DisjunctiveConstraint as one ForcedConstraint, and ConstraintListState,
// the progress of one sequence through all of them. Constrained beam search
// (decode/constrained_beam_search.h) ranks candidates by that progress (the "bank"), so every
// detail that moves a bank is kept, transformers' quirks included (each is named where it lives).
// Torch-free.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5s/generation_options.h"

namespace t5s {

// One constraint's progress. Phrasal (spec.disjunctive false): its one phrase, token by token.
// Disjunctive: any one of its alternatives, walked as transformers' DisjunctiveTrie walks them.
class ForcedConstraint {
public:
    explicit ForcedConstraint(const ForcedWordsConstraint& spec);

    struct Update {
        bool stepped = false, completed = false, reset = false;
    };
    // The tokens that take it one step further (empty: complete), in transformers' order.
    std::vector<int> advance() const;
    bool does_advance(int token) const;
    // Takes `token` as generated: one step further, or back to the start.
    Update update(int token);
    void reset();
    int remaining() const;
    int seqlen() const { return seqlen_; }
    // stateful = false: a fresh constraint. stateful = true: with its progress, where a disjunctive
    // constraint's walked prefix is the SAME list in both (transformers assigns the list, it does
    // not copy it): a token one of them takes is taken by the other too, until either resets.
    ForcedConstraint copy(bool stateful) const;

    // Moved, never copied implicitly: a copy that shared the walked prefix where transformers'
    // copies do not would move banks.
    ForcedConstraint(ForcedConstraint&&) = default;
    ForcedConstraint& operator=(ForcedConstraint&&) = default;
    ForcedConstraint(const ForcedConstraint&) = delete;
    ForcedConstraint& operator=(const ForcedConstraint&) = delete;

private:
    const ForcedWordsConstraint* spec_;
    int seqlen_;
    int fulfilled_ = -1;                        // phrasal: index of the last phrase token taken
    std::shared_ptr<std::vector<int>> walked_;  // disjunctive: the trie path taken so far
    bool completed_ = false;
};

// transformers' ConstraintListState: which constraints a sequence has completed, the one it is in
// the middle of, and those still pending (in transformers' order: a constraint that resets goes last).
class ConstraintListState {
public:
    explicit ConstraintListState(const ForcedWords& constraints);

    // The state after `tokens` (a whole sequence, decoder start token included, as transformers
    // passes input_ids), stopping at the token that completes every constraint.
    void reset(const std::vector<int>& tokens);
    void add(int token);
    // The tokens that make progress: the in-progress constraint's next ones, else every pending
    // constraint's first ones (duplicates kept); empty when there are none.
    std::vector<int> advance() const;
    // Progress as a number: max_seqlen per completed constraint plus the tokens of the one in progress.
    int bank() const;
    bool completed() const { return completed_; }
    // transformers' copy(stateful=True); as there, `completed` is not carried over.
    ConstraintListState copy() const;

private:
    void init_state();
    void add_to_pending(int token);

    const ForcedWords* constraints_;
    int max_seqlen_ = 0;
    bool completed_ = false;
    std::vector<ForcedConstraint> complete_, pending_;
    std::optional<ForcedConstraint> in_progress_;
};

// Whether `tokens` (decoder start token included) holds every constraint: transformers'
// check_completes_constraints.
bool completes_constraints(const ForcedWords& constraints, const std::vector<int>& tokens);

// `text` split at `separator`, each part without surrounding blanks, empty parts left out.
std::vector<std::string> trimmed_parts(const std::string& text, char separator);

// The constraints a force_words text stands for ("w1,w2|w3": w1, and w2 or w3): each word as
// transformers' docs tokenize force words, tokenizer(word, add_special_tokens=False), which for
// SentencePiece is the word as it reads mid-sentence (like bad_words). `encode(word)` gives a
// word's ids without </s>. One word: a phrasal constraint; several: a disjunctive one.
template <class Encode>
ForcedWords force_words_token_ids(const std::string& text, Encode encode) {
    ForcedWords out;
    for (const std::string& constraint : trimmed_parts(text, ',')) {
        ForcedWordsConstraint c;
        for (const std::string& word : trimmed_parts(constraint, '|')) {
            std::vector<int> ids = encode(word);
            if (!ids.empty()) c.alternatives.push_back(std::move(ids));
        }
        c.disjunctive = c.alternatives.size() > 1;
        if (!c.alternatives.empty()) out.push_back(std::move(c));
    }
    return out;
}

}  // namespace t5s
