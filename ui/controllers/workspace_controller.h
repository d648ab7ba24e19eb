#pragma once
// Workspace panel: generate candidates for the source text, decide on them (accept / reject /
// edit / undo / redo, each recorded in the history), walk a review queue row by row.
#include <optional>

#include "controllers/panel_controller.h"

namespace t5s::ui {

class WorkspaceController : public PanelController {
public:
    using PanelController::PanelController;
    void generate();
    void cancel_generation();
    void settings_changed();  // a slider moved: hot-swap into the running request
    void accept();
    void reject();
    void begin_edit();
    void commit_edit();
    void cancel_edit();
    void undo();
    void redo();
    void accept_and_next();
    void goto_row(int row);                             // review queue; generates
    void review(const std::vector<std::string>& rows);  // a new review queue, from its first row
    GenerationOptions effective_options() const;        // workspace options with the seed rule applied

    void apply(const Event& event) override;
    void failed(const JobFailed& failure) override;
    void engine_died() override;

private:
    void record(const std::optional<DecisionOut>& d);
};

}  // namespace t5s::ui
