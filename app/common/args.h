#pragma once
// The subcommands' flags. Each subcommand declares its flags once, in a table (a CommandSpec: one
// Flag per line); CLI11 parses the command line against it and writes `--help` from it, and the
// command reads the values back by name through Args. `--name value` and `--name=value` both work, a
// value may start with '-' (`--seed -1`), a flag given twice keeps its last value (all() returns
// every one). Unknown flags are usage errors naming the nearest known flag (the CLI is a contract).
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "t5s/enum_names.h"

namespace t5s::cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// `--help` / `-h` among a subcommand's arguments: what() is the help text, for main() to print
// on stdout with exit code 0.
struct HelpRequested : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class FlagKind {
    Single,      // one value (given twice: the last one counts)
    Repeatable,  // every value counts: all()
    Positional,  // bare arguments, in order: all(name)
    Model,       // one value: a model folder, or ORG/NAME[@REV] resolved to its folder in the Hugging
                 // Face cache (t5s/hub.h: an existing path wins); get() returns the folder
};
constexpr FlagKind kRepeatable = FlagKind::Repeatable;
constexpr FlagKind kModel = FlagKind::Model;
constexpr FlagKind kPositional = FlagKind::Positional;

// One row of a flag table: {"beams", "K", "beam search with K beams (1 = greedy)"}.
struct Flag {
    std::string name;        // without the leading "--"
    std::string value_name;  // shown in --help ("DIR", "N"); "" = a switch, which takes no value
    std::string help;        // one line for --help
    FlagKind kind = FlagKind::Single;
    std::string alias_of;  // another name of that flag (transformers' spelling): its value is that flag's
};

// A row of a table: one Flag, or a group of flags declared once for several commands
// (RuntimeFlags::flags(), generation_flags()).
struct FlagRows {
    std::vector<Flag> flags;
    FlagRows(std::string name, std::string value_name, std::string help, FlagKind kind = FlagKind::Single)
        : flags{Flag{std::move(name), std::move(value_name), std::move(help), kind}} {}
    FlagRows(std::vector<Flag> group) : flags(std::move(group)) {}  // NOLINT: a group stands as a row
};

struct CommandSpec {
    std::string name;     // the subcommand ("" = t5studio's own flags: the desktop app's)
    std::string summary;  // one line for `t5studio --help`
    std::vector<Flag> flags;
    // --model may name a LoRA adapter folder though the command has no --adapter flag: it opens as
    // its base with the adapter all the same (the desktop app; Args::open_adapter_as_model).
    bool model_may_be_adapter = false;
    CommandSpec(std::string name_, std::string summary_, std::initializer_list<FlagRows> rows)
        : name(std::move(name_)), summary(std::move(summary_)) {
        for (const FlagRows& r : rows) flags.insert(flags.end(), r.flags.begin(), r.flags.end());
    }
};

// `t5studio SUB --help`: usage line, summary, one line per flag.
std::string command_help(const CommandSpec& spec);
// `t5studio --help`: the subcommands with their summaries, and `footer` below them.
std::string program_help(const std::vector<const CommandSpec*>& commands, const std::string& footer);
// The name closest to `typed` by edits (or by one of its dash-separated words: num-beams -> beams);
// "" when none is close enough to be what was meant.
std::string nearest_name(const std::string& typed, const std::vector<std::string>& names);

class Args {
public:
    // Throws UsageError for an unknown flag, a missing value or a value given to a switch, and
    // HelpRequested for --help / -h.
    Args(const std::vector<std::string>& argv, const CommandSpec& spec);

    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string get(const std::string& name, const std::string& fallback = "") const;
    std::string require(const std::string& name) const;
    const std::vector<std::string>& all(const std::string& name) const;
    // Integers outside [min, max] (including ones that overflow) are a UsageError naming the flag
    // and the range.
    int get_int(const std::string& name, int fallback, int min = INT_MIN, int max = INT_MAX) const;
    int64_t get_int64(const std::string& name, int64_t fallback, int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
    double get_double(const std::string& name, double fallback) const;  // finite numbers only
    // A name from E's table (t5s/enum_names.h, aliases too); an unknown one is a UsageError
    // "--flag must be a, b or c, not 'x'".
    template <class E>
    E get_enum(const std::string& name, E fallback) const {
        if (!has(name)) return fallback;
        if (const auto v = try_parse_enum<E>(get(name))) return *v;
        throw UsageError("--" + name + " must be " + enum_names_text<E>() + ", not '" + get(name) + "'");
    }
    // --threads N: 0 (= physical cores) up to t5s::kMaxThreads (larger counts crashed thread pools).
    int get_threads() const;
    // Every flag given, in command-line order, with its value ("1" for a switch): for commands whose
    // flags are steps applied in order (history decisions).
    const std::vector<std::pair<std::string, std::string>>& in_order() const { return order_; }

    // "--name" as the user typed it (an alias stands for its flag): what messages name.
    std::string typed(const std::string& name) const;

private:
    void open_adapter_as_model(const CommandSpec& spec);
    std::map<std::string, std::vector<std::string>> values_;
    std::map<std::string, std::string> typed_;  // flag -> the alias given for it
    std::vector<std::pair<std::string, std::string>> order_;
};

}  // namespace t5s::cli
