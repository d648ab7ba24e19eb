#pragma once
// The only door into the engine for interactive front ends. Commands go in as values through
// submit(), which never blocks; events come out as values through drain_events(), which swaps a
// vector under a lock. Work runs on three lanes:
//   model lane:    LoadModel, SetAdapter, Generate, BatchAugment, StartTraining (torch work, one at a time);
//   io lane:       datasets, history queries/decisions, export, directory listings, file writes,
//                  model store listings and deletions (each lane that touches SQLite opens its own connection);
//   download lane: PullModel (downloads from the Hub, one at a time, queued behind each other).
// Cancel, PauseJob and UpdateSettings act immediately on the running job (atomics / SettingsHandle).
// Every exception is caught at the job boundary and becomes JobFailed. If a lane dies anyway,
// EngineDied is emitted, alive() turns false and restart() brings fresh lanes up.
// Plain C++ types only: nothing here includes torch or SQLite.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "t5s/device.h"
#include "t5s/embedder.h"
#include "t5s/error.h"
#include "t5s/generation_options.h"
#include "t5s/history_store.h"
#include "t5s/hub.h"
#include "t5s/jobs.h"
#include "t5s/learning.h"
#include "t5s/model.h"
#include "t5s/trainer.h"

namespace t5s {

// ---------------------------------------------------------------- shared value types
struct Timings {
    double queue_ms = 0.0;      // submit -> start
    double run_ms = 0.0;        // start -> done
    int64_t tokens = 0;         // generated tokens (sum over steps)
    double tokens_per_s = 0.0;  // tokens / run time
};

// CudaMemory: t5s/device.h. Hook for CUDA statistics; by default the engine's query_device_memory() (t5s/device.h).
using CudaMemoryProbe = std::function<CudaMemory()>;

struct DirEntry {
    std::string name;
    bool is_dir = false;
    bool is_model_dir = false;  // holds a config.json
    int64_t size = 0;
};

// clang-format off
// ---------------------------------------------------------------- commands
struct LoadModel { std::filesystem::path dir; RuntimeOptions runtime; };
struct UnloadModel {};
// The sentence-embedding model behind the similarity score (t5s/embedder.h), on the model lane
// beside the T5 model: one at a time, replaced by the next LoadEmbedder.
struct LoadEmbedder { std::filesystem::path dir; RuntimeOptions runtime; };
struct UnloadEmbedder {};
// A recipe (t5s/recipe.h) a Generate runs instead of one plain generation: each text goes through
// the recipe's steps and every candidate carries its route (Candidate::route). The engine parses it
// (a problem is JobFailed with the parser's one line naming the file and the step or key) and keeps
// the recipe's step models loaded while the recipe, its folder and the loaded model stay the same.
struct RecipeSource {
    std::string json;                    // the recipe's text; empty: read `file`
    std::filesystem::path file;          // names the recipe in messages; read when `json` is empty
    std::filesystem::path base_dir;      // its relative model / adapter folders ("": the file's folder)
};
struct Generate {
    std::vector<std::string> texts;  // sources as the user wrote them
    GenerationOptions options;
    std::string task_prefix;         // prepended to every source before tokenising ("paraphrase: ")
    bool record_history = true;
    // Protected spans given per text (t5s/spans.h, code points; empty: none for all, else one list
    // per text); options.protect / protect_regex add the detected ones. History keeps them.
    std::vector<std::vector<Span>> spans;
    // A recipe instead of one generation: options are the base of every step's settings and judge
    // the candidates; the recipe runs with the settings it started with (UpdateSettings does not
    // reach it: a filter moved mid-run would judge a leg against its own input, not the source).
    // Progress{done = steps started before this one, total = steps} as each step starts.
    std::optional<RecipeSource> recipe;
};
struct UpdateSettings { GenerationOptions options; };  // running Generate/BatchAugment jobs, next step
struct Cancel { JobId job = 0; };                       // queued or running job (training: stop with a checkpoint)
struct PauseJob { JobId job = 0; };                     // BatchAugment: stop at the next row batch; training: wait
struct ResumeJob { JobId job = 0; };                    // BatchAugment: continue, skipping rows done; training: go on
struct LoadDataset {
    // Any file the input reader reads (t5s/input_reader.h): .txt, .jsonl, .csv / .tsv (header line),
    // a Label Studio .json export. Bad rows are skipped (BadRowPolicy::Skip) and reported.
    std::filesystem::path path;
    std::string column;              // "" = the input reader's column rule, else the first
    bool no_header = false;          // a CSV/TSV without a header row: column 1 is the text
};
struct BatchAugment {
    std::string name;                // shown in history
    std::vector<std::string> rows;
    GenerationOptions options;       // num_return_sequences = N per row
    std::string task_prefix;
    std::vector<bool> done;          // rows to skip (resume across sessions); may be empty
    std::vector<std::vector<Span>> spans;  // protected spans per row, as Generate::spans (empty: none)
    // A recipe instead of one generation per row, as Generate::recipe: each row batch is one
    // run_recipe call (each step one batched generation over the batch's rows), the step models
    // loaded once for the whole job, every candidate with its route (in BatchRowDone and the
    // history). options.num_return_sequences is the default of steps that set none. The job keeps
    // the settings it was submitted with (UpdateSettings does not reach it, as for Generate::recipe).
    std::optional<RecipeSource> recipe;
};
struct QueryHistory { HistoryQuery query; bool with_total = true; };  // total = count(filter)
struct RecordDecision {
    GenerationId generation_id = 0;
    int candidate_index = 0;
    EventKind kind = EventKind::Accept;  // the history's decision kinds
    std::string text;                // edited text for Edit
};
struct DeleteHistory { std::vector<GenerationId> generation_ids; };
struct ExportHistory {
    std::filesystem::path out;
    ExportOptions options;           // options.overwrite false: FileExists instead of replacing a file
};
struct ListDirectory { std::filesystem::path dir; };
struct WriteTextFile { std::filesystem::path path; std::string content; };  // atomic (tmp + rename)
// Runs a TrainingJob on the model lane (the lane is busy until it ends: Generate waits behind it).
// The loaded inference model stays loaded unless unload_model is set (then ModelUnloaded is emitted
// first, freeing its memory for training). Events: JobStarted{"train"}, TrainingUpdate (Step events
// throttled to <= 10 Hz, the last step always sent; the Finished update's message is the final model
// dir), then JobFinished{"train", "<stop reason> after N steps: DIR"} (also after Cancel, which stops
// with a checkpoint) or JobFailed. PauseJob/ResumeJob act at the trainer's next micro-batch; PauseJob
// answers JobPaused{step, total}. Use the result with LoadModel{final dir}.
// With a history database the run and its curve are recorded there (TrainingRunRecorded{run id}
// first): points are flushed at least every second, so a run cut off by closing the app keeps its
// curve and is listed as "running" (interrupted); continue it with history_run_id = that id and
// options.resume = true (it goes on from the newest checkpoint in options.out_dir).
struct StartTraining {
    TrainingOptions options;
    bool unload_model = false;
    bool data_from_history = false;  // train on the accepted/edited pairs of the history (written to
                                     // OUT/history-pairs.jsonl; with a data_file too they are extra data)
    int64_t history_run_id = 0;      // > 0: continue this recorded run instead of starting a new one
};
// Switches the loaded model's LoRA adapter (a PEFT adapter folder; empty dir: none) without
// reloading the base; model lane, so the next Generate uses it. Answers AdapterSet or JobFailed (a
// bad folder leaves the current adapter on).
struct SetAdapter { std::filesystem::path dir; };
struct QueryTrainingRuns { int limit = 50; };          // newest first, with their curves
struct DeleteTrainingRun { int64_t run_id = 0; };      // the record only; checkpoints stay on disk
// The model store (t5s/hub.h, t5s/hub_pull.h), on the download lane (a third lane, so a download
// never holds up the io lane's history queries). PullModel: JobStarted{"pull"}, ModelPullProgress
// (<= ~10 Hz), then ModelPulled or JobFailed with the pull's one-line error (code Cancelled after
// Cancel: the .incomplete blob stays and the next PullModel of the repo resumes it).
struct PullModel {
    std::string repo;                    // "ORG/NAME"
    std::string revision = "main";
    std::filesystem::path cache;         // "" = hub::cache_dir()
    std::string endpoint;                // "" = $HF_ENDPOINT, else the Hub
};
// hub::list_models(cache, folders) with this machine's available memory: answers ModelsListed.
struct ListModels {
    std::filesystem::path cache;         // "" = hub::cache_dir()
    std::vector<std::filesystem::path> folders;  // the app's models folder, recently opened folders
};
// Removes <cache>/models--ORG--NAME (every snapshot and blob of the repository): ModelDeleted.
struct DeleteModel {
    std::filesystem::path cache;         // "" = hub::cache_dir()
    std::string repo;
};
// The learning loop (t5s/learning.h) for the app. LearnNow runs one round on the history
// (EngineConfig.history_db) into adapter_dir on the download lane, not the model lane: a round loads
// its own copy of the base and trains beside the loaded model, so Generate never waits behind it
// (a PullModel queues behind a round, and a round behind a pull); the lane thread runs it at nice 10
// (Linux, per thread; threads it starts inherit it) so it yields the CPU to generation. Events: JobStarted{"learn"},
// TrainingUpdate (the round's trainer events, Step throttled to <= 10 Hz), then LearningRoundDone
// (adopted | rejected | waiting), or JobFailed (Cancelled after Cancel: the current version stays).
// An adopted version is switched on for the loaded model through SetAdapter (queued on the model
// lane after the round: running requests finish on the old adapter), then AdapterVersionsListed.
struct LearnNow {
    std::filesystem::path model_dir;     // the base model (the loaded model's folder)
    std::filesystem::path adapter_dir;   // the versions folder (created when missing)
    std::string task_prefix;             // the base's task prefix, e.g. "paraphrase: "
    LearningRoundSettings round;         // the round's bounds and schedule (`every` is the app's, not read here)
    bool use_adopted = true;             // adopted: SetAdapter on the loaded model (when one is loaded)
};
// The versions of adapter_dir with their manifests: AdapterVersionsListed (io lane).
struct ListAdapterVersions { std::filesystem::path adapter_dir; };
// restore_adapter_version + the loaded model's adapter switched to it (model lane, no reload; 0 =
// the base alone): AdapterSet, then AdapterVersionsListed. A model must be loaded.
struct UseAdapterVersion { std::filesystem::path adapter_dir; int64_t version = 0; };
using Command = std::variant<LoadModel, UnloadModel, LoadEmbedder, UnloadEmbedder, Generate, UpdateSettings, Cancel, PauseJob, ResumeJob,
                             LoadDataset, BatchAugment, QueryHistory, RecordDecision, DeleteHistory,
                             ExportHistory, ListDirectory, WriteTextFile, StartTraining, QueryTrainingRuns,
                             DeleteTrainingRun, SetAdapter, PullModel, ListModels, DeleteModel, LearnNow,
                             ListAdapterVersions, UseAdapterVersion>;

// ---------------------------------------------------------------- events
struct JobStarted { JobId job = 0; std::string kind; };
struct ModelLoaded {
    JobId job = 0;
    ModelInfo info;
    double load_ms = 0.0;
    DeviceProfile recommended;  // measured hardware-aware defaults (device, precision, free memory)
};
struct ModelUnloaded { JobId job = 0; };
struct EmbedderLoaded { JobId job = 0; EmbedderInfo info; double load_ms = 0.0; };
struct EmbedderUnloaded { JobId job = 0; };
struct GenerationStep { JobId job = 0; int step = 0; int active_rows = 0; int64_t tokens = 0; };
struct GenerationDone {
    JobId job = 0;
    std::vector<GenerationResult> results;  // one per input, inputs without the task prefix
    std::vector<GenerationId> history_ids;  // one per input; 0 when not recorded
    GenerationOptions options;              // settings at the start of the request
    Timings timings;
};
struct JobFailed { JobId job = 0; ErrorCode code = ErrorCode::Internal; std::string message; };
struct Progress { JobId job = 0; int64_t done = 0; int64_t total = 0; double rate = 0.0; double eta_s = -1.0; };
struct BatchRowDone { JobId job = 0; int64_t row = 0; GenerationResult result; GenerationId history_id = 0; };
struct JobPaused { JobId job = 0; int64_t done = 0; int64_t total = 0; };
struct JobFinished { JobId job = 0; std::string kind; std::string summary; };
struct SettingsUpdated { JobId job = 0; int running_jobs = 0; };
struct DatasetLoaded {
    JobId job = 0;
    std::filesystem::path path;
    std::vector<std::string> columns;        // the file's text columns; empty for plain text
    std::string column;                      // the one used
    std::vector<std::string> rows;
    std::vector<std::string> warnings;       // the reader's "file:line: reason" ("file: task N: reason") per skipped row
    // Labelled rows (any format): each row's spans, [start, end, label] in code points, and its
    // label (a string; other JSON as text). Empty when no row has any.
    std::vector<std::vector<Span>> spans;
    std::vector<std::string> labels;
};
struct HistoryLoaded { JobId job = 0; HistoryQuery query; HistoryPage page; int64_t total = -1; };
struct DecisionRecorded { JobId job = 0; GenerationId generation_id = 0; int candidate_index = 0; EventKind kind{}; };
struct HistoryDeleted { JobId job = 0; int64_t count = 0; };
struct ExportDone { JobId job = 0; ExportResult result; };
struct FileExists { JobId job = 0; std::filesystem::path path; };
struct DirectoryListing { JobId job = 0; std::filesystem::path dir; std::vector<DirEntry> entries; std::string error; };
struct FileWritten { JobId job = 0; std::filesystem::path path; };
struct ModelPullProgress {
    JobId job = 0;
    std::string repo;
    std::string phase;                   // "metadata" | "download" | "verify" | "done"
    std::string file;
    int file_index = 0, file_count = 0;
    int64_t done_bytes = 0, total_bytes = 0;
    double rate_bytes_per_s = 0.0;
    double eta_s = -1.0;
};
struct ModelPulled {
    JobId job = 0;
    std::string repo, revision, commit;
    std::filesystem::path snapshot;      // the folder to open
    std::string kind, architecture;      // "generation" | "encoder"; model_type
    int64_t total_bytes = 0, downloaded_bytes = 0, reused_bytes = 0;
};
struct ModelsListed {
    JobId job = 0;
    std::filesystem::path cache;
    std::vector<hub::StoredModel> models;
    int64_t available_bytes = 0;         // host memory available now (MemAvailable)
};
struct ModelDeleted { JobId job = 0; std::string repo; int64_t bytes_freed = 0; };
struct TelemetrySample {
    double t_s = 0.0;                 // seconds since the engine started
    int64_t rss_bytes = 0;            // process resident set (t5s/process_memory.h)
    CudaMemory cuda;                  // available=false -> "n/a"
    double tokens_per_s = 0.0;        // generated tokens per second over the last sample period
    int queue_length = 0;             // commands waiting on both lanes (+1 per running job)
};
// One trainer event (Report/Plan/Step/Eval/Checkpoint/Message/Finished) of a StartTraining job.
struct TrainingUpdate { JobId job = 0; TrainingEvent event; };
struct TrainingRunRecorded { JobId job = 0; int64_t run_id = 0; };  // the history row of a StartTraining job
struct TrainingRunsLoaded { JobId job = 0; std::vector<StoredTrainingRun> runs; };
struct EngineDied { std::string message; };
struct AdapterSet { JobId job = 0; std::filesystem::path dir; int64_t parameters = 0; };  // dir empty: none

// One adopted version of the learning loop, its manifest's numbers (-1 / 0 where missing).
struct AdapterVersionEntry {
    int64_t version = 0;
    std::filesystem::path dir;
    bool current = false;
    int64_t round = 0, pairs_total = 0, pairs_new = 0, pairs_heldout = 0, steps = 0;
    double loss_before = -1, loss_after = -1, elapsed_s = 0;
    std::string created_at;              // ISO 8601 UTC, as in the manifest
    std::vector<double> train_losses;    // the round's training loss per step (empty: an older manifest)
    double lr = -1;                      // the round's learning rate (-1: not recorded)
    int64_t lora_r = 0;                  // the adapter's rank (0: not recorded)
};
struct AdapterVersionsListed {
    JobId job = 0;
    std::filesystem::path adapter_dir;
    int64_t current = 0;                 // 0 = the base alone
    std::vector<AdapterVersionEntry> versions;  // oldest first
    int64_t rejected_rounds = 0;         // rejected/rN.json files
};
struct LearningRoundDone {
    JobId job = 0;
    LearningRoundResult result;
    std::vector<double> train_losses;    // the round's training loss per step (the curve)
};

using Event = std::variant<JobStarted, ModelLoaded, ModelUnloaded, EmbedderLoaded, EmbedderUnloaded, GenerationStep, GenerationDone, JobFailed,
                           Progress, BatchRowDone, JobPaused, JobFinished, SettingsUpdated, DatasetLoaded,
                           HistoryLoaded, DecisionRecorded, HistoryDeleted, ExportDone, FileExists,
                           DirectoryListing, FileWritten, TelemetrySample, TrainingUpdate, TrainingRunRecorded,
                           TrainingRunsLoaded, EngineDied, AdapterSet, ModelPullProgress, ModelPulled, ModelsListed,
                           ModelDeleted, AdapterVersionsListed, LearningRoundDone>;
// clang-format on

// ---------------------------------------------------------------- the thread
using ModelFactory = std::function<std::unique_ptr<Model>(const std::filesystem::path&, const RuntimeOptions&)>;
using EmbedderFactory = std::function<std::unique_ptr<Embedder>(const std::filesystem::path&, const RuntimeOptions&)>;

struct EngineConfig {
    std::filesystem::path history_db;  // "" = no history (queries fail with a message)
    ModelFactory model_factory;        // empty = Model::load
    EmbedderFactory embedder_factory;  // empty = Embedder::load
    CudaMemoryProbe cuda_probe;        // empty = the engine's own (torch allocator + cudaMemGetInfo)
    double telemetry_hz = 4.0;         // 0 = no sampler thread
};

class EngineThread {
public:
    explicit EngineThread(EngineConfig config = {});
    ~EngineThread();
    EngineThread(const EngineThread&) = delete;
    EngineThread& operator=(const EngineThread&) = delete;

    JobId submit(Command command);      // never blocks (short lock on a queue)
    std::vector<Event> drain_events();  // swaps the event vector under a lock
    // Blocks until an event is waiting to be drained or `timeout_s` passed; true when one is.
    // For front ends and tests that have nothing else to do than wait (the UI drains per frame).
    bool wait_for_events(double timeout_s);
    bool alive() const;  // false once a lane died
    std::string death_message() const;
    void restart();  // joins dead lanes, starts fresh ones (model unloaded)
    int queue_length() const;

private:
    friend struct EngineTestAccess;  // engine/src/engine_thread/test_hooks.h: test builds only
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace t5s
