#include "controller.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace t5s::ui {

namespace {
template <class... Ts>
struct Overload : Ts... { using Ts::operator()...; };
template <class... Ts>
Overload(Ts...) -> Overload<Ts...>;

const char* kDevices[] = {"auto", "cpu", "cuda"};
const char* kPrecisions[] = {"fp32", "bf16", "fp16", "int8"};
}  // namespace

Controller::Controller(Submit submit, NoteText note_text) : submit_(std::move(submit)), note_(std::move(note_text)) {
    auto& o = s_.ws.options;
    o.do_sample = true;
    o.top_p = 0.95f;
    o.num_return_sequences = 4;
    o.max_new_tokens = 64;
    o.seed = 42;
    apply_training_preset(int(TrainPreset::Quick));
}

JobId Controller::submit(Command c) {
    if (s_.engine_dead) {
        log(true, "the engine thread is not running: restart it (Ctrl+F5)");
        return 0;
    }
    return submit_(std::move(c));
}

void Controller::log(bool error, std::string text) {
    note(text);
    s_.log.push_back(LogLine{error, std::move(text)});
    while (s_.log.size() > 200) s_.log.pop_front();
}

void Controller::set_engine_dead(bool dead, const std::string& message) {
    s_.engine_dead = dead;
    s_.death_message = message;
    if (dead) {
        // Everything in flight is lost.
        s_.model.load_job = 0;
        s_.ws.job = 0;
        s_.batch.job = 0;
        if (s_.batch.phase == BatchPhase::Running) s_.batch.phase = BatchPhase::Failed;
        s_.history.job = 0;
        s_.exp.job = 0;
        s_.train.runs_job = 0;
        if (s_.train.job) {
            s_.train.job = 0;
            s_.train.phase = TrainPhase::Failed;
            s_.train.error = "the engine stopped during training; the last checkpoint is in " + s_.train.out_dir;
        }
        s_.job_kind.clear();
        log(true, "engine stopped: " + message);
    } else {
        s_.model.info.reset();
        log(false, "engine restarted; open the model again");
    }
}

GenerationOptions Controller::effective_options() const {
    GenerationOptions o = s_.ws.options;
    if (s_.ws.random_seed) o.seed = -1;
    if (!o.do_sample && o.num_return_sequences > o.num_beams) o.num_beams = o.num_return_sequences;
    return o;
}

// ------------------------------------------------------------------------------------------ model
void Controller::load_model() {
    auto& m = s_.model;
    if (m.path_input.empty()) {
        m.error = "type or drop a model folder first";
        return;
    }
    LoadModel cmd;
    cmd.dir = m.path_input;
    cmd.runtime.device = m.device == 2 ? Device::Cuda : m.device == 1 ? Device::Cpu : Device::Auto;
    cmd.runtime.precision = m.precision == 1   ? Precision::Bf16
                            : m.precision == 2 ? Precision::Fp16
                            : m.precision == 3 ? Precision::Int8
                                               : Precision::Fp32;
    cmd.runtime.threads = m.threads;
    m.error.clear();
    m.load_job = submit(std::move(cmd));
    if (m.load_job) {
        s_.job_kind[m.load_job] = "loading model";
        log(false, std::string("loading ") + m.path_input + " (" + kDevices[m.device] + ", " + kPrecisions[m.precision] + ")");
    }
}

void Controller::browse(const std::string& dir) {
    s_.model.browser_dir = dir;
    s_.model.browser_job = submit(ListDirectory{dir});
}

// ------------------------------------------------------------------------------------------ workspace
void Controller::generate() {
    auto& ws = s_.ws;
    if (ws.generating()) return;
    if (ws.source.find_first_not_of(" \t\r\n") == std::string::npos) {
        ws.error = "the source text is empty";
        return;
    }
    if (!s_.model.info) {
        ws.error = "no model loaded: open one in the Model panel (Ctrl+O)";
        return;
    }
    note(ws.source);
    Generate g;
    g.texts = {ws.source};
    g.options = effective_options();
    g.task_prefix = ws.task_prefix;
    ws.error.clear();
    ws.editing = false;
    ws.step = 0;
    ws.tokens = 0;
    ws.job = submit(std::move(g));
    if (ws.job) s_.job_kind[ws.job] = "generating";
}

