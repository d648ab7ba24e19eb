// t5studio train: fine-tune an HF checkpoint (--model DIR) or train from scratch (--init-config FILE)
// on JSONL/CSV/TSV pairs. JSONL log per step (--log), progress on stderr, HF-format checkpoints.
#include <cstdio>
#include <iostream>
#include <sstream>

#include <filesystem>

#include "cli/args.h"
#include "t5s/history_store.h"
#include "cli/commands.h"
#include "cli/runtime_flags.h"
#include "t5s/error.h"
#include "t5s/trainer.h"
#include "t5s/training_record.h"

namespace t5s::cli {
namespace {

std::string fmt_duration(double s) {
    if (s < 0 || s > 1e8) return "?";
    char buf[32];
    const int t = static_cast<int>(s + 0.5);
    std::snprintf(buf, sizeof buf, "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
    return buf;
}

void print_event(const TrainingEvent& e) {
    using K = TrainingEvent::Kind;
    char buf[512];
    switch (e.kind) {
        case K::Report:
        case K::Plan:
        case K::Message: std::cerr << e.message << "\n"; break;
        case K::Step:
            std::snprintf(buf, sizeof buf, "step %lld/%lld  epoch %.2f  loss %.4f  lr %.3g  |g| %.3g  %.0f tok/s  mem %.0f MiB  eta %s\n",
                          static_cast<long long>(e.step), static_cast<long long>(e.total_steps), e.epoch, e.loss, e.lr, e.grad_norm,
                          e.tokens_per_s, e.memory_bytes / 1048576.0, fmt_duration(e.eta_s).c_str());
            std::cerr << buf;
            break;
        case K::Eval:
            std::snprintf(buf, sizeof buf, "eval step %lld: loss %.4f (best %.4f)\n", static_cast<long long>(e.step), e.eval_loss,
                          e.best_eval_loss);
            std::cerr << buf;
            for (const auto& s : e.samples) std::cerr << "  > " << s.source << "\n    = " << s.prediction << "\n";
            break;
        case K::Checkpoint: std::cerr << "saved " << e.message << "\n"; break;
        case K::Finished:
            std::snprintf(buf, sizeof buf, "finished (%s) at step %lld in %s; peak memory %.0f MiB; model in %s\n", to_string(e.stop_reason),
                          static_cast<long long>(e.step), fmt_duration(e.elapsed_s).c_str(), e.peak_memory_bytes / 1048576.0,
                          e.message.c_str());
            std::cerr << buf;
            break;
    }
}

// The accepted/edited (source, target) pairs of a history database, as OUT/history-pairs.jsonl.
std::string pairs_from_history(const std::string& history_path, const std::string& out_dir) {
    HistoryStoreOptions store_options;
    store_options.create_if_missing = false;
    HistoryStore store(history_path, store_options);
    const ExportResult r = export_history_pairs(store, out_dir);
    std::cerr << "training data: " << r.rows_written << " accepted/edited pairs from " << history_path << "\n";
    return r.path;
}

}  // namespace

// --precision is train's own (autocast); a bad --device name is a usage error here (exit 2), as it always was.
const RuntimeFlags kTrainRuntime{Device::Auto, /*dtype=*/false, /*device=*/true, /*device_index=*/false};

const CommandSpec kTrainSpec = {"train", "fine-tune a model, or train one from scratch, on (source, target) pairs", {
    {"model", "DIR", "model folder to fine-tune (or --init-config)", kModel},
    {"init-config", "FILE", "config.json of a new model trained from scratch, with a vocabulary trained on the data"},
    {"vocab-size", "N", "with --init-config: SentencePiece pieces (default 8000; the model adds 100 sentinels)"},
    {"data", "FILE", "training pairs: JSONL (source/target, input/output, text/target) or CSV/TSV with a header"},
    {"extra-data", "FILE", "more training pairs, same formats", kRepeatable},
    {"data-history", "PATH", "the accepted and edited pairs of this history database (written to OUT/history-pairs.jsonl)"},
    {"eval-data", "FILE", "validation pairs (default: split --eval-split off the training data)"},
    {"eval-split", "X", "fraction held out for evaluation without --eval-data (default 0.05; 0 = no eval)"},
    {"max-eval-pairs", "N", "evaluate at most N pairs (default 500; 0 = all)"},
    {"source-field", "NAME", "JSONL key / CSV column of the source (default: source, input or text)"},
    {"target-field", "NAME", "JSONL key / CSV column of the target (default: target or output)"},
    {"source-prefix", "TEXT", "prepended to every source (e.g. \"paraphrase: \")"},
    {"on-bad-row", "P", "skip (default: report file:line and go on) or fail"},
    {"out", "DIR", "output folder: checkpoint-N/, final/, train_log.jsonl"},
    {"steps", "N", "optimizer steps (>= 1; or --epochs)"},
    {"epochs", "X", "passes over the data (default 1)"},
    {"batch-size", "N", "pairs per micro-batch, per rank (default 8)"},
    {"grad-accum", "N", "micro-batches per optimizer step (default 1)"},
    {"lr", "X", "peak learning rate (> 0; default 5e-4 for AdamW, relative steps for Adafactor)"},
    {"optimizer", "O", "adamw (default) or adafactor"},
    {"schedule", "S", "learning-rate schedule: linear (default), cosine or constant"},
    {"warmup", "N", "steps of linear warmup from 0 to --lr (default 0)"},
    {"weight-decay", "X", "decoupled weight decay (default 0)"},
    {"max-grad-norm", "X", "clip the gradients' global L2 norm (default 1.0; 0 = off)"},
    {"dropout", "X", "dropout rate in [0, 1) (default: config.json's dropout_rate)"},
    {"precision", "P", "fp32 (default), bf16 or fp16 (autocast; fp16 on CUDA only)"},
    {"grad-checkpointing", "", "recompute each block in the backward pass (less memory, slower)"},
    {"max-source-len", "N", "source tokens kept, with </s> (default 128; longer is truncated)"},
    {"max-target-len", "N", "target tokens kept, with </s> (default 128)"},
    {"no-group-by-length", "", "batch pairs in random order, not by similar length"},
    {"seed", "S", "seed of data order, initialisation and dropout (default 42)"},
    kTrainRuntime.flags(),
    {"eval-every", "N", "steps between evaluations (default 0: at each checkpoint and at the end)"},
    {"samples", "N", "validation inputs generated and shown at each evaluation (default 3)"},
    {"patience", "N", "stop after N evaluations without improvement (default 0 = off)"},
    {"save-every", "N", "steps between checkpoints (default 0: only at the end)"},
    {"keep-last", "N", "checkpoints kept besides the best by eval loss (default 2)"},
    {"save-bf16", "", "store the final model in bf16 (half the size)"},
    {"resume", "", "continue from the newest checkpoint in --out"},
    {"max-time", "SECONDS", "stop with a checkpoint after this much wall time (default 0 = no limit)"},
    {"log", "FILE", "JSONL log, one line per logged step (default OUT/train_log.jsonl)"},
    {"log-every", "N", "steps between log lines and progress lines (default 1)"},
    {"history", "PATH", "record the run and its curve in this history database (the app's Past runs)"},
    {"dist-timeout", "SECONDS", "data-parallel runs: fail, naming the lost rank, after waiting this long (default 120)"},
    {"plan-only", "", "accepted for compatibility; has no effect (the plan is printed before every run)"},
    {"lora", "", "train a LoRA adapter (PEFT format) on the frozen --model; checkpoints are adapters"},
    {"lora-r", "N", "LoRA rank (default 8)"},
    {"lora-alpha", "X", "LoRA alpha; the update is scaled by alpha / r (default 16)"},
    {"lora-dropout", "X", "dropout on the LoRA input, in [0, 1) (default 0.05)"},
    {"lora-targets", "LIST", "layers: q,k,v,o,wi,wi_0,wi_1,wo or all-linear (default q,v)"},
    {"lora-rslora", "", "rank-stabilised scaling alpha / sqrt(r)"},
    {"lora-base-precision", "P", "hold the frozen base in fp32 (default), bf16, fp16 or int8 (less memory)"},
    {"adapter", "DIR", "continue training this LoRA adapter (its config decides r, alpha, targets)"},
    {"merge", "", "with LoRA: also write OUT/merged, the adapter folded into a full HF checkpoint"},
}};

// Every train flag into TrainingOptions (validated by the caller).
TrainingOptions training_options_from_flags(const Args& a) {
    TrainingOptions o;
    o.model_dir = a.get("model");
    o.init_config = a.get("init-config");
    o.data_file = a.get("data");
    o.extra_data_files = a.all("extra-data");
    if (a.has("data-history")) {
        // Accepted and edited pairs from the annotators' history become (more) training data.
        const std::string pairs = pairs_from_history(a.get("data-history"), a.require("out"));
        if (o.data_file.empty()) o.data_file = pairs;
        else o.extra_data_files.push_back(pairs);
    }
    o.eval_file = a.get("eval-data");
    o.out_dir = a.get("out");
    if (a.has("steps") && a.has("epochs")) throw UsageError("give --steps or --epochs, not both");
    o.steps = a.get_int64("steps", 0, 1, INT64_MAX);  // 0 is "not given" inside (use --epochs): never from the flag
    o.epochs = a.get_double("epochs", 1.0);
    o.batch_size = a.get_int("batch-size", o.batch_size);
    o.grad_accum = a.get_int("grad-accum", o.grad_accum);
    o.lr = a.get_double("lr", -1);
    if (a.has("lr") && !(o.lr > 0)) throw UsageError("--lr must be > 0");
    o.optimizer = parse_enum<OptimizerKind>(a.get("optimizer", "adamw"));
    o.schedule = parse_enum<ScheduleKind>(a.get("schedule", "linear"));
    o.warmup_steps = a.get_int64("warmup", 0);
    o.weight_decay = a.get_double("weight-decay", 0.0);
    o.max_grad_norm = a.get_double("max-grad-norm", 1.0);
    o.dropout = a.get_double("dropout", -1);
    if (a.has("dropout") && o.dropout < 0) throw UsageError("--dropout must be in [0, 1)");
    o.precision = parse_enum<Precision>(a.get("precision", "fp32"));
    o.gradient_checkpointing = a.has("grad-checkpointing");
    o.max_source_len = a.get_int("max-source-len", o.max_source_len);
    o.max_target_len = a.get_int("max-target-len", o.max_target_len);
    o.eval_every = a.get_int64("eval-every", 0);
    o.save_every = a.get_int64("save-every", 0);
    o.resume = a.has("resume");
    o.seed = static_cast<uint64_t>(a.get_int64("seed", 42));
    o.data.on_bad_row = parse_enum<BadRowPolicy>(a.get("on-bad-row", "skip"));
    o.data.source_field = a.get("source-field");
    o.data.target_field = a.get("target-field");
    o.data.source_prefix = a.get("source-prefix");
    o.log_file = a.get("log");
    o.eval_split = a.get_double("eval-split", o.eval_split);
    o.max_eval_pairs = a.get_int64("max-eval-pairs", o.max_eval_pairs);
    o.keep_last = a.get_int("keep-last", o.keep_last);
    o.patience = a.get_int("patience", 0);
    o.vocab_size = a.get_int("vocab-size", o.vocab_size);
    o.threads = a.get_threads();
    o.sample_count = a.get_int("samples", o.sample_count);
    o.log_every = a.get_int("log-every", 1);
    o.group_by_length = !a.has("no-group-by-length");
    o.save_dtype_bf16 = a.has("save-bf16");
    o.max_time_s = a.get_double("max-time", 0) ;
    o.dist_timeout_s = a.get_double("dist-timeout", o.dist_timeout_s);
    o.lora = a.has("lora"), o.lora_rslora = a.has("lora-rslora"), o.merge_adapter = a.has("merge"), o.adapter_dir = a.get("adapter");
    o.lora_r = a.get_int("lora-r", o.lora_r), o.lora_alpha = a.get_double("lora-alpha", o.lora_alpha);
    o.lora_dropout = a.get_double("lora-dropout", o.lora_dropout), o.lora_targets = a.get("lora-targets", o.lora_targets);
    o.lora_base_precision = a.get_enum("lora-base-precision", Precision::Fp32);
    o.device = a.get_enum("device", kTrainRuntime.default_device);
    return o;
}

// Runs the job recording the run and its curve in `history`, the database the app lists under
// Training > Past runs; --resume continues the newest recorded run with this output folder.
TrainingResult run_recorded(TrainingJob& job, const TrainingOptions& o, const std::string& history) {
    TrainingResult r;
    HistoryStore store(history);
    int64_t continue_run = 0;
    if (o.resume)
        for (const auto& run : store.training_runs(10000, false))
            if (run.out_dir == o.out_dir) {
                continue_run = run.id;
                break;
            }
    TrainingRecorder recorder(&store, continue_run, o);
    std::cerr << (continue_run ? "continuing recorded run " : "recording run ") << recorder.run_id() << " in " << history
              << "\n";
    try {
        r = job.run([&](const TrainingEvent& e) {
            recorder.on_event(e);
            print_event(e);
        });
    } catch (const std::exception& e) {
        recorder.failed(e.what());
        throw;
    }
    const std::string reason = to_string(r.stop_reason);
    recorder.finished(reason, r.final_model_dir, reason + " after " + std::to_string(r.steps) + " steps");
    if (!recorder.error().empty()) std::cerr << recorder.error() << "\n";
    return r;
}

int run_train(const Argv& argv) {
    Args a(argv, kTrainSpec);
    const TrainingOptions o = training_options_from_flags(a);
    validate_training_options(o);

    TrainingJob job(o);
    // Data-parallel launches (torchrun, srun, PyTorchJob): rank 0 alone records, logs and prints.
    const bool writer = training_rank_from_environment() == 0;
    const TrainingResult r = a.has("history") && writer ? run_recorded(job, o, a.get("history")) : job.run(print_event);
    if (!writer) return 0;
    std::cout << "{\"steps\": " << r.steps << ", \"final_loss\": " << r.final_loss << ", \"best_eval_loss\": " << r.best_eval_loss
              << ", \"stop_reason\": \"" << to_string(r.stop_reason) << "\", \"elapsed_s\": " << r.elapsed_s
              << ", \"peak_memory_bytes\": " << r.peak_memory_bytes << "}\n";
    return 0;
}

}  // namespace t5s::cli
