#pragma once
// What every panel controller shares: the view-models, the door to the engine (commands whose
// events come back to the controller that submitted them), the log and the font glyph hook.
// One controller per panel (ImHex's one file per view): each owns the job ids it submits, and
// Controller::apply (controller.cpp) routes an event to the owner of its job.
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "ui_state.h"

namespace t5s::ui {

class PanelController;

class ControllerContext {
public:
    using Submit = std::function<JobId(Command)>;
    using NoteText = std::function<void(std::string_view)>;

    ControllerContext(UiState& state, Submit submit, NoteText note)
        : s(state), submit_(std::move(submit)), note_(std::move(note)) {}

    UiState& s;

    // A command whose events go to `owner`; 0 when the engine is down (logged).
    JobId submit(PanelController& owner, Command command);
    // A command answered by no event of its own (Cancel, PauseJob, ResumeJob, UpdateSettings,
    // DeleteTrainingRun): its failure, if any, is logged by the router.
    JobId send(Command command);
    PanelController* owner_of(JobId job) const;
    void release(JobId job) { owners_.erase(job); }  // the job's last event was routed
    void release_all() { owners_.clear(); }

    void log(bool error, std::string text);
    // Logs a failure the common way ("code: message", with a hint on out of memory); returns the
    // message for the panel's error line.
    std::string log_failure(const JobFailed& failure);
    void note(std::string_view text) const {
        if (note_) note_(text);
    }

private:
    Submit submit_;
    NoteText note_;
    std::map<JobId, PanelController*> owners_;
};

class PanelController {
public:
    explicit PanelController(ControllerContext& context) : ctx(context), s(context.s) {}
    virtual ~PanelController() = default;
    PanelController(const PanelController&) = delete;
    PanelController& operator=(const PanelController&) = delete;

    // An event of a job this controller submitted (or of a kind it owns, see Controller::apply).
    virtual void apply(const Event& event) = 0;
    // JobFailed of one of its jobs; the controller logs it (most with ctx.log_failure).
    virtual void failed(const JobFailed& failure) = 0;
    // The engine thread died: everything in flight is lost.
    virtual void engine_died() {}

protected:
    JobId submit(Command command) { return ctx.submit(*this, std::move(command)); }
    ControllerContext& ctx;
    UiState& s;
};

}  // namespace t5s::ui
