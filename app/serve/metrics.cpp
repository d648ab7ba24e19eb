#include "serve/metrics.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace t5s::serve {
namespace {

std::string escape(const std::string& v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

std::string number(double v) {
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    if (std::isnan(v)) return "NaN";
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
}

}  // namespace

std::string format_labels(const Labels& labels) {
    if (labels.empty()) return "";
    std::string out = "{";
    for (size_t i = 0; i < labels.size(); ++i) {
        if (i) out += ",";
        out += labels[i].first + "=\"" + escape(labels[i].second) + "\"";
    }
    return out + "}";
}

Metrics::Family& Metrics::family(const std::string& name) {
    auto it = families_.find(name);
    if (it == families_.end()) throw std::logic_error("metric not declared: " + name);
    return it->second;
}

void Metrics::declare_counter(const std::string& name, const std::string& help) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!families_.count(name)) order_.push_back(name);
    families_[name] = Family{help, "counter", {}, {}, {}};
}

void Metrics::declare_gauge(const std::string& name, const std::string& help) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!families_.count(name)) order_.push_back(name);
    families_[name] = Family{help, "gauge", {}, {}, {}};
}

void Metrics::declare_histogram(const std::string& name, const std::string& help, std::vector<double> buckets) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!families_.count(name)) order_.push_back(name);
    families_[name] = Family{help, "histogram", std::move(buckets), {}, {}};
}

void Metrics::add(const std::string& name, const Labels& labels, double value) {
    std::lock_guard<std::mutex> lock(mutex_);
    family(name).values[labels] += value;
}

void Metrics::set(const std::string& name, const Labels& labels, double value) {
    std::lock_guard<std::mutex> lock(mutex_);
    family(name).values[labels] = value;
}

void Metrics::observe(const std::string& name, const Labels& labels, double value) {
    std::lock_guard<std::mutex> lock(mutex_);
    Family& f = family(name);
    Histogram& h = f.histograms[labels];
    if (h.counts.empty()) h.counts.assign(f.buckets.size(), 0.0);
    for (size_t i = 0; i < f.buckets.size(); ++i) {
        if (value <= f.buckets[i]) {
            h.counts[i] += 1;
            break;
        }
    }
    h.sum += value;
    h.count += 1;
}

std::string Metrics::render() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out;
    for (const auto& name : order_) {
        const Family& f = families_.at(name);
        out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + f.type + "\n";
        for (const auto& [labels, v] : f.values) out += name + format_labels(labels) + " " + number(v) + "\n";
        for (const auto& [labels, h] : f.histograms) {
            double cumulative = 0;
            for (size_t i = 0; i <= f.buckets.size(); ++i) {
                Labels with_le = labels;
                cumulative += i < f.buckets.size() ? h.counts[i] : 0.0;
                const bool inf = i == f.buckets.size();
                with_le.emplace_back("le", inf ? "+Inf" : number(f.buckets[i]));
                out += name + "_bucket" + format_labels(with_le) + " " + number(inf ? h.count : cumulative) + "\n";
            }
            out += name + "_sum" + format_labels(labels) + " " + number(h.sum) + "\n";
            out += name + "_count" + format_labels(labels) + " " + number(h.count) + "\n";
        }
    }
    return out;
}

}  // namespace t5s::serve