void Controller::cancel_generation() {
    if (s_.ws.job) submit(Cancel{s_.ws.job});
}

void Controller::settings_changed() {
    if (s_.ws.generating() || s_.batch.phase == BatchPhase::Running) submit(UpdateSettings{effective_options()});
}

void Controller::record(const std::optional<DecisionOut>& d) {
    auto& ws = s_.ws;
    if (!d) return;
    ws.decided[ws.list.generation_id()] = ws.list.accepted_pairs();
    if (ws.list.generation_id() == 0) return;  // not in the history (no database)
    RecordDecision r{ws.list.generation_id(), d->index, d->kind, d->text};
    if (submit(std::move(r))) ++ws.pending_decisions;
}

void Controller::accept() {
    if (s_.ws.editing) return commit_edit();
    record(s_.ws.list.accept(s_.ws.list.selected()));
}
void Controller::reject() { record(s_.ws.list.reject(s_.ws.list.selected())); }
void Controller::undo() {
    s_.ws.editing = false;
    record(s_.ws.list.undo());
}
void Controller::redo() { record(s_.ws.list.redo()); }

void Controller::begin_edit() {
    auto& ws = s_.ws;
    if (ws.list.empty()) return;
    ws.editing = true;
    ws.edit_buffer = ws.list.items()[size_t(ws.list.selected())].final_text();
    ws.focus_edit = true;
}

void Controller::commit_edit() {
    auto& ws = s_.ws;
    if (!ws.editing) return;
    ws.editing = false;
    note(ws.edit_buffer);
    record(ws.list.edit(ws.list.selected(), ws.edit_buffer));
}

void Controller::cancel_edit() { s_.ws.editing = false; }

void Controller::accept_and_next() {
    accept();
    auto& ws = s_.ws;
    if (!ws.queue.empty() && ws.queue_pos + 1 < int(ws.queue.size())) goto_row(ws.queue_pos + 1);
    else ws.focus_source = true;
}

void Controller::goto_row(int row) {
    auto& ws = s_.ws;
    if (ws.queue.empty() || row < 0 || row >= int(ws.queue.size()) || ws.generating()) return;
    if (ws.editing) commit_edit();
    if (ws.queue_pos >= 0 && !ws.list.empty()) ws.row_lists[ws.queue_pos] = ws.list;
    ws.queue_pos = row;
    ws.source = ws.queue[size_t(row)];
    if (auto it = ws.row_lists.find(row); it != ws.row_lists.end()) {
        ws.list = it->second;  // as it was left: candidates, decisions, undo stack
        ws.error.clear();
        return;
    }
    ws.list.clear();
    generate();
}

// ------------------------------------------------------------------------------------------ batch
void Controller::load_dataset() {
    auto& b = s_.batch;
    if (b.path.empty()) {
        b.error = "type or drop a .txt / .jsonl / .csv / .tsv file first";
        return;
    }
    b.error.clear();
    b.phase = BatchPhase::Loading;
    b.dataset_job = submit(LoadDataset{b.path, b.column});
}

void Controller::start_batch() {
    auto& b = s_.batch;
    if (b.rows.empty() || b.phase == BatchPhase::Running) return;
    if (!s_.model.info) {
        b.error = "no model loaded";
        return;
    }
    BatchAugment cmd;
    cmd.name = b.name.empty() ? std::filesystem::path(b.path).filename().string() : b.name;
    cmd.rows = b.rows;
    cmd.options = effective_options();
    cmd.options.num_return_sequences = std::max(1, b.per_row);
    if (!cmd.options.do_sample) cmd.options.num_beams = std::max(cmd.options.num_beams, cmd.options.num_return_sequences);
    cmd.task_prefix = s_.ws.task_prefix;
    b.error.clear();
    b.preview.clear();
    b.done = 0;
    b.total = int64_t(b.rows.size());
    b.rate = 0;
    b.eta_s = -1;
    b.job = submit(std::move(cmd));
    if (b.job) {
        b.phase = BatchPhase::Running;
        s_.job_kind[b.job] = "batch";
    }
}

