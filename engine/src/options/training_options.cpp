// TrainingOptions' validation and JSON (declared in t5s/trainer.h), derived from the field table
// (t5s/training_fields.h): the JSON is what the history stores for a run, so that a run cut off by
// closing the app resumes with the settings it started with. Torch-free (in t5s_core).
#include "t5s/error.h"
#include "t5s/settings_json.h"
#include "t5s/training_fields.h"

namespace t5s {
namespace {
[[noreturn]] void bad(const std::string& m) { throw Error(ErrorCode::InvalidArgument, m); }

// What no single row can say: which fields go together.
void check_combinations(const TrainingOptions& o) {
    if (o.model_dir.empty() == o.init_config.empty())
        bad("give exactly one of --model DIR (fine-tune) or --init-config FILE (from scratch)");
    if (o.data_file.empty()) bad("--data FILE is required");
    if (o.out_dir.empty()) bad("--out DIR is required");
}

void check_devices(const TrainingOptions& o) {
    if (o.precision == Precision::Int8) bad("--precision int8 is for inference; train in fp32, bf16 or fp16");
    if (o.precision == TrainPrecision::Fp16 && o.device == TrainDevice::Cpu)
        bad("--precision fp16 needs CUDA; use bf16 on the CPU");
    const bool lora = o.lora || !o.adapter_dir.empty();
    if (lora && o.model_dir.empty()) bad("--lora needs --model DIR (the frozen base)");
    if (o.lora_base_precision != Precision::Fp32 && !lora) bad("--lora-base-precision needs --lora or --adapter");
    if (o.merge_adapter && !lora) bad("--merge needs --lora or --adapter");
}

}  // namespace

void validate_training_options(const TrainingOptions& o) {
    check_combinations(o);
    const std::string range = settings_first_range_error(training_fields(), o);
    if (!range.empty()) bad(range);
    check_devices(o);
}

std::string training_options_to_json(const TrainingOptions& o) { return settings_to_json(training_fields(), o).dump(); }

TrainingOptions training_options_from_json(const std::string& text) {
    return settings_from_json<std::vector<TrainingField>, TrainingOptions>(training_fields(), text, "training options");
}

}  // namespace t5s
