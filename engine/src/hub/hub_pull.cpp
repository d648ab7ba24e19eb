// pull_model: metadata, architecture check, disk check, blobs, then the snapshot (t5s/hub_pull.h).
#include "t5s/hub_pull.h"

#include <sys/statvfs.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "hub/hub_fetch.h"
#include "hub/hub_http.h"
#include "hub/hub_paths.h"
#include "hub/hub_plan.h"
#include "t5s/env.h"
#include "t5s/hub.h"

namespace t5s::hub {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string read_token() {
    std::string token = read_string_from_env("HF_TOKEN");
    if (!token.empty()) return token;
    const std::string home = read_string_from_env("HF_HOME");
    const fs::path file = !home.empty() ? fs::path(home) / "token"
                                        : fs::path(read_string_from_env("HOME", ".")) / ".cache" / "huggingface" / "token";
    std::ifstream in(file);
    in >> token;
    return token;
}

struct RepoInfo {
    std::string commit;
    std::map<std::string, RepoFile> files;
};

RepoInfo parse_repo_info(const std::string& body, const std::string& what) {
    RepoInfo info;
    try {
        const json j = json::parse(body);
        info.commit = j.at("sha").get<std::string>();
        for (const json& s : j.at("siblings")) {
            RepoFile f;
            f.name = s.at("rfilename").get<std::string>();
            if (s.contains("size") && s["size"].is_number_integer()) f.size = s["size"].get<int64_t>();
            if (s.contains("lfs") && s["lfs"].is_object()) {
                f.sha256 = s["lfs"].value("sha256", std::string());
                if (!f.sha256.empty() && (f.sha256.size() != 64 || !is_blob_name(f.sha256)))
                    throw PullError(PullFailure::Server, what + ": the Hub gives '" + shown(f.name) + "' the SHA-256 '" +
                                                             shown(f.sha256) + "'; refused");
                if (s["lfs"].contains("size") && s["lfs"]["size"].is_number_integer()) f.size = s["lfs"]["size"].get<int64_t>();
            }
            info.files[f.name] = f;
        }
    } catch (const json::exception& e) {
        throw PullError(PullFailure::Server, what + ": the Hub's answer is not the expected JSON (" + shown(e.what()) + ")");
    }
    // The commit names the snapshot folder: 40 hex digits, nothing a path could be made of.
    if (!is_commit_hash(info.commit))
        throw PullError(PullFailure::Server, what + ": the Hub gave no commit hash ('" + shown(info.commit) + "')");
    return info;
}

void check_free_space(const fs::path& blobs, int64_t need, const std::string& repo) {
    struct statvfs st {};
    if (statvfs(blobs.c_str(), &st) != 0) return;
    const int64_t free_bytes = int64_t(st.f_bavail) * int64_t(st.f_frsize);
    const int64_t margin = int64_t(64) << 20;
    if (need + margin > free_bytes)
        throw PullError(PullFailure::DiskFull, repo + ": needs " + std::to_string((need + margin) >> 20) + " MiB free in " +
                                                   blobs.string() + ", " + std::to_string(free_bytes >> 20) + " MiB are");
}

// The relative link huggingface_hub writes: snapshots/C/a/b -> ../../../blobs/E
fs::path blob_link(const std::string& file, const std::string& etag) {
    fs::path up = "../..";
    for (char c : file)
        if (c == '/') up /= "..";
    return up / "blobs" / etag;
}

void write_snapshot(const fs::path& repo_dir, const PullResult& r, const std::map<std::string, std::string>& etags,
                    const std::string& revision) {
    std::error_code ec;
    // A new snapshot is built beside its final name and renamed into place whole; an existing one
    // (an earlier pull, or huggingface_hub's) gains links to verified blobs only.
    const bool fresh = !fs::exists(r.snapshot, ec);
    const fs::path dir = fresh ? r.snapshot.parent_path() / ("." + r.commit + ".tmp") : r.snapshot;
    if (fresh) fs::remove_all(dir, ec);
    for (const auto& [file, etag] : etags) {
        const fs::path link = path_inside(dir, file, r.repo + "/" + shown(file));
        fs::create_directories(link.parent_path(), ec);
        fs::remove(link, ec);
        fs::create_symlink(blob_link(file, etag), link, ec);
        if (ec) throw PullError(PullFailure::DiskFull, link.string() + ": cannot be linked (" + ec.message() + ")");
    }
    if (fresh) fs::rename(dir, r.snapshot, ec);
    if (ec) throw PullError(PullFailure::DiskFull, r.snapshot.string() + ": cannot be created (" + ec.message() + ")");
    if (revision == r.commit) return;
    const fs::path ref = path_inside(repo_dir / "refs", revision, r.repo + "@" + shown(revision)), tmp = ref.string() + ".tmp";
    fs::create_directories(ref.parent_path(), ec);
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << r.commit;
        if (!out) throw PullError(PullFailure::DiskFull, ref.string() + ": cannot be written");
    }
    fs::rename(tmp, ref, ec);
    if (ec) throw PullError(PullFailure::DiskFull, ref.string() + ": cannot be written (" + ec.message() + ")");
}

