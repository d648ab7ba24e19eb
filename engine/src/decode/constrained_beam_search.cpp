#include "decode/constrained_beam_search.h"

#include <algorithm>
#include <numeric>

#include "decode/beam_constraints.h"
#include "decode/logits_processors.h"
#include "torch/vocab_kernels.h"

namespace t5s {
namespace {

at::Tensor long_tensor(const std::vector<int64_t>& v, at::Device device) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(device);
}

std::vector<int> appended(std::vector<int> sequence, int token) {
    sequence.push_back(token);
    return sequence;
}

}  // namespace

ConstrainedBeamSearch::ConstrainedBeamSearch(int64_t inputs, const GenerationOptions& o, const ModelConfig& cfg, at::Device dev,
                                             KernelIsa vocab)
    : BeamSearch(inputs, o, cfg, dev, vocab), constraints_(o.force_words_ids) {
    sequences_.assign(static_cast<size_t>(B_ * nb_), std::vector<int>{static_cast<int>(cfg.decoder_start_token_id)});
    // Only each input's first beam starts: the others' -1e9 keeps them out of the first top-k.
    beam_scores_.assign(static_cast<size_t>(B_ * nb_), -1e9f);
    for (int64_t r = 0; r < B_ * nb_; r += nb_) beam_scores_[static_cast<size_t>(r)] = 0.0f;
    finished_.resize(static_cast<size_t>(B_));
    input_done_.assign(static_cast<size_t>(B_), 0);
}

at::Tensor ConstrainedBeamSearch::last_tokens() const {
    std::vector<int64_t> last;
    for (const auto& s : sequences_) last.push_back(s.back());
    return long_tensor(last, device_);
}

at::Tensor ConstrainedBeamSearch::step(at::Tensor logits, const GenerationOptions& o) {
    at::Tensor scores = logits;  // this step's own tensor: normalised in place where possible
    if (!log_softmax_inplace_cpu(scores, vocab_)) scores = at::log_softmax(logits, -1);
    std::vector<int64_t> flat;
    for (const auto& s : sequences_) flat.insert(flat.end(), s.begin(), s.end());
    process_rows(scores, long_tensor(flat, device_).view({B_ * nb_, cur_len_}), o, nb_);
    // transformers' scores_for_all_vocab: the constraints' continuations take their scores from it.
    scores.add_(at::tensor(beam_scores_).to(scores.device()).unsqueeze(1));
    auto [top_scores, top_ids] = topk_distinct_fast(scores.view({B_, nb_ * V_}), 2 * nb_);
    top_scores = top_scores.to(at::kCPU).contiguous();
    top_ids = top_ids.to(at::kCPU).contiguous();

    std::vector<Continuation> next;
    for (int64_t b = 0; b < B_; ++b) {
        if (input_done_[static_cast<size_t>(b)]) {  // transformers feeds pad on, continuing the batch's row 0
            next.insert(next.end(), static_cast<size_t>(nb_), Continuation{0.0f, static_cast<int>(pad_), 0});
            continue;
        }
        const float* top = top_scores.data_ptr<float>() + b * 2 * nb_;
        const std::vector<Continuation> chosen = advance(b, pick(b, top, top_ids.data_ptr<int64_t>() + b * 2 * nb_), scores);
        next.insert(next.end(), chosen.begin(), chosen.end());
        if (finished_[static_cast<size_t>(b)].is_done(top[0], cur_len_, length_penalty_, early_, static_cast<size_t>(nb_)))
            input_done_[static_cast<size_t>(b)] = 1;
    }

    std::vector<std::vector<int>> sequences;
    std::vector<int64_t> sources;
    for (size_t r = 0; r < next.size(); ++r) {
        sequences.push_back(appended(sequences_[static_cast<size_t>(next[r].source)], next[r].token));
        beam_scores_[r] = next[r].score;
        sources.push_back(next[r].source);
    }
    sequences_ = std::move(sequences);
    cur_len_ += 1;
    const bool all_done = std::all_of(input_done_.begin(), input_done_.end(), [](char d) { return d != 0; });
    done_ = all_done || cur_len_ >= max_length_ || stop_.time_up() || every_row_stops();
    return long_tensor(sources, device_);
}

