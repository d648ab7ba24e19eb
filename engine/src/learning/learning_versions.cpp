// The learning loop's versions folder (t5s/learning.h): current.json, vNNNN/ adapter folders with
// their manifest.json, restore.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/file_io.h"
#include "t5s/atomic_file.h"
#include "t5s/error.h"
#include "t5s/learning.h"
#include "t5s/settings_fields.h"

namespace fs = std::filesystem;

namespace t5s {
namespace {

constexpr const char* kManifestKind = "t5studio-learning";

// "v0007" -> 7; 0 for any other name.
int64_t version_of_name(const std::string& name) {
    if (name.size() < 5 || name[0] != 'v') return 0;
    int64_t v = 0;
    for (size_t i = 1; i < name.size(); ++i) {
        if (name[i] < '0' || name[i] > '9') return 0;
        v = v * 10 + (name[i] - '0');
        if (v > (int64_t{1} << 40)) return 0;
    }
    return v;
}

}  // namespace

std::string adapter_version_dir(const std::string& adapter_dir, int64_t version) {
    if (version <= 0) return {};
    char name[32];
    std::snprintf(name, sizeof name, "v%04lld", static_cast<long long>(version));
    return (fs::path(adapter_dir) / name).string();
}

int64_t adapter_version_of_dir(const std::string& dir) {
    if (dir.empty()) return 0;
    std::error_code ec;
    const fs::path manifest = fs::path(dir) / "manifest.json";
    if (!fs::is_regular_file(manifest, ec)) return 0;
    const nlohmann::json j = nlohmann::json::parse(read_text(manifest), nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("kind", "") != kManifestKind) return 0;
    const auto it = j.find("version");
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

int64_t current_adapter_version(const std::string& adapter_dir) {
    const fs::path file = fs::path(adapter_dir) / "current.json";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return 0;
    const nlohmann::json j = nlohmann::json::parse(read_text(file), nullptr, false);
    const auto it = j.is_object() ? j.find("version") : j.end();
    if (j.is_discarded() || !j.is_object() || it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0)
        throw Error(ErrorCode::CorruptFile, file.string() + ": expected {\"version\": N}");
    const int64_t v = it->get<int64_t>();
    if (v > 0 && adapter_version_of_dir(adapter_version_dir(adapter_dir, v)) != v)
        throw Error(ErrorCode::CorruptFile,
                    file.string() + ": version " + std::to_string(v) + " has no adapter folder with a manifest");
    return v;
}

std::vector<AdapterVersion> list_adapter_versions(const std::string& adapter_dir) {
    std::vector<AdapterVersion> out;
    std::error_code ec;
    if (!fs::is_directory(adapter_dir, ec)) return out;
    const int64_t current = current_adapter_version(adapter_dir);
    for (const auto& entry : fs::directory_iterator(adapter_dir)) {
        const int64_t v = version_of_name(entry.path().filename().string());
        if (v <= 0 || !entry.is_directory() || adapter_version_of_dir(entry.path().string()) != v) continue;
        AdapterVersion a;
        a.version = v;
        a.dir = entry.path().string();
        a.manifest_json = read_text(entry.path() / "manifest.json");
        a.current = v == current;
        out.push_back(std::move(a));
    }
    std::sort(out.begin(), out.end(), [](const AdapterVersion& a, const AdapterVersion& b) { return a.version < b.version; });
    return out;
}

void restore_adapter_version(const std::string& adapter_dir, int64_t version) {
    constexpr FieldRange kVersions = at_least(0, ">= 0, where 0 is the base model");
    if (version < 0)
        throw Error(ErrorCode::InvalidArgument,
                    range_message(adapter_dir + ": version", kVersions, static_cast<double>(version)));
    if (version > 0 && adapter_version_of_dir(adapter_version_dir(adapter_dir, version)) != version)
        throw Error(ErrorCode::InvalidArgument, adapter_dir + ": no adapter version " + std::to_string(version));
    fs::create_directories(adapter_dir);
    write_file_atomic(fs::path(adapter_dir) / "current.json", nlohmann::json({{"version", version}}).dump() + "\n");
}

}  // namespace t5s
