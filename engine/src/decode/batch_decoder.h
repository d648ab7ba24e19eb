#pragma once
// The rows of many requests decoding as one batch: continuous batching for an encoder-decoder.
// Each group (one input of one request) is encoded when it joins — groups joining at the same
// step in one pass, each as if alone — and its rows (its candidates or beams) enter the running
// batch at the next decoding step; finished rows leave it.
// T5's decoder has no absolute positions (its self-attention bias is relative), so a row that
// joins at cache position p with the positions before p masked computes exactly what it computes
// alone from position 0: an input's outputs do not depend on what else is in the batch.
// Every generation decodes here: the scheduler (t5s/scheduler.h) for serve, the desktop and the
// CLI; decode_batch below for Model::generate_ids and the trainer's samples.
// Torch-free interface; one thread uses an instance.
#include <cstdint>
#include <memory>
#include <vector>

#include "t5s/generation_options.h"
#include "t5s/model.h"

namespace t5s::decode {

using GroupId = uint64_t;

struct GroupSpec {
    GroupId id = 0;
    std::vector<int> input_ids;  // the tokenized input, </s> included
    GenerationOptions options;   // complete; options.seed already resolved when sampling
    // Inputs added in one add() call with the same nonzero cohort and equal options decode as one
    // group: one pass of the logits processors, one pick and one beam search over all their rows
    // per step, which a batch of one request's inputs would otherwise pay per input. Results are
    // the same (every input still decodes as if alone); a cohort shares its per-step settings
    // (merge_live on one member reaches all), and a beam cohort keeps its rows until every member
    // is done. 0: the input decodes as a group of its own.
    uint64_t cohort = 0;
};

struct FinishedRow {
    GroupId group = 0;
    int row = 0;  // candidate index within the group
    Candidate candidate;
};

struct StepReport {
    int rows = 0;                            // rows decoded in this step
    std::vector<FinishedRow> rows_finished;  // greedy / sampled rows that ended in this step
    std::vector<GroupId> groups_finished;    // groups whose every row has ended
};

class BatchDecoder {
public:
    explicit BatchDecoder(const Model& model);  // a Model from Model::load (LibTorch)
    // Over a network directly (the trainer's); `tokenizer` (may be null) finds protected spans' sentinels.
    BatchDecoder(const StepDecoding& net, const Tokenizer* tokenizer);
    ~BatchDecoder();
    BatchDecoder(const BatchDecoder&) = delete;
    BatchDecoder& operator=(const BatchDecoder&) = delete;

    // Rows a group of these options occupies: beams, or sampled candidates, or 1.
    static int rows_for(const GenerationOptions& options);
    // Encodes the inputs in one pass (T5Network::encode_each: each as if alone) and adds their rows
    // (decoded from the next step). Throws t5s::Error, and then adds none of them.
    void add(const std::vector<GroupSpec>& specs);
    void add(const GroupSpec& spec);
    // Its rows leave the batch now (cancelled requests); a member of a cohort still decoding is
    // forgotten (no results) and its rows leave with the cohort's.
    void remove(GroupId group);
    // The per-step settings of `live` (t5s/generation_fields.h: sampling knobs, penalties) apply to
    // the group (and its cohort) from the next step; its shape (beams, candidates, length) and seed stay.
    void merge_live(GroupId group, const GenerationOptions& live);
    // Rows of the group in the batch now (0: not in it).
    int rows_of(GroupId group) const;
    // One decoding step of every row. Throws t5s::Error (OutOfMemory...): the batch is then reset.
    StepReport step();
    // A finished group's candidates in row order (beam: best first); forgets the group.
    std::vector<Candidate> take_results(GroupId group);

    // Intra-op threads of the calling thread (the scheduler thread); 0 leaves them.
    void use_threads_here(int threads);

    int rows() const;
    int groups() const;  // inputs decoding (members of cohorts counted one by one)

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Inputs decoded together to the end on the calling thread, each as if alone (Model::generate_ids,
// the trainer's evaluation): the scheduler's decoding steps without its queue, rounds or scores.
// Per input, its candidates in row order (beam: best first). `control` (may be null): cancel
// (throws Cancelled), per-step settings (live_settings), step reports (on_step).
std::vector<std::vector<Candidate>> decode_batch(BatchDecoder& decoder, const IdBatch& inputs, const GenerationOptions& options,
                                                 GenerationControl* control = nullptr);

}  // namespace t5s::decode
