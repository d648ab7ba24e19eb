// `t5studio export`: stream the history into a training set.
//   t5studio export --history PATH --format jsonl|csv|tsv --out FILE [--accepted-only] [--dedupe]
//                   [--include-originals] [--search Q] [--model M] [--force] [--json]
// One summary line on stderr; with --json also a JSON summary on stdout. Ctrl-C cancels cleanly
// (no partial file, temp file removed).
#include <atomic>
#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "t5s/error.h"
#include "t5s/history_store.h"

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

}  // namespace

const CommandSpec kExportSpec = {"export", "write the history's candidates as a training set (atomic; Ctrl-C leaves no file)", {
    {"history", "PATH", "history database to read"},
    {"format", "F", "jsonl, csv or tsv"},
    {"out", "FILE", "file to write; an existing one is refused unless --force"},
    {"accepted-only", "", "only accepted and edited candidates (edited ones with their final text)"},
    {"dedupe", "", "skip repeated (source, target) pairs"},
    {"include-originals", "", "also one row per generation whose target is its input, before its candidates"},
    {"search", "Q", "only generations whose input or a candidate contains Q (ASCII case-insensitive)"},
    {"model", "M", "only generations made with model M (its path or content hash)"},
    {"force", "", "overwrite --out if it exists"},
    {"json", "", "also print a JSON summary on stdout"},
}};

int run_export(const Argv& argv) {
    const Args args(argv, kExportSpec);
    ExportOptions options;
    const std::string format = args.require("format");
    if (format != "jsonl" && format != "csv" && format != "tsv")
        throw UsageError("--format must be jsonl, csv or tsv, got '" + format + "'");
    options.format = parse_export_format(format);
    options.filter.accepted_only = args.has("accepted-only");
    options.filter.text = args.get("search");
    options.filter.model = args.get("model");
    options.dedupe = args.has("dedupe");
    options.include_originals = args.has("include-originals");
    options.overwrite = args.has("force");
    const std::string out = args.require("out");

    HistoryStoreOptions store_options;
    store_options.create_if_missing = false;
    HistoryStore store(args.require("history"), store_options);
    InterruptGuard guard;
    const ExportResult r = store.export_to(out, options, {}, &interrupt_flag());

    std::cerr << "t5studio export: wrote " << r.rows_written << " rows from " << r.generations << " generations to "
              << r.path << " (" << r.bytes_written << " bytes";
    if (options.dedupe) std::cerr << ", " << r.duplicates_skipped << " duplicates skipped";
    std::cerr << ")\n";
    if (args.has("json")) {
        nlohmann::ordered_json j = {{"path", r.path},
                                    {"format", format},
                                    {"rows_written", r.rows_written},
                                    {"generations", r.generations},
                                    {"duplicates_skipped", r.duplicates_skipped},
                                    {"bytes_written", r.bytes_written}};
        std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    return 0;
}

}  // namespace t5s::cli
