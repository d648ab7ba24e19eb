#pragma once
// Model panel: load a model folder (device / precision / threads), the folder browser.
#include "controllers/panel_controller.h"

namespace t5s::ui {

class ModelController : public PanelController {
public:
    using PanelController::PanelController;
    void load_model();                        // from model.path_input
    void load_model(const std::string& dir);  // "use this model" of the training panel
    void browse(const std::string& dir);
    void load_embedder();  // from model.embedder_input, with the model's device / precision / threads
    void unload_embedder();

    void apply(const Event& event) override;
    void failed(const JobFailed& failure) override;
    void engine_died() override;

private:
    RuntimeOptions runtime() const;
    void embedder_event(const Event& event);
};

}  // namespace t5s::ui
