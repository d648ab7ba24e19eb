#pragma once
// View-models of every panel. No ImGui, no GL, no I/O here. Who writes what:
//  - the panel controllers (ui/controllers/), through their user actions (which also produce
//    commands) and the events routed to them: job ids, phases, results, errors, progress, log;
//    a controller writes its own panel's view-model, and another panel's only where the action
//    crosses over (a history row sent to the workspace, "use this model", stale flags);
//  - the panels (ui/panels/) bind the user's inputs directly: text fields, sliders, checkboxes,
//    combos, option structs (ws.options, train.options), selections (history.selected,
//    train.selected_run), window open flags, and they clear the one-shot flags (focus_*,
//    show_past_runs) they consume and fill the chart cache (train.curve);
//  - the test driver (ui/test_driver.cpp) writes inputs the way a user would.
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "candidate_list.h"
#include "decoding_view.h"
#include "line_chart.h"
#include "score_view.h"
#include "span_view.h"
#include "t5s/engine_thread.h"

namespace t5s::ui {

struct LogLine {
    bool error = false;
    std::string text;
};

struct ModelVm {
    std::string path_input;           // the path field
    std::vector<std::string> recent;  // most recent first (persisted)
    Device device = Device::Auto;
    Precision precision = Precision::Fp32;
    int threads = 0;  // 0 = physical cores
    JobId load_job = 0;
    std::optional<ModelInfo> info;
    double load_ms = 0.0;
    std::string recommended;  // measured default precision/device, one line
    std::string error;
    // Folder browser.
    std::string browser_dir;
    std::vector<DirEntry> browser_entries;
    std::string browser_error;
    JobId browser_job = 0;
    std::map<std::string, std::string> task_prefix;  // model path -> prefix (persisted)
    // Embedding model (similarity scores): its own slot, loaded with the same device / precision.
    std::string embedder_input;
    std::vector<std::string> recent_embedders;  // most recent first (persisted)
    JobId embedder_job = 0;                     // load or unload in flight
    std::optional<EmbedderInfo> embedder;
    double embedder_load_ms = 0.0;
    std::string embedder_error;
    // LoRA adapters listed per base folder; one (or none) applied at the next request, no reload.
    std::map<std::string, std::vector<std::string>> adapters;  // base path -> adapter folders
    std::string adapter_input;                                 // the "add adapter" path field
    std::string active_adapter;                                // "" = none
    JobId adapter_job = 0;
    std::string adapter_error;
};

// The workspace's recipe (t5s/recipe.h): None (plain generation), a shipped one
// (assets/recipes/*.json) or a file; its text is edited in place and checked as it is typed, and a
// generation sends the text as it is now (RecipeSource), so an edit need not be saved to be tried.
struct RecipeVm {
    std::vector<std::string> shipped;    // the app's recipes folder, *.json, sorted
    std::vector<std::string> recent;     // files opened or saved, most recent first (persisted)
    std::string path;                    // the chosen file ("" with empty text: None)
    std::string path_input;              // the "Open file" path box
    std::string text;                    // the editor's text: what a generation runs
    std::string saved_text;              // as read from or written to `path` (text differs: unsaved)
    std::optional<std::string> checked;  // the text `error` / `steps` were computed for (none: check again)
    std::string error;                   // the parser's one line ("" = valid)
    std::string steps;                   // the valid recipe's steps, "pivot > back" (candidates marked)
    bool editor_open = false;            // the editor section shown
    std::string save_as;                 // the Save as... path box
    JobId save_job = 0;
    int64_t step = 0, total = 0;  // the running recipe's step (Progress), 0 of 0 when none
    bool active() const { return !path.empty() || !text.empty(); }
};

struct WorkspaceVm {
    std::string source;
    std::string task_prefix = "paraphrase: ";
    GenerationOptions options;  // the sliders, thresholds and sort (options.rank)
    bool random_seed = true;
    JobId job = 0;  // running generation
    int step = 0;
    int64_t tokens = 0;
    CandidateList list;
    bool editing = false;
    std::string edit_buffer;
    bool focus_edit = false;    // one-shot: give the editor keyboard focus
    bool focus_source = false;  // one-shot
    std::string error;
    std::optional<Timings> timings;
    GenerationOptions used;  // settings of the shown candidates
    DecodingVm decoding;     // Advanced decoding's text boxes and the Paste settings box
    RecipeVm recipe;         // the recipe a generation runs (None: plain generation)
    // Protected spans. The detectors and the regex are options.protect / protect_regex.
    // marked_spans: explicit spans in `source` (code points), marked with Ctrl+P on a selection or
    // brought by a labelled review row; they refer to `marked_source` and follow edits of the source
    // (WorkspaceController::sync_spans). preview: what the next generation protects in the source.
    std::vector<Span> marked_spans;
    std::string marked_source;
    std::string mark_label = "ENTITY";        // the label a new mark gets
    size_t select_begin = 0, select_end = 0;  // the source field's selection in bytes (the panel writes it)
    std::vector<Span> preview;
    std::string preview_key;    // inputs `preview` was computed from
    std::string protect_error;  // bad regex / spans: the message a generation would give
    // Review queue (rows of a file walked one by one), with each row's explicit spans (may be empty).
    std::vector<std::string> queue;
    std::vector<std::vector<Span>> queue_spans;
    std::vector<std::string> queue_labels;  // a labelled file's row labels (shown; may be empty)
    int queue_pos = -1;
    // Rows already generated keep their candidates, decisions and undo history: going back shows
    // them as they were (no new generation); Ctrl+Enter regenerates a row on purpose.
    std::map<int, CandidateList> row_lists;
    // Decisions made per generation (for checks and the status line): generation id -> pairs.
    std::map<GenerationId, std::vector<std::pair<std::string, std::string>>> decided;
    int pending_decisions = 0;  // RecordDecision commands not yet confirmed
    bool generating() const { return job != 0; }
};

enum class BatchPhase { Idle, Loading, Ready, Running, Paused, Done, Failed };

struct BatchVm {
    std::string path;
    std::string column;
    std::vector<std::string> columns;
    bool no_header = false;  // a CSV/TSV without a header row (Tatoeba's TSV): column 1 is the text
    std::vector<std::string> rows;
    std::vector<std::string> warnings;
    std::vector<std::vector<Span>> row_spans;  // a labelled file's spans per row (empty: none)
    std::vector<std::string> labels;           // ... and its labels per row
    JobId dataset_job = 0;
    int per_row = 3;
    std::string name;  // history origin "batch:NAME#row"
    JobId job = 0;
    BatchPhase phase = BatchPhase::Idle;
    int64_t done = 0, total = 0;
    double rate = 0.0, eta_s = -1.0;
    std::vector<std::string> preview;  // first candidate per finished row
    int64_t kept = 0;                  // candidates returned by the rows finished in this run
    ReasonCounts dropped;              // candidates the filters dropped in this run, by reason
    // Per row of this run (index = row; spans -1 until the row is done): its protected spans, the
    // candidates that lost one (dropped) or needed forcing, its first candidate.
    struct RowResult {
        SpanCounts counts{-1, 0, 0};
        std::string first;
        Route route;  // the first candidate's route (a recipe run; else empty)
    };
    std::vector<RowResult> results;
    SpanCounts span_total;  // summed over the rows done in this run
    std::string recipe;     // the recipe this run sends (the workspace's; "" = none)
    std::string error;
};

struct HistoryVm {
    std::string search;
    bool accepted_only = false;
    bool show_dropped = false;                 // list the candidates the filters dropped, with reason and scores
    std::vector<GenerationId> page_starts{0};  // keyset paging: after_id of each visited page
    HistoryPage page;
    int64_t total = -1;
    JobId job = 0;
    int selected = -1;
    bool stale = true;  // refresh when next drawn
    bool focus_search = false;
    std::string error;
    int page_size = 25;
};

struct ExportVm {
    bool open = false;
    std::string path;
    int format = 0;  // 0 jsonl, 1 csv, 2 tsv
    bool accepted_only = true;
    bool dedupe = false;
    bool include_originals = false;
    JobId job = 0;
    int64_t done = 0, total = 0;
    bool confirm_overwrite = false;  // FileExists came back
    std::optional<ExportResult> result;
    std::string error;
};

struct MonitorVm {
    RingSeries rss{2400}, cuda_allocated{2400}, cuda_reserved{2400}, cuda_peak{2400}, device_used{2400};
    RingSeries tokens_per_s{2400}, queue{2400};
    std::optional<TelemetrySample> last;
    double window_s = 120.0;
};

enum class TrainPhase { Idle, Running, Paused, Done, Failed };
enum class TrainPreset { Quick = 0, Balanced = 1, Thorough = 2, Lora = 3 };

// Training panel: inputs (the preset fills options; "Advanced" edits them), then the live run.
struct TrainingVm {
    bool open = false;      // window shown (View > Training)
    bool focus = false;     // one-shot
    std::string model_dir;  // default: the loaded model's folder
    std::string data_file;  // JSONL / CSV / TSV pairs
    std::string out_dir;    // default: <model_dir>-finetuned
    int preset = int(TrainPreset::Quick);
    TrainingOptions options;    // steps/epochs, batch, lr, optimizer, schedule, ... (paths set at Start)
    bool unload_model = false;  // free the inference model's memory while training
    JobId job = 0;
    TrainPhase phase = TrainPhase::Idle;
    // Live numbers (latest events).
    RingSeries train_loss{4000}, eval_loss{1000};  // x = elapsed seconds
    int64_t step = 0, total_steps = 0;
    double epoch = 0, loss = -1, eval = -1, best_eval = -1, lr = 0, tokens_per_s = 0;
    double elapsed_s = 0, eta_s = 0;
    int64_t memory_bytes = 0, peak_memory_bytes = 0;
    int batch_size = 0, grad_accum = 0;
    std::string report;                     // data report (Report event)
    std::string estimate;                   // memory plan line (Plan event)
    std::vector<SampleGeneration> samples;  // latest eval's generations
    std::string last_checkpoint;
    std::string final_dir;  // Finished: the model to "use"
    std::string stop_reason;
    std::string error;
    // Data from the annotators' history (accepted / edited pairs) instead of, or besides, a file.
    bool data_from_history = false;
    // Past runs (history database): listed with their curves; a run still "running" that is not
    // ours was cut off (app closed / crashed) and can be resumed from its checkpoints.
    int64_t run_id = 0;                   // history id of the live run (TrainingRunRecorded)
    std::vector<StoredTrainingRun> runs;  // newest first
    bool runs_stale = true;
    JobId runs_job = 0;
    int64_t selected_run = 0;
    // The selected run's curve as chart series, rebuilt only when the run or its point count changes.
    struct RunCurve {
        int64_t run = 0;
        size_t points = 0;
        RingSeries train{1}, eval{1};
        double last_step = 1.0;
    } curve;
    bool show_past_runs = false;  // one-shot: open the "Past runs" section
};

// Models window (File > Models..., Ctrl+M): the model store. Local tab: the models in the Hugging
// Face cache, the app's models folder and recently opened folders (ListModels); Download tab: the
// curated catalogue (assets/model_catalogue.json) and a free ORG/NAME[@REV] field, one row per
// download with its progress (PullModel on the engine's download lane).
struct CatalogueEntry {
    std::string repo, kind, task_prefix, languages, parameters, licence, good_for;
};

enum class DownloadPhase { Running, Done, Cancelled, Failed, Interrupted };
}  // namespace t5s::ui
template <>
struct t5s::EnumNames<t5s::ui::DownloadPhase> {
    static constexpr const char* kWhat = "download phase";
    using P = t5s::ui::DownloadPhase;
    static constexpr EnumName<P> kNames[] = {{P::Running, "running"},
                                             {P::Done, "done"},
                                             {P::Cancelled, "cancelled"},
                                             {P::Failed, "failed"},
                                             {P::Interrupted, "interrupted"}};
};
namespace t5s::ui {

struct DownloadVm {
    std::string repo, revision = "main";
    JobId job = 0;  // 0 once it ended
    DownloadPhase phase = DownloadPhase::Running;
    std::string step, file;  // the pull's phase ("metadata", "download", ...) and file
    int64_t done = 0, total = 0;
    double rate = 0.0, eta_s = -1.0;
    std::string snapshot;  // Done: the folder to open
    std::string kind;      // Done: "generation" | "encoder"
    std::string error;     // Failed / Cancelled: the one-line message
};

struct ModelsVm {
    bool open = false;          // window shown
    bool focus = false;         // one-shot
    int select_tab = -1;        // one-shot: 0 Local, 1 Download
    std::string cache;          // "" = the engine's default ($HF_HUB_CACHE ...)
    std::string models_folder;  // the app's own models folder (listed too)
    std::vector<hub::StoredModel> local;
    int64_t available_bytes = 0;
    std::string listed_cache;  // the cache the last listing read
    bool stale = true;         // list again when next drawn
    JobId list_job = 0, delete_job = 0;
    int selected = -1;           // row of `local`
    std::string confirm_delete;  // repo awaiting confirmation ("" = none)
    std::string status, error;
    std::vector<CatalogueEntry> catalogue;
    std::string catalogue_error;
    std::string repo_input;             // the free ORG/NAME[@REV] field
    std::vector<DownloadVm> downloads;  // newest last; unfinished ones are persisted
};

// The learning loop (View > Learning, the workspace's "learn from my decisions" switch): rounds of
// t5s/learning.h on the app's history (LearnNow on the engine's download lane), the adopted
// versions of the loaded model's versions folder, "use this one" (UseAdapterVersion).
struct LearningVm {
    bool enabled = false;  // "learn from my decisions" (persisted)
    // The next rounds' settings (persisted: every, max_steps, lr): a round every `every` new
    // accepted/edited pairs, each a LearnNow with these bounds.
    LearningRoundSettings round;
    int64_t shown_version = 0;    // the version whose training curve is charted (0: the one in use)
    std::string root;             // the app's learning folder (data dir/learning)
    std::string adapter_dir;      // the loaded model's versions folder under root
    bool open = false;            // Learning window shown
    bool focus = false;           // one-shot
    int64_t new_pairs = 0;        // accepted/edited in this session since the last round began
    bool resume_current = false;  // one-shot after a load: with the switch on, use the folder's current version
    JobId round_job = 0, list_job = 0, use_job = 0;
    int64_t step = 0, total_steps = 0;          // the running round's progress
    int64_t current = 0;                        // version in use (0 = the base alone)
    std::vector<AdapterVersionEntry> versions;  // oldest first
    int64_t rejected_rounds = 0;
    std::optional<LearningRoundResult> last;  // the last round of this session
    int64_t last_done_ms = 0;                 // unix ms when it ended
    std::vector<float> last_curve;            // its training loss per step
    std::string error;
};

struct UiState {
    ModelVm model;
    ModelsVm models;
    WorkspaceVm ws;
    BatchVm batch;
    HistoryVm history;
    ExportVm exp;
    MonitorVm monitor;
    TrainingVm train;
    LearningVm learn;
    std::deque<LogLine> log;  // last 200 lines
    bool engine_dead = false;
    std::string death_message;
    bool show_help = false;
    float dpi_scale = 1.0f;
    bool reset_layout = false;  // one-shot: panels back to defaults
    bool focus_model_path = false;
    bool focus_batch = false;
    std::map<JobId, std::string> job_kind;  // running jobs (for the status bar)
};

}  // namespace t5s::ui
