// t5studio train: fine-tune an HF checkpoint (--model DIR) or train from scratch (--init-config FILE)
// on JSONL/CSV/TSV pairs. JSONL log per step (--log), progress on stderr, HF-format checkpoints.
#include <cstdio>
#include <iostream>
#include <sstream>

#include <filesystem>

#include "cli/args.h"
#include "t5s/history_store.h"
#include "cli/commands.h"
#include "t5s/error.h"
#include "t5s/trainer.h"
#include "engine_thread/training_record.h"

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
    const ExportResult r = detail::export_history_pairs(store, out_dir);
    std::cerr << "training data: " << r.rows_written << " accepted/edited pairs from " << history_path << "\n";
    return r.path;
}

}  // namespace

int run_train(const Argv& argv) {
    Args a(argv, {"grad-checkpointing", "resume", "no-group-by-length", "plan-only", "save-bf16", "lora", "lora-rslora", "merge"},
           {"model", "init-config", "data", "eval-data", "out", "steps", "epochs", "batch-size", "grad-accum", "lr", "optimizer",
            "schedule", "warmup", "weight-decay", "max-grad-norm", "dropout", "precision", "max-source-len", "max-target-len",
            "eval-every", "save-every", "seed", "on-bad-row", "log", "source-field", "target-field", "source-prefix", "eval-split",
            "keep-last", "patience", "vocab-size", "threads", "device", "samples", "log-every", "max-eval-pairs", "extra-data", "max-time",
            "data-history", "history", "dist-timeout", "lora-r", "lora-alpha", "lora-dropout", "lora-targets", "adapter"});
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
    o.optimizer = parse_optimizer(a.get("optimizer", "adamw"));
    o.schedule = parse_schedule(a.get("schedule", "linear"));
    o.warmup_steps = a.get_int64("warmup", 0);
    o.weight_decay = a.get_double("weight-decay", 0.0);
    o.max_grad_norm = a.get_double("max-grad-norm", 1.0);
    o.dropout = a.get_double("dropout", -1);
    if (a.has("dropout") && o.dropout < 0) throw UsageError("--dropout must be in [0, 1)");
    o.precision = parse_train_precision(a.get("precision", "fp32"));
    o.gradient_checkpointing = a.has("grad-checkpointing");
    o.max_source_len = a.get_int("max-source-len", o.max_source_len);
    o.max_target_len = a.get_int("max-target-len", o.max_target_len);
    o.eval_every = a.get_int64("eval-every", 0);
    o.save_every = a.get_int64("save-every", 0);
    o.resume = a.has("resume");
    o.seed = static_cast<uint64_t>(a.get_int64("seed", 42));
    o.data.on_bad_row = parse_bad_row_policy(a.get("on-bad-row", "skip"));
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
    const std::string dev = a.get("device", "auto");
    if (dev == "auto") o.device = TrainDevice::Auto;
    else if (dev == "cpu") o.device = TrainDevice::Cpu;
    else if (dev == "cuda") o.device = TrainDevice::Cuda;
    else throw UsageError("unknown --device '" + dev + "' (expected auto, cpu or cuda)");
    validate_training_options(o);

    TrainingJob job(o);
    TrainingResult r;
    // Data-parallel launches (torchrun, srun, PyTorchJob): rank 0 alone records, logs and prints.
    const bool writer = training_rank_from_environment() == 0;
    if (a.has("history") && writer) {
        // The run and its curve go to the history the app lists under Training > Past runs;
        // --resume continues the newest recorded run with this output folder.
        HistoryStore store(a.get("history"));
        int64_t continue_run = 0;
        if (o.resume)
            for (const auto& run : store.training_runs(10000, false))
                if (run.out_dir == o.out_dir) {
                    continue_run = run.id;
                    break;
                }
        detail::TrainingRecorder recorder(&store, continue_run, o);
        std::cerr << (continue_run ? "continuing recorded run " : "recording run ") << recorder.run_id() << " in " << a.get("history")
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
    } else {
        r = job.run(print_event);
    }
    if (!writer) return 0;
    std::cout << "{\"steps\": " << r.steps << ", \"final_loss\": " << r.final_loss << ", \"best_eval_loss\": " << r.best_eval_loss
              << ", \"stop_reason\": \"" << to_string(r.stop_reason) << "\", \"elapsed_s\": " << r.elapsed_s
              << ", \"peak_memory_bytes\": " << r.peak_memory_bytes << "}\n";
    return 0;
}

}  // namespace t5s::cli
