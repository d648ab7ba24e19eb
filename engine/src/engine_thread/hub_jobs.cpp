// Model-store jobs: PullModel on the download lane (t5s/hub_pull.h), ListModels and DeleteModel on
// the io lane (t5s/hub.h). The UI sees only their events; it never touches the cache or the network.
#include <chrono>

#include "engine_thread/engine_impl.h"
#include "t5s/hub_pull.h"
#include "t5s/overload.h"
#include "t5s/process_memory.h"

namespace t5s::detail {

namespace {

std::filesystem::path cache_or_default(const std::filesystem::path& cache) { return cache.empty() ? hub::cache_dir() : cache; }

// Bytes of the regular files under `dir` (symlinks not followed: each blob counted once).
int64_t bytes_under(const std::filesystem::path& dir) {
    int64_t n = 0;
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (it->is_regular_file(e2) && !it->is_symlink(e2)) n += int64_t(it->file_size(e2));
    }
    return n;
}

}  // namespace

bool EngineImpl::run_hub_job(LaneTask& task) {
    Job& job = *task.job;
    const JobId id = job.id();
    if (const auto* c = std::get_if<PullModel>(&task.command)) {
        emit(JobStarted{id, "pull"});
        hub::PullOptions o;
        o.repo = c->repo;
        o.revision = c->revision.empty() ? "main" : c->revision;
        o.endpoint = c->endpoint;
        o.cache = cache_or_default(c->cache);
        const hub::PullResult r = hub::pull_model(
            o,
            [&](const hub::PullProgress& p) {
                job.set_progress(p.done_bytes, p.total_bytes);
                emit(ModelPullProgress{id, c->repo, p.phase, p.file, p.file_index, p.file_count, p.done_bytes, p.total_bytes,
                                       p.rate_bytes_per_s, p.eta_s});
            },
            [&] { return job.cancel_requested(); });
        emit(ModelPulled{id, r.repo, o.revision, r.commit, r.snapshot, r.kind, r.architecture, r.total_bytes, r.downloaded_bytes,
                         r.reused_bytes});
        return true;
    }
    if (const auto* c = std::get_if<ListModels>(&task.command)) {
        const std::filesystem::path cache = cache_or_default(c->cache);
        emit(ModelsListed{id, cache, hub::list_models(cache, c->folders), host_available_bytes()});
        return true;
    }
    if (const auto* c = std::get_if<DeleteModel>(&task.command)) {
        const auto ref = hub::parse_repo_ref(c->repo);
        if (!ref) throw Error(ErrorCode::InvalidArgument, "'" + c->repo + "' is not a repository id (ORG/NAME)");
        const std::filesystem::path dir = hub::repo_folder(cache_or_default(c->cache), ref->repo);
        std::error_code ec;
        if (!std::filesystem::is_directory(dir, ec)) throw Error(ErrorCode::FileNotFound, dir.string() + ": not in the cache");
        const int64_t bytes = bytes_under(dir);
        std::filesystem::remove_all(dir, ec);
        if (ec) throw Error(ErrorCode::Internal, dir.string() + ": cannot delete: " + ec.message());
        emit(ModelDeleted{id, ref->repo, bytes});
        return true;
    }
    return false;
}

}  // namespace t5s::detail
