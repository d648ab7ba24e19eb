// HistoryStore::export_to: streams the matching candidates of a consistent snapshot to a file
// written atomically; a damaged file or a cancel leaves no file behind.
#include <iterator>
#include <memory>
#include <string_view>
#include <unordered_set>

#include "history/candidate_scores_store.h"
#include "history/codes.h"
#include "history/export_format.h"
#include "history/query_filter.h"
#include "history/sqlite_db.h"
#include "t5s/atomic_file.h"
#include "t5s/error.h"
#include "t5s/history_store.h"
#include "t5s/input_reader.h"
#include "t5s/quality.h"
#include "t5s/settings_fields.h"

namespace t5s {

using history::ReadTransaction;
using history::Stmt;

namespace {

// 128-bit fingerprint of a (source, target) pair for dedupe.
struct PairKey {
    uint64_t a = 0, b = 0;
    bool operator==(const PairKey& o) const { return a == o.a && b == o.b; }
};
struct PairKeyHash {
    size_t operator()(const PairKey& k) const { return static_cast<size_t>(k.a ^ (k.b * 0x9e3779b97f4a7c15ULL)); }
};

PairKey pair_key(std::string_view source, std::string_view target) {
    uint64_t fnv = 0xcbf29ce484222325ULL;
    auto mix = [&fnv](std::string_view s) {
        for (unsigned char c : s) {
            fnv ^= c;
            fnv *= 0x100000001b3ULL;
        }
    };
    mix(source);
    fnv ^= 0xff;  // separator that cannot occur inside UTF-8 text
    fnv *= 0x100000001b3ULL;
    mix(target);
    std::string joined;
    joined.reserve(source.size() + target.size() + 1);
    joined.append(source.data(), source.size()).push_back('\xff');
    joined.append(target.data(), target.size());
    return {fnv, static_cast<uint64_t>(std::hash<std::string>{}(joined))};
}

// An export row as a Label Studio task: an annotation when accepted or edited, else a prediction.
OutputRow labelstudio_row(const history::ExportRow& row) {
    OutputRow out;
    out.text = std::string(row.target);
    out.source = std::string(row.source);
    if (row.target_spans) out.spans = *row.target_spans;
    out.label_json = std::string(row.label_json);
    out.accepted = !row.original && (row.state == CandidateState::Accepted || row.state == CandidateState::Edited);
    return out;
}

// Writes rows to the file: dedupe, counts, one generation counted once.
class RowWriter {
public:
    RowWriter(AtomicFile& file, const ExportOptions& options, const std::string& path, bool with_route)
        : file_(file), options_(options), with_route_(with_route), labelstudio_(InputFormat::LabelStudio, /*with_source=*/true) {
        result_.path = path;
        if (options.near_dedupe) {
            NearDuplicateOptions near;
            near.threshold = *options.near_dedupe;
            near_index_ = std::make_unique<NearDuplicateIndex>(near);
        }
        out_ = options.format == ExportFormat::LabelStudio
                   ? labelstudio_.begin()
                   : history::export_header(options.format, options.with_scores, options.with_labels, with_route);
        file_.write(out_);
    }

    void start_generation() { generation_counted_ = false; }

    void emit(const history::ExportRow& row) {
        if (options_.dedupe && !seen_.insert(pair_key(row.source, row.target)).second) {
            ++result_.duplicates_skipped;
            return;
        }
        if (near_index_ && near_index_->add(row.target)) {
            ++result_.near_duplicates_skipped;
            return;
        }
        out_.clear();
        if (options_.format == ExportFormat::LabelStudio) out_ = labelstudio_.row(labelstudio_row(row));
        else history::append_export_row(options_.format, row, out_, options_.with_scores, options_.with_labels, with_route_);
        file_.write(out_);
        ++result_.rows_written;
        if (!generation_counted_) {
            ++result_.generations;
            generation_counted_ = true;
        }
    }

