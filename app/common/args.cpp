#include "common/args.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "t5s/error.h"
#include "t5s/hub.h"
#include "t5s/model.h"
#include "t5s/settings_fields.h"

namespace t5s::cli {
namespace {

const Flag* find_flag(const CommandSpec& spec, const std::string& name) {
    for (const Flag& f : spec.flags)
        if (f.kind != FlagKind::Positional && f.name == name) return &f;
    return nullptr;
}

bool is_switch(const Flag& f) { return f.kind != FlagKind::Positional && f.value_name.empty(); }

// "t5studio generate"; "t5studio" for the program's own flags (the desktop app's).
std::string command_line(const CommandSpec& spec) { return spec.name.empty() ? "t5studio" : "t5studio " + spec.name; }

// The CLI11 app of one subcommand: one option per row of its table, every value kept as text (the
// accessors convert and range-check it, naming the flag), every occurrence kept (TakeAll).
std::unique_ptr<CLI::App> make_app(const CommandSpec& spec, std::map<const CLI::Option*, const Flag*>* flag_of) {
    auto app = std::make_unique<CLI::App>(spec.summary, command_line(spec));
    app->allow_extras();  // unknown arguments come back in remaining(), reported with the nearest flag
    app->get_formatter()->column_width(30);
    for (const Flag& f : spec.flags) {
        const std::string help = f.help + (f.kind == FlagKind::Repeatable ? " (repeatable)" : "") +
                                 (f.kind == FlagKind::Model ? "; or ORG/NAME[@REV] from the Hugging Face cache" : "");
        CLI::Option* o = nullptr;
        if (f.kind == FlagKind::Positional) o = app->add_option(f.name, help)->expected(0, -1)->allow_extra_args();
        else if (is_switch(f)) o = app->add_flag("--" + f.name, help);
        else o = app->add_option("--" + f.name, help);
        if (!f.value_name.empty()) o->type_name(f.value_name);
        o->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        if (flag_of) (*flag_of)[o] = &f;
    }
    return app;
}

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string unknown_flag_message(const std::string& arg, const CommandSpec& spec) {
    const std::string name = arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
    std::vector<std::string> names;
    for (const Flag& f : spec.flags)
        if (f.kind != FlagKind::Positional && f.alias_of.empty()) names.push_back(f.name);  // suggest the flag, not its alias
    const std::string near = nearest_name(name, names);
    if (!near.empty()) return "unknown flag --" + name + "; did you mean --" + near + "?";
    return "unknown flag --" + name + " (" + command_line(spec) + " --help lists the flags)";
}

}  // namespace

std::string nearest_name(const std::string& typed, const std::vector<std::string>& names) {
    std::vector<std::string> words;  // --num-beams: "beams" alone may be the flag meant
    for (size_t start = 0, dash; start < typed.size(); start = dash + 1) {
        dash = std::min(typed.find('-', start), typed.size());
        if (dash - start >= 3 && dash - start < typed.size()) words.push_back(typed.substr(start, dash - start));
    }
    std::string best;
    size_t best_cost = SIZE_MAX;
    for (const std::string& name : names) {
        size_t cost = edit_distance(typed, name);
        for (const std::string& w : words) cost = std::min(cost, 1 + edit_distance(w, name));
        if (cost < best_cost) best_cost = cost, best = name;
    }
    return best_cost <= std::max<size_t>(2, typed.size() / 3) ? best : "";
}

std::string command_help(const CommandSpec& spec) { return make_app(spec, nullptr)->help(); }

std::string program_help(const std::vector<const CommandSpec*>& commands, const std::string& footer) {
    CLI::App app("T5 Studio: paraphrase with T5-family models and fine-tune them.", "t5studio");
    app.get_formatter()->column_width(16);
    app.add_flag("--version", "print the version of t5studio and of LibTorch");
    for (const CommandSpec* c : commands) app.add_subcommand(c->name, c->summary);
    app.footer(footer);
    return app.help();
}

Args::Args(const std::vector<std::string>& argv, const CommandSpec& spec) {
    // `--name=value` goes to CLI11 as `--name value`: CLI11 takes the argument after a valued flag
    // whatever it looks like (`--seed -1`, `--text=`, `--text -x`), as this CLI always has.
    std::vector<std::string> args;
    std::string missing_value;
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& arg = argv[i];
        if (arg == "--") throw UsageError("unknown flag --");
        const size_t eq = arg.find('=');
        const std::string name = arg.rfind("--", 0) == 0 ? arg.substr(2, eq == std::string::npos ? eq : eq - 2) : "";
        const Flag* f = name.empty() ? nullptr : find_flag(spec, name);
        if (f && !f->alias_of.empty()) {  // the value goes to the flag it stands for; messages name the alias
            typed_[f->alias_of] = name;
            f = find_flag(spec, f->alias_of);
        }
        if (f && is_switch(*f) && eq == std::string::npos) {
            args.push_back("--" + f->name);
        } else if (!f) {
            args.push_back(arg);  // unknown ones come back from CLI11 in remaining()
        } else if (is_switch(*f)) {
            throw UsageError("--" + name + " takes no value");
        } else if (eq != std::string::npos || i + 1 < argv.size()) {
            args.push_back("--" + f->name);
            args.push_back(eq != std::string::npos ? arg.substr(eq + 1) : argv[++i]);
        } else {
            missing_value = name;  // reported after any unknown flag before it
        }
    }
    std::map<const CLI::Option*, const Flag*> flag_of;
    const auto app = make_app(spec, &flag_of);
    std::reverse(args.begin(), args.end());  // CLI11 reads a vector from its end
    try {
        app->parse(args);
    } catch (const CLI::CallForHelp&) {
        throw HelpRequested(app->help());
    } catch (const CLI::ParseError& e) {
        throw UsageError(e.what());
    }
    const std::vector<std::string> extra = app->remaining();
    if (!extra.empty() && extra.front().rfind("--", 0) == 0) throw UsageError(unknown_flag_message(extra.front(), spec));
    if (!extra.empty()) throw UsageError("unexpected argument '" + extra.front() + "'");
    if (!missing_value.empty()) throw UsageError("--" + missing_value + " needs a value");

