// Developer tool for the quality scores (tests/bench/quality_bench.py drives it; not a test):
//   t5s_quality_bench PAIRS.jsonl TEXTS.txt BRUTE_N
// 1. chrF on every {"hypothesis","reference","chrf"} line of PAIRS (sacrebleu's value / 100):
//    max |ours - sacrebleu|, count above 1e-6, and time per pair.
// 2. find_near_duplicates (defaults: 128 permutations, threshold 0.9) on TEXTS (one per line):
//    time, and on the first BRUTE_N texts agreement with the same greedy scan done with exact
//    Jaccard similarity (a text is dropped when an earlier kept text has J >= 0.9).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "t5s/quality.h"

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

nlohmann::json chrf_parity(const std::string& path) {
    std::ifstream in(path);
    std::vector<nlohmann::json> pairs;
    for (std::string line; std::getline(in, line);) pairs.push_back(nlohmann::json::parse(line));
    double max_diff = 0.0;
    size_t above = 0;
    const auto start = std::chrono::steady_clock::now();
    for (const auto& p : pairs) {
        const double diff = std::abs(t5s::chrf(p.at("hypothesis").get<std::string>(), p.at("reference").get<std::string>()) -
                                     p.at("chrf").get<double>());
        max_diff = std::max(max_diff, diff);
        above += diff > 1e-6;
    }
    const double elapsed = seconds_since(start);
    return {{"pairs", pairs.size()},
            {"max_abs_diff", max_diff},
            {"above_1e-6", above},
            {"us_per_pair", 1e6 * elapsed / std::max<size_t>(pairs.size(), 1)}};
}

std::set<size_t> exact_greedy_dedupe(const std::vector<std::string>& texts, double threshold) {
    std::vector<std::vector<uint64_t>> kept_shingles;
    std::set<size_t> dropped;
    for (size_t i = 0; i < texts.size(); ++i) {
        std::vector<uint64_t> s = t5s::shingle_hashes(texts[i]);
        bool duplicate = false;
        for (const auto& k : kept_shingles) {
            std::vector<uint64_t> common;
            std::set_intersection(s.begin(), s.end(), k.begin(), k.end(), std::back_inserter(common));
            const size_t united = s.size() + k.size() - common.size();
            const double j = united == 0 ? 1.0 : static_cast<double>(common.size()) / united;
            if (j >= threshold) {
                duplicate = true;
                break;
            }
        }
        if (duplicate) dropped.insert(i);
        else kept_shingles.push_back(std::move(s));
    }
    return dropped;
}

nlohmann::json near_duplicates(const std::string& path, size_t brute_n) {
    std::ifstream in(path);
    std::vector<std::string> texts;
    for (std::string line; std::getline(in, line);) texts.push_back(line);
    auto start = std::chrono::steady_clock::now();
    const auto found = t5s::find_near_duplicates(texts);
    const double elapsed = seconds_since(start);

    const std::vector<std::string> head(texts.begin(), texts.begin() + std::min(brute_n, texts.size()));
    std::set<size_t> lsh;
    for (const auto& d : t5s::find_near_duplicates(head)) lsh.insert(d.index);
    const std::set<size_t> exact = exact_greedy_dedupe(head, 0.9);
    size_t both = 0;
    for (size_t i : lsh) both += exact.count(i);
    return {{"texts", texts.size()},
            {"dropped", found.size()},
            {"seconds", elapsed},
            {"us_per_text", 1e6 * elapsed / std::max<size_t>(texts.size(), 1)},
            {"brute_force_texts", head.size()},
            {"exact_dropped", exact.size()},
            {"minhash_dropped", lsh.size()},
            {"dropped_by_both", both}};
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: t5s_quality_bench PAIRS.jsonl TEXTS.txt BRUTE_N\n";
        return 2;
    }
    nlohmann::json out{{"chrf", chrf_parity(argv[1])}, {"near_duplicates", near_duplicates(argv[2], std::stoul(argv[3]))}};
    std::cout << out.dump(1) << "\n";
    return 0;
}
