#include "controllers/panel_controller.h"

namespace t5s::ui {

JobId ControllerContext::send(Command command) {
    if (s.engine_dead) {
        log(true, "the engine thread is not running: restart it (Ctrl+F5)");
        return 0;
    }
    return submit_(std::move(command));
}

JobId ControllerContext::submit(PanelController& owner, Command command) {
    const JobId job = send(std::move(command));
    if (job) owners_[job] = &owner;
    return job;
}

PanelController* ControllerContext::owner_of(JobId job) const {
    auto it = owners_.find(job);
    return it == owners_.end() ? nullptr : it->second;
}

void ControllerContext::log(bool error, std::string text) {
    note(text);
    s.log.push_back(LogLine{error, std::move(text)});
    while (s.log.size() > 200) s.log.pop_front();
}

std::string ControllerContext::log_failure(const JobFailed& e) {
    std::string msg = e.message;
    if (e.code == ErrorCode::OutOfMemory) msg += " - try a smaller batch size or fewer beams/candidates";
    log(e.code != ErrorCode::Cancelled, std::string(to_string(e.code)) + ": " + msg);
    return msg;
}

}  // namespace t5s::ui
