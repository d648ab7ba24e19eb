// The Hugging Face cache layout: finding the cache, naming repositories, resolving a revision to a
// snapshot folder, and `--model ORG/NAME[@REV]` (t5s/hub.h).
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "t5s/env.h"
#include "t5s/error.h"
#include "t5s/hub.h"

namespace t5s::hub {

namespace fs = std::filesystem;

namespace {

bool repo_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

bool valid_part(const std::string& s) {
    if (s.empty() || s.size() > 96 || s == "." || s == ".." || s.front() == '-' || s.front() == '.') return false;
    if (s.find("--") != std::string::npos || s.find("..") != std::string::npos) return false;
    for (char c : s)
        if (!repo_char(c)) return false;
    return true;
}

bool valid_revision(const std::string& r) {
    if (r.empty() || r.size() > 255 || r.find("..") != std::string::npos || r.front() == '/' || r.back() == '/') return false;
    for (char c : r)
        if (!repo_char(c) && c != '/') return false;
    return true;
}

std::string read_first_line(const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    return line;
}

bool is_commit_hash(const std::string& s) {
    if (s.size() != 40) return false;
    for (char c : s)
        if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

}  // namespace

std::optional<RepoRef> parse_repo_ref(const std::string& text) {
    RepoRef ref;
    std::string id = text;
    const size_t at = text.find('@');
    if (at != std::string::npos) {
        id = text.substr(0, at);
        ref.revision = text.substr(at + 1);
        if (!valid_revision(ref.revision)) return std::nullopt;
    }
    const size_t slash = id.find('/');
    if (slash == std::string::npos) {
        if (!valid_part(id)) return std::nullopt;
    } else if (!valid_part(id.substr(0, slash)) || !valid_part(id.substr(slash + 1))) {
        return std::nullopt;
    }
    ref.repo = id;
    return ref;
}

fs::path cache_dir() {
    const std::string hub_cache = read_string_from_env("HF_HUB_CACHE");
    if (!hub_cache.empty()) return hub_cache;
    const std::string hf_home = read_string_from_env("HF_HOME");
    if (!hf_home.empty()) return fs::path(hf_home) / "hub";
    const std::string xdg = read_string_from_env("XDG_CACHE_HOME");
    if (!xdg.empty()) return fs::path(xdg) / "huggingface" / "hub";
    return fs::path(read_string_from_env("HOME", ".")) / ".cache" / "huggingface" / "hub";
}

fs::path repo_folder(const fs::path& cache, const std::string& repo) {
    std::string name = "models--";
    for (char c : repo) {
        if (c == '/') name += "--";
        else name += c;
    }
    return cache / name;
}

std::optional<fs::path> find_snapshot(const fs::path& cache, const RepoRef& ref) {
    const fs::path repo = repo_folder(cache, ref.repo);
    std::error_code ec;
    const fs::path refs_file = repo / "refs" / ref.revision;
    if (fs::is_regular_file(refs_file, ec)) {
        const fs::path snap = repo / "snapshots" / read_first_line(refs_file);
        if (fs::is_directory(snap, ec)) return snap;
    }
    if (is_commit_hash(ref.revision) && fs::is_directory(repo / "snapshots" / ref.revision, ec))
        return repo / "snapshots" / ref.revision;
    if (ref.revision == "main" && fs::is_directory(repo / "snapshots", ec)) {
        std::optional<fs::path> only;
        int count = 0;
        for (const auto& e : fs::directory_iterator(repo / "snapshots", ec)) {
            if (!e.is_directory(ec) || e.path().filename().string().front() == '.') continue;  // a snapshot being built
            only = e.path();
            ++count;
        }
        if (count == 1) return only;
    }
    return std::nullopt;
}

std::optional<AdapterBase> adapter_base(const fs::path& dir, const fs::path& cache) {
    std::error_code ec;
    const fs::path file = dir / "adapter_config.json";
    if (!fs::is_directory(dir, ec) || !fs::is_regular_file(file, ec) || fs::exists(dir / "config.json", ec)) return std::nullopt;
    constexpr std::uintmax_t kMaxBytes = 1 << 20;  // PEFT writes a few hundred bytes
    if (fs::file_size(file, ec) > kMaxBytes) throw Error(ErrorCode::CorruptFile, file.string() + ": larger than 1 MiB");
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) throw Error(ErrorCode::CorruptFile, file.string() + ": not a JSON object");
    AdapterBase base;
    const auto it = j.find("base_model_name_or_path");
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) return base;
    base.name = it->get<std::string>();
    std::vector<fs::path> places = {base.name};  // as written: absolute, or relative to where the run starts
    if (fs::path(base.name).is_relative()) places.push_back(dir / base.name);  // moved together with its base
    for (const fs::path& p : places)
        if (fs::is_directory(p, ec)) {
            base.dir = p;
            return base;
        }
    if (const std::optional<RepoRef> ref = parse_repo_ref(base.name)) base.dir = find_snapshot(cache, *ref);
    return base;
}

std::string display_name(const fs::path& dir) {
    const fs::path d = dir.has_filename() ? dir : dir.parent_path();
    const std::string repo = d.parent_path().parent_path().filename().string();
    if (d.parent_path().filename() == "snapshots" && repo.rfind("models--", 0) == 0) {
        std::string name = repo.substr(8);
        if (const size_t sep = name.find("--"); sep != std::string::npos) name.replace(sep, 2, "/");
        return name;
    }
    return d.filename().string();
}

fs::path resolve_model(const std::string& text) {
    std::error_code ec;
    if (text.empty() || fs::exists(text, ec)) return text;
    // Not a repository id: the loader reports the missing folder in its own words.
    const std::optional<RepoRef> ref = parse_repo_ref(text);
    if (!ref) return text;
    const fs::path cache = cache_dir();
    if (auto snap = find_snapshot(cache, *ref)) return *snap;
    if (ref->repo.find('/') == std::string::npos) return text;  // a bare NAME is more likely a folder than a legacy repo
    throw Error(ErrorCode::FileNotFound, text + ": not a folder, and not in the Hugging Face cache (" + cache.string() +
                                             "); download it with: t5studio pull " + text);
}

}  // namespace t5s::hub