    ExportResult& result() { return result_; }
    void finish() { file_.write(options_.format == ExportFormat::LabelStudio ? labelstudio_.end() : std::string()); }

private:
    AtomicFile& file_;
    const ExportOptions& options_;
    const bool with_route_;  // CSV/TSV: the route column (some exported row has a route)
    ExportResult result_;
    std::unordered_set<PairKey, PairKeyHash> seen_;
    std::unique_ptr<NearDuplicateIndex> near_index_;
    std::string out_;
    bool generation_counted_ = false;
    OutputWriter labelstudio_;  // Label Studio import JSON
};

// The columns of an export row before its scores (write_candidate reads them by index), then a
// column per score from the one list (t5s/score_names.h), which therefore starts after them.
constexpr const char* kRowColumns[] = {"g.id",   "g.created_at", "g.input", "g.model_path",  "g.model_hash",    "c.rank",
                                       "c.text", "c.score",      "c.state", "c.edited_text", "g.settings_json", "g.label_json",
                                       "c.route"};
constexpr int kFirstScoreColumn = static_cast<int>(std::size(kRowColumns));

std::string export_columns() {
    std::string sql = "SELECT ";
    for (const char* column : kRowColumns) sql += std::string(column) + ", ";
    return sql + score_list("c.");
}

// SQL conditions on the candidate scores (numbers formatted here, never user text).
std::string score_conditions(const ExportOptions& o) {
    std::string sql;
    auto add = [&](const std::optional<double>& bound, const char* column, const char* op) {
        if (bound) sql += std::string(" AND c.") + column + " " + op + " " + history::format_number(*bound);
    };
    add(o.min_similarity, "similarity", ">=");
    add(o.max_similarity, "similarity", "<=");
    add(o.min_change, "change", ">=");
    add(o.max_change, "change", "<=");
    add(o.min_back_score, "back_score", ">=");
    return sql;
}

// One candidate row of export_columns() (and its "original" row first when it starts a generation).
void write_candidate(const history::Db& db, const Stmt& rows, bool new_generation, const ExportOptions& options,
                     RowWriter& writer) {
    const std::string source = rows.text(2);
    const std::string model = rows.text(3);
    const std::string model_hash = rows.text(4);
    const std::string label_json = rows.text(11);
    const CandidateState state = history::state_from_int(rows.int64(8));
    const std::string text = rows.text(6);
    const std::string edited = state == CandidateState::Edited ? rows.text(9) : std::string();
    history::ExportRow row;
    row.source = source;
    row.model = model;
    row.model_hash = model_hash;
    row.generation_id = rows.int64(0);
    row.created_at_ms = rows.int64(1);
    row.label_json = label_json;
    if (new_generation) {
        writer.start_generation();
        if (options.include_originals) {
            const RecordSpans spans = spans_of_settings_json(rows.text(10));
            row.original = true;
            row.target = source;
            row.source_spans = row.target_spans = &spans.input;
            writer.emit(row);
            row.original = false;
            row.source_spans = row.target_spans = nullptr;
        }
    }
    row.target = state == CandidateState::Edited ? std::string_view(edited) : std::string_view(text);
    row.state = state;
    row.score = rows.real(7);
    const CandidateScores scores = history::read_scores(rows, kFirstScoreColumn);
    row.scores = &scores;
    row.rank = static_cast<int>(rows.int64(5));
    const RecordSpans spans = spans_of_settings_json(rows.text(10));  // protected spans, if any
    row.source_spans = &spans.input;
    const Route route = history::read_route(rows, 12, db, row.generation_id, row.rank);
    row.route = &route;
    const size_t rank = static_cast<size_t>(row.rank);
    row.target_spans = state != CandidateState::Edited && rank < spans.candidates.size() ? &spans.candidates[rank] : nullptr;
    writer.emit(row);
}

}  // namespace

ExportResult HistoryStore::export_to(const std::string& path, const ExportOptions& options,
                                     const std::function<void(const ExportProgress&)>& progress,
                                     const std::atomic<bool>* cancel) {
    AtomicFile file(path, options.overwrite, "export file");  // refuses an existing file before any work
    require_undamaged(/*wait=*/true);
    history::Where w = history::build_where(options.filter);
    constexpr FieldRange kThresholds = above_to(0, 1);
    if (options.near_dedupe && !settings_in_range(kThresholds, *options.near_dedupe))
        throw Error(ErrorCode::InvalidArgument,
                    range_message("export: near-duplicate threshold", kThresholds, *options.near_dedupe));
    const std::string cand_filter = (options.filter.accepted_only ? " AND c.state IN (1, 3)" : "") + score_conditions(options);
    const std::string from = " FROM generations g JOIN candidates c ON c.generation_id = g.id" +
                             (w.sql.empty() ? std::string(" WHERE 1") : w.sql) + cand_filter;

    ReadTransaction rt(db());  // one snapshot for the count and the rows
    ExportProgress prog;
    {
        Stmt count(db(), ("SELECT count(*)" + from).c_str());
        w.apply(count);
        prog.candidates_total = count.step() ? count.int64(0) : 0;
    }
    bool with_route = false;  // CSV/TSV get the route column only when a row has a route
    {
        Stmt any(db(), ("SELECT EXISTS (SELECT 1" + from + " AND c.route IS NOT NULL)").c_str());
        w.apply(any);
        with_route = any.step() && any.int64(0) != 0;
    }
    Stmt rows(db(), (export_columns() + from + " ORDER BY g.id, c.rank").c_str());
    w.apply(rows);

    auto check_cancel = [&] {
        if (cancel && cancel->load(std::memory_order_relaxed))
            throw Error(ErrorCode::Cancelled, "export to " + path + " cancelled; no file written");
    };
    RowWriter writer(file, options, path, with_route);
    GenerationId current = 0;
    while (rows.step()) {
        check_cancel();
        const GenerationId gid = rows.int64(0);
        write_candidate(db(), rows, gid != current, options, writer);
        current = gid;
        ++prog.candidates_done;
        if (progress && prog.candidates_done % 1000 == 0) {
            prog.rows_written = writer.result().rows_written;
            progress(prog);
        }
    }
    check_cancel();
    writer.finish();
    // The count (answered from indexes) and the row scan (tables) read different pages: on a damaged
    // file they can disagree without SQLite raising an error. Never write a silently truncated set.
    if (prog.candidates_done != prog.candidates_total)
        throw Error(ErrorCode::CorruptFile, "history database " + this->path() + " is damaged: export read " +
                                                std::to_string(prog.candidates_done) + " of " +
                                                std::to_string(prog.candidates_total) + " rows; no file written");
    file.commit();
    ExportResult result = writer.result();
    result.bytes_written = file.bytes_written();
    if (progress) {
        prog.rows_written = result.rows_written;
        progress(prog);
    }
    return result;
}

}  // namespace t5s
