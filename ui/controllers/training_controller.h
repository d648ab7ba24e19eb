#pragma once
// Training panel: presets and options, start / pause / resume / stop a fine-tuning run, its live
// curve, past runs from the history (continue, delete, use their model).
#include "controllers/panel_controller.h"

namespace t5s::ui {

class ModelController;

// The base model folder of a LoRA run (its final folder is an adapter), "" for a full fine-tuning run.
std::string adapter_run_base(const StoredTrainingRun& run);

class TrainingController : public PanelController {
public:
    TrainingController(ControllerContext& context, ModelController& model) : PanelController(context), model_(model) {}
    void open_training();                    // show the panel; fills the model/output folders if empty
    void apply_training_preset(int preset);  // TrainPreset: fills steps/epochs, batch, lr, schedule, ...
    void start_training();
    void pause_training();
    void resume_training();
    void stop_training();                                      // stops with a checkpoint; the final model is still written
    void use_trained_model();                                  // LoadModel on the final model folder
    void refresh_training_runs();                              // past runs from the history (io lane)
    void continue_training_run(int64_t run_id);                // resume a cut-off / stopped run from its checkpoints
    void delete_training_run(int64_t run_id);                  // the record only; its folders stay on disk
    void use_run_model(int64_t run_id);                        // LoadModel on a past run's final model
    bool run_interrupted(const StoredTrainingRun& run) const;  // "running" but not the live run

    void apply(const Event& event) override;  // also TrainingRunRecorded of any job
    void failed(const JobFailed& failure) override;
    void engine_died() override;

private:
    void launch_training(StartTraining cmd);    // resets the live numbers and submits
    void apply_update(const TrainingEvent& e);  // training_events.cpp
    ModelController& model_;
};

}  // namespace t5s::ui
