#pragma once
// Export dialog: the history's accepted / edited pairs to JSONL / CSV / TSV.
#include "controllers/panel_controller.h"

namespace t5s::ui {

class ExportController : public PanelController {
public:
    using PanelController::PanelController;
    void start_export(bool overwrite);

    void apply(const Event& event) override;
    void failed(const JobFailed& failure) override;
    void engine_died() override;
};

}  // namespace t5s::ui
