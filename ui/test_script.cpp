#include "test_script.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <nlohmann/json.hpp>

namespace t5s::ui {

namespace {
std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}
}  // namespace

std::vector<ScriptStep> parse_script(const std::string& text) {
    // clang-format off
    static const std::set<std::string> ops = {"frames", "key", "type", "wait_idle", "wait_model", "screenshot",
                                              "expect_export", "expect_candidates", "log", "fill_history",
                                              "export_all", "train_history", "show_past_runs", "expect_training_run",
                                              "expect_error", "load_embedder", "wait_embedder", "option", "sort",
                                              "expect_scores", "expect_order", "split_threshold", "expect_window",
                                              "expect_filtered", "run_batch", "expect_batch_counts", "history_dropped",
                                              "expect_models_open", "models_tab", "download", "resume_download", "cancel_download", "wait_download_progress",
                                              "wait_download", "expect_local", "open_local", "expect_loaded",
                                              "learn_switch", "learn_settings", "decide", "learn_now", "wait_learn",
                                              "expect_versions", "use_version", "open_learning",
                                              "protect", "protect_regex", "mark_label", "expect_marks", "expect_source_spans",
                                              "expect_span_candidates", "expect_forced", "expect_batch_labels", "expect_batch_spans", "history_spans",
                                              "paste_settings", "expect_settings", "expect_not_applied", "open_advanced", "field_text",
                                              "expect_field_error", "recipe", "recipe_text", "expect_recipe_error",
                                              "save_recipe", "expect_routes", "expect_batch_routes"};
    // clang-format on
    std::vector<ScriptStep> out;
    std::istringstream in(text);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        const std::string t = trim(line);
        if (t.empty() || t[0] == '#') continue;
        const auto sp = t.find_first_of(" \t");
        ScriptStep s{n, t.substr(0, sp), sp == std::string::npos ? std::string() : trim(t.substr(sp))};
        if (!ops.count(s.op)) throw std::runtime_error("script:" + std::to_string(n) + ": unknown op '" + s.op + "'");
        if (s.op == "key" && !parse_chord(s.arg))
            throw std::runtime_error("script:" + std::to_string(n) + ": unknown key '" + s.arg + "'");
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<KeyChord> parse_chord(const std::string& text) {
    KeyChord c;
    std::string rest = text;
    std::transform(rest.begin(), rest.end(), rest.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const auto plus = rest.find('+', start);
        parts.push_back(rest.substr(start, plus == std::string::npos ? std::string::npos : plus - start));
        if (plus == std::string::npos) break;
        start = plus + 1;
    }
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
        if (parts[i] == "ctrl") c.ctrl = true;
        else if (parts[i] == "shift") c.shift = true;
        else if (parts[i] == "alt") c.alt = true;
        else return std::nullopt;
    }
    const std::string k = parts.back();
    if (k.size() == 1 && k[0] >= 'a' && k[0] <= 'z') c.key = GLFW_KEY_A + (k[0] - 'a');
    else if (k.size() == 1 && k[0] >= '0' && k[0] <= '9') c.key = GLFW_KEY_0 + (k[0] - '0');
    else if (k.size() >= 2 && k[0] == 'f' && std::all_of(k.begin() + 1, k.end(), ::isdigit))
        c.key = GLFW_KEY_F1 + std::stoi(k.substr(1)) - 1;
    else if (k == "enter") c.key = GLFW_KEY_ENTER;
    else if (k == "esc" || k == "escape") c.key = GLFW_KEY_ESCAPE;
    else if (k == "up") c.key = GLFW_KEY_UP;
    else if (k == "down") c.key = GLFW_KEY_DOWN;
    else if (k == "left") c.key = GLFW_KEY_LEFT;
    else if (k == "right") c.key = GLFW_KEY_RIGHT;
    else if (k == "tab") c.key = GLFW_KEY_TAB;
    else if (k == "home") c.key = GLFW_KEY_HOME;
    else if (k == "end") c.key = GLFW_KEY_END;
    else if (k == "backspace") c.key = GLFW_KEY_BACKSPACE;
    else if (k == "delete") c.key = GLFW_KEY_DELETE;
    else if (k == "period") c.key = GLFW_KEY_PERIOD;
    else return std::nullopt;
    return c;
}

std::vector<std::pair<std::string, std::string>> read_exported_pairs(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open");
    std::vector<std::pair<std::string, std::string>> out;
    std::string line;
    const bool jsonl = path.size() >= 6 && path.substr(path.size() - 6) == ".jsonl";
    if (jsonl) {
        while (std::getline(in, line)) {
            if (trim(line).empty()) continue;
            const auto j = nlohmann::json::parse(line);
            if (j.value("kind", std::string("candidate")) != "candidate") continue;
            out.emplace_back(j.at("source").get<std::string>(), j.at("target").get<std::string>());
        }
        return out;
    }
    throw std::runtime_error(path + ": the test reads JSONL exports only");
}

FrameStats frame_stats(std::vector<double> ms) {
    FrameStats s;
    s.frames = ms.size();
    if (ms.empty()) return s;
    std::sort(ms.begin(), ms.end());
    auto pct = [&](double p) { return ms[std::min(ms.size() - 1, size_t(p * double(ms.size() - 1) + 0.5))]; };
    s.p50 = pct(0.50);
    s.p99 = pct(0.99);
    s.max = ms.back();
    return s;
}

}  // namespace t5s::ui
