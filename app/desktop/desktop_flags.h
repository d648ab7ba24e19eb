#pragma once
// t5studio's own flags, which open the desktop app (no subcommand): one flag table read by the
// CLI's machinery (common/args.h), so they parse as every subcommand's do: --name=value, unknown
// flags named with the nearest one, ORG/NAME[@REV] and adapter folders for --model, range messages.
#include <string>
#include <vector>

#include "app_options.h"
#include "common/args.h"

namespace t5s::desktop {

// The desktop app's flags (`t5studio --help`'s footer lists them: test_cli_consistency.sh checks
// that every one is there).
const cli::CommandSpec& desktop_spec();

// The app's options from its arguments (those after the program name). Throws cli::UsageError for a
// bad flag or value, cli::HelpRequested for --help, and t5s::Error for a model that is not there.
ui::AppOptions desktop_options(const std::vector<std::string>& argv);

}  // namespace t5s::desktop