// transformers stops constrained search when its stopping criteria hold for every row at once: a
// row's last token is </s> (a constraint may hold it) or its text ends with a stop string.
bool ConstrainedBeamSearch::every_row_stops() const {
    for (const auto& s : sequences_) {
        if (s.back() == eos_) continue;
        if (!stop_.strings) return false;
        const std::vector<int64_t> ids(s.begin(), s.end());
        if (!stop_.strings->ends(ids.data(), static_cast<int64_t>(ids.size()))) return false;
    }
    return true;
}

// transformers' ConstrainedBeamSearchScorer.process for one input: in rank order, </s> among the top
// num_beams ends a hypothesis if the beam holds every constraint (else it is passed over), any other
// token continues a beam, until num_beams continuations are chosen.
std::vector<ConstrainedBeamSearch::Continuation> ConstrainedBeamSearch::pick(int64_t b, const float* score, const int64_t* id) {
    std::vector<Continuation> picked;
    for (int64_t rank = 0; rank < 2 * nb_ && static_cast<int64_t>(picked.size()) < nb_; ++rank) {
        const int token = static_cast<int>(id[rank] % V_);
        const int64_t row = b * nb_ + id[rank] / V_;
        if (token != eos_) {
            picked.push_back({score[rank], token, row});
        } else if (rank < nb_ && completes_constraints(constraints_, sequences_[static_cast<size_t>(row)])) {
            finished_[static_cast<size_t>(b)].add(appended(tokens_of(row), token), score[rank], cur_len_, length_penalty_,
                                                  static_cast<size_t>(nb_));
        }
    }
    return picked;
}

// transformers' step_sentence_constraint: each beam of input b that does not yet hold every
// constraint offers the tokens that advance them (scored from `scores`, the processed
// log-probabilities plus the beam's sum), unless the sequence is already offered; then
// rank_by_bank picks num_beams from the picked and the offered.
std::vector<ConstrainedBeamSearch::Continuation> ConstrainedBeamSearch::advance(int64_t b, std::vector<Continuation> picked,
                                                                                const at::Tensor& scores) const {
    std::vector<std::vector<int>> offered;
    std::vector<int> banks;
    for (const Continuation& c : picked) {
        offered.push_back(appended(sequences_[static_cast<size_t>(c.source)], c.token));
        ConstraintListState state(constraints_);
        state.reset(offered.back());
        banks.push_back(state.bank());
    }
    std::vector<int64_t> lookups;  // flat [row * V + token] of each new continuation's score
    for (int64_t row = b * nb_; row < (b + 1) * nb_; ++row) {
        const std::vector<int>& before = sequences_[static_cast<size_t>(row)];
        ConstraintListState state(constraints_);
        state.reset(before);
        if (state.completed()) continue;
        // Every advancing token is added to a copy even when its sequence is not new: a copy of a
        // disjunctive constraint in progress shares its walked prefix, so the adds move the banks
        // of the copies made before (transformers reads the banks after all of them).
        std::vector<ConstraintListState> added;
        for (int token : state.advance()) {
            ConstraintListState copy = state.copy();
            copy.add(token);
            std::vector<int> sequence = appended(before, token);
            if (std::find(offered.begin(), offered.end(), sequence) != offered.end()) continue;
            offered.push_back(std::move(sequence));
            picked.push_back({0.0f, token, row});
            lookups.push_back(row * V_ + token);
            added.push_back(std::move(copy));
        }
        for (const auto& s : added) banks.push_back(s.bank());
    }
    if (lookups.empty()) return picked;
    const at::Tensor found =
        scores.reshape({-1}).index_select(0, long_tensor(lookups, scores.device())).to(at::kCPU).contiguous();
    const size_t first_new = picked.size() - lookups.size();
    for (size_t i = 0; i < lookups.size(); ++i) picked[first_new + i].score = found.data_ptr<float>()[i];
    return rank_by_bank(picked, banks, static_cast<size_t>(nb_));
}

