#pragma once
// The local history of every generation and every annotator decision, in one SQLite file
// (WAL, schema versioned with `PRAGMA user_version`, migrated on open). Torch-free.
//
// Threading: one HistoryStore = one SQLite connection. Use an instance from one thread at a time
// and open one per thread that needs the history (WAL lets readers run while one writer commits).
//
// Decisions are events: accept / reject / edit (keeps the edited text) / undo / redo rows with a
// timestamp. The current state of a candidate is derived from its generation's events (undo revokes
// the latest still-effective decision of that generation, redo restores the latest undone one; a new
// decision clears the redo stack). The derived state is cached on the candidate row, rewritten in the
// same transaction as the event, so filters and export stay fast.
//
// Errors: t5s::Error naming the file. CorruptFile for a file that is not a (readable) T5 Studio
// history, Unsupported for a file written by a newer schema, FileNotFound for a missing directory,
// InvalidArgument for unknown ids / bad arguments, Cancelled when an export is cancelled.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5s/enum_names.h"
#include "t5s/generation_fields.h"
#include "t5s/generation_options.h"
#include "t5s/route.h"

namespace t5s {

namespace history {
class Db;
}

using GenerationId = int64_t;  // > 0; never reused after a delete

// ---- settings <-> JSON (what the history stores as `settings_json`) -------------------------------
// generation_options_to_json / generation_options_from_json: t5s/generation_fields.h.
// The LoRA adapter of a record travels in its settings JSON as "adapter" (the folder; absent = none),
// so records from before adapters existed read as "none" with no schema change.
std::string settings_json_with_adapter(const std::string& settings_json, const std::string& adapter);
std::string adapter_of_settings_json(const std::string& settings_json);  // "" = none or unreadable
// Protected spans (t5s/spans.h) travel in the settings JSON too, as "spans": {"input": [[start, end,
// label], ...], "candidates": [[...] per candidate, in rank order]} (absent without spans), so no
// schema change; records without them read as none.
struct RecordSpans {
    std::vector<Span> input;
    std::vector<std::vector<Span>> candidates;
};
std::string settings_json_with_spans(const std::string& settings_json, const GenerationResult& result);
RecordSpans spans_of_settings_json(const std::string& settings_json);  // empty = none or unreadable
// The learning loop's adapter version (t5s/learning.h) as "adapter_version" in the settings JSON
// (0 = none: the key is left out); read back 0 when absent or unreadable.
std::string settings_json_with_adapter_version(const std::string& settings_json, int64_t version);
int64_t adapter_version_of_settings_json(const std::string& settings_json);
// The recipe that made a generation (`generate --recipe FILE`) as "recipe": {"file": ..., "sha256": ...}
// in the settings JSON (absent = none), so no schema change. recipe_record_json reads FILE (at most
// 256 KiB, as a recipe) and hashes its bytes; recipe_of_settings_json gives "FILE (sha256:...)" or "".
std::string recipe_record_json(const std::filesystem::path& file);
// The same for a recipe's text as it ran (the app's editor, saved or not): its bytes hashed, `name`
// kept as given (it may name no file on disk).
std::string recipe_text_record_json(const std::string& name, const std::string& text);
std::string settings_json_with_recipe(const std::string& settings_json, const std::string& recipe_json);
std::string recipe_of_settings_json(const std::string& settings_json);

// ---- routes (t5s/route.h) <-> JSON text --------------------------------------------------------------
// The one codec of a stored route, used by the store (column `route`, schema v6) and the exports:
// [{"step": ..., "text": ...}, ...]; "" for an empty route (stored NULL). Reading is bounded (at most
// kMaxStoredRouteLegs legs of at most 1 MiB of text each) and throws Error(CorruptFile) naming `where`
// for anything else.
inline constexpr size_t kMaxStoredRouteLegs = 64;
std::string route_json_text(const Route& route);
Route route_of_json_text(const std::string& text, const std::string& where);

// ---- what the caller records ------------------------------------------------------------------------
struct CandidateRecord {
    std::string text;    // the candidate as generated
    double score = 0.0;  // the generator's score (see t5s::Candidate::score)
    CandidateScores scores;
    Route route;  // a recipe's steps that made it (empty: a plain generation; NULL in the file)
};

// A candidate a filter dropped (t5s::DroppedCandidate), kept with its reason (stored as its
// printed text, e.g. "similarity<0.8", "near_duplicate>0.7", "copy", "duplicate": t5s/drop_reason.h).
struct DroppedRecord {
    CandidateRecord candidate;
    DropCause reason;
};

struct GenerationRecord {
    std::string input;                        // the source text as fed to the model (without task prefix)
    std::vector<CandidateRecord> candidates;  // rank = index in this vector (0 = best)
    std::vector<DroppedRecord> dropped;       // filtered out, in the order they were dropped
    std::string settings_json = "{}";         // generation_options_to_json(options) of this request
    int64_t seed = -1;                        // the seed actually used (-1 = unknown / not sampled)
    std::string model_path;                   // model folder as opened
    std::string model_hash;                   // content hash of the weights, computed by the caller
    std::string precision;                    // "fp32" | "bf16" | "fp16" | "int8" (free text)
    std::string device;                       // "cpu" | "cuda:0" ... (free text)
    std::string adapter;                      // LoRA adapter folder applied ("" = none); stored in settings_json
    int64_t adapter_version = 0;              // learning-loop version of that adapter (0 = none); in settings_json
    double total_ms = 0.0;                    // wall time of the whole request
    std::string timings_json = "{}";          // optional breakdown, e.g. {"encode_ms":3.1,"decode_ms":40.2}
    std::string origin;                       // where the input came from: "ui", "cli", "batch:FILE#ROW" ... ("" = unknown)
    std::string label_json;                   // the input row's label as JSON text, e.g. "\"PER\"" ("" = none)
    std::string recipe_json;                  // recipe_record_json of the recipe that made it ("" = none); in settings_json
    int64_t created_at_ms = 0;                // unix time in ms (UTC); 0 = now
};

// input, candidates (with their scores), dropped candidates and seed of a generation result; the
// caller adds settings, model and timing fields.
GenerationRecord generation_record_of(const GenerationResult& result);

// ---- what the store returns ---------------------------------------------------------------------------
enum class CandidateState { None, Accepted, Rejected, Edited };  // Edited = accepted with edited text
template <>
struct EnumNames<CandidateState> {
    static constexpr const char* kWhat = "candidate state";
    static constexpr EnumName<CandidateState> kNames[] = {{CandidateState::None, "none"},
                                                          {CandidateState::Accepted, "accepted"},
                                                          {CandidateState::Rejected, "rejected"},
                                                          {CandidateState::Edited, "edited"}};
};

struct StoredCandidate {
    int index = 0;     // rank within its generation (0-based)
    std::string text;  // as generated
    double score = 0.0;
    CandidateState state = CandidateState::None;
    std::string final_text;  // edited text if Edited, else `text`
    CandidateScores scores;
    Route route;  // a recipe's steps that made it (empty: none, or recorded before v6)
};

struct StoredGeneration {
    GenerationId id = 0;
    int64_t created_at_ms = 0;
    std::string input;
    std::vector<StoredCandidate> candidates;  // by index
    std::vector<DroppedRecord> dropped;       // filtered-out candidates with their reasons (loaded with the candidates)
    std::string settings_json;
    int64_t seed = -1;
    std::string model_path;
    std::string model_hash;
    std::string precision;
    std::string device;
    std::string adapter;          // LoRA adapter folder ("" = none)
    int64_t adapter_version = 0;  // learning-loop adapter version (0 = none)
    double total_ms = 0.0;
    std::string timings_json;
    std::string origin;
    std::string label_json;  // the input row's label as JSON text ("" = none; records before schema v5)
};

enum class EventKind { Accept, Reject, Edit, Undo, Redo };
template <>
struct EnumNames<EventKind> {
    static constexpr const char* kWhat = "event kind";
    static constexpr EnumName<EventKind> kNames[] = {{EventKind::Accept, "accept"},
                                                     {EventKind::Reject, "reject"},
                                                     {EventKind::Edit, "edit"},
                                                     {EventKind::Undo, "undo"},
                                                     {EventKind::Redo, "redo"}};
};

struct HistoryEvent {
    int64_t id = 0;
    GenerationId generation_id = 0;
    EventKind kind = EventKind::Accept;
    int candidate_index = -1;     // accept/reject/edit: the candidate; undo/redo: the candidate of the target
    std::string text;             // edit: the edited text
    int64_t target_event_id = 0;  // undo: the decision revoked; redo: the decision restored
    int64_t created_at_ms = 0;
};

// ---- queries ------------------------------------------------------------------------------------------
// Filters shared by listing, counting and export. Every set field must match (AND).
struct HistoryFilter {
    std::string text;            // substring of the input or any candidate (text or edited text); byte-wise UTF-8,
                                 // so CJK works; ASCII letters case-insensitive; "" = any
    bool accepted_only = false;  // generations / candidates that are Accepted or Edited
    std::string model;           // exact model_path or model_hash; "" = any
    int64_t from_ms = 0;         // created_at >= from_ms (0 = open)
    int64_t to_ms = 0;           // created_at <  to_ms   (0 = open)
    std::string origin_prefix;   // origin starts with this; "" = any
};

// The largest page the store lists (HistoryStore::list's limit, training_runs' limit): every front
// end that asks for "all of them" or clamps a page size uses these.
inline constexpr int kMaxHistoryPage = 10000;
inline constexpr FieldRange kHistoryPageRange{1, kMaxHistoryPage};

// Listing is newest first (descending id). Keyset paging: pass the previous page's next_after_id.
struct HistoryQuery {
    HistoryFilter filter;
    GenerationId after_id = 0;    // only generations listed after this one (id < after_id); 0 = from the newest
    int limit = 50;               // page size (kHistoryPageRange)
    bool with_candidates = true;  // false: StoredGeneration::candidates left empty (cheaper lists)
};

struct HistoryPage {
    std::vector<StoredGeneration> generations;
    GenerationId next_after_id = 0;  // pass as after_id for the next page; 0 when there is no next page
    bool has_more = false;
};

// ---- export -------------------------------------------------------------------------------------------
// HfDataset: a Hugging Face dataset folder (t5s/hf_dataset.h writes it); export_to with it writes
// the folder's data file: JSONL rows with the scores, spans as {start, end, label} objects and the
// label as text, so every column has one Arrow type.
enum class ExportFormat { Jsonl, Csv, Tsv, LabelStudio, HfDataset };
template <>
struct EnumNames<ExportFormat> {
    static constexpr const char* kWhat = "export format";
    static constexpr EnumName<ExportFormat> kNames[] = {{ExportFormat::Jsonl, "jsonl"},
                                                        {ExportFormat::Csv, "csv"},
                                                        {ExportFormat::Tsv, "tsv"},
                                                        {ExportFormat::LabelStudio, "labelstudio"},
                                                        {ExportFormat::HfDataset, "hf-dataset"}};
};

// One row per exported candidate: source = generation input, target = final text (edited text for
// Edited). Rejected candidates are exported only without accepted_only (their state says so).
// Columns (CSV/TSV header, JSONL keys in this order):
//   source, target, kind ("candidate" | "original"), state, score, rank, generation_id, model, model_hash,
//   created_at (ISO 8601 UTC)
// A recipe candidate's route: JSONL "route": [{"step", "text"}, ...] on its row; CSV/TSV a last
// column `route` (the JSON text, empty for rows without one) when any exported row has a route, so
// exports of a history without recipes keep their columns.
// JSONL: one UTF-8 JSON object per line (non-ASCII not escaped), score/rank null for originals.
// CSV: RFC 4180 (CRLF line ends, fields with , " CR LF quoted, " doubled). TSV: LF line ends, the
//   same quoting with tab as the separator (fields with TAB " CR LF quoted), so the dataset reader,
//   pandas and Python's csv module read every exported field back unchanged.
struct ExportOptions {
    ExportFormat format = ExportFormat::Jsonl;
    HistoryFilter filter;            // which generations/candidates (accepted_only: Accepted or Edited only)
    bool dedupe = false;             // skip a row whose (source, target) pair was already written
    bool include_originals = false;  // also one "original" row per generation, target = source (so a
                                     // dataset of texts holds the source too), written before its
                                     // candidates; only for generations with >= 1 selected candidate
    bool overwrite = false;          // replace an existing file; false: Error(InvalidArgument) if it exists
    bool with_scores = false;        // add a column per score of t5s/score_names.h (null / empty where
                                     // not computed, and for originals)
    // Only candidates whose scores are inside these bounds; a bound on a score a candidate lacks leaves it out.
    std::optional<double> min_similarity, max_similarity, min_change, max_change, min_back_score;
    // Skip a row whose target is a near duplicate (MinHash over character 5-gram shingles, estimated
    // Jaccard >= this threshold, in (0, 1]) of an earlier written row's target; beside `dedupe`.
    std::optional<double> near_dedupe;
    // Labelled rows. JSONL always carries the row's "label" (when it has one) beside
    // source_spans / target_spans; with_labels adds the CSV/TSV columns label, source_spans and
    // target_spans (JSON lists, code points) after the others. LabelStudio: a Label Studio import
    // (t5s/input_reader.h OutputWriter): one task per row with data.text = target and data.source,
    // the target's spans as `labels` results and the label as `choices`, as an annotation for
    // accepted / edited candidates and a prediction otherwise.
    bool with_labels = false;
};

struct ExportProgress {
    int64_t candidates_done = 0;   // candidate rows read so far
    int64_t candidates_total = 0;  // candidate rows matching the filter
    int64_t rows_written = 0;
};

struct ExportResult {
    std::string path;
    int64_t rows_written = 0;  // data rows (header not counted)
    int64_t duplicates_skipped = 0;
    int64_t near_duplicates_skipped = 0;
    int64_t generations = 0;  // generations with >= 1 row written
    int64_t bytes_written = 0;
};

// How the generations matching a filter were made: what a dataset card reports.
struct HistoryProvenance {
    struct Count {
        std::string value;  // a model "path (hash)", a settings JSON object, a drop reason
        int64_t n = 0;
    };
    int64_t generations = 0;
    int64_t candidates = 0;       // kept candidates of those generations (before export's filters)
    std::vector<Count> models;    // generations per model, most used first
    std::vector<Count> settings;  // generations per distinct settings JSON, most used first
    std::vector<int64_t> seeds;   // distinct seeds (-1 = none recorded), ascending
    std::vector<Count> dropped;   // candidates the quality filters dropped, per reason
    std::vector<Count> recipes;   // generations per recipe "FILE (sha256:...)" (none: plain generations only)
};

// ---- training runs ------------------------------------------------------------------------------------
// Fine-tuning runs and their curves, so that past runs can be listed and compared, and a run cut off
// by closing the app (status stays "running") can be resumed from its checkpoints.
struct TrainingRunRecord {
    std::string model;         // model folder, or the init config for a run from scratch
    std::string data;          // data file(s) as the user gave them
    std::string out_dir;       // where checkpoints and the final model go
    std::string options_json;  // the caller's serialisation of its options (used to resume)
    int64_t total_steps = 0;
};

// One point of a run's curve: a train loss, an eval loss or both at one optimizer step.
struct TrainingPoint {
    int64_t step = 0;
    double elapsed_s = 0;
    double loss = -1;       // < 0: none at this step
    double eval_loss = -1;  // < 0: not evaluated at this step
    double lr = 0;
    double tokens_per_s = 0;
    int64_t memory_bytes = 0;
};

struct StoredTrainingRun {
    int64_t id = 0;
    int64_t started_at_ms = 0;
    int64_t updated_at_ms = 0;
    std::string status;  // "running" (or cut off: no end was recorded), "completed", "stopped",
                         // "early_stopping", "time_limit", "failed"
    std::string model, data, out_dir, options_json;
    int64_t steps = 0;  // last step recorded
    int64_t total_steps = 0;
    double last_loss = -1;
    double best_eval_loss = -1;
    std::string final_dir;              // "" until it finished with a model
    std::string message;                // failure message / summary
    std::vector<TrainingPoint> points;  // by step (only when asked for)
};

// ---- the store ----------------------------------------------------------------------------------------
// The integrity check (PRAGMA quick_check) run when a store opens a file.
struct HistoryCheck {
    enum class State { NotChecked, Running, Ok, Corrupt };
    State state = State::NotChecked;  // NotChecked: new/empty or in-memory file, check disabled, or interrupted
    std::string message;              // Corrupt: the one-line error (names the file and SQLite's first problem)
};

struct HistoryStoreOptions {
    bool durable = false;               // synchronous=FULL (survives power loss); default NORMAL
                                        // (WAL: committed rows survive a process crash)
    int busy_timeout_ms = 5000;         // wait this long for another connection's write lock
    bool create_if_missing = true;      // false: a missing file is Error(FileNotFound)
    std::function<int64_t()> clock_ms;  // "now" in unix ms for created_at of rows and events; empty = system clock
    int64_t foreground_check_max_bytes = int64_t{64} << 20;  // files up to this size are quick_checked before
                                                             // the constructor returns (CorruptFile if damaged); larger ones on a
                                                             // background thread, so opening never blocks; < 0: no check
};

class HistoryStore {
public:
    static constexpr int kSchemaVersion = 6;

