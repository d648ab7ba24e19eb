// t5studio: with no subcommand opens the desktop app (when built with the GUI), otherwise runs
// the headless command-line front end. Errors: one line on stderr, exit code != 0.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <new>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "t5s/error.h"
#include "t5s/version.h"

#ifdef T5S_WITH_GUI
int t5s_run_gui(int argc, char** argv);  // ui/app_main.cpp
#endif

namespace {

const char* kUsage =
    "usage: t5studio [SUBCOMMAND] [flags]\n"
    "  (no subcommand)   open the desktop app\n"
    "  --version | version   print the version\n"
    "  info      --model DIR [--json]\n"
    "  tokenize  --model DIR --text T [--text T ...] [--json]\n"
    "  score     --model DIR --source S --target T [--json]\n"
    "  generate  --model DIR (--text T ... | --input FILE) [--max-new-tokens N] [--beams K] [--num-return N]\n"
    "            [--sample --temperature X --top-k K --top-p P --seed S] [--repetition-penalty R]\n"
    "            [--no-repeat-ngram N] [--min-new-tokens N] [--dtype fp32|bf16|fp16|int8] [--device auto|cpu|cuda]\n"
    "            [--batch-size B] [--distinct] [--no-copy] [--threads N] [--history PATH] [--json]\n"
    "            [--embedder DIR] [--min-similarity X] [--max-similarity X] [--min-change X] [--max-change X]\n"
    "            [--min-back-score X] [--near-duplicate X] [--rank auto|similarity|back_score|fluency|none] [--keep-dropped]\n"
    "            [--shard I/N | --shard-from-env [--shards N]] [--out FILE]   (with --input)\n"
    "  merge     --out FILE [--rows N] PART...   (sharded generate outputs, in global row order)\n"
    "  history   --history PATH [--search Q] [--runs] [--json]\n"
    "  export    --history PATH --format jsonl|csv|tsv --out FILE [--accepted-only] [--dedupe [exact|near]]\n"
    "            [--near-threshold J] [--with-scores] [--min-similarity X] [--min-change X] [--max-change X] ...\n"
    "  sts       (--model DIR [--prefix P] | --embedder DIR | --baseline chrf) --data FILE [--limit N] [--json]\n"
    "  train     --model DIR | --init-config FILE --data FILE --out DIR [--history PATH] [...]  (see README)\n";

}  // namespace

int main(int argc, char** argv) {
    using namespace t5s::cli;
    std::map<std::string, int (*)(const Argv&)> commands = {
        {"info", run_info}, {"tokenize", run_tokenize}, {"score", run_score}, {"generate", run_generate}, {"merge", run_merge}};
    commands["history"] = run_history;
    commands["export"] = run_export;
    commands["train"] = run_train;
    commands["sts"] = run_sts;
    if (argc >= 2 && (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version"))) {
        std::cout << "t5studio " << T5S_VERSION << "\nLibTorch " << T5S_LIBTORCH_VERSION << "\n";
        return 0;
    }
    if (argc < 2 || argv[1][0] == '-') {
        if (argc >= 2 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
            std::cout << kUsage;
            return 0;
        }
#ifdef T5S_WITH_GUI
        return t5s_run_gui(argc, argv);
#else
        std::cerr << "t5studio: built without the GUI (T5S_BUILD_GUI=OFF); give a subcommand\n" << kUsage;
        return 2;
#endif
    }
    const std::string name = argv[1];
    auto it = commands.find(name);
    if (it == commands.end()) {
        std::cerr << "t5studio: unknown subcommand '" << name << "' (t5studio --help lists them)\n";
        return 2;
    }
    Argv rest(argv + 2, argv + argc);
    try {
        return it->second(rest);
    } catch (const UsageError& e) {
        std::cerr << "t5studio " << name << ": " << e.what() << "\n";
        return 2;
    } catch (const t5s::Error& e) {
        std::cerr << "t5studio " << name << ": " << e.what() << "\n";
        return e.code() == t5s::ErrorCode::OutOfMemory ? 4 : 1;
    } catch (const std::bad_alloc&) {
        std::cerr << "t5studio " << name << ": out of memory\n";
        return 4;
    } catch (const std::exception& e) {
        // One line: library errors (LibTorch's c10::Error) append a multi-line stack trace.
        const std::string what = e.what();
        std::cerr << "t5studio " << name << ": internal error: " << what.substr(0, what.find('\n')) << "\n";
        return 3;
    }
}
