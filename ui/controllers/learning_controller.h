#pragma once
// The learning loop in the app: the workspace's "learn from my decisions" switch, its
// status line, and the Learning window (versions with their held-out losses, "use this one",
// "learn now"). Rounds are the engine's LearnNow (t5s/learning.h on the app's history, on the
// download lane: generation never waits behind one); with the switch on, one starts by itself
// after `every` new accepted/edited candidates. Never touches the versions folder itself.
#include <cstdint>
#include <string>

#include "controllers/panel_controller.h"

namespace t5s::ui {

// The versions folder of a base model under the app's learning folder: ROOT/<folder name>-<8 hex
// of a hash of the full path> (versions of different bases never mix).
std::string learning_dir_for(const std::string& root, const std::string& model_dir);
// "just now" | "42 s ago" | "3 min ago" | "2 h ago" | "5 d ago".
std::string ago_text(double seconds);
// "2026-12-02T06:39:21Z" -> unix ms; 0 when it is not that shape.
int64_t parse_iso_utc_ms(const std::string& text);
// The workspace's status line, e.g. "adapter v4 · 212 pairs · held-out loss 2.31 → 2.05 · 3 min ago";
// "learning… step 12/40" while a round runs; "base model · 7/50 new pairs" before the first version.
std::string learning_status_line(const LearningVm& l, int64_t now_ms);
// The last round in one line ("round 3 adopted: held-out loss 2.31 → 2.05, 12 new pairs, 40 s").
std::string round_summary(const LearningRoundResult& r);

class LearningController : public PanelController {
public:
    using PanelController::PanelController;

    void open_learning();                    // show (and focus) the Learning window, list versions
    void set_enabled(bool on);               // the switch (a round starts if enough pairs wait)
    bool learn_now();                        // false (and error) when it cannot start
    void cancel_round();                     // the current version stays (JobFailed Cancelled follows)
    void refresh();                          // ListAdapterVersions
    void use_version(int64_t version);       // 0 = the base alone
    void decision_recorded(EventKind kind);  // from every DecisionRecorded: counts accepted/edited pairs
    void model_loaded();                     // a model is loaded: its versions folder, list it

    void apply(const Event& event) override;
    void failed(const JobFailed& failure) override;
    void engine_died() override;

private:
    void maybe_start_round();
};

}  // namespace t5s::ui