    // Opens (creating if missing), checks (see HistoryStoreOptions::foreground_check_max_bytes) and
    // migrates to kSchemaVersion. ":memory:" gives a private in-memory store. Never deletes or
    // rewrites an existing file's content on failure. Once a background check finds damage, every
    // call throws Error(CorruptFile) with check().message.
    explicit HistoryStore(const std::string& path, HistoryStoreOptions options = {});
    ~HistoryStore();
    HistoryStore(HistoryStore&&) noexcept;
    HistoryStore& operator=(HistoryStore&&) noexcept;
    HistoryStore(const HistoryStore&) = delete;
    HistoryStore& operator=(const HistoryStore&) = delete;

    const std::string& path() const;
    int schema_version() const;  // PRAGMA user_version after opening (== kSchemaVersion)

    // Recording: one transaction each (record_many: one for all).
    GenerationId record(const GenerationRecord& generation);
    std::vector<GenerationId> record_many(const std::vector<GenerationRecord>& generations);

    // Decisions (InvalidArgument for an unknown generation or candidate index). Return the event id.
    int64_t accept(GenerationId id, int candidate_index);
    int64_t reject(GenerationId id, int candidate_index);
    int64_t edit(GenerationId id, int candidate_index, const std::string& text);
    // Returns the new undo/redo event id, or 0 when there is nothing to undo/redo (no event written).
    int64_t undo(GenerationId id);
    int64_t redo(GenerationId id);