void Controller::pause_batch() {
    if (s_.batch.job && s_.batch.phase == BatchPhase::Running) submit(PauseJob{s_.batch.job});
}
void Controller::resume_batch() {
    if (s_.batch.job && s_.batch.phase == BatchPhase::Paused) {
        submit(ResumeJob{s_.batch.job});
        s_.batch.phase = BatchPhase::Running;
    }
}
void Controller::cancel_batch() {
    if (s_.batch.job) submit(Cancel{s_.batch.job});
}

void Controller::review_in_workspace() {
    s_.ws.row_lists.clear();  // a new queue
    auto& ws = s_.ws;
    if (s_.batch.rows.empty()) return;
    ws.queue = s_.batch.rows;
    ws.queue_pos = -1;
    goto_row(0);
}

// ------------------------------------------------------------------------------------------ history
void Controller::refresh_history() {
    auto& h = s_.history;
    if (h.job) {
        h.stale = true;
        return;
    }
    QueryHistory q;
    q.query.filter.text = h.search;
    q.query.filter.accepted_only = h.accepted_only;
    q.query.after_id = h.page_starts.back();
    q.query.limit = h.page_size;
    h.stale = false;
    h.job = submit(std::move(q));
}

void Controller::history_next_page() {
    auto& h = s_.history;
    if (!h.page.has_more) return;
    h.page_starts.push_back(h.page.next_after_id);
    refresh_history();
}

void Controller::history_prev_page() {
    auto& h = s_.history;
    if (h.page_starts.size() <= 1) return;
    h.page_starts.pop_back();
    refresh_history();
}

void Controller::history_search_changed() {
    s_.history.page_starts = {0};
    s_.history.selected = -1;
    note(s_.history.search);
    refresh_history();
}

void Controller::send_to_input(int index) {
    auto& h = s_.history;
    if (index < 0 || index >= int(h.page.generations.size())) return;
    s_.ws.source = h.page.generations[size_t(index)].input;
    s_.ws.queue.clear();
    s_.ws.queue_pos = -1;
    s_.ws.focus_source = true;
}

void Controller::delete_history(int index) {
    auto& h = s_.history;
    if (index < 0 || index >= int(h.page.generations.size())) return;
    submit(DeleteHistory{{h.page.generations[size_t(index)].id}});
}

// ------------------------------------------------------------------------------------------ export
void Controller::start_export(bool overwrite) {
    auto& e = s_.exp;
    if (e.path.empty()) {
        e.error = "choose an output file";
        return;
    }
    ExportHistory cmd;
    cmd.out = e.path;
    cmd.options.format = e.format == 1 ? ExportFormat::Csv : e.format == 2 ? ExportFormat::Tsv : ExportFormat::Jsonl;
    cmd.options.filter.accepted_only = e.accepted_only;
    cmd.options.dedupe = e.dedupe;
    cmd.options.include_originals = e.include_originals;
    cmd.options.overwrite = overwrite;
    e.error.clear();
    e.result.reset();
    e.confirm_overwrite = false;
    e.done = e.total = 0;
    e.job = submit(std::move(cmd));
    if (e.job) s_.job_kind[e.job] = "exporting";
}

// ------------------------------------------------------------------------------------------ training
void Controller::open_training() {
    auto& t = s_.train;
    t.open = true;
    t.focus = true;
    if (t.model_dir.empty() && s_.model.info) t.model_dir = s_.model.info->dir.string();
    if (t.out_dir.empty() && !t.model_dir.empty()) {
        std::string base = t.model_dir;
        while (base.size() > 1 && base.back() == '/') base.pop_back();
        t.out_dir = base + "-finetuned";
    }
}

