#pragma once
// The UI's one entry point for user actions and engine events. GL-free and ImGui-free so the
// annotator loop can be tested with a fake submit function and hand-made events.
// The work is done by one controller per panel (ui/controllers/), each owning the jobs it
// submits; this class holds them, routes every event to the controller that owns its job (or,
// for events that belong to a panel whatever job sent them, to that panel) and maps keyboard
// actions to them. The methods below forward to the panel controllers.
#include <functional>
#include <string_view>

#include "controllers/batch_controller.h"
#include "controllers/export_controller.h"
#include "controllers/history_controller.h"
#include "controllers/learning_controller.h"
#include "controllers/model_controller.h"
#include "controllers/model_store_controller.h"
#include "controllers/monitor_controller.h"
#include "controllers/training_controller.h"
#include "controllers/workspace_controller.h"
#include "keymap.h"
#include "ui_state.h"

namespace t5s::ui {

class Controller {
public:
    using Submit = ControllerContext::Submit;
    using NoteText = ControllerContext::NoteText;  // font glyph collection

    explicit Controller(Submit submit, NoteText note_text = {});

    UiState& state() { return s_; }
    const UiState& state() const { return s_; }
    const Keymap& keymap() const { return keymap_; }

    void apply(const Event& event);  // routes to the owner of the event's job
    void perform(Action action);     // every keyboard action lands here (buttons too)
    void set_engine_dead(bool dead, const std::string& message);

    ModelController& model() { return model_; }
    ModelStoreController& models() { return models_; }
    WorkspaceController& workspace() { return ws_; }
    BatchController& batch() { return batch_; }
    HistoryController& history() { return history_; }
    ExportController& exporter() { return export_; }
    TrainingController& training() { return training_; }
    LearningController& learning() { return learning_; }

    // Model panel.
    void load_model() { model_.load_model(); }  // from model.path_input
    void browse(const std::string& dir) { model_.browse(dir); }
    void load_embedder() { model_.load_embedder(); }  // from model.embedder_input
    void unload_embedder() { model_.unload_embedder(); }
    void add_adapter() { model_.add_adapter(); }
    void use_adapter(const std::string& dir) { model_.use_adapter(dir); }
    // Workspace.
    void generate() { ws_.generate(); }
    void cancel_generation() { ws_.cancel_generation(); }
    void settings_changed() { ws_.settings_changed(); }  // a slider moved: hot-swap into the running request
    void accept() { ws_.accept(); }
    void reject() { ws_.reject(); }
    void begin_edit() { ws_.begin_edit(); }
    void commit_edit() { ws_.commit_edit(); }
    void cancel_edit() { ws_.cancel_edit(); }
    void undo() { ws_.undo(); }
    void redo() { ws_.redo(); }
    void accept_and_next() { ws_.accept_and_next(); }
    void goto_row(int row) { ws_.goto_row(row); }  // review queue; generates
    // Batch.
    void load_dataset() { batch_.load_dataset(); }
    void start_batch() { batch_.start_batch(); }
    void pause_batch() { batch_.pause_batch(); }
    void resume_batch() { batch_.resume_batch(); }
    void cancel_batch() { batch_.cancel_batch(); }
    void review_in_workspace() { batch_.review_in_workspace(); }  // dataset rows -> review queue
    // History.
    void refresh_history() { history_.refresh_history(); }
    void history_next_page() { history_.history_next_page(); }
    void history_prev_page() { history_.history_prev_page(); }
    void history_search_changed() { history_.history_search_changed(); }
    void send_to_input(int index) { history_.send_to_input(index); }
    void delete_history(int index) { history_.delete_history(index); }
    // Export.
    void start_export(bool overwrite) { export_.start_export(overwrite); }
    // Training.
    void open_training() { training_.open_training(); }
    void apply_training_preset(int preset) { training_.apply_training_preset(preset); }
    void start_training() { training_.start_training(); }
    void pause_training() { training_.pause_training(); }
    void resume_training() { training_.resume_training(); }
    void stop_training() { training_.stop_training(); }
    void use_trained_model() { training_.use_trained_model(); }
    void refresh_training_runs() { training_.refresh_training_runs(); }
    void continue_training_run(int64_t run_id) { training_.continue_training_run(run_id); }
    void delete_training_run(int64_t run_id) { training_.delete_training_run(run_id); }
    void use_run_model(int64_t run_id) { training_.use_run_model(run_id); }
    bool run_interrupted(const StoredTrainingRun& run) const { return training_.run_interrupted(run); }

    void log(bool error, std::string text) { ctx_.log(error, std::move(text)); }
    void note_text(std::string_view text) { ctx_.note(text); }
    GenerationOptions effective_options() const { return ws_.effective_options(); }

private:
    PanelController* handler_of(const Event& event, JobId job);

    UiState s_;
    Keymap keymap_;
    ControllerContext ctx_;
    ModelController model_;
    ModelStoreController models_;
    WorkspaceController ws_;
    BatchController batch_;
    HistoryController history_;
    ExportController export_;
    TrainingController training_;
    LearningController learning_;
    MonitorController monitor_;
};

}  // namespace t5s::ui