    // Reading.
    std::optional<StoredGeneration> get(GenerationId id);
    std::optional<std::string> input_text(GenerationId id);  // "send back to input"
    std::vector<HistoryEvent> events(GenerationId id);       // oldest first
    HistoryPage list(const HistoryQuery& query);
    int64_t count(const HistoryFilter& filter = {});                        // matching generations
    std::optional<GenerationId> find_by_origin(const std::string& origin);  // newest with exactly this origin

    // Deletes the generation, its candidates and its events. False if it did not exist.
    bool remove(GenerationId id);

    // Streams the matching rows to `path` (temp file in the same directory, fsync, rename). Waits for
    // a running open-time check first; fails with CorruptFile (no file written) if the file is
    // damaged or the rows read differ from the rows counted (never a silently truncated set).
    // progress is called every ~1000 candidates and at the end; cancel is checked every row
    // (Error(Cancelled), temp file removed). Any failure leaves an existing file untouched.
    ExportResult export_to(const std::string& path, const ExportOptions& options,
                           const std::function<void(const ExportProgress&)>& progress = {},
                           const std::atomic<bool>* cancel = nullptr);

    // Models, settings, seeds and drop reasons of the generations matching the filter (one snapshot).
    HistoryProvenance provenance(const HistoryFilter& filter);

    // Diagnostics: "ok" or SQLite's first problem line.
    std::string integrity_check();
    // The open-time check: Running while a large file is checked in the background.
    HistoryCheck check() const;

    // Training runs (training_runs.cpp). Points are upserted by step: a resumed run that restarts
    // from an earlier checkpoint overwrites the points after it, so its curve continues cleanly.
    int64_t begin_training_run(const TrainingRunRecord& run);                        // status "running"; returns the id
    void reopen_training_run(int64_t id, int64_t total_steps);                       // resumed: status back to "running"
    void add_training_points(int64_t id, const std::vector<TrainingPoint>& points);  // one transaction
    void end_training_run(int64_t id, const std::string& status, const std::string& final_dir, const std::string& message);
    std::vector<StoredTrainingRun> training_runs(int limit = 100, bool with_points = true);  // newest first
    std::optional<StoredTrainingRun> training_run(int64_t id);                               // with points
    bool remove_training_run(int64_t id);

private:
    history::Db& db();  // for the parts of the store implemented in other files
    // Throws CorruptFile once the open-time check found damage; wait: until a running check ends.
    void require_undamaged(bool wait = false) const;
    int64_t now_ms() const;

    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace t5s
