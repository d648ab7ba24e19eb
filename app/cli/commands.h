#pragma once
// One function per subcommand, each in its own file with its flag table (kNameSpec). Each returns
// the process exit code and throws t5s::Error / UsageError for main() to report as one line on
// stderr. A new subcommand: its file, two lines here, one line in main.cpp's list.
#include <string>
#include <vector>

#include "common/args.h"

namespace t5s::cli {

using Argv = std::vector<std::string>;  // the arguments after the subcommand name

struct Command {
    const CommandSpec& spec;
    int (*run)(const Argv& argv);
};

extern const CommandSpec kInfoSpec;
int run_info(const Argv& argv);
extern const CommandSpec kTokenizeSpec;
int run_tokenize(const Argv& argv);
extern const CommandSpec kScoreSpec;
int run_score(const Argv& argv);
extern const CommandSpec kGenerateSpec;
int run_generate(const Argv& argv);
extern const CommandSpec kHistorySpec;
int run_history(const Argv& argv);
extern const CommandSpec kExportSpec;
int run_export(const Argv& argv);
extern const CommandSpec kTrainSpec;
int run_train(const Argv& argv);
extern const CommandSpec kMergeSpec;
int run_merge(const Argv& argv);
extern const CommandSpec kServeSpec;
int run_serve(const Argv& argv);
extern const CommandSpec kEmbedSpec;
int run_embed(const Argv& argv);
extern const CommandSpec kStsSpec;
int run_sts(const Argv& argv);
extern const CommandSpec kPullSpec;
int run_pull(const Argv& argv);
extern const CommandSpec kModelsSpec;
int run_models(const Argv& argv);
extern const CommandSpec kLearnSpec;
int run_learn(const Argv& argv);

}  // namespace t5s::cli
