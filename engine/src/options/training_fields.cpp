// The training and learning-loop field tables (t5s/training_fields.h). The flag names, JSON names,
// help lines and defaults they state are contracts: `train --help`, `learn --help` and the runs the
// history already holds. A help line states its default as {default} (or {default:point}: 1.0),
// filled from TrainingOptions{} / LearningOptions{} (t5s/help_defaults.h).
#include "t5s/training_fields.h"

namespace t5s {
namespace {

using O = TrainingOptions;
using D = DataOptions;
using L = LearningOptions;
constexpr FlagUse kModelFlag = FlagUse::Model, kRuntime = FlagUse::Runtime;

constexpr auto row = settings_row<TrainingMember>;

std::vector<TrainingField> training_rows() {
    // clang-format off
    return {
        row("model_dir", &O::model_dir, "model", "DIR", "model folder to fine-tune (or --init-config)").via(kModelFlag),
        row("init_config", &O::init_config, "init-config", "FILE", "config.json of a new model trained from scratch, with a vocabulary trained on the data"),
        row("vocab_size", &O::vocab_size, "vocab-size", "N", "with --init-config: SentencePiece pieces (default {default}; the model adds 100 sentinels)").within(at_least(100)),
        row("data_file", &O::data_file, "data", "FILE", "training pairs: JSONL (source/target, input/output, text/target) or CSV/TSV with a header"),
        row("extra_data_files", &O::extra_data_files, "extra-data", "FILE", "more training pairs, same formats"),
        row("eval_file", &O::eval_file, "eval-data", "FILE", "validation pairs (default: split --eval-split off the training data)"),
        row("eval_split", &O::eval_split, "eval-split", "X", "fraction held out for evaluation without --eval-data (default {default}; 0 = no eval)").within(from_below(0, 1)),
        row("max_eval_pairs", &O::max_eval_pairs, "max-eval-pairs", "N", "evaluate at most N pairs (default {default}; 0 = all)").within(at_least(0)),
        row("source_field", &D::source_field, "source-field", "NAME", "JSONL key / CSV column of the source (default: the first of text, sentence, sentence1, source, input, src, in any case)"),
        row("target_field", &D::target_field, "target-field", "NAME", "JSONL key / CSV column of the target (default: the first of target, output, paraphrase, sentence2, tgt, in any case)"),
        row("source_prefix", &D::source_prefix, "source-prefix", "TEXT", "prepended to every source (e.g. \"paraphrase: \")"),
        row("on_bad_row", &D::on_bad_row, "on-bad-row", "P", "skip (default: report file:line and go on) or fail"),
        row("out_dir", &O::out_dir, "out", "DIR", "output folder: checkpoint-N/, final/, train_log.jsonl"),
        row("steps", &O::steps, "steps", "N", "optimizer steps (>= 1; or --epochs)").within(at_least(1)).or_unset(0),
        row("epochs", &O::epochs, "epochs", "X", "passes over the data (default {default})").within(above(0)),
        row("batch_size", &O::batch_size, "batch-size", "N", "pairs per micro-batch, per rank (default {default})").within(at_least(1)).widget(1, 4096),
        row("grad_accum", &O::grad_accum, "grad-accum", "N", "micro-batches per optimizer step (default {default})").within(at_least(1)).widget(1, 1024),
        row("lr", &O::lr, "lr", "X", "peak learning rate (> 0; default 5e-4 for AdamW, relative steps for Adafactor)").within(above(0)).or_unset(-1),
        row("optimizer", &O::optimizer, "optimizer", "O", "adamw (default) or adafactor"),
        row("schedule", &O::schedule, "schedule", "S", "learning-rate schedule: linear (default), cosine or constant"),
        row("warmup_steps", &O::warmup_steps, "warmup", "N", "steps of linear warmup from 0 to --lr (default {default})").within(at_least(0)),
        row("weight_decay", &O::weight_decay, "weight-decay", "X", "decoupled weight decay (default {default})").within(at_least(0)),
        row("max_grad_norm", &O::max_grad_norm, "max-grad-norm", "X", "clip the gradients' global L2 norm (default {default:point}; 0 = off)")
            .within(at_least(0, ">= 0 (0 = no clipping)")),
        row("dropout", &O::dropout, "dropout", "X", "dropout rate in [0, 1) (default: config.json's dropout_rate)").within(from_below(0, 1)).or_unset(-1),
        row("precision", &O::precision, "precision", "P", "fp32 (default), bf16 or fp16 (autocast; fp16 on CUDA only)"),
        row("gradient_checkpointing", &O::gradient_checkpointing, "grad-checkpointing", "", "recompute each block in the backward pass (less memory, slower)"),
        row("max_source_len", &O::max_source_len, "max-source-len", "N", "source tokens kept, with </s> (default {default}; longer is truncated)").within(at_least(2)).widget(16, 1024),
        row("max_target_len", &O::max_target_len, "max-target-len", "N", "target tokens kept, with </s> (default {default})").within(at_least(2)).widget(16, 1024),
        row("group_by_length", &O::group_by_length, "no-group-by-length", "", "batch pairs in random order, not by similar length").switch_sets(false),
        row("seed", &O::seed, "seed", "S", "seed of data order, initialisation and dropout (default {default})"),
        row("device", &O::device, "device", "D", "").via(kRuntime),  // train's runtime group: --device, --threads
        row("threads", &O::threads, "threads", "N", "").via(kRuntime).within(at_least(0)),
        row("eval_every", &O::eval_every, "eval-every", "N", "steps between evaluations (default {default}: at each checkpoint and at the end)").within(at_least(0)),
        row("sample_count", &O::sample_count, "samples", "N", "validation inputs generated and shown at each evaluation (default {default})").within(at_least(0)),
        row("patience", &O::patience, "patience", "N", "stop after N evaluations without improvement (default {default} = off)").within(at_least(0)),
        row("save_every", &O::save_every, "save-every", "N", "steps between checkpoints (default {default}: only at the end)").within(at_least(0)),
        row("keep_last", &O::keep_last, "keep-last", "N", "checkpoints kept besides the best by eval loss (default {default})").within(at_least(1)),
        row("save_dtype_bf16", &O::save_dtype_bf16, "save-bf16", "", "store the final model in bf16 (half the size)"),
        row("resume", &O::resume, "resume", "", "continue from the newest checkpoint in --out"),
        row("max_time_s", &O::max_time_s, "max-time", "SECONDS", "stop with a checkpoint after this much wall time (default {default} = no limit)").within(at_least(0)),
        row("log_file", &O::log_file, "log", "FILE", "JSONL log, one line per logged step (default OUT/train_log.jsonl)"),
        row("log_every", &O::log_every, "log-every", "N", "steps between log lines and progress lines (default {default})").within(at_least(1)),
        row("dist_timeout_s", &O::dist_timeout_s, "dist-timeout", "SECONDS", "data-parallel runs: fail, naming the lost rank, after waiting this long (default {default})")
            .within(above(0, "> 0 seconds")),
        row("lora", &O::lora, "lora", "", "train a LoRA adapter (PEFT format) on the frozen --model; checkpoints are adapters"),
        row("lora_r", &O::lora_r, "lora-r", "N", "LoRA rank (default {default})").within(at_least(1)),
        row("lora_alpha", &O::lora_alpha, "lora-alpha", "X", "LoRA alpha; the update is scaled by alpha / r (default {default})").within(above(0)),
        row("lora_dropout", &O::lora_dropout, "lora-dropout", "X", "dropout on the LoRA input, in [0, 1) (default {default})").within(from_below(0, 1)),
        row("lora_targets", &O::lora_targets, "lora-targets", "LIST", "layers: q,k,v,o,wi,wi_0,wi_1,wo or all-linear (default {default})"),
        row("lora_rslora", &O::lora_rslora, "lora-rslora", "", "rank-stabilised scaling alpha / sqrt(r)"),
        row("lora_base_precision", &O::lora_base_precision, "lora-base-precision", "P", "hold the frozen base in fp32 (default), bf16, fp16 or int8 (less memory)")
            .checked_at_flag(),  // an unknown name is a usage error (exit 2), as it always was
        row("adapter_dir", &O::adapter_dir, "adapter", "DIR", "continue training this LoRA adapter (its config decides r, alpha, targets)"),
        row("merge_adapter", &O::merge_adapter, "merge", "", "with LoRA: also write OUT/merged, the adapter folded into a full HF checkpoint"),
        // No flag: the app's settings and the history's records only.
        row("adam_beta1", &O::adam_beta1, "", "", "AdamW's first-moment decay (default {default})").within(from_below(0, 1)),
        row("adam_beta2", &O::adam_beta2, "", "", "AdamW's second-moment decay (default {default})").within(from_below(0, 1)),
        row("adam_eps", &O::adam_eps, "", "", "AdamW's epsilon (default {default})").within(above(0)),
        row("sample_max_new_tokens", &O::sample_max_new_tokens, "", "", "tokens generated per validation sample (default {default})").within(at_least(1)),
        row("auto_reduce_batch_on_oom", &O::auto_reduce_batch_on_oom, "", "", "CUDA out of memory: halve the micro-batch, double the accumulation"),
    };
    // clang-format on
}

constexpr auto lrow = settings_checked_row<LearningMember>;

std::vector<LearningField> learning_rows() {
    // clang-format off
    return {
        lrow("model_dir", &L::model_dir, "model", "DIR", "the base model folder", kAnyValue),
        lrow("history_path", &L::history_path, "history", "PATH", "the history database whose decisions are the training pairs", kAnyValue),
        lrow("adapter_dir", &L::adapter_dir, "adapter-dir", "DIR", "the versions folder (default: HISTORY's folder/learning)", kAnyValue),
        lrow("min_new_pairs", &L::min_new_pairs, "every", "N", "run only when at least N pairs are new since the current version (default {default})", at_least(1))
            .widget(1, 100000),
        lrow("max_steps", &L::max_steps, "max-steps", "N", "optimizer steps of the round, at most (default {default}; a round makes about 3 passes over its pairs)",
             at_least(1))
            .widget(1, 100000),
        lrow("max_time_s", &L::max_time_s, "max-time", "SECONDS", "wall time of the training, at most (default {default}; 0 = none)", at_least(0, ">= 0 seconds")),
        lrow("replay_pairs", &L::replay_pairs, "replay", "N", "older pairs replayed beside the new ones (default {default})", at_least(0)),
        lrow("holdout_every", &L::holdout_every, "holdout-every", "N", "one pair in N is held out for the adoption test, never trained on (default {default})",
             from_to(2, 1000000)),
        lrow("lr", &L::lr, "lr", "X", "learning rate (default {default})", above(0)).widget(1e-6f, 1.0f),
        lrow("epochs", &L::epochs, "epochs", "X", "passes over the round's new + replayed pairs, capped by --max-steps (default {default})", above(0)),
        lrow("lora_r", &L::lora_r, "lora-r", "N", "rank of a new adapter (default {default}; a round that continues a version keeps its rank)", from_to(1, 4096)),
        lrow("lora_targets", &L::lora_targets, "lora-targets", "LIST", "layers of a new adapter: q,k,v,o,wi,wo,wi_0,wi_1 or all-linear (the default)",
             kAnyValue),
        lrow("batch_size", &L::batch_size, "batch-size", "N", "pairs per step (default {default})", from_to(1, 1 << 16)),
        lrow("source_prefix", &L::source_prefix, "source-prefix", "TEXT", "task prefix the base model expects, e.g. \"paraphrase: \" (default none)", kAnyValue),
        lrow("seed", &L::seed, "seed", "S", "data order and held-out choice (default {default})", kAnyValue),
        lrow("threads", &L::threads, "threads", "N", "", at_least(0)).via(kRuntime),  // learn's runtime group: --threads alone
        // No flag: the app's and serve's rounds set these.
        lrow("max_holdout", &L::max_holdout, "", "", "cap on the held-out pairs scored (default {default})", at_least(0)),
        lrow("lora_alpha", &L::lora_alpha, "", "", "a new adapter's alpha (default {default})", above(0)),
        lrow("device", &L::device, "", "", "where the round trains (default {default})", kAnyValue),
        lrow("min_improvement", &L::min_improvement, "", "", "adopted only if the held-out loss drops by more than this (default {default})", kAnyValue),
    };
    // clang-format on
}

}  // namespace

const std::vector<TrainingField>& training_fields() {
    static const std::vector<TrainingField> fields = training_rows();
    return fields;
}

const TrainingField* find_training_field(const std::string& json_name) {
    return find_settings_field(training_fields(), json_name);
}

const std::vector<LearningField>& learning_fields() {
    static const std::vector<LearningField> fields = learning_rows();
    return fields;
}

std::string learning_options_error(const LearningOptions& options) {
    return settings_first_range_error(learning_fields(), options);
}

}  // namespace t5s