// The size to hold a download to: the file list's and the HEAD's must agree (a HEAD could
// otherwise announce more than the free-space check counted), and one of them must be known.
FileMeta checked_size(FileMeta meta, const RepoFile& listed, const std::string& what) {
    if (meta.size < 0) meta.size = listed.size;
    if (meta.size < 0) throw PullError(PullFailure::Server, what + ": the Hub gives no size; refused");
    if (listed.size >= 0 && listed.size != meta.size)
        throw PullError(PullFailure::Server, what + ": the file list says " + std::to_string(listed.size) +
                                                 " bytes, the download " + std::to_string(meta.size) + "; refused");
    return meta;
}

PullResult from_cache(const PullOptions& o, const fs::path& cache) {
    const auto snap = find_snapshot(cache, {o.repo, o.revision});
    if (!snap)
        throw PullError(PullFailure::Offline, o.repo + "@" + o.revision + ": HF_HUB_OFFLINE is set and it is not in the cache (" +
                                                  cache.string() + ")");
    PullResult r;
    r.repo = o.repo;
    r.commit = snap->filename().string();
    r.snapshot = *snap;
    r.from_cache_only = true;
    for (const StoredModel& m : list_models(cache, {}))
        if (m.dir == *snap) r.kind = m.kind, r.architecture = m.architecture, r.total_bytes = m.disk_bytes;
    return r;
}

class Progress {
public:
    explicit Progress(const std::function<void(const PullProgress&)>& cb) : cb_(cb), window_start_(clock::now()) {}
    void report(PullProgress p, bool force) {
        const auto now = clock::now();
        if (!cb_ || (!force && now - last_ < std::chrono::milliseconds(100))) return;
        last_ = now;
        p.rate_bytes_per_s = rate(now);
        p.eta_s = p.rate_bytes_per_s > 0 ? double(p.total_bytes - p.done_bytes) / p.rate_bytes_per_s : -1;
        cb_(p);
    }
    int64_t network_ = 0;

private:
    using clock = std::chrono::steady_clock;
    static double secs(clock::duration d) { return std::chrono::duration<double>(d).count(); }
    // Over a window of about 3 s (the previous window's rate while the new one is young), so that
    // the metadata phase and a stall long ago do not skew the ETA.
    double rate(clock::time_point now) {
        if (now - window_start_ >= std::chrono::seconds(3)) {
            previous_rate_ = double(network_ - window_bytes_) / secs(now - window_start_);
            window_start_ = now, window_bytes_ = network_;
        }
        const double w = secs(now - window_start_);
        if (w >= 0.5 || previous_rate_ <= 0) return w > 0 ? double(network_ - window_bytes_) / w : 0;
        return previous_rate_;
    }
    const std::function<void(const PullProgress&)>& cb_;
    clock::time_point window_start_, last_{};
    int64_t window_bytes_ = 0;
    double previous_rate_ = 0;
};

// HF_ENDPOINT or --endpoint, without trailing slashes; http(s) only.
std::string checked_endpoint(const PullOptions& o) {
    std::string endpoint = o.endpoint.empty() ? read_string_from_env("HF_ENDPOINT", "https://huggingface.co") : o.endpoint;
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    if (http_origin(endpoint).empty())
        throw PullError(PullFailure::BadRequest, "'" + shown(endpoint) + "': the Hub endpoint must be an http or https URL");
    return endpoint;
}

// Bytes the download still has to write: blobs already complete count nothing, partial ones their rest.
int64_t bytes_still_needed(const std::vector<std::string>& files, const RepoInfo& info, const fs::path& blobs) {
    std::error_code ec;
    int64_t need = 0;
    for (const std::string& f : files) {
        const RepoFile& rf = info.files.at(f);
        const bool have = !rf.sha256.empty() && fs::is_regular_file(blobs / rf.sha256, ec);
        const int64_t partial = rf.sha256.empty() ? 0 : int64_t(fs::file_size(blobs / (rf.sha256 + ".incomplete"), ec));
        if (!have) need += std::max<int64_t>(0, rf.size - (ec ? 0 : partial));
    }
    return need;
}

}  // namespace

