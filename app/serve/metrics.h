#pragma once
// A small Prometheus registry for `t5studio serve`: counters, gauges and histograms with labels,
// rendered in the text exposition format (version 0.0.4). Thread-safe.
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace t5s::serve {

using Labels = std::vector<std::pair<std::string, std::string>>;  // in the order they print

class Metrics {
public:
    // Declares a family (HELP / TYPE lines); `buckets` for histograms, ascending upper bounds.
    void declare_counter(const std::string& name, const std::string& help);
    void declare_gauge(const std::string& name, const std::string& help);
    void declare_histogram(const std::string& name, const std::string& help, std::vector<double> buckets);

    void add(const std::string& name, const Labels& labels, double value = 1.0);  // counter
    void set(const std::string& name, const Labels& labels, double value);        // gauge
    void observe(const std::string& name, const Labels& labels, double value);    // histogram

    std::string render() const;

private:
    struct Histogram {
        std::vector<double> counts;  // per bucket (not cumulative)
        double sum = 0.0;
        double count = 0.0;
    };
    struct Family {
        std::string help, type;
        std::vector<double> buckets;
        std::map<Labels, double> values;
        std::map<Labels, Histogram> histograms;
    };
    Family& family(const std::string& name);
    mutable std::mutex mutex_;
    std::vector<std::string> order_;
    std::map<std::string, Family> families_;
};

// The label set as Prometheus prints it: {a="x",b="y"} (values escaped), "" when empty.
std::string format_labels(const Labels& labels);

}  // namespace t5s::serve
