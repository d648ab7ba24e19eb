#pragma once
// History panel: search and page through the recorded generations, send one back to the
// workspace, delete one.
#include "controllers/panel_controller.h"

namespace t5s::ui {

class HistoryController : public PanelController {
public:
    using PanelController::PanelController;
    void refresh_history();
    void history_next_page();
    void history_prev_page();
    void history_search_changed();
    void send_to_input(int index);
    void delete_history(int index);

    void apply(const Event& event) override;  // HistoryLoaded; HistoryDeleted (from any panel)
    void failed(const JobFailed& failure) override;
    void engine_died() override;
};

}  // namespace t5s::ui
