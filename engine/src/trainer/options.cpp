#include <cmath>

#include "t5s/error.h"
#include "t5s/trainer.h"

namespace t5s {
namespace {
[[noreturn]] void bad(const std::string& m) { throw Error(ErrorCode::InvalidArgument, m); }
}  // namespace

void validate_training_options(const TrainingOptions& o) {
    if (o.model_dir.empty() == o.init_config.empty()) bad("give exactly one of --model DIR (fine-tune) or --init-config FILE (from scratch)");
    if (o.data_file.empty()) bad("--data FILE is required");
    if (o.out_dir.empty()) bad("--out DIR is required");
    if (o.steps < 0) bad("--steps must be >= 0");
    if (o.steps == 0 && !(o.epochs > 0)) bad("--epochs must be > 0");
    if (o.batch_size < 1) bad("--batch-size must be >= 1");
    if (o.grad_accum < 1) bad("--grad-accum must be >= 1");
    if (o.lr == 0 || (o.lr < 0 && o.lr != -1) || std::isnan(o.lr)) bad("--lr must be > 0");
    if (o.warmup_steps < 0) bad("--warmup must be >= 0");
    if (o.weight_decay < 0) bad("--weight-decay must be >= 0");
    if (o.max_grad_norm < 0) bad("--max-grad-norm must be >= 0 (0 = no clipping)");
    if (o.dropout != -1 && (o.dropout < 0 || o.dropout >= 1)) bad("--dropout must be in [0, 1)");
    if (o.max_source_len < 2 || o.max_target_len < 2) bad("--max-source-len/--max-target-len must be >= 2");
    if (o.eval_every < 0 || o.save_every < 0) bad("--eval-every/--save-every must be >= 0");
    if (o.keep_last < 1) bad("--keep-last must be >= 1");
    if (o.patience < 0) bad("--patience must be >= 0");
    if (o.eval_split < 0 || o.eval_split >= 1) bad("--eval-split must be in [0, 1)");
    if (o.vocab_size < 100) bad("--vocab-size must be >= 100");
    if (o.threads < 0) bad("--threads must be >= 0");
    if (o.log_every < 1) bad("log_every must be >= 1");
    if (!(o.dist_timeout_s > 0)) bad("--dist-timeout must be > 0 seconds");
    if (o.precision == Precision::Int8) bad("--precision int8 is for inference; train in fp32, bf16 or fp16");
    if (o.precision == TrainPrecision::Fp16 && o.device == TrainDevice::Cpu) bad("--precision fp16 needs CUDA; use bf16 on the CPU");
    const bool lora = o.lora || !o.adapter_dir.empty();
    if (lora && o.model_dir.empty()) bad("--lora needs --model DIR (the frozen base)");
    if (lora && o.lora_r < 1) bad("--lora-r must be >= 1");
    if (lora && !(o.lora_alpha > 0)) bad("--lora-alpha must be > 0");
    if (lora && (o.lora_dropout < 0 || o.lora_dropout >= 1)) bad("--lora-dropout must be in [0, 1)");
    if (o.lora_base_precision != Precision::Fp32 && !lora) bad("--lora-base-precision needs --lora or --adapter");
    if (o.merge_adapter && !lora) bad("--merge needs --lora or --adapter");
}

}  // namespace t5s
