#pragma once
// Replays a test script (see test_script.h) inside the real app: injects keys and characters into
// ImGui's input state before NewFrame, takes screenshots after rendering, checks exports, and
// records frame times by what the app was doing (idle / generating / exporting).
#include <imgui.h>

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "controller.h"
#include "test_script.h"

namespace t5s::ui {

class TestDriver {
public:
    TestDriver(std::vector<ScriptStep> steps, std::string screenshot_dir, std::string history_db);
    ~TestDriver();

    void before_new_frame(ImGuiIO& io, Controller& ctl);  // after the backend's NewFrame
    void after_render(int fb_width, int fb_height, float fb_scale);
    void record_frame(double build_ms, double total_ms, const UiState& state);  // build: events..Render()
    bool finished() const { return done_; }
    // Screenshots wait (up to 2 s) for this to be true: the glyphs shown are in the atlas.
    void set_fonts_settled(std::function<bool()> settled) { fonts_settled_ = std::move(settled); }
    int exit_code() const { return failed_ ? 1 : 0; }
    void report() const;  // frame-time p50/p99 per phase on stdout

private:
    void fail(const std::string& message);
    bool idle(const UiState& s) const;
    void next();
    // One script op each (before_new_frame dispatches; each calls next() when its step is done).
    void step_wait(const ScriptStep& st, Controller& ctl);
    void step_screenshot(const ScriptStep& st);
    void step_expect_export(const ScriptStep& st, Controller& ctl);
    void step_expect_error(const ScriptStep& st, Controller& ctl);
    void step_fill_history(const ScriptStep& st);
    void step_train_history(const ScriptStep& st, Controller& ctl);
    void step_expect_training_run(const ScriptStep& st, Controller& ctl);
    // Quality-score ops (test_driver_scores.cpp); true when the op was one of them.
    bool score_step(const ScriptStep& st, Controller& ctl);
    void step_option(const ScriptStep& st, Controller& ctl);
    void step_expect_scores(Controller& ctl);
    void step_expect_order(Controller& ctl);
    void step_split_threshold(const ScriptStep& st, Controller& ctl);
    void step_expect_window(Controller& ctl);
    void step_expect_filtered(Controller& ctl);
    void step_expect_batch_counts(Controller& ctl);
    void step_history_dropped(Controller& ctl);
    // Models-window ops (test_driver_models.cpp); true when the op was one of them.
    bool models_step(const ScriptStep& st, Controller& ctl);
    void step_wait_download(const ScriptStep& st, Controller& ctl);
    void step_expect_local(const ScriptStep& st, Controller& ctl);
    // Learning-loop ops (test_driver_learning.cpp); true when the op was one of them.
    bool learning_step(const ScriptStep& st, Controller& ctl);
    // Protected-span ops (test_driver_spans.cpp); true when the op was one of them.
    bool spans_step(const ScriptStep& st, Controller& ctl);
    bool batch_spans_step(const ScriptStep& st, Controller& ctl);
    void step_history_spans(Controller& ctl);
    // Advanced decoding and Paste settings ops (test_driver_decoding.cpp); true when the op was one of them.
    bool decoding_step(const ScriptStep& st, Controller& ctl);
    // Recipe ops (test_driver_recipes.cpp); true when the op was one of them.
    bool recipe_step(const ScriptStep& st, Controller& ctl);
    void step_expect_routes(const ScriptStep& st, Controller& ctl);

    std::vector<ScriptStep> steps_;
    std::string screenshot_dir_;
    std::string history_db_;
    size_t pc_ = 0;
    int phase_ = 0;  // sub-step state
    int counter_ = 0;
    double deadline_ = 0.0;
    std::function<bool()> fonts_settled_;
    bool done_ = false;
    bool failed_ = false;
    int released_key_ = -1;
    std::string pending_shot_;   // file name
    std::string pending_panel_;  // "" = whole window
    std::map<std::string, std::vector<double>> frame_ms_, build_ms_;
    std::thread filler_;
    std::atomic<bool> filler_done_{true};
    std::string filler_error_;
};

// A script argument with each "\n" read as a new line (pasted settings, a recipe's text).
std::string unescaped_script_text(const std::string& arg);

}  // namespace t5s::ui
