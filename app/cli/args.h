#pragma once
// Minimal flag parser for the t5studio subcommands: `--name value`, `--name=value`, repeatable
// flags, and boolean switches. Unknown flags are errors (the CLI is a contract).
#include <climits>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace t5s::cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Args {
public:
    // `switches` take no value; `valued` take one. Anything else is a UsageError.
    Args(const std::vector<std::string>& argv, const std::set<std::string>& switches, const std::set<std::string>& valued);

    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string get(const std::string& name, const std::string& fallback = "") const;
    std::string require(const std::string& name) const;
    const std::vector<std::string>& all(const std::string& name) const;
    // Integers outside [min, max] (including ones that overflow) are a UsageError naming the flag
    // and the range.
    int get_int(const std::string& name, int fallback, int min = INT_MIN, int max = INT_MAX) const;
    int64_t get_int64(const std::string& name, int64_t fallback, int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
    double get_double(const std::string& name, double fallback) const;  // finite numbers only
    // --threads N: 0 (= physical cores) up to t5s::kMaxThreads (--threads 100000 crashed, issue #16).
    int get_threads() const;

private:
    std::map<std::string, std::vector<std::string>> values_;
};

}  // namespace t5s::cli
