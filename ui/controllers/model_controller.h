#pragma once
// Model panel: load a model folder (device / precision / threads), the folder browser, the LoRA
// adapters of the loaded base (switched without reloading it).
#include "controllers/panel_controller.h"

namespace t5s::ui {

class ModelController : public PanelController {
public:
    using PanelController::PanelController;
    void load_model();                                                    // from model.path_input
    void load_model(const std::string& dir);                              // "use this model" of the training panel
    void load_model(const std::string& dir, const std::string& adapter);  // base + LoRA adapter (a LoRA run's "use")
    void browse(const std::string& dir);
    void load_embedder();  // from model.embedder_input, with the model's device / precision / threads
    void unload_embedder();
    void add_adapter();                        // from model.adapter_input: listed for the base and applied
    void use_adapter(const std::string& dir);  // "" = none; the next request uses it

    void apply(const Event& event) override;
    void failed(const JobFailed& failure) override;
    void engine_died() override;

private:
    RuntimeOptions runtime() const;
    void embedder_event(const Event& event);
    void remember_adapter(const std::string& base, const std::string& adapter);
};

}  // namespace t5s::ui