std::vector<ConstrainedBeamSearch::Continuation> ConstrainedBeamSearch::rank_by_bank(const std::vector<Continuation>& candidates,
                                                                                     const std::vector<int>& banks, size_t keep) {
    const int64_t n = static_cast<int64_t>(candidates.size());
    // bank * 100 + score in float32 (transformers adds an int64 tensor to a float32 one), ordered by
    // torch's own sort so that ties (-inf scores, float32 rounding) fall as they fall there.
    at::Tensor zipped = at::empty({n}, at::kFloat);
    for (int64_t i = 0; i < n; ++i)
        zipped.data_ptr<float>()[i] =
            static_cast<float>(banks[static_cast<size_t>(i)] * 100) + candidates[static_cast<size_t>(i)].score;
    const at::Tensor indices = std::get<1>(at::sort(zipped, /*dim=*/0, /*descending=*/true)).contiguous();
    const int64_t* sorted = indices.data_ptr<int64_t>();
    // The rank of each entry within its run of equal banks (numpy's stable argsort orders by it).
    std::vector<int> increments;
    int counter = -1, current = banks[static_cast<size_t>(sorted[0])];
    for (int64_t i = 0; i < n; ++i) {
        const int bank = banks[static_cast<size_t>(sorted[i])];
        counter = bank == current ? counter + 1 : 0;
        current = bank;
        increments.push_back(counter);
    }
    std::vector<size_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return increments[x] < increments[y]; });
    std::vector<Continuation> out;
    for (size_t i = 0; i < std::min(keep, order.size()); ++i) out.push_back(candidates[static_cast<size_t>(sorted[order[i]])]);
    return out;
}

// A running beam as transformers' finalize returns it: a row the stopping criteria ended before
// max_length is shorter than the longest sequence could be, and transformers puts </s> after it.
std::vector<int> ConstrainedBeamSearch::running_ids(int64_t row) const {
    std::vector<int> ids = tokens_of(row);
    if (cur_len_ < max_length_) ids.push_back(static_cast<int>(eos_));
    return ids;
}

std::vector<int> ConstrainedBeamSearch::tokens_of(int64_t row) const {
    const std::vector<int>& s = sequences_[static_cast<size_t>(row)];
    return std::vector<int>(s.begin() + 1, s.end());
}

// transformers' finalize: for each input not done, its running beams that hold every constraint
// join the finished ones, and all others too when fewer than num_return_sequences do; then the
// best by score (a stable sort, the last of equals first).
std::vector<std::vector<DecodedSequence>> ConstrainedBeamSearch::results(int num_return_sequences) const {
    std::vector<Hypotheses> finished = finished_;
    for (int64_t b = 0; b < B_; ++b) {
        if (input_done_[static_cast<size_t>(b)]) continue;
        std::vector<char> holds(static_cast<size_t>(nb_), 0);
        for (int64_t k = 0; k < nb_; ++k)
            holds[static_cast<size_t>(k)] = completes_constraints(constraints_, sequences_[static_cast<size_t>(b * nb_ + k)]);
        const bool all = std::count(holds.begin(), holds.end(), 1) < num_return_sequences;
        for (bool holding : {true, false}) {
            for (int64_t k = 0; k < nb_; ++k) {
                if (static_cast<bool>(holds[static_cast<size_t>(k)]) != holding || (!holding && !all)) continue;
                finished[static_cast<size_t>(b)].add(running_ids(b * nb_ + k), beam_scores_[static_cast<size_t>(b * nb_ + k)],
                                                     cur_len_ - 1, length_penalty_, static_cast<size_t>(nb_));
            }
        }
    }
    std::vector<std::vector<DecodedSequence>> out(static_cast<size_t>(B_));
    for (int64_t b = 0; b < B_; ++b) {
        std::vector<const Hypotheses::Entry*> all;
        for (const auto& e : finished[static_cast<size_t>(b)].beams) all.push_back(&e);
        std::stable_sort(all.begin(), all.end(), [](const auto* x, const auto* y) { return x->score < y->score; });
        const size_t n = std::min(all.size(), static_cast<size_t>(num_return_sequences));
        for (size_t k = 0; k < n; ++k) {
            const Hypotheses::Entry& e = *all[all.size() - 1 - k];
            std::vector<int> ids = e.ids;
            const auto eos = std::find(ids.begin(), ids.end(), static_cast<int>(eos_));
            if (eos != ids.end()) ids.erase(eos + 1, ids.end());  // as the decoded output reads, up to the first </s>
            out[static_cast<size_t>(b)].push_back({std::move(ids), static_cast<double>(static_cast<float>(e.score))});
        }
    }
    return out;
}

}  // namespace t5s
