#pragma once
// Turns user actions into commands and events into view-model changes. GL-free and ImGui-free so
// the annotator loop can be tested with a fake submit function and hand-made events.
#include <functional>
#include <string_view>

#include "keymap.h"
#include "ui_state.h"

namespace t5s::ui {

class Controller {
public:
    using Submit = std::function<JobId(Command)>;
    using NoteText = std::function<void(std::string_view)>;  // font glyph collection

    explicit Controller(Submit submit, NoteText note_text = {});

    UiState& state() { return s_; }
    const UiState& state() const { return s_; }
    const Keymap& keymap() const { return keymap_; }

    void apply(const Event& event);
    void perform(Action action);  // every keyboard action lands here (buttons too)
    void set_engine_dead(bool dead, const std::string& message);

    // Model panel.
    void load_model();            // from model.path_input
    void browse(const std::string& dir);
    // Workspace.
    void generate();
    void cancel_generation();
    void settings_changed();      // a slider moved: hot-swap into the running request
    void accept();
    void reject();
    void begin_edit();
    void commit_edit();
    void cancel_edit();
    void undo();
    void redo();
    void accept_and_next();
    void goto_row(int row);       // review queue; generates
    // Batch.
    void load_dataset();
    void start_batch();
    void pause_batch();
    void resume_batch();
    void cancel_batch();
    void review_in_workspace();   // dataset rows -> review queue
    // History.
    void refresh_history();
    void history_next_page();
    void history_prev_page();
    void history_search_changed();
    void send_to_input(int index);
    void delete_history(int index);
    // Export.
    void start_export(bool overwrite);
    // Training.
    void open_training();                 // show the panel; fills the model/output folders if empty
    void apply_training_preset(int preset);  // TrainPreset: fills steps/epochs, batch, lr, schedule, ...
    void start_training();
    void pause_training();
    void resume_training();
    void stop_training();                 // stops with a checkpoint; the final model is still written
    void use_trained_model();             // LoadModel on the final model folder
    void refresh_training_runs();         // past runs from the history (io lane)
    void continue_training_run(int64_t run_id);  // resume a cut-off / stopped run from its checkpoints
    void delete_training_run(int64_t run_id);    // the record only; its folders stay on disk
    void use_run_model(int64_t run_id);          // LoadModel on a past run's final model
    bool run_interrupted(const StoredTrainingRun& run) const;  // "running" but not the live run

    void log(bool error, std::string text);
    void note_text(std::string_view text) { note(text); }
    GenerationOptions effective_options() const;  // workspace options with the seed rule applied

private:
    JobId submit(Command c);
    void launch_training(StartTraining cmd);  // resets the live numbers and submits
    void record(const std::optional<DecisionOut>& d);
    void note(std::string_view t) {
        if (note_) note_(t);
    }

    Submit submit_;
    NoteText note_;
    Keymap keymap_;
    UiState s_;
};

}  // namespace t5s::ui
