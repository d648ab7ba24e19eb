// `t5studio export`: stream the history into a training set.
//   t5studio export --history PATH --format jsonl|csv|tsv|labelstudio|hf-dataset --out FILE|DIR [--with-labels] [--accepted-only]
//   [--dedupe [exact|near]]
//                   [--near-threshold J] [--with-scores] [--min-similarity X] [--max-similarity X] [--min-change X]
//                   [--max-change X] [--min-back-score X] [--include-originals] [--search Q] [--model M] [--force] [--json]
// One summary line on stderr; with --json also a JSON summary on stdout. Ctrl-C cancels cleanly
// (no partial file, temp file removed).
#include <atomic>
#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/args.h"
#include "t5s/error.h"
#include "t5s/hf_dataset.h"
#include "t5s/history_store.h"
#include "t5s/score_names.h"
#include "t5s/settings_fields.h"

namespace t5s::cli {

namespace {

std::atomic<bool>& interrupt_flag() {
    static std::atomic<bool> flag{false};  // a signal handler can only reach a static
    return flag;
}

extern "C" void on_interrupt(int) { interrupt_flag().store(true); }

// Routes SIGINT/SIGTERM to the cancel flag while alive.
class InterruptGuard {
public:
    InterruptGuard() {
        interrupt_flag().store(false);
        struct sigaction sa {};
        sa.sa_handler = on_interrupt;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
    }
    ~InterruptGuard() {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }

private:
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
};

// --dedupe takes an optional mode: bare (= exact), "exact" or "near" (checked in apply_score_flags).
Argv with_dedupe_mode(Argv argv) {
    for (size_t i = 0; i < argv.size(); ++i) {
        if (argv[i] != "--dedupe") continue;
        const bool mode_follows = i + 1 < argv.size() && argv[i + 1].rfind("--", 0) != 0;  // export has no bare arguments
        argv[i] = "--dedupe=" + (mode_follows ? argv[i + 1] : std::string("exact"));
        if (mode_follows) argv.erase(argv.begin() + static_cast<long>(i) + 1);
    }
    return argv;
}

void apply_score_flags(const Args& args, ExportOptions* options) {
    const std::pair<const char*, std::optional<double> ExportOptions::*> bounds[] = {
        {"min-similarity", &ExportOptions::min_similarity},
        {"max-similarity", &ExportOptions::max_similarity},
        {"min-change", &ExportOptions::min_change},
        {"max-change", &ExportOptions::max_change},
        {"min-back-score", &ExportOptions::min_back_score}};
    for (const auto& [flag, field] : bounds) {
        if (args.has(flag)) options->*field = args.get_double(flag, 0.0);
    }
    options->with_scores = args.has("with-scores");
    const std::string dedupe = args.get("dedupe");
    if (!dedupe.empty() && dedupe != "exact" && dedupe != "near")
        throw UsageError("--dedupe must be exact or near, got '" + dedupe + "'");
    if (args.has("near-threshold") && dedupe != "near") throw UsageError("--near-threshold goes with --dedupe near");
    if (dedupe == "near") {
        constexpr FieldRange kThresholds = above_to(0, 1);
        const double threshold = args.get_double("near-threshold", 0.9);
        if (!settings_in_range(kThresholds, threshold))
            throw UsageError(range_message("--near-threshold", kThresholds, args.get("near-threshold")));
        options->near_dedupe = threshold;
    }
}

}  // namespace

const CommandSpec kExportSpec = {
    "export",
    "write the history's candidates as a training set (atomic; Ctrl-C leaves no file)",
    {
        {"history", "PATH", "history database to read"},
        {"format", "F",
         "jsonl, csv, tsv or labelstudio (a Label Studio import: tasks with predictions, annotations for accepted candidates)"
         " or hf-dataset (--out is a folder: data/train.jsonl with the scores, README.md dataset card with statistics, "
         "plots/*.png)"},
        {"out", "FILE", "file to write; an existing one is refused unless --force"},
        {"accepted-only", "", "only accepted and edited candidates (edited ones with their final text)"},
        {"dedupe", "MODE", "exact (also when bare): skip repeated (source, target) pairs; near: see --near-threshold"},
        {"near-threshold", "J", "--dedupe near: skip a target with MinHash Jaccard >= J to an earlier one (default 0.9)"},
        {"with-scores", "", "add the columns " + score_list()},
        {"with-labels", "", "CSV/TSV: add the columns label, source_spans, target_spans (JSONL always has them)"},
        {"min-similarity", "X", "only candidates with similarity >= X"},
        {"max-similarity", "X", "only candidates with similarity <= X"},
        {"min-change", "X", "only candidates with change >= X"},
        {"max-change", "X", "only candidates with change <= X"},
        {"min-back-score", "X", "only candidates with back_score >= X"},
        {"include-originals", "", "also one row per generation whose target is its input, before its candidates"},
        {"search", "Q", "only generations whose input or a candidate contains Q (ASCII case-insensitive)"},
        {"model", "M", "only generations made with model M (its path or content hash)"},
        {"force", "", "overwrite --out if it exists"},
        {"json", "", "also print a JSON summary on stdout"},
    }};

int run_export(const Argv& argv) {
    const Args args(with_dedupe_mode(argv), kExportSpec);
    ExportOptions options;
    args.require("format");
    options.format = args.get_enum("format", ExportFormat::Jsonl);
    options.filter.accepted_only = args.has("accepted-only");
    options.filter.text = args.get("search");
    options.filter.model = args.get("model");
    options.dedupe = args.get("dedupe") == "exact";
    apply_score_flags(args, &options);
    options.include_originals = args.has("include-originals");
    options.with_labels = args.has("with-labels");
    options.overwrite = args.has("force");
    const std::string out = args.require("out");

    HistoryStoreOptions store_options;
    store_options.create_if_missing = false;
    HistoryStore store(args.require("history"), store_options);
    InterruptGuard guard;
    std::vector<std::string> files;  // hf-dataset: the folder's files
    ExportResult r;
    if (options.format == ExportFormat::HfDataset) {
        HfDatasetResult dataset = export_hf_dataset(store, out, options, {}, &interrupt_flag());
        r = dataset.data;
        files = dataset.files;
    } else {
        r = store.export_to(out, options, {}, &interrupt_flag());
    }

    std::cerr << "t5studio export: wrote " << r.rows_written << " rows from " << r.generations << " generations to "
              << (files.empty() ? r.path : out + " (" + std::to_string(files.size()) + " files)") << " (" << r.bytes_written
              << " bytes";
    if (options.dedupe) std::cerr << ", " << r.duplicates_skipped << " duplicates skipped";
    if (options.near_dedupe) std::cerr << ", " << r.near_duplicates_skipped << " near duplicates skipped";
    std::cerr << ")\n";
    if (args.has("json")) {
        nlohmann::ordered_json j = {{"path", r.path},
                                    {"format", to_string(options.format)},
                                    {"rows_written", r.rows_written},
                                    {"generations", r.generations},
                                    {"duplicates_skipped", r.duplicates_skipped},
                                    {"near_duplicates_skipped", r.near_duplicates_skipped},
                                    {"bytes_written", r.bytes_written}};
        if (!files.empty()) j["files"] = files;  // hf-dataset: relative to --out (path is the data file)
        std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    return 0;
}

}  // namespace t5s::cli
