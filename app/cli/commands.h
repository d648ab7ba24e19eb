#pragma once
// One function per subcommand, each in its own file. Each returns the process exit code and
// throws t5s::Error / UsageError for main() to report as one line on stderr.
#include <string>
#include <vector>

namespace t5s::cli {

using Argv = std::vector<std::string>;  // the arguments after the subcommand name

int run_info(const Argv& argv);
int run_tokenize(const Argv& argv);
int run_score(const Argv& argv);
int run_generate(const Argv& argv);
int run_history(const Argv& argv);
int run_export(const Argv& argv);
int run_train(const Argv& argv);
int run_merge(const Argv& argv);
int run_sts(const Argv& argv);

}  // namespace t5s::cli
