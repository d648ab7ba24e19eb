#pragma once
// The UI logic tests' one fixture: a Controller whose engine is a recorder (the fake engine). Every
// command the controller submits is kept in `sent` and gets the next job id; events are applied by
// the test. A test either makes one, derives a Fake of its own from it, or is a
// TEST_CASE_METHOD(test::RecordingController, ...) that sees `sent`, `next` and `c` as its own.
#include <string>
#include <variant>
#include <vector>

#include "controller.h"
#include "settings.h"

namespace t5s::ui::test {

struct RecordingController {
    std::vector<Command> sent;
    JobId next = 1;
    Controller c{[this](Command cmd) {
        sent.push_back(std::move(cmd));
        return next++;
    }};

    // Loads the model folder `dir` from the Model panel and answers as the engine would (info's dir
    // set to `dir`), so the panels that need a model can send their commands.
    void load(const std::string& dir = "/m", ModelInfo info = {}) {
        auto& m = c.state().model;
        m.path_input = dir;
        c.load_model();
        info.dir = dir;
        c.apply(ModelLoaded{m.load_job, info, 1.0});
    }

    // The last command of type T sent, or null.
    template <class T>
    const T* last() const {
        for (auto it = sent.rbegin(); it != sent.rend(); ++it)
            if (auto* t = std::get_if<T>(&*it)) return t;
        return nullptr;
    }
    template <class T>
    int count() const {
        int n = 0;
        for (const auto& command : sent) n += std::holds_alternative<T>(command) ? 1 : 0;
        return n;
    }
};

// What a restart keeps of `state`: saved to settings.json, read back (the reader's warning in
// *warning) and restored into a fresh state.
inline UiState after_restart(const UiState& state, std::string* warning) {
    AppSettings saved;
    capture_settings(state, saved);
    UiState restored;
    restore_settings(settings_from_json(settings_to_json(saved), warning), restored);
    return restored;
}

}  // namespace t5s::ui::test
