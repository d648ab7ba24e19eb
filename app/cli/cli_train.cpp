// t5studio train: fine-tune an HF checkpoint (--model DIR) or train from scratch (--init-config FILE)
// on JSONL/CSV/TSV pairs. JSONL log per step (--log), progress on stderr, HF-format checkpoints.
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>

#include <filesystem>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "cli/train_json.h"
#include "common/args.h"
#include "common/runtime_flags.h"
#include "t5s/error.h"
#include "t5s/history_store.h"
#include "t5s/run_folder.h"
#include "t5s/trainer.h"
#include "t5s/training_fields.h"
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
            std::snprintf(buf, sizeof buf,
                          "step %lld/%lld  epoch %.2f  loss %.4f  lr %.3g  |g| %.3g  %.0f tok/s  mem %.0f MiB  eta %s\n",
                          static_cast<long long>(e.step), static_cast<long long>(e.total_steps), e.epoch, e.loss, e.lr,
                          e.grad_norm, e.tokens_per_s, e.memory_bytes / 1048576.0, fmt_duration(e.eta_s).c_str());
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
            std::snprintf(buf, sizeof buf, "finished (%s) at step %lld in %s; peak memory %.0f MiB; model in %s\n",
                          to_string(e.stop_reason), static_cast<long long>(e.step), fmt_duration(e.elapsed_s).c_str(),
                          e.peak_memory_bytes / 1048576.0, e.message.c_str());
            std::cerr << buf;
            break;
    }
}

std::string history_pairs_path(const std::string& out_dir) {
    return (std::filesystem::path(out_dir) / "history-pairs.jsonl").string();
}

// The accepted/edited (source, target) pairs of a history database, as OUT/history-pairs.jsonl.
void write_history_pairs(const std::string& history_path, const std::string& out_dir) {
    HistoryStoreOptions store_options;
    store_options.create_if_missing = false;
    HistoryStore store(history_path, store_options);
    const ExportResult r = export_history_pairs(store, out_dir);
    if (r.path != history_pairs_path(out_dir)) throw Error(ErrorCode::Internal, r.path + ": not where the run reads its pairs");
    std::cerr << "training data: " << r.rows_written << " accepted/edited pairs from " << history_path << "\n";
}

// One run per --out folder: a new run refuses a folder that holds another one, --overwrite clears
// that run first, --resume continues it only if it is the same run (model, data, prefix, settings).
// The folder's refusals are usage errors (exit 2): the flags, not the files, must change.
void claim_out_folder(const Args& a, const TrainingOptions& o) {
    if (a.has("resume") && a.has("overwrite")) throw UsageError("give --resume or --overwrite, not both");
    const RunFolderMode mode = a.has("resume")      ? RunFolderMode::Resume
                               : a.has("overwrite") ? RunFolderMode::Overwrite
                                                    : RunFolderMode::Fresh;
    try {
        const std::vector<std::string> cleared = prepare_run_folder(o.out_dir, mode);
        if (!cleared.empty())
            std::cerr << "--overwrite: cleared " << cleared.size() << " entries of the previous run in " << o.out_dir << "\n";
        const std::string newest = mode == RunFolderMode::Resume ? newest_checkpoint(o.out_dir) : "";
        if (!newest.empty()) check_resume_identity(o, newest);
    } catch (const RunFolderRefused& e) {
        throw UsageError(e.what());
    }
}

}  // namespace

// --precision is train's own (autocast); a bad --device name is a usage error here (exit 2), as it always was.
const RuntimeFlags kTrainRuntime{Device::Auto, /*dtype=*/false, /*device=*/true, /*device_index=*/false};

// train's flags: one per training option (t5s/training_fields.h, with the runtime group where the
// table's device and threads rows stand), and the flags that are not an option, each after the
// flag it follows in --help.
std::vector<Flag> train_flags() {
    std::vector<Flag> flags = settings_flags(training_fields(), TrainingOptions{}, kTrainRuntime.flags());
    flags = with_flags_after(flags, "extra-data",
                             {{"data-history", "PATH",
                               "the accepted and edited pairs of this history database (written to OUT/history-pairs.jsonl)"}});
    flags = with_flags_after(flags, "target-field",
                             {{"text-field", "NAME", "the same as --source-field (every command's name for the text column)"},
                              {"no-header", "", "CSV/TSV without a header row: column 1 the source, column 2 the target"}});
    flags = with_flags_after(
        flags, "log-every", {{"history", "PATH", "record the run and its curve in this history database (the app's Past runs)"}});
    flags =
        with_flags_after(flags, "resume",
                         {{"overwrite", "",
                           "clear the run already in --out (its checkpoints, final model and log) and start over; without it or "
                           "--resume a folder holding a run is refused"}});
    return with_flags_after(
        flags, "dist-timeout",
        {{"plan-only", "", "accepted for compatibility; has no effect (the plan is printed before every run)"}});
}