PullResult pull_model(const PullOptions& o, const std::function<void(const PullProgress&)>& on_progress,
                      const std::function<bool()>& cancelled) {
    if (!parse_repo_ref(o.repo) || o.repo.find('@') != std::string::npos)
        throw PullError(PullFailure::BadRequest, shown(o.repo) + ": not a repository id (ORG/NAME)");
    // The revision names refs/REV in the cache: a branch or tag name, no way out of refs/.
    if (!parse_repo_ref(o.repo + "@" + o.revision) || !unsafe_path_reason(o.revision).empty())
        throw PullError(PullFailure::BadRequest, "'" + shown(o.revision) + "': not a revision (a branch, tag or commit)");
    const fs::path cache = o.cache.empty() ? cache_dir() : o.cache;
    if (o.offline || read_bool_from_env("HF_HUB_OFFLINE", false)) return from_cache(o, cache);
    const std::string endpoint = checked_endpoint(o);
    Fetcher net(o, endpoint, o.token.empty() ? read_token() : o.token, cancelled);
    Progress progress(on_progress);
    progress.report({"metadata", "", 0, 0, 0, 0, 0, -1}, true);

    const std::string what = o.repo + "@" + o.revision;
    const RepoInfo info =
        parse_repo_info(net.get_text(endpoint + "/api/models/" + o.repo + "/revision/" + o.revision + "?blobs=true", what), what);
    if (!info.files.count("config.json"))
        throw PullError(PullFailure::Unsupported, o.repo + ": no config.json in the repository; T5 Studio cannot load it");
    const bool has_modules = info.files.count("modules.json") > 0;
    const std::string config = net.get_text(resolve_url(endpoint, o.repo, info.commit, "config.json"), o.repo + "/config.json");
    const std::string modules =
        has_modules ? net.get_text(resolve_url(endpoint, o.repo, info.commit, "modules.json"), o.repo + "/modules.json") : "";
    const ModelKind kind = check_architecture(o.repo, config, has_modules);

    // Every name the server chose is checked before anything is written.
    check_module_paths(o.repo, modules);
    std::vector<std::string> names;
    for (const auto& [name, f] : info.files) names.push_back(name);
    const std::vector<std::string> files = select_files(names, modules);
    for (const std::string& f : files) check_relative_path(f, o.repo + ": the file list");
    bool has_weights = false;
    for (const std::string& f : files)
        has_weights |= f.find(".safetensors") != std::string::npos || f.find(".bin") != std::string::npos;
    if (!has_weights) throw PullError(PullFailure::Unsupported, o.repo + ": no model.safetensors or pytorch_model.bin to load");

    PullResult r;
    r.repo = o.repo, r.commit = info.commit, r.kind = kind.kind, r.architecture = kind.architecture, r.files = files;
    const fs::path repo_dir = repo_folder(cache, o.repo), blobs = repo_dir / "blobs";
    r.snapshot = repo_dir / "snapshots" / info.commit;
    std::error_code ec;
    fs::create_directories(blobs, ec);
    if (ec) throw PullError(PullFailure::DiskFull, blobs.string() + ": cannot be created (" + ec.message() + ")");
    for (const std::string& f : files) r.total_bytes += std::max<int64_t>(0, info.files.at(f).size);
    check_free_space(blobs, bytes_still_needed(files, info, blobs), o.repo);

    std::map<std::string, std::string> etags;
    int64_t done_before = 0;
    for (size_t i = 0; i < files.size(); ++i) {
        const std::string& f = files[i];
        PullProgress p{"download", f, int(i + 1), int(files.size()), done_before, r.total_bytes, 0, -1};
        const FileMeta meta = checked_size(net.head_file(o.repo, info.commit, f), info.files.at(f), o.repo + "/" + shown(f));
        const int64_t network_before = progress.network_;
        const int64_t got =
            net.fetch_blob(meta, blobs, shown(f), info.files.at(f).sha256, [&](int64_t file_bytes, int64_t network) {
                p.done_bytes = done_before + file_bytes;
                progress.network_ = network_before + network;
                progress.report(p, false);
            });
        progress.network_ = network_before + got;
        r.downloaded_bytes += got;
        etags[f] = meta.etag;
        done_before += int64_t(fs::file_size(blobs / meta.etag, ec));
        p.done_bytes = done_before;
        progress.report(p, true);
    }
    r.reused_bytes = std::max<int64_t>(0, done_before - r.downloaded_bytes);
    write_snapshot(repo_dir, r, etags, o.revision);
    progress.report({"done", "", int(files.size()), int(files.size()), done_before, r.total_bytes, 0, 0}, true);
    return r;
}

}  // namespace t5s::hub
