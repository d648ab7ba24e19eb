// Io-lane jobs: datasets, history queries and decisions, export, directory listings, file writes.
#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>

#include "engine_thread/dataset_reader.h"
#include "engine_thread/engine_impl.h"
#include "t5s/atomic_file.h"
#include "t5s/overload.h"

namespace t5s::detail {

namespace {

// The engine's temp-file + fsync + rename writer; here the folder is created first.
void write_text_atomic(const std::filesystem::path& path, const std::string& content) {
    std::error_code ec;
    if (!path.parent_path().empty()) std::filesystem::create_directories(path.parent_path(), ec);
    write_file_atomic(path, content);
}

// Exports the history, reporting progress at most every 50 ms (and at the end).
ExportResult export_with_progress(HistoryStore& h, const ExportHistory& c, JobId id,
                                  const std::function<void(Progress)>& progress) {
    auto last = std::chrono::steady_clock::now();
    const auto t0 = last;
    return h.export_to(c.out.string(), c.options, [&](const ExportProgress& p) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last < std::chrono::milliseconds(50) && p.candidates_done < p.candidates_total) return;
        last = now;
        const double secs = std::chrono::duration<double>(now - t0).count();
        const double rate = secs > 0 ? p.candidates_done / secs : 0.0;
        progress(Progress{id, p.candidates_done, p.candidates_total, rate,
                          rate > 0 ? (p.candidates_total - p.candidates_done) / rate : -1.0});
    });
}

// The folder's entries for the file dialogs: hidden ones left out, folders first, at most 5000.
DirectoryListing list_directory(JobId id, const std::filesystem::path& dir) {
    DirectoryListing out{id, dir, {}, {}};
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, std::filesystem::directory_options::skip_permission_denied, ec);
    if (ec) {
        out.error = dir.string() + ": " + ec.message();
        return out;
    }
    for (const auto& e : it) {
        DirEntry d;
        d.name = e.path().filename().string();
        if (!d.name.empty() && d.name[0] == '.') continue;
        std::error_code e2;
        d.is_dir = e.is_directory(e2);
        if (d.is_dir) d.is_model_dir = std::filesystem::exists(e.path() / "config.json", e2);
        else d.size = int64_t(e.file_size(e2));
        out.entries.push_back(std::move(d));
        if (out.entries.size() >= 5000) break;
    }
    std::sort(out.entries.begin(), out.entries.end(), [](const DirEntry& a, const DirEntry& b) {
        if (a.is_dir != b.is_dir) return a.is_dir;
        return a.name < b.name;
    });
    return out;
}

}  // namespace

HistoryStore& EngineImpl::history_for_io_lane() {
    if (config.history_db.empty()) throw Error(ErrorCode::InvalidArgument, "no history database configured");
    if (!io_history) io_history = std::make_unique<HistoryStore>(config.history_db.string());
    return *io_history;
}

void EngineImpl::run_io_job(LaneTask& task) {
    const JobId id = task.job->id();
    std::visit(
        Overload{
            [&](const LoadDataset& c) {
                emit(JobStarted{id, "dataset"});
                auto rows = read_dataset(c.path, c.column, c.no_header);
                emit(DatasetLoaded{id, c.path, std::move(rows.columns), std::move(rows.column), std::move(rows.rows),
                                   std::move(rows.warnings), std::move(rows.spans), std::move(rows.labels)});
            },
            [&](const QueryHistory& c) {
                auto& h = history_for_io_lane();
                HistoryLoaded out{id, c.query, h.list(c.query), -1};
                if (c.with_total) out.total = h.count(c.query.filter);
                emit(std::move(out));
            },
            [&](const RecordDecision& c) {
                auto& h = history_for_io_lane();
                switch (c.kind) {
                    case EventKind::Accept: h.accept(c.generation_id, c.candidate_index); break;
                    case EventKind::Reject: h.reject(c.generation_id, c.candidate_index); break;
                    case EventKind::Edit: h.edit(c.generation_id, c.candidate_index, c.text); break;
                    case EventKind::Undo: h.undo(c.generation_id); break;
                    case EventKind::Redo: h.redo(c.generation_id); break;
                }
                emit(DecisionRecorded{id, c.generation_id, c.candidate_index, c.kind});
            },
            [&](const DeleteHistory& c) {
                auto& h = history_for_io_lane();
                int64_t n = 0;
                for (auto g : c.generation_ids) n += h.remove(g) ? 1 : 0;
                emit(HistoryDeleted{id, n});
            },
            [&](const QueryTrainingRuns& c) {
                emit(TrainingRunsLoaded{id, history_for_io_lane().training_runs(std::clamp(c.limit, 1, kMaxHistoryPage), true)});
            },
            [&](const DeleteTrainingRun& c) {
                emit(HistoryDeleted{id, history_for_io_lane().remove_training_run(c.run_id) ? 1 : 0});
            },
            [&](const ExportHistory& c) {
                emit(JobStarted{id, "export"});
                std::error_code ec;
                if (!c.options.overwrite && std::filesystem::exists(c.out, ec)) {
                    emit(FileExists{id, c.out});
                    return;
                }
                emit(ExportDone{id, export_with_progress(history_for_io_lane(), c, id, [&](Progress p) { emit(std::move(p)); })});
            },
            [&](const ListDirectory& c) { emit(list_directory(id, c.dir)); },
            [&](const WriteTextFile& c) {
                write_text_atomic(c.path, c.content);
                emit(FileWritten{id, c.path});
            },
            [&](const auto&) { throw Error(ErrorCode::Internal, "command routed to the wrong lane"); },
        },
        task.command);
}

}  // namespace t5s::detail