const CommandSpec kTrainSpec = {
    "train",
    "fine-tune a model, or train one from scratch, on (source, target) pairs",
    {train_flags(),
     {"json", "",
      "progress as JSON lines on stdout, then {\"event\": \"done\", \"out\", \"final_model\", \"checkpoints\", "
      "\"steps\", \"final_loss\", ...}"}}};

// Every train flag into TrainingOptions (validated by the caller).
TrainingOptions training_options_from_flags(const Args& a) {
    if (a.has("steps") && a.has("epochs")) throw UsageError("give --steps or --epochs, not both");
    TrainingOptions o;
    apply_settings_flags(a, training_fields(), &o);
    if (a.has("text-field") && a.has("source-field")) throw UsageError("give --source-field or --text-field, not both");
    if (a.has("text-field")) o.data.source_field = a.get("text-field");
    o.data.no_header = a.has("no-header");
    if (a.has("data-history")) {
        // Accepted and edited pairs from the annotators' history become (more) training data; the
        // file is written once the output folder is known to be this run's (write_history_pairs).
        const std::string pairs = history_pairs_path(a.require("out"));
        if (o.data_file.empty()) o.data_file = pairs;
        else o.extra_data_files.push_back(pairs);
    }
    o.threads = a.get_threads();
    o.device = a.get_enum("device", kTrainRuntime.default_device);
    return o;
}

// Runs the job recording the run and its curve in `history`, the database the app lists under
// Training > Past runs; --resume continues the newest recorded run with this output folder.
TrainingResult run_recorded(TrainingJob& job, const TrainingOptions& o, const std::string& history,
                            const std::function<void(const TrainingEvent&)>& print) {
    TrainingResult r;
    HistoryStore store(history);
    int64_t continue_run = 0;
    if (o.resume)
        for (const auto& run : store.training_runs(kMaxHistoryPage, false))
            if (run.out_dir == o.out_dir) {
                continue_run = run.id;
                break;
            }
    TrainingRecorder recorder(&store, continue_run, o);
    std::cerr << (continue_run ? "continuing recorded run " : "recording run ") << recorder.run_id() << " in " << history << "\n";
    try {
        r = job.run([&](const TrainingEvent& e) {
            recorder.on_event(e);
            print(e);
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
    // Data-parallel launches (torchrun, srun, PyTorchJob): rank 0 alone checks the folder, records,
    // logs and prints (another rank would see rank 0's first files as "another run").
    const bool writer = training_rank_from_environment() == 0;
    if (writer) claim_out_folder(a, o);
    if (a.has("data-history")) write_history_pairs(a.get("data-history"), o.out_dir);

    TrainingJob job(o);
    const bool json = a.has("json") && writer;
    std::vector<std::string> checkpoints;  // for --json's result
    auto print = [&](const TrainingEvent& e) {
        print_event(e);
        if (!json) return;
        if (e.kind == TrainingEvent::Kind::Checkpoint) checkpoints.push_back(e.message);
        if (const nlohmann::json line = training_event_json(e); !line.is_null()) std::cout << line.dump() << std::endl;
    };
    const TrainingResult r = a.has("history") && writer ? run_recorded(job, o, a.get("history"), print) : job.run(print);
    if (!writer) return 0;
    if (json) {
        std::cout << training_result_json(r, o.out_dir, checkpoints).dump() << std::endl;
        return 0;
    }
    std::cout << "{\"steps\": " << r.steps << ", \"final_loss\": " << r.final_loss << ", \"best_eval_loss\": " << r.best_eval_loss
              << ", \"stop_reason\": \"" << to_string(r.stop_reason) << "\", \"elapsed_s\": " << r.elapsed_s
              << ", \"peak_memory_bytes\": " << r.peak_memory_bytes << "}\n";
    return 0;
}

}  // namespace t5s::cli
