#include "controllers/model_store_controller.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "t5s/hub.h"

namespace t5s::ui {

namespace {

std::string mib(int64_t bytes) {  // KiB below 1 MiB, so a small file's progress still moves
    char b[32];
    if (bytes < (int64_t(1) << 20)) std::snprintf(b, sizeof b, "%.0f KiB", double(bytes) / 1024.0);
    else std::snprintf(b, sizeof b, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
    return b;
}

// The same folder whatever its spelling ("a/b/" and "a/./b" are "a/b").
bool same_dir(const std::filesystem::path& a, const std::filesystem::path& b) {
    auto norm = [](const std::filesystem::path& p) {
        std::filesystem::path n = p.lexically_normal();
        return n.has_filename() ? n : n.parent_path();
    };
    return norm(a) == norm(b);
}

std::string ref_text(const std::string& repo, const std::string& revision) {
    return revision.empty() || revision == "main" ? repo : repo + "@" + revision;
}

}  // namespace

std::vector<CatalogueEntry> parse_catalogue(const std::string& json_text, std::string* error) {
    std::vector<CatalogueEntry> out;
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(json_text);
    } catch (const std::exception& e) {
        if (error) *error = std::string("model_catalogue.json: not JSON: ") + e.what();
        return out;
    }
    if (!j.is_object() || !j.contains("models") || !j["models"].is_array()) {
        if (error) *error = "model_catalogue.json: no \"models\" list";
        return out;
    }
    std::string skipped;
    for (const auto& m : j["models"]) {
        const std::string repo = m.is_object() ? m.value("repo", "") : "";
        if (!hub::parse_repo_ref(repo)) {
            skipped += (skipped.empty() ? "" : ", ") + (repo.empty() ? std::string("(no repo)") : repo);
            continue;
        }
        CatalogueEntry e;
        e.repo = repo;
        e.kind = m.value("kind", "generation");
        e.task_prefix = m.value("task_prefix", "");
        e.languages = m.value("languages", "");
        e.parameters = m.value("parameters", "");
        e.licence = m.value("licence", "");
        e.good_for = m.value("good_for", "");
        out.push_back(std::move(e));
    }
    if (error) *error = skipped.empty() ? "" : "model_catalogue.json: entries without a valid repo skipped: " + skipped;
    return out;
}

std::array<MemoryFit, 3> memory_fits(int64_t parameters, int64_t available_bytes) {
    std::array<MemoryFit, 3> out{MemoryFit{"fp32"}, MemoryFit{"bf16"}, MemoryFit{"int8"}};
    const int bytes_per_weight[3] = {4, 2, 1};
    for (int i = 0; i < 3; ++i) {
        if (parameters <= 0) {
            out[i].label = "unknown";
            continue;
        }
        out[i].bytes = hub::estimated_run_bytes(parameters, bytes_per_weight[i]);
        out[i].label = hub::fit_label(out[i].bytes, available_bytes);
    }
    return out;
}

std::string download_progress_text(const DownloadVm& d) {
    if (d.total <= 0) return d.phase == DownloadPhase::Running ? "reading the file list" : "partial file kept in the cache";
    std::string t = mib(d.done) + " / " + (d.total > 0 ? mib(d.total) : std::string("?"));
    if (d.phase != DownloadPhase::Running) return t;
    t += "  " + mib(int64_t(d.rate)) + "/s";
    char eta[32] = "?";
    if (d.eta_s >= 0) std::snprintf(eta, sizeof eta, "%.0f s", d.eta_s);
    return t + "  ETA " + eta;
}

void ModelStoreController::open_models(int tab) {
    s.models.open = true;
    s.models.focus = true;
    if (tab >= 0) s.models.select_tab = tab;
    if (s.models.stale && s.models.list_job == 0) refresh();
}

void ModelStoreController::refresh() {
    auto& m = s.models;
    ListModels cmd;
    cmd.cache = m.cache;
    if (!m.models_folder.empty()) cmd.folders.emplace_back(m.models_folder);
    for (const std::string& r : s.model.recent) cmd.folders.emplace_back(r);
    m.stale = false;
    m.list_job = submit(std::move(cmd));
}

bool ModelStoreController::start_download(const std::string& text) {
    auto& m = s.models;
    const auto ref = hub::parse_repo_ref(text);
    if (!ref || ref->repo.find('/') == std::string::npos) {
        m.error = "'" + text + "' is not a repository id: type ORG/NAME or ORG/NAME@REVISION";
        return false;
    }
    DownloadVm* row = nullptr;
    for (auto& d : m.downloads)
        if (d.repo == ref->repo && d.revision == ref->revision) row = &d;
    if (row && row->phase == DownloadPhase::Running) {
        m.error = ref_text(ref->repo, ref->revision) + " is already downloading";
        return false;
    }
    PullModel cmd;
    cmd.repo = ref->repo;
    cmd.revision = ref->revision;
    cmd.cache = m.cache;
    const JobId job = submit(std::move(cmd));
    if (!job) return false;
    if (!row) row = &m.downloads.emplace_back();
    *row = DownloadVm{};
    row->repo = ref->repo;
    row->revision = ref->revision;
    row->job = job;
    row->step = "metadata";
    m.error.clear();
    s.job_kind[job] = "downloading " + ref->repo;
    ctx.log(false, "downloading " + ref_text(ref->repo, ref->revision));
    return true;
}

void ModelStoreController::cancel_download(size_t index) {
    auto& d = s.models.downloads;
    if (index < d.size() && d[index].job) ctx.send(Cancel{d[index].job});
}

void ModelStoreController::delete_model(const std::string& repo) {
    auto& m = s.models;
    m.confirm_delete.clear();
    DeleteModel cmd;
    cmd.cache = m.cache;
    cmd.repo = repo;
    m.delete_job = submit(std::move(cmd));
}

void ModelStoreController::open_dir(const std::string& dir, const std::string& kind) {
    if (kind == "encoder") {
        s.model.embedder_input = dir;
        model_.load_embedder();
    } else {
        model_.load_model(dir);
    }
    s.models.status = "opening " + dir;
}

void ModelStoreController::open_local(size_t index) {
    if (index < s.models.local.size()) open_dir(s.models.local[index].dir.string(), s.models.local[index].kind);
}

void ModelStoreController::open_download(size_t index) {
    const auto& d = s.models.downloads;
    if (index < d.size() && d[index].phase == DownloadPhase::Done) open_dir(d[index].snapshot, d[index].kind);
}

DownloadVm* ModelStoreController::download_of(JobId job) {
    for (auto& d : s.models.downloads)
        if (job != 0 && d.job == job) return &d;
    return nullptr;
}

void ModelStoreController::apply(const Event& event) {
    auto& m = s.models;
    if (const auto* p = std::get_if<ModelPullProgress>(&event)) {
        if (DownloadVm* d = download_of(p->job)) {
            d->step = p->phase;
            d->file = p->file;
            d->done = p->done_bytes;
            d->total = p->total_bytes;
            d->rate = p->rate_bytes_per_s;
            d->eta_s = p->eta_s;
        }
    } else if (const auto* r = std::get_if<ModelPulled>(&event)) {
        if (DownloadVm* d = download_of(r->job)) {
            d->job = 0;
            d->phase = DownloadPhase::Done;
            d->done = d->total = r->total_bytes;
            d->snapshot = r->snapshot.string();
            d->kind = r->kind;
            for (const auto& c : m.catalogue)  // the catalogue's task prefix for this model
                if (c.repo == r->repo && !c.task_prefix.empty()) s.model.task_prefix[d->snapshot] = c.task_prefix;
        }
        ctx.log(false, r->repo + "@" + r->commit.substr(0, 8) + ": " + mib(r->downloaded_bytes) + " downloaded, " +
                           mib(r->reused_bytes) + " already here -> " + r->snapshot.string());
        refresh();
    } else if (const auto* l = std::get_if<ModelsListed>(&event)) {
        if (l->job != m.list_job) return;
        m.list_job = 0;
        m.listed_cache = l->cache.string();
        m.available_bytes = l->available_bytes;
        m.local.clear();
        for (const auto& row : l->models) {  // a cache snapshot also among the recent folders: once
            bool dup = false;
            for (const auto& have : m.local) dup = dup || same_dir(have.dir, row.dir);
            if (!dup) m.local.push_back(row);
        }
        if (m.selected >= int(m.local.size())) m.selected = -1;
    } else if (const auto* del = std::get_if<ModelDeleted>(&event)) {
        if (del->job == m.delete_job) m.delete_job = 0;
        m.status = "deleted " + del->repo + " from the cache (" + mib(del->bytes_freed) + " freed)";
        ctx.log(false, m.status);
        refresh();
    }
}

void ModelStoreController::failed(const JobFailed& e) {
    auto& m = s.models;
    const std::string msg = ctx.log_failure(e);
    if (DownloadVm* d = download_of(e.job)) {
        d->job = 0;
        d->phase = e.code == ErrorCode::Cancelled ? DownloadPhase::Cancelled : DownloadPhase::Failed;
        d->error = e.code == ErrorCode::Cancelled ? "cancelled; the partial file stays: Resume continues it" : msg;
    } else if (e.job == m.list_job) {
        m.list_job = 0;
        m.error = msg;
    } else if (e.job == m.delete_job) {
        m.delete_job = 0;
        m.error = msg;
    }
}

void ModelStoreController::engine_died() {
    auto& m = s.models;
    m.list_job = m.delete_job = 0;
    m.stale = true;
    for (auto& d : m.downloads)
        if (d.phase == DownloadPhase::Running) {
            d.job = 0;
            d.phase = DownloadPhase::Interrupted;
            d.error = "the engine stopped; Resume continues from the partial file";
        }
}

}  // namespace t5s::ui
