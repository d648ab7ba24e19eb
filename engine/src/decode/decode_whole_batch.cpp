// decode_batch (decode/batch_decoder.h): a whole batch through BatchDecoder's steps on the calling
// thread, for callers that need ids only (Model::generate_ids, the trainer's evaluation).
#include "decode/batch_decoder.h"

#include "t5s/error.h"
#include "t5s/seed.h"

namespace t5s::decode {
namespace {

// Re-reads the caller's settings at a step boundary: the per-step ones reach every group.
void apply_live_settings(BatchDecoder& decoder, GenerationControl* control, uint64_t* seen, GroupId groups) {
    if (!control || !control->live_settings || control->live_settings->version() == *seen) return;
    *seen = control->live_settings->version();
    const GenerationOptions live = control->live_settings->get();
    for (GroupId g = 1; g <= groups; ++g) decoder.merge_live(g, live);
}

}  // namespace

std::vector<std::vector<Candidate>> decode_batch(BatchDecoder& decoder, const IdBatch& inputs, const GenerationOptions& options,
                                                 GenerationControl* control) {
    GenerationOptions o = options;
    if (o.do_sample) o.seed = resolve_seed(o.seed);
    std::vector<GroupSpec> specs;
    // One cohort: the inputs share every step's processors, pick and beam search.
    for (size_t i = 0; i < inputs.size(); ++i) specs.push_back({static_cast<GroupId>(i + 1), inputs[i], o, /*cohort=*/1});
    decoder.add(specs);
    uint64_t seen = control && control->live_settings ? control->live_settings->version() : 0;
    for (int step = 1; decoder.rows() > 0; ++step) {
        if (control && control->cancel.load()) {
            for (GroupId g = 1; g <= specs.size(); ++g) decoder.remove(g);
            throw Error(ErrorCode::Cancelled, "generation cancelled");
        }
        apply_live_settings(decoder, control, &seen, specs.size());
        const int rows = decoder.rows();
        decoder.step();
        if (control && control->on_step) control->on_step(StepInfo{step, rows, rows});
    }
    std::vector<std::vector<Candidate>> out;
    for (const auto& spec : specs) out.push_back(decoder.take_results(spec.id));
    return out;
}

}  // namespace t5s::decode
