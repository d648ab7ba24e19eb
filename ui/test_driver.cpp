#include "test_driver.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui_internal.h>

#include "png_writer.h"
#include "t5s/history_store.h"

namespace t5s::ui {

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

TestDriver::TestDriver(std::vector<ScriptStep> steps, std::string screenshot_dir, std::string history_db)
    : steps_(std::move(steps)), screenshot_dir_(std::move(screenshot_dir)), history_db_(std::move(history_db)) {
    if (!screenshot_dir_.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(screenshot_dir_, ec);
    }
}

TestDriver::~TestDriver() {
    if (filler_.joinable()) filler_.join();
}

namespace {

// An error line of the log or a panel's error field that contains `text`.
bool shows_error(const UiState& s, const std::string& text) {
    for (const auto& line : s.log)
        if (line.error && line.text.find(text) != std::string::npos) return true;
    for (const std::string* e : {&s.model.error, &s.ws.error, &s.batch.error, &s.history.error, &s.exp.error})
        if (e->find(text) != std::string::npos) return true;
    for (const auto& w : s.batch.warnings)
        if (w.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

void TestDriver::fail(const std::string& message) {
    const auto& st = steps_[std::min(pc_, steps_.size() - 1)];
    std::cerr << "test script line " << st.line << " (" << st.op << " " << st.arg << "): FAILED: " << message << "\n";
    failed_ = true;
    done_ = true;
}

void TestDriver::next() {
    ++pc_;
    phase_ = 0;
    counter_ = 0;
    if (pc_ >= steps_.size()) done_ = true;
}

bool TestDriver::idle(const UiState& s) const {
    return s.ws.job == 0 && s.model.load_job == 0 && s.model.embedder_job == 0 && s.batch.dataset_job == 0 &&
           s.batch.phase != BatchPhase::Running && s.history.job == 0 && s.exp.job == 0 && s.train.job == 0 &&
           s.ws.pending_decisions == 0 && filler_done_;
}

void TestDriver::before_new_frame(ImGuiIO& io, Controller& ctl) {
    // Release the key pressed last frame.
    if (released_key_ >= 0) {
        io.KeysDown[released_key_] = false;
        io.KeyCtrl = io.KeyShift = io.KeyAlt = false;
        released_key_ = -1;
        return;  // one frame with the key up
    }
    if (done_ || steps_.empty()) {
        done_ = true;
        return;
    }
    auto& s = ctl.state();
    const ScriptStep& st = steps_[pc_];
    if (st.op == "frames") {
        if (++counter_ >= std::max(1, std::atoi(st.arg.c_str()))) next();
    } else if (st.op == "key") {
        const auto chord = *parse_chord(st.arg);
        io.KeysDown[chord.key] = true;
        io.KeyCtrl = chord.ctrl;
        io.KeyShift = chord.shift;
        io.KeyAlt = chord.alt;
        released_key_ = chord.key;
        next();
    } else if (st.op == "type") {
        std::string text = st.arg;
        for (size_t p; (p = text.find("\\n")) != std::string::npos;) text.replace(p, 2, "\n");
        io.AddInputCharactersUTF8(text.c_str());
        next();
    } else if (st.op == "wait_idle" || st.op == "wait_model" || st.op == "wait_embedder") {
        step_wait(st, ctl);
    } else if (st.op == "load_embedder") {
        s.model.embedder_input = st.arg;
        ctl.load_embedder();
        next();
    } else if (st.op == "screenshot") {
        step_screenshot(st);
    } else if (st.op == "expect_candidates") {
        const size_t n = size_t(std::atoi(st.arg.c_str()));
        if (s.ws.list.size() < n) fail("only " + std::to_string(s.ws.list.size()) + " candidates");
        else next();
    } else if (st.op == "expect_export") {
        step_expect_export(st, ctl);
    } else if (st.op == "expect_error") {
        step_expect_error(st, ctl);
    } else if (st.op == "log") {
        std::cout << "script: " << st.arg << "\n";
        next();
    } else if (st.op == "fill_history") {
        step_fill_history(st);
    } else if (st.op == "train_history") {
        step_train_history(st, ctl);
    } else if (st.op == "show_past_runs") {
        s.train.show_past_runs = true;
        s.train.selected_run = s.train.run_id;
        next();
    } else if (st.op == "expect_training_run") {
        step_expect_training_run(st, ctl);
    } else if (score_step(st, ctl)) {
        // done (or still waiting) in test_driver_scores.cpp
    } else if (models_step(st, ctl)) {
        // done (or still waiting) in test_driver_models.cpp
    } else if (learning_step(st, ctl)) {
        // done (or still waiting) in test_driver_learning.cpp
    } else if (spans_step(st, ctl)) {
        // done in test_driver_spans.cpp
    } else if (decoding_step(st, ctl)) {
        // done in test_driver_decoding.cpp
    } else if (recipe_step(st, ctl)) {
        // done (or still waiting) in test_driver_recipes.cpp
    } else if (st.op == "export_all") {
        s.exp.path = st.arg;
        s.exp.accepted_only = false;
        s.exp.format = 0;
        ctl.start_export(true);
        next();
    }
}

void TestDriver::step_wait(const ScriptStep& st, Controller& ctl) {
    auto& s = ctl.state();
    if (phase_ == 0) {
        deadline_ = now_s() + (st.arg.empty() ? 60.0 : std::atof(st.arg.c_str()));
        phase_ = 1;
        counter_ = 0;
    }
    const bool embedder = st.op == "wait_embedder";
    const bool ok = st.op == "wait_idle" ? idle(s) : embedder ? bool(s.model.embedder) : bool(s.model.info);
    counter_ = ok ? counter_ + 1 : 0;
    if (counter_ >= 3) next();  // stable for 3 frames
    else if (now_s() > deadline_)
        fail(st.op == "wait_model" ? "no model loaded: " + s.model.error
             : embedder            ? "no embedding model loaded: " + s.model.embedder_error
                                   : "still busy");
    else if (st.op == "wait_model" && !s.model.error.empty() && s.model.load_job == 0)
        fail("model load failed: " + s.model.error);
    else if (embedder && !s.model.embedder_error.empty() && s.model.embedder_job == 0)
        fail("embedding model load failed: " + s.model.embedder_error);
}

void TestDriver::step_screenshot(const ScriptStep& st) {
    if (phase_ == 0) {
        deadline_ = now_s() + 2.0;
        phase_ = 1;
    }
    if (fonts_settled_ && !fonts_settled_() && now_s() < deadline_) return;  // new glyphs still building
    const auto sp = st.arg.find(' ');
    pending_shot_ = st.arg.substr(0, sp) + ".png";
    pending_panel_ = sp == std::string::npos ? std::string() : st.arg.substr(sp + 1);
    next();
}

void TestDriver::step_expect_export(const ScriptStep& st, Controller& ctl) {
    auto& s = ctl.state();
    std::vector<std::pair<std::string, std::string>> expected;
    for (const auto& [gid, pairs] : s.ws.decided) expected.insert(expected.end(), pairs.begin(), pairs.end());
    try {
        auto got = read_exported_pairs(st.arg);
        std::sort(expected.begin(), expected.end());
        std::sort(got.begin(), got.end());
        if (got != expected) {
            std::string msg = "export has " + std::to_string(got.size()) + " pairs, the session accepted/edited " +
                              std::to_string(expected.size());
            for (const auto& p : got) msg += "\n  got:      " + p.first + " => " + p.second;
            for (const auto& p : expected) msg += "\n  expected: " + p.first + " => " + p.second;
            fail(msg);
            return;
        }
        size_t edited = 0;
        for (const auto& [gid, pairs] : s.ws.decided) (void)gid, edited += pairs.size();
        std::cout << "export check: " << got.size() << " pairs match the accepted/edited candidates\n";
        next();
    } catch (const std::exception& e) {
        fail(e.what());
    }
}

void TestDriver::step_expect_error(const ScriptStep& st, Controller& ctl) {
    auto& s = ctl.state();
    if (phase_ == 0) {
        deadline_ = now_s() + 60.0;
        phase_ = 1;
    }
    if (shows_error(s, st.arg)) {
        std::cout << "error shown: " << st.arg << "\n";
        next();
    } else if (now_s() > deadline_) {
        fail("no error containing '" + st.arg + "' is shown");
    }
}

void TestDriver::step_fill_history(const ScriptStep& st) {
#ifndef T5S_TEST_HOOKS
    (void)st;
    fail("fill_history: this build has no test hooks (configure with -DT5S_TEST_HOOKS=ON)");
#else
    // Test hook: writes the history database directly (a second connection beside the engine's).
    if (phase_ == 0) {
        const int n = std::atoi(st.arg.c_str());
        filler_done_ = false;
        filler_ = std::thread([this, n] {
            try {
                HistoryStore h(history_db_);
                std::vector<GenerationRecord> batch;
                for (int i = 0; i < n; ++i) {
                    GenerationRecord r;
                    r.input = "synthetic input " + std::to_string(i) + " 合成データ";
                    for (int k = 0; k < 4; ++k)
                        r.candidates.push_back(
                            {"synthetic candidate " + std::to_string(k) + " of " + std::to_string(i), -1.0 * k});
                    r.origin = "synthetic";
                    batch.push_back(std::move(r));
                    if (batch.size() == 1000) h.record_many(batch), batch.clear();
                }
                if (!batch.empty()) h.record_many(batch);
            } catch (const std::exception& e) {
                filler_error_ = e.what();
            }
            filler_done_ = true;
        });
        phase_ = 1;
    } else if (filler_done_) {
        filler_.join();
        if (!filler_error_.empty()) fail(filler_error_);
        else next();
    }
#endif
}

void TestDriver::step_train_history(const ScriptStep& st, Controller& ctl) {
    auto& s = ctl.state();
    // Fine-tune the open model on this session's accepted pairs, as the panel's Start does.
    std::istringstream in(st.arg);
    int64_t steps = 0;
    std::string out;
    in >> steps >> out;
    if (!s.model.info) return fail("train_history: no model loaded");
    auto& t = s.train;
    ctl.open_training();
    t.model_dir = s.model.info->dir.string();
    t.out_dir = out;
    t.data_file.clear();
    t.data_from_history = true;
    t.options.steps = steps;
    t.options.batch_size = 4;
    t.options.eval_every = steps;
    t.options.save_every = 0;
    t.options.sample_count = 1;
    t.options.sample_max_new_tokens = 8;
    ctl.start_training();
    if (!t.job) return fail("train_history: not started: " + t.error);
    next();
}

void TestDriver::step_expect_training_run(const ScriptStep& st, Controller& ctl) {
    auto& s = ctl.state();
    // The run just made is listed (from the history) as completed with a point per step.
    if (phase_ == 0) {
        deadline_ = now_s() + 30.0;
        phase_ = 1;
        s.train.runs_stale = true;
    }
    const auto& t = s.train;
    const int64_t steps = std::atoll(st.arg.c_str());
    const StoredTrainingRun* run = nullptr;
    for (const auto& r : t.runs)
        if (r.id == t.run_id && t.run_id > 0) run = &r;
    if (t.phase == TrainPhase::Failed) return fail("training failed: " + t.error);
    if (!t.runs_stale && !t.runs_job && run && run->status == "completed" && int64_t(run->points.size()) == steps) {
        std::cout << "training run " << run->id << ": " << run->points.size() << " points, last loss " << run->last_loss
                  << ", best eval " << run->best_eval_loss << "\n";
        next();
    } else if (now_s() > deadline_) {
        fail("training run " + std::to_string(t.run_id) + " not listed as completed with " + std::to_string(steps) + " points (" +
             std::to_string(t.runs.size()) + " runs listed)");
    }
}

void TestDriver::after_render(int fb_width, int fb_height, float fb_scale) {
    if (pending_shot_.empty()) return;
    int x = 0, y = 0, w = fb_width, h = fb_height;
    if (!pending_panel_.empty()) {
        ImGuiWindow* win = ImGui::FindWindowByName(pending_panel_.c_str());
        if (!win || !win->WasActive) {
            fail("no visible panel '" + pending_panel_ + "'");
            pending_shot_.clear();
            return;
        }
        x = int(win->Pos.x * fb_scale);
        y = int(win->Pos.y * fb_scale);
        w = int(win->Size.x * fb_scale);
        h = int(win->Size.y * fb_scale);
    }
    const std::string path = (std::filesystem::path(screenshot_dir_) / pending_shot_).string();
    std::string err;
    if (!save_framebuffer_png(path, fb_width, fb_height, x, y, w, h, &err)) fail(err);
    else std::cout << "screenshot: " << path << "\n";
    pending_shot_.clear();
}

void TestDriver::record_frame(double build_ms, double ms, const UiState& s) {
    std::string phase = "idle";
    if (s.exp.job != 0) phase = "exporting";
    else if (s.ws.job != 0 || s.batch.phase == BatchPhase::Running) phase = "generating";
    else if (!s.job_kind.empty() || !filler_done_) phase = "other";
    frame_ms_[phase].push_back(ms);
    build_ms_[phase].push_back(build_ms);
}

void TestDriver::report() const {
    for (const char* phase : {"idle", "generating", "exporting", "other"}) {
        auto it = frame_ms_.find(phase);
        if (it == frame_ms_.end()) continue;
        const auto st = frame_stats(it->second);
        const auto b = frame_stats(build_ms_.at(phase));
        std::printf("frame time %-10s frames %6zu  total p50 %6.2f p99 %6.2f max %7.2f ms | UI build p50 %5.2f p99 %6.2f ms\n",
                    phase, st.frames, st.p50, st.p99, st.max, b.p50, b.p99);
    }
    std::fflush(stdout);
}

std::string unescaped_script_text(const std::string& arg) {
    std::string out;
    for (size_t i = 0; i < arg.size(); ++i) {
        if (arg[i] == '\\' && i + 1 < arg.size() && arg[i + 1] == 'n') {
            out += '\n';
            ++i;
        } else {
            out += arg[i];
        }
    }
    return out;
}

}  // namespace t5s::ui
