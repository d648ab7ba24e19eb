#include "controller.h"

#include <algorithm>

#include "t5s/overload.h"

namespace t5s::ui {

namespace {

// The job an event belongs to; 0 for events without one (TelemetrySample, EngineDied).
template <class E>
auto job_field(const E& e, int) -> decltype(e.job, JobId()) {
    return e.job;
}
template <class E>
JobId job_field(const E&, long) {
    return 0;
}
JobId job_of(const Event& event) {
    return std::visit([](const auto& e) { return job_field(e, 0); }, event);
}

template <class... Kinds>
bool holds_any(const Event& event) {
    return (std::holds_alternative<Kinds>(event) || ...);
}

// The last event of a job: its owner is forgotten after it.
bool last_event_of_job(const Event& e) {
    return holds_any<ModelLoaded, EmbedderLoaded, EmbedderUnloaded, GenerationDone, JobFailed, JobFinished, DatasetLoaded,
                     HistoryLoaded, DecisionRecorded, ExportDone, FileExists, DirectoryListing, TrainingRunsLoaded, AdapterSet,
                     ModelPulled, ModelsListed, ModelDeleted, LearningRoundDone, AdapterVersionsListed>(e);
}

// Events that end what the status bar shows as running.
bool ends_status_job(const Event& e) {
    return holds_any<ModelLoaded, EmbedderLoaded, EmbedderUnloaded, GenerationDone, JobFailed, JobFinished, ExportDone,
                     FileExists, AdapterSet, ModelPulled, LearningRoundDone>(e);
}

}  // namespace

Controller::Controller(Submit submit, NoteText note_text)
    : ctx_(s_, std::move(submit), std::move(note_text)),
      model_(ctx_),
      models_(ctx_, model_),
      ws_(ctx_),
      batch_(ctx_, ws_),
      history_(ctx_),
      export_(ctx_),
      training_(ctx_, model_),
      learning_(ctx_),
      monitor_(ctx_) {
    auto& o = s_.ws.options;
    o.do_sample = true;
    o.top_p = 0.95f;
    o.num_return_sequences = 4;
    o.max_new_tokens = 64;
    o.seed = 42;
    training_.apply_training_preset(int(TrainPreset::Quick));
}

void Controller::set_engine_dead(bool dead, const std::string& message) {
    s_.engine_dead = dead;
    s_.death_message = message;
    if (dead) {
        // Everything in flight is lost.
        for (PanelController* p : std::initializer_list<PanelController*>{&model_, &models_, &ws_, &batch_, &history_, &export_,
                                                                          &training_, &learning_})
            p->engine_died();
        s_.job_kind.clear();
        ctx_.release_all();
        ctx_.log(true, "engine stopped: " + message);
    } else {
        s_.model.info.reset();
        s_.model.embedder.reset();
        ctx_.log(false, "engine restarted; open the model again");
    }
}

// Events that belong to a panel whatever job sent them; the rest go to the owner of their job.
PanelController* Controller::handler_of(const Event& event, JobId job) {
    if (holds_any<ModelUnloaded>(event)) return &model_;  // also from a training that frees the model
    if (holds_any<DecisionRecorded>(event)) return &ws_;
    if (holds_any<HistoryDeleted>(event)) return &history_;  // from the history or the training panel
    if (holds_any<TrainingRunRecorded>(event)) return &training_;
    if (holds_any<TelemetrySample>(event)) return &monitor_;
    // The learning loop's listings come after the job's other events (the owner may be released),
    // and an adopted round switches the adapter through a SetAdapter of the engine's own (no owner).
    if (holds_any<AdapterVersionsListed>(event)) return &learning_;
    if (holds_any<AdapterSet>(event) && !ctx_.owner_of(job)) return &learning_;
    if (holds_any<FileWritten>(event) && job == s_.ws.recipe.save_job) return &ws_;  // the recipe editor's Save as
    if (holds_any<JobStarted, SettingsUpdated, FileWritten>(event)) return nullptr;  // nothing to show
    return ctx_.owner_of(job);
}

void Controller::apply(const Event& event) {
    if (const auto* died = std::get_if<EngineDied>(&event)) return set_engine_dead(true, died->message);
    const JobId job = job_of(event);
    if (ends_status_job(event)) s_.job_kind.erase(job);
    PanelController* handler = handler_of(event, job);
    if (const auto* failure = std::get_if<JobFailed>(&event)) {
        if (handler) handler->failed(*failure);
        else ctx_.log_failure(*failure);  // a Cancel / PauseJob / UpdateSettings... that failed
    } else if (handler) {
        handler->apply(event);
    }
    if (const auto* d = std::get_if<DecisionRecorded>(&event)) learning_.decision_recorded(d->kind);
    if (std::holds_alternative<ModelLoaded>(event) && s_.model.info) learning_.model_loaded();
    if (last_event_of_job(event)) ctx_.release(job);
}

void Controller::perform(Action a) {
    auto& ws = s_.ws;
    switch (a) {
        case Action::Generate: ws_.generate(); break;
        case Action::CancelJob: ws_.cancel_generation(); break;
        case Action::Accept: ws_.accept(); break;
        case Action::Reject: ws_.reject(); break;
        case Action::Edit: ws_.begin_edit(); break;
        case Action::Undo: ws_.undo(); break;
        case Action::Redo: ws_.redo(); break;
        case Action::AcceptAndNext: ws_.accept_and_next(); break;
        case Action::NextRow: ws_.goto_row(ws.queue_pos + 1); break;
        case Action::PrevRow: ws_.goto_row(ws.queue_pos - 1); break;
        case Action::SelectNext: ws.list.select_next(); break;
        case Action::SelectPrev: ws.list.select_prev(); break;
        case Action::Select1:
        case Action::Select2:
        case Action::Select3:
        case Action::Select4:
        case Action::Select5:
        case Action::Select6:
        case Action::Select7:
        case Action::Select8:
        case Action::Select9: ws.list.select(int(a) - int(Action::Select1)); break;
        case Action::ToggleHelp: s_.show_help = !s_.show_help; break;
        case Action::OpenExport: s_.exp.open = true; break;
        case Action::OpenModel: s_.focus_model_path = true; break;
        case Action::OpenBatch: s_.focus_batch = true; break;
        case Action::FocusSource: ws.focus_source = true; break;
        case Action::FocusHistorySearch: s_.history.focus_search = true; break;
        case Action::SendToInput: history_.send_to_input(s_.history.selected); break;
        case Action::RestartEngine: break;  // handled by the app (owns the EngineThread)
        case Action::ResetLayout: s_.reset_layout = true; break;
        case Action::ZoomIn: s_.dpi_scale = std::min(3.0f, s_.dpi_scale + 0.1f); break;
        case Action::ReviewQueue: batch_.review_in_workspace(); break;
        case Action::ZoomOut: s_.dpi_scale = std::max(0.5f, s_.dpi_scale - 0.1f); break;
        case Action::OpenTraining: training_.open_training(); break;
        case Action::OpenModels: models_.open_models(); break;
        case Action::OpenLearning: learning_.open_learning(); break;
        case Action::ProtectSelection: ws_.protect_selection(); break;
    }
}

}  // namespace t5s::ui