void Controller::apply_training_preset(int preset) {
    auto& t = s_.train;
    auto& o = t.options;
    t.preset = std::clamp(preset, 0, 2);
    switch (TrainPreset(t.preset)) {
        case TrainPreset::Quick:  // a few minutes: check that the data and the model fit together
            o.steps = 200;
            o.epochs = 1;
            o.batch_size = 8;
            o.grad_accum = 1;
            o.lr = 1e-3;
            o.optimizer = OptimizerKind::AdamW;
            o.schedule = ScheduleKind::Constant;
            o.warmup_steps = 0;
            o.eval_every = 50;
            o.save_every = 0;
            o.patience = 0;
            break;
        case TrainPreset::Balanced:  // three passes over the data
            o.steps = 0;
            o.epochs = 3;
            o.batch_size = 16;
            o.grad_accum = 1;
            o.lr = 5e-4;
            o.optimizer = OptimizerKind::AdamW;
            o.schedule = ScheduleKind::Linear;
            o.warmup_steps = 100;
            o.eval_every = 200;
            o.save_every = 1000;
            o.patience = 0;
            break;
        case TrainPreset::Thorough:  // long run with early stopping on the eval loss
            o.steps = 0;
            o.epochs = 10;
            o.batch_size = 16;
            o.grad_accum = 2;
            o.lr = 3e-4;
            o.optimizer = OptimizerKind::AdamW;
            o.schedule = ScheduleKind::Cosine;
            o.warmup_steps = 500;
            o.eval_every = 500;
            o.save_every = 1000;
            o.patience = 5;
            break;
    }
}

void Controller::start_training() {
    auto& t = s_.train;
    if (t.job) return;
    if (t.model_dir.empty() && s_.model.info) t.model_dir = s_.model.info->dir.string();
    if (t.model_dir.empty()) {
        t.error = "choose the model folder to fine-tune";
        return;
    }
    if (t.data_file.empty() && !t.data_from_history) {
        t.error = "choose a training file (.jsonl / .csv / .tsv with source and target) or the history's accepted pairs";
        return;
    }
    if (t.out_dir.empty()) {
        t.error = "choose an output folder";
        return;
    }
    StartTraining cmd;
    cmd.options = t.options;
    cmd.options.model_dir = t.model_dir;
    cmd.options.init_config.clear();
    cmd.options.data_file = t.data_file;
    cmd.options.out_dir = t.out_dir;
    cmd.unload_model = t.unload_model;
    cmd.data_from_history = t.data_from_history;
    launch_training(std::move(cmd));
}

void Controller::launch_training(StartTraining cmd) {
    auto& t = s_.train;
    t.error.clear();
    t.run_id = 0;
    t.train_loss.clear();
    t.eval_loss.clear();
    t.step = t.total_steps = 0;
    t.epoch = 0;
    t.loss = t.eval = t.best_eval = -1;
    t.lr = t.tokens_per_s = t.elapsed_s = t.eta_s = 0;
    t.memory_bytes = t.peak_memory_bytes = 0;
    t.report.clear();
    t.estimate.clear();
    t.samples.clear();
    t.last_checkpoint.clear();
    t.final_dir.clear();
    t.stop_reason.clear();
    const std::string data = cmd.data_from_history ? (t.data_file.empty() ? "history pairs" : t.data_file + " + history pairs")
                                                   : t.data_file;
    t.job = submit(std::move(cmd));
    if (t.job) {
        t.phase = TrainPhase::Running;
        s_.job_kind[t.job] = "training";
        log(false, "training " + t.model_dir + " on " + data + " -> " + t.out_dir);
    }
}

void Controller::refresh_training_runs() {
    auto& t = s_.train;
    if (t.runs_job || s_.engine_dead) return;
    t.runs_stale = false;
    t.runs_job = submit(QueryTrainingRuns{50});
}

bool Controller::run_interrupted(const StoredTrainingRun& run) const {
    return run.status == "running" && !(s_.train.job && run.id == s_.train.run_id);
}

namespace {
const StoredTrainingRun* find_run(const std::vector<StoredTrainingRun>& runs, int64_t id) {
    for (const auto& r : runs)
        if (r.id == id) return &r;
    return nullptr;
}
}  // namespace

