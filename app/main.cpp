// t5studio: with no subcommand opens the desktop app (when built with the GUI), otherwise runs
// the headless command-line front end. Errors: one line on stderr, exit code != 0.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>

#include "cli/commands.h"
#include "common/args.h"
#include "t5s/env.h"
#include "t5s/error.h"
#include "t5s/version.h"

#ifdef T5S_WITH_GUI
int t5s_run_gui(int argc, char** argv);  // desktop/desktop_main.cpp
#endif

namespace {

using namespace t5s::cli;

// In the order `t5studio --help` lists them.
const Command kCommands[] = {
    {kInfoSpec, run_info},     {kTokenizeSpec, run_tokenize}, {kScoreSpec, run_score},   {kGenerateSpec, run_generate},
    {kMergeSpec, run_merge},   {kHistorySpec, run_history},   {kExportSpec, run_export}, {kTrainSpec, run_train},
    {kServeSpec, run_serve},   {kEmbedSpec, run_embed},       {kStsSpec, run_sts},       {kPullSpec, run_pull},
    {kModelsSpec, run_models}, {kLearnSpec, run_learn},
};

const CommandSpec kHelpSpec{"help", "list the subcommands; `t5studio help SUBCOMMAND` lists its flags", {}};
const CommandSpec kVersionSpec{"version", "print the version of t5studio and of LibTorch (also --version)", {}};

// The desktop app's own flags: desktop/desktop_flags.cpp's table reads them (cli_consistency checks
// that each of its flags is listed here).
const char* kFooter =
    "With no subcommand t5studio opens the desktop app:\n"
    "  t5studio [--model DIR] [--history DB] [--config-dir DIR] [--scale S] [--size WxH]\n"
    "    --model DIR        open this model folder (or ORG/NAME[@REV] from the Hugging Face cache; a LoRA\n"
    "                       adapter folder opens its base with it) at start\n"
    "    --history DB       the history database (default: history.db in the data folder)\n"
    "    --config-dir DIR   settings folder (default: $XDG_CONFIG_HOME/t5studio)\n"
    "    --scale S          interface scale in [0.5, 3] (default: the saved setting)\n"
    "    --size WxH         window size (default 1600x1000)\n"
    "    --test-script FILE --screenshot-dir DIR   run a UI test script, saving its screenshots there\n"
    "`t5studio SUBCOMMAND --help` (or `t5studio help SUBCOMMAND`) lists a subcommand's flags.\n"
    "Exit codes: 0 done, 1 bad input or file, 2 usage error, 3 internal error, 4 out of memory\n"
    "(pull adds 10 access denied, 11 not found, 12 network, 13 server, 14 hash mismatch, 15 disk full,\n"
    "16 unsupported model, 17 offline and not cached, 130 interrupted).";

std::string usage() {
    std::vector<const CommandSpec*> specs;
    for (const Command& c : kCommands) specs.push_back(&c.spec);
    specs.push_back(&kHelpSpec);
    specs.push_back(&kVersionSpec);
    return program_help(specs, kFooter);
}

const Command* find_command(const std::string& name) {
    for (const Command& c : kCommands)
        if (c.spec.name == name) return &c;
    return nullptr;
}

int unknown_subcommand(const std::string& name) {
    std::vector<std::string> names = {kHelpSpec.name, kVersionSpec.name};
    for (const Command& c : kCommands) names.push_back(c.spec.name);
    const std::string near = nearest_name(name, names);
    std::cerr << "t5studio: unknown subcommand '" << name << "'" << (near.empty() ? "" : "; did you mean '" + near + "'?")
              << " (t5studio --help lists them)\n";
    return 2;
}

// `t5studio help [SUBCOMMAND]`
int help(int argc, char** argv) {
    if (argc == 2) {
        std::cout << usage();
        return 0;
    }
    if (argc > 3) {
        std::cerr << "t5studio help: give one subcommand, e.g. t5studio help generate\n";
        return 2;
    }
    const Command* command = find_command(argv[2]);
    if (!command) return unknown_subcommand(argv[2]);
    std::cout << command_help(command->spec);
    return 0;
}

int run_command(const Command& command, const Argv& argv) {
    const std::string& name = command.spec.name;
    try {
        return command.run(argv);
    } catch (const HelpRequested& h) {
        std::cout << h.what();
        return 0;
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

// A finished command has closed everything it wrote (its files, databases and threads live inside
// its run()), so the process can end without static destructors: LibTorch's deregister every
// operator again at exit, ~85 ms of a short command's ~0.3 s (tests/bench/README.md, start-up).
// T5S_EXIT_TEARDOWN=1 keeps the full exit (leak checkers want it); sanitizer builds always do.
int end_process(int rc) {
#if defined(__SANITIZE_ADDRESS__)
    return rc;
#else
    if (t5s::read_bool_from_env("T5S_EXIT_TEARDOWN", false)) return rc;
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(rc);
#endif
}

int run_cli(int argc, char** argv) {
    const std::string first = argc >= 2 ? argv[1] : "";
    if (first == "--version" || first == "version") {
        std::cout << "t5studio " << T5S_VERSION << "\nLibTorch " << T5S_LIBTORCH_VERSION << "\n";
        return 0;
    }
    if (first == "--help" || first == "-h") return help(2, argv);
    if (first == "help") return help(argc, argv);
    const Command* command = find_command(first);
    if (!command) return unknown_subcommand(first);
    return run_command(*command, Argv(argv + 2, argv + argc));
}

// No subcommand, or only the app's own flags (they start with '-'): the desktop app.
bool opens_the_app(int argc, const std::string& first) {
    return (argc < 2 || first[0] == '-') && first != "--version" && first != "--help" && first != "-h";
}

}  // namespace

int main(int argc, char** argv) {
    const std::string first = argc >= 2 ? argv[1] : "";
    if (!opens_the_app(argc, first)) return end_process(run_cli(argc, argv));
#ifdef T5S_WITH_GUI
    return t5s_run_gui(argc, argv);
#else
    std::cerr << "t5studio: built without the GUI (T5S_BUILD_GUI=OFF); give a subcommand\n" << usage();
    return 2;
#endif
}
