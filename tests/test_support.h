#pragma once
// Helpers shared by the engine tests: golden files, paths, comparisons.
#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "t5s/generation_fields.h"
#include "t5s/model.h"

namespace t5s::test {

inline std::filesystem::path data_dir() { return T5S_TEST_DATA; }
inline std::filesystem::path shared_dir() { return T5S_SHARED_DIR; }
inline std::filesystem::path model_dir(const std::string& name) { return data_dir() / "models" / name; }

inline nlohmann::json load_json(const std::filesystem::path& p) {
    std::ifstream in(p);
    if (!in) throw std::runtime_error("cannot open " + p.string());
    return nlohmann::json::parse(in);
}

inline nlohmann::json golden(const std::string& name) { return load_json(data_dir() / "goldens" / (name + ".json")); }

// A fresh directory under /tmp, removed with everything in it when the test ends.
class TempDir {
public:
    explicit TempDir(const std::string& tag)
        : path_(std::filesystem::temp_directory_path() /
                ("t5s_" + tag + "_" + std::to_string(counter()++) + "_" + std::to_string(::getpid()))) {
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

private:
    static int& counter() {
        static int n = 0;
        return n;
    }
    std::filesystem::path path_;
};

inline IdBatch ids_of(const nlohmann::json& j) { return j.get<IdBatch>(); }

// The beam settings of a golden's "config" (what make_goldens.py passed to HF generate()).
inline GenerationOptions beam_options_of(const nlohmann::json& config) {
    GenerationOptions o;
    o.num_beams = config["num_beams"];
    o.num_return_sequences = config["num_return_sequences"];
    o.max_new_tokens = config["max_new_tokens"];
    o.length_penalty = config["length_penalty"];
    o.early_stopping = config["early_stopping"];
    return o;
}

// Rows of a padded batch, cut at their attention-mask length.
// A golden run's "config" (generate()'s arguments, which are the options' JSON names) as options;
// the raw decoder screens nothing, so neither may the engine's side of the comparison.
inline GenerationOptions golden_options(const nlohmann::json& config) {
    GenerationOptions o = generation_options_from_json(config.dump());
    o.drop_invalid_text = false;
    return o;
}

inline IdBatch unpad(const nlohmann::json& ids, const nlohmann::json& mask) {
    IdBatch out;
    for (size_t i = 0; i < ids.size(); ++i) {
        std::vector<int> row;
        for (size_t j = 0; j < ids[i].size(); ++j)
            if (mask[i][j].get<int>()) row.push_back(ids[i][j].get<int>());
        out.push_back(row);
    }
    return out;
}

inline void flatten(const nlohmann::json& j, std::vector<double>& out) {
    if (j.is_array()) {
        for (const auto& x : j) flatten(x, out);
    } else {
        out.push_back(j.get<double>());
    }
}

// max |a - b| over two arrays of equal size (returns +inf on a size mismatch).
inline double max_abs_diff(const FloatArray& a, const nlohmann::json& golden_values) {
    std::vector<double> g;
    flatten(golden_values, g);
    if (g.size() != a.data.size()) return INFINITY;
    double m = 0;
    for (size_t i = 0; i < g.size(); ++i) m = std::max(m, std::abs(static_cast<double>(a.data[i]) - g[i]));
    return m;
}

}  // namespace t5s::test