void Controller::continue_training_run(int64_t run_id) {
    auto& t = s_.train;
    if (t.job) return;
    const StoredTrainingRun* run = find_run(t.runs, run_id);
    if (!run) return;
    StartTraining cmd;
    try {
        cmd.options = training_options_from_json(run->options_json);
    } catch (const Error& e) {
        t.error = "run " + std::to_string(run_id) + ": its settings can't be read (" + e.what() + ")";
        return;
    }
    cmd.options.resume = true;  // from the newest checkpoint in its folder
    cmd.history_run_id = run_id;
    cmd.unload_model = t.unload_model;
    // The panel shows what is running.
    t.options = cmd.options;
    t.model_dir = cmd.options.model_dir;
    t.data_file = cmd.options.data_file;
    t.out_dir = cmd.options.out_dir;
    t.data_from_history = false;  // its history pairs were written to its folder: data_file names them
    launch_training(std::move(cmd));
    if (t.job) {
        t.run_id = run_id;
        log(false, "continuing training run " + std::to_string(run_id) + " from its checkpoints in " + t.out_dir);
    }
}

void Controller::delete_training_run(int64_t run_id) {
    auto& t = s_.train;
    if (t.job && run_id == t.run_id) return;  // the live run keeps its record
    submit(DeleteTrainingRun{run_id});
    t.runs.erase(std::remove_if(t.runs.begin(), t.runs.end(), [&](const StoredTrainingRun& r) { return r.id == run_id; }),
                 t.runs.end());
    if (t.selected_run == run_id) t.selected_run = 0;
}

void Controller::use_run_model(int64_t run_id) {
    const StoredTrainingRun* run = find_run(s_.train.runs, run_id);
    if (!run || run->final_dir.empty()) return;
    s_.model.path_input = run->final_dir;
    load_model();
}

void Controller::pause_training() {
    if (s_.train.job && s_.train.phase == TrainPhase::Running) submit(PauseJob{s_.train.job});
}

void Controller::resume_training() {
    auto& t = s_.train;
    if (t.job && t.phase == TrainPhase::Paused) {
        submit(ResumeJob{t.job});
        t.phase = TrainPhase::Running;
    }
}

void Controller::stop_training() {
    if (s_.train.job) submit(Cancel{s_.train.job});
}

void Controller::use_trained_model() {
    auto& t = s_.train;
    if (t.final_dir.empty() || t.job) return;
    s_.model.path_input = t.final_dir;
    load_model();
}

// ------------------------------------------------------------------------------------------ keys
void Controller::perform(Action a) {
    auto& ws = s_.ws;
    switch (a) {
        case Action::Generate: generate(); break;
        case Action::CancelJob: cancel_generation(); break;
        case Action::Accept: accept(); break;
        case Action::Reject: reject(); break;
        case Action::Edit: begin_edit(); break;
        case Action::Undo: undo(); break;
        case Action::Redo: redo(); break;
        case Action::AcceptAndNext: accept_and_next(); break;
        case Action::NextRow: goto_row(ws.queue_pos + 1); break;
        case Action::PrevRow: goto_row(ws.queue_pos - 1); break;
        case Action::SelectNext: ws.list.select_next(); break;
        case Action::SelectPrev: ws.list.select_prev(); break;
        case Action::Select1: case Action::Select2: case Action::Select3: case Action::Select4: case Action::Select5:
        case Action::Select6: case Action::Select7: case Action::Select8: case Action::Select9:
            ws.list.select(int(a) - int(Action::Select1));
            break;
        case Action::ToggleHelp: s_.show_help = !s_.show_help; break;
        case Action::OpenExport: s_.exp.open = true; break;
        case Action::OpenModel: s_.focus_model_path = true; break;
        case Action::OpenBatch: s_.focus_batch = true; break;
        case Action::FocusSource: ws.focus_source = true; break;
        case Action::FocusHistorySearch: s_.history.focus_search = true; break;
        case Action::SendToInput: send_to_input(s_.history.selected); break;
        case Action::RestartEngine: break;  // handled by the app (owns the EngineThread)
        case Action::ResetLayout: s_.reset_layout = true; break;
        case Action::ZoomIn: s_.dpi_scale = std::min(3.0f, s_.dpi_scale + 0.1f); break;
        case Action::ReviewQueue: review_in_workspace(); break;
        case Action::ZoomOut: s_.dpi_scale = std::max(0.5f, s_.dpi_scale - 0.1f); break;
        case Action::OpenTraining: open_training(); break;
    }
}

