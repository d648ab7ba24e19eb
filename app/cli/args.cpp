#include "cli/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "t5s/model.h"

namespace t5s::cli {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& switches, const std::set<std::string>& valued) {
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& arg = argv[i];
        if (arg.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + arg + "'");
        std::string name = arg.substr(2), value;
        bool inline_value = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            inline_value = true;
        }
        if (switches.count(name)) {
            if (inline_value) throw UsageError("--" + name + " takes no value");
            values_[name].push_back("1");
        } else if (valued.count(name)) {
            if (!inline_value) {
                if (i + 1 >= argv.size()) throw UsageError("--" + name + " needs a value");
                value = argv[++i];
            }
            values_[name].push_back(value);
        } else {
            throw UsageError("unknown flag --" + name);
        }
    }
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
    const std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') throw UsageError("--" + name + " expects " + range + ", got '" + text + "'");
    if (errno == ERANGE || v < min || v > max) throw UsageError("--" + name + " " + text + " is out of range (" + range + ")");
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
    if (text.empty() || *end != '\0') throw UsageError("--" + name + " expects a number, got '" + text + "'");
    if (errno == ERANGE || !std::isfinite(v)) throw UsageError("--" + name + " " + text + " is out of range (a finite number)");
    return v;
}

}  // namespace t5s::cli
