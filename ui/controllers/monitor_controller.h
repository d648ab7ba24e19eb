#pragma once
// Monitor panel: memory, throughput and queue length over time, from the engine's telemetry.
#include "controllers/panel_controller.h"

namespace t5s::ui {

class MonitorController : public PanelController {
public:
    using PanelController::PanelController;
    void apply(const Event& event) override;   // TelemetrySample
    void failed(const JobFailed&) override {}  // submits no jobs
};

}  // namespace t5s::ui