    std::map<const CLI::Option*, size_t> used;  // occurrences of each option read so far
    for (const CLI::Option* o : app->parse_order()) {
        const auto it = flag_of.find(o);
        if (it == flag_of.end()) continue;
        const Flag& f = *it->second;
        std::string value = is_switch(f) ? "1" : o->results().at(used[o]++);
        if (f.kind == FlagKind::Model) value = hub::resolve_model(value).string();
        values_[f.name].push_back(value);
        order_.emplace_back(f.name, value);
    }
    open_adapter_as_model(spec);
}

// `--model ADAPTER`: a PEFT adapter folder opens as its base with the adapter, as peft's
// AutoPeftModel does; the command sees `--model BASE --adapter ADAPTER`.
void Args::open_adapter_as_model(const CommandSpec& spec) {
    const auto it = values_.find("model");
    if (it == values_.end()) return;
    const std::string adapter = it->second.back();
    const std::optional<hub::AdapterBase> base = hub::adapter_base(adapter);
    if (!base) return;
    const std::string named = base->name.empty()
                                  ? std::string("no base model (adapter_config.json has no base_model_name_or_path)")
                                  : "base " + base->name;
    if (!base->dir)
        throw Error(ErrorCode::FileNotFound,
                    adapter + " is a LoRA adapter (" + named + ", not a folder and not in the Hugging Face cache" +
                        (base->name.empty() ? std::string() : ": t5studio pull " + base->name) + ")" +
                        (spec.model_may_be_adapter ? std::string() : "; or give --model BASE_DIR --adapter " + adapter));
    if (!find_flag(spec, "adapter") && !spec.model_may_be_adapter)
        throw UsageError(adapter + " is a LoRA adapter (" + named + "): give --model " + base->dir->string() +
                         ", or merge the two (t5studio train --merge)");
    if (has("adapter"))
        throw UsageError("--model " + adapter + " is a LoRA adapter (" + named +
                         ") and --adapter is given too: give --model BASE --adapter DIR");
    it->second.back() = base->dir->string();
    for (auto& [name, value] : order_)
        if (name == "model" && value == adapter) value = it->second.back();
    values_["adapter"].push_back(adapter);
    order_.emplace_back("adapter", adapter);
}

std::string Args::typed(const std::string& name) const {
    const auto it = typed_.find(name);
    return "--" + (it == typed_.end() ? name : it->second);
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second.back();
}

std::string Args::require(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw UsageError("missing required flag --" + name);
    return it->second.back();
}

const std::vector<std::string>& Args::all(const std::string& name) const {
    static const std::vector<std::string> kEmpty;
    auto it = values_.find(name);
    return it == values_.end() ? kEmpty : it->second;
}

int64_t Args::get_int64(const std::string& name, int64_t fallback, int64_t min, int64_t max) const {
    if (!has(name)) return fallback;
    const std::string text = get(name);
    const std::string integers = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') throw UsageError(typed(name) + " expects " + integers + ", got '" + text + "'");
    if (errno == ERANGE || v < min || v > max) {
        // An int64 end is no bound for the words (a double shows it rounded): --steps 0 "must be >= 1".
        // A number past int64 itself is told the exact integers instead.
        FieldRange range;
        if (min != INT64_MIN) range.min = static_cast<double>(min);
        if (max != INT64_MAX) range.max = static_cast<double>(max);
        if (errno == ERANGE && (min == INT64_MIN || max == INT64_MAX)) range.words = integers.c_str();
        throw UsageError(range_message(typed(name), range, text));
    }
    return v;
}

int Args::get_int(const std::string& name, int fallback, int min, int max) const {
    return static_cast<int>(get_int64(name, fallback, min, max));
}

int Args::get_threads() const { return get_int("threads", 0, 0, kMaxThreads); }

double Args::get_double(const std::string& name, double fallback) const {
    if (!has(name)) return fallback;
    const std::string text = get(name);
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') throw UsageError(typed(name) + " expects a number, got '" + text + "'");
    if (errno == ERANGE || !std::isfinite(v)) throw UsageError(range_message(typed(name), kAnyValue, text));  // "a finite number"
    return v;
}

}  // namespace t5s::cli