// ------------------------------------------------------------------------------------------ events
void Controller::apply(const Event& event) {
    auto& s = s_;
    std::visit(
        Overload{
            [&](const JobStarted&) {},
            [&](const ModelLoaded& e) {
                s.job_kind.erase(e.job);
                if (e.job != s.model.load_job) return;
                s.model.load_job = 0;
                s.model.info = e.info;
                s.model.load_ms = e.load_ms;
                s.model.recommended = e.recommended.reason.empty()
                                          ? std::string()
                                          : std::string(to_string(e.recommended.precision)) + " on " + e.recommended.name + " — " +
                                                e.recommended.reason;
                s.model.error.clear();
                const std::string p = e.info.dir.string();
                auto& r = s.model.recent;
                r.erase(std::remove(r.begin(), r.end(), p), r.end());
                r.insert(r.begin(), p);
                if (r.size() > 10) r.resize(10);
                if (auto it = s.model.task_prefix.find(p); it != s.model.task_prefix.end()) s.ws.task_prefix = it->second;
                note(p);
                log(false, "model loaded: " + p + " (" + e.info.variant + ", " + e.info.precision + ", " + e.info.device + ")");
            },
            [&](const ModelUnloaded&) { s.model.info.reset(); },
            [&](const GenerationStep& e) {
                if (e.job != s.ws.job) return;
                s.ws.step = e.step;
                s.ws.tokens = e.tokens;
            },
            [&](const GenerationDone& e) {
                s.job_kind.erase(e.job);
                if (e.job != s.ws.job) return;
                s.ws.job = 0;
                s.ws.timings = e.timings;
                s.ws.used = e.options;
                if (e.results.empty()) return;
                for (const auto& c : e.results[0].candidates) note(c.text);
                s.ws.list.reset(e.results[0].input, e.history_ids.empty() ? 0 : e.history_ids[0], e.results[0].candidates);
                if (e.results[0].candidates.empty()) s.ws.error = "no candidates (all filtered by distinct / no-copy?)";
                s.history.stale = true;
            },
            [&](const JobFailed& e) {
                s.job_kind.erase(e.job);
                if (e.job != 0 && e.job == s.train.runs_job) {
                    s.train.runs_job = 0;
                    log(true, "past training runs: " + e.message);
                    return;
                }
                if (e.job != 0 && e.job == s.train.job) {
                    s.train.job = 0;
                    s.train.runs_stale = true;
                    s.train.phase = TrainPhase::Failed;
                    s.train.error = std::string(to_string(e.code)) + ": " + e.message;
                    log(true, "training failed: " + s.train.error);
                    return;
                }
                std::string msg = e.message;
                if (e.code == ErrorCode::OutOfMemory) msg += " - try a smaller batch size or fewer beams/candidates";
                log(e.code != ErrorCode::Cancelled, std::string(to_string(e.code)) + ": " + msg);
                if (e.job == s.model.load_job) {
                    s.model.load_job = 0;
                    s.model.error = msg;
                } else if (e.job == s.ws.job) {
                    s.ws.job = 0;
                    s.ws.error = e.code == ErrorCode::Cancelled ? "cancelled" : msg;
                } else if (e.job == s.batch.dataset_job) {
                    s.batch.dataset_job = 0;
                    s.batch.phase = BatchPhase::Idle;
                    s.batch.error = msg;
                } else if (e.job == s.batch.job) {
                    s.batch.phase = e.code == ErrorCode::Cancelled ? BatchPhase::Idle : BatchPhase::Failed;
                    s.batch.error = e.code == ErrorCode::Cancelled ? "cancelled" : msg;
                    s.batch.job = 0;
                } else if (e.job == s.history.job) {
                    s.history.job = 0;
                    s.history.error = msg;
                } else if (e.job == s.exp.job) {
                    s.exp.job = 0;
                    s.exp.error = msg;
                } else if (e.job == s.model.browser_job) {
                    s.model.browser_job = 0;
                    s.model.browser_error = msg;
                } else if (s.ws.pending_decisions > 0) {
                    --s.ws.pending_decisions;  // a decision failed: the history says why (logged)
                }
            },
            [&](const Progress& e) {
                if (e.job == s.batch.job) {
                    s.batch.done = e.done;
                    s.batch.total = e.total;
                    s.batch.rate = e.rate;
                    s.batch.eta_s = e.eta_s;
                } else if (e.job == s.exp.job) {
                    s.exp.done = e.done;
                    s.exp.total = e.total;
                }
            },
            [&](const BatchRowDone& e) {
                if (e.job != s.batch.job) return;
                if (s.batch.preview.size() < 200 && !e.result.candidates.empty()) {
                    s.batch.preview.push_back(e.result.candidates[0].text);
                    note(e.result.candidates[0].text);
                }
                s.history.stale = true;
            },
            [&](const JobPaused& e) {
                if (e.job != 0 && e.job == s.train.job) {
                    s.train.phase = TrainPhase::Paused;
                    return;
                }
                if (e.job != s.batch.job) return;
                s.batch.phase = BatchPhase::Paused;
                s.batch.done = e.done;
                s.batch.total = e.total;
            },
            [&](const JobFinished& e) {
                s.job_kind.erase(e.job);
                if (e.job != 0 && e.job == s.train.job) {
                    s.train.job = 0;
                    s.train.runs_stale = true;
                    s.train.phase = TrainPhase::Done;
                    s.train.eta_s = 0;
                    log(false, "training: " + e.summary);
                    return;
                }
                if (e.job == s.batch.job) {
                    s.batch.phase = BatchPhase::Done;
                    s.batch.done = s.batch.total;
                    s.batch.eta_s = 0;
                    log(false, "batch: " + e.summary);
                }
            },
            [&](const SettingsUpdated&) {},
            [&](const DatasetLoaded& e) {
                if (e.job != s.batch.dataset_job) return;
                s.batch.dataset_job = 0;
                s.batch.columns = e.columns;
                s.batch.column = e.column;
                s.batch.rows = e.rows;
                s.batch.warnings = e.warnings;
                s.batch.total = int64_t(e.rows.size());
                s.batch.done = 0;
                s.batch.name = e.path.filename().string();
                s.batch.phase = BatchPhase::Ready;
                for (size_t i = 0; i < e.rows.size() && i < 500; ++i) note(e.rows[i]);
                for (const auto& w : e.warnings) note(w);
                log(!e.warnings.empty(), e.path.string() + ": " + std::to_string(e.rows.size()) + " rows" +
                                             (e.warnings.empty() ? "" : ", " + std::to_string(e.warnings.size()) + " skipped"));
            },
            [&](const HistoryLoaded& e) {
                if (e.job != s.history.job) return;
                s.history.job = 0;
                s.history.page = e.page;
                s.history.total = e.total;
                s.history.error.clear();
                if (s.history.selected >= int(e.page.generations.size())) s.history.selected = -1;
                for (const auto& g : e.page.generations) {
                    note(g.input);
                    for (const auto& c : g.candidates) note(c.final_text);
                }
            },
            [&](const DecisionRecorded&) {
                if (s.ws.pending_decisions > 0) --s.ws.pending_decisions;
                s.history.stale = true;
            },
            [&](const HistoryDeleted& e) {
                log(false, "history: deleted " + std::to_string(e.count));
                s.history.stale = true;
            },
            [&](const ExportDone& e) {
                s.job_kind.erase(e.job);
                if (e.job != s.exp.job) return;
                s.exp.job = 0;
                s.exp.result = e.result;
                log(false, "exported " + std::to_string(e.result.rows_written) + " rows to " + e.result.path);
            },
            [&](const FileExists& e) {
                s.job_kind.erase(e.job);
                if (e.job != s.exp.job) return;
                s.exp.job = 0;
                s.exp.confirm_overwrite = true;
            },
            [&](const DirectoryListing& e) {
                if (e.job != s.model.browser_job) return;
                s.model.browser_job = 0;
                s.model.browser_dir = e.dir.string();
                s.model.browser_entries = e.entries;
                s.model.browser_error = e.error;
                note(s.model.browser_dir);
                for (const auto& d : e.entries) note(d.name);
            },
            [&](const FileWritten&) {},
            [&](const TelemetrySample& e) {
                auto& m = s.monitor;
                m.rss.push(e.t_s, double(e.rss_bytes));
                m.tokens_per_s.push(e.t_s, e.tokens_per_s);
                m.queue.push(e.t_s, e.queue_length);
                if (e.cuda.available) {
                    m.cuda_allocated.push(e.t_s, double(e.cuda.allocated_bytes));
                    m.cuda_reserved.push(e.t_s, double(e.cuda.reserved_bytes));
                    m.cuda_peak.push(e.t_s, double(e.cuda.peak_bytes));
                    m.device_used.push(e.t_s, double(e.cuda.device_used_bytes));
                }
                m.last = e;
            },
            [&](const TrainingRunRecorded& e) {
                if (e.job != 0 && e.job == s.train.job) s.train.run_id = e.run_id;
                s.train.runs_stale = true;
            },
            [&](const TrainingRunsLoaded& e) {
                if (e.job != s.train.runs_job) return;
                s.train.runs_job = 0;
                s.train.runs = e.runs;
                for (const auto& r : s.train.runs) {
                    note(r.model);
                    note(r.data);
                    note(r.out_dir);
                    note(r.message);
                }
            },
            [&](const TrainingUpdate& u) {
                auto& t = s.train;
                if (u.job == 0 || u.job != t.job) return;
                const TrainingEvent& e = u.event;
                using K = TrainingEvent::Kind;
                switch (e.kind) {
                    case K::Report:
                        t.report = e.message;
                        note(e.message);
                        break;
                    case K::Plan:
                        t.estimate = e.message;
                        note(e.message);
                        break;
                    case K::Message:
                        note(e.message);
                        log(false, "training: " + e.message);
                        break;
                    case K::Checkpoint:
                        t.last_checkpoint = e.message;
                        note(e.message);
                        break;
                    case K::Step:
                        if (std::isfinite(e.loss)) {
                            t.train_loss.push(e.elapsed_s, e.loss);
                            t.loss = e.loss;
                        }
                        break;
                    case K::Eval:
                        if (e.eval_loss >= 0 && std::isfinite(e.eval_loss)) {
                            t.eval_loss.push(e.elapsed_s, e.eval_loss);
                            t.eval = e.eval_loss;
                        }
                        if (!e.samples.empty()) {
                            t.samples = e.samples;
                            for (const auto& g : e.samples) {
                                note(g.source);
                                note(g.reference);
                                note(g.prediction);
                            }
                        }
                        break;
                    case K::Finished:
                        t.final_dir = e.message;
                        t.stop_reason = to_string(e.stop_reason);
                        note(e.message);
                        break;
                }
                // Progress numbers: steps from every kind that has them, the rest from Step events.
                if (e.total_steps > 0 && e.step > 0) {
                    t.step = e.step;
                    t.total_steps = e.total_steps;
                }
                if (e.kind == K::Step) {
                    t.epoch = e.epoch;
                    t.eta_s = e.eta_s;
                    t.lr = e.lr;
                    t.tokens_per_s = e.tokens_per_s;
                    t.elapsed_s = e.elapsed_s;
                    t.memory_bytes = e.memory_bytes;
                    t.peak_memory_bytes = e.peak_memory_bytes;
                    t.batch_size = e.batch_size;
                    t.grad_accum = e.grad_accum;
                }
                if (e.best_eval_loss >= 0) t.best_eval = e.best_eval_loss;
            },
            [&](const EngineDied& e) { set_engine_dead(true, e.message); },
        },
        event);
}

}  // namespace t5s::ui
