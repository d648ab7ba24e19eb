// Run folders: what a run writes in its --out folder, whether a new run may start there, and the
// identity that tells a resumed run from a different one.
#include "t5s/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/file_io.h"
#include "trainer/checkpoint.h"

namespace t5s {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_checkpoint_name(const std::string& name) {
    return starts_with(name, "checkpoint-") && name.size() > 11 && name.find_first_not_of("0123456789", 11) == std::string::npos;
}

// Entries only a training run writes: its checkpoints, final model, log and the temporary folders
// of a save (publish_dir, prune, the vocabulary trainer, a cleared run).
bool is_run_marker(const std::string& name) {
    return is_checkpoint_name(name) || name == "final" || name == "merged" || name == "train_log.jsonl" ||
           starts_with(name, ".tmp-") || starts_with(name, ".old-") || starts_with(name, ".del-") ||
           starts_with(name, ".spiece-tmp-");
}

// Also the run's, but found in other folders too (a base model's spiece.model).
bool is_run_entry(const std::string& name) {
    return is_run_marker(name) || name == "history-pairs.jsonl" || name == "spiece.model";
}

std::string listed(const std::vector<std::string>& names) {
    std::string out;
    for (size_t i = 0; i < names.size() && i < 4; ++i) out += (i ? ", " : "") + names[i];
    if (names.size() > 4) out += ", and " + std::to_string(names.size() - 4) + " more";
    return out;
}

std::string absolute_path(const std::string& p) {
    if (p.empty()) return p;
    std::error_code ec;
    fs::path abs = fs::weakly_canonical(fs::absolute(p, ec), ec);
    return ec ? fs::absolute(p).lexically_normal().string() : abs.string();
}

// The fields of the identity: the JSON key, the flag that sets it, its value. What a resumed run
// may change (steps, epochs, learning rate and schedule, batch size, cadence, device) is not here.
struct IdentityField {
    const char* key;
    const char* flag;
    json value;
};

std::vector<IdentityField> identity_fields(const TrainingOptions& o) {
    json extra = json::array();
    for (const auto& f : o.extra_data_files) extra.push_back(absolute_path(f));
    std::vector<IdentityField> fields = {
        {"model_dir", "--model", absolute_path(o.model_dir)},
        {"init_config", "--init-config", absolute_path(o.init_config)},
        {"data_file", "--data", absolute_path(o.data_file)},
        {"extra_data_files", "--extra-data", extra},
        {"eval_file", "--eval-data", absolute_path(o.eval_file)},
        {"eval_split", "--eval-split", o.eval_split},
        {"source_prefix", "--source-prefix", o.data.source_prefix},
        {"source_field", "--source-field", o.data.source_field},
        {"target_field", "--target-field", o.data.target_field},
        {"no_header", "--no-header", o.data.no_header},
        {"max_source_len", "--max-source-len", o.max_source_len},
        {"max_target_len", "--max-target-len", o.max_target_len},
        {"optimizer", "--optimizer", to_string(o.optimizer)},
        {"seed", "--seed", o.seed},
        {"lora", "--lora", o.lora || !o.adapter_dir.empty()},
        {"adapter_dir", "--adapter", absolute_path(o.adapter_dir)},
    };
    if (!o.init_config.empty()) fields.push_back({"vocab_size", "--vocab-size", o.vocab_size});
    if (o.lora || !o.adapter_dir.empty()) {
        fields.push_back({"lora_r", "--lora-r", o.lora_r});
        fields.push_back({"lora_alpha", "--lora-alpha", o.lora_alpha});
        fields.push_back({"lora_targets", "--lora-targets", o.lora_targets});
        fields.push_back({"lora_rslora", "--lora-rslora", o.lora_rslora});
    }
    return fields;
}

std::string shown(const json& v) {
    if (v.is_string()) return "'" + v.get<std::string>() + "'";
    if (v.is_array()) {
        std::string out;
        for (const auto& e : v) out += (out.empty() ? "" : ", ") + shown(e);
        return "[" + out + "]";
    }
    return v.dump();
}

// Renames `path` aside, then deletes it: a crash in between leaves a `.del-` folder (itself a
// marker), never a half-deleted checkpoint-N that --resume could pick.
void remove_entry(const fs::path& dir, const std::string& name) {
    std::error_code ec;
    fs::path doomed = dir / name;
    if (!starts_with(name, ".del-")) {
        const fs::path aside = dir / (".del-" + name + "-" + std::to_string(::getpid()));
        fs::rename(doomed, aside, ec);
        if (!ec) doomed = aside;
    }
    fs::remove_all(doomed, ec);
    if (ec) throw Error(ErrorCode::InvalidArgument, (dir / name).string() + ": cannot remove: " + ec.message());
}

// What the run writes in its folder and what is there: checkpoint-N/, final/, merged/,
// train_log.jsonl, history-pairs.jsonl, spiece.model (a from-scratch run's vocabulary) and the
// temporary folders of a killed save. `markers` are the entries that only a run writes (a base
// model folder's spiece.model is not one).
struct RunFolderContents {
    bool empty = true;                     // no entries at all
    std::vector<std::string> markers;      // entries that show a run was here (sorted)
    std::vector<std::string> run_entries;  // everything a run writes that is there (markers included)
    bool has_checkpoint = false;           // a complete checkpoint-N (with trainer_state.json)
    bool has_final = false;
};

RunFolderContents inspect_run_folder(const std::string& out_dir) {
    RunFolderContents c;
    std::error_code ec;
    if (!fs::exists(out_dir, ec)) return c;
    if (!fs::is_directory(out_dir, ec)) throw RunFolderRefused(out_dir + ": exists and is not a folder; give --out a folder");
    for (const auto& e : fs::directory_iterator(out_dir, ec)) {
        c.empty = false;
        const std::string name = e.path().filename().string();
        if (!is_run_entry(name)) continue;
        c.run_entries.push_back(name);
        if (is_run_marker(name)) c.markers.push_back(name);
        if (name == "final") c.has_final = true;
    }
    if (ec) throw Error(ErrorCode::InvalidArgument, out_dir + ": cannot list the folder: " + ec.message());
    std::sort(c.markers.begin(), c.markers.end());
    std::sort(c.run_entries.begin(), c.run_entries.end());
    c.has_checkpoint = !list_checkpoints(out_dir).empty();
    return c;
}

}  // namespace

RunFolderLock::RunFolderLock(const std::string& dir) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) return;  // a missing folder: nothing writes there yet
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
        throw RunFolderRefused(dir +
                               ": another training run is writing to it right now; wait for it to finish, or give another --out");
}

RunFolderLock::~RunFolderLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

std::vector<std::string> prepare_run_folder(const std::string& out_dir, RunFolderMode mode) {
    const RunFolderLock lock(out_dir);  // held while the old run's entries are removed
    const RunFolderContents c = inspect_run_folder(out_dir);
    switch (mode) {
        case RunFolderMode::Fresh:
            if (!c.markers.empty())
                throw RunFolderRefused(
                    out_dir + " already holds a training run (" + listed(c.markers) +
                    "): give --resume to continue it, --overwrite to clear it and start over, or another --out");
            return {};
        case RunFolderMode::Resume:
            if (!c.has_checkpoint && c.has_final)
                throw RunFolderRefused(out_dir +
                                       " holds a final model (final/) but no checkpoint-N to resume from: give --overwrite to "
                                       "start over, or another --out");
            return {};
        case RunFolderMode::Overwrite:
            if (!c.empty && c.markers.empty())
                throw RunFolderRefused(out_dir +
                                       " is not empty and holds no training run (no checkpoint-N/, final/ or train_log.jsonl): "
                                       "--overwrite clears only a run's folder; give an empty or new --out");
            for (const auto& name : c.run_entries) remove_entry(out_dir, name);
            if (!c.run_entries.empty()) fsync_dir(out_dir);
            return c.run_entries;
    }
    return {};
}

std::string run_identity_json(const TrainingOptions& options) {
    json j = json::object();
    for (const auto& f : identity_fields(options)) j[f.key] = f.value;
    return j.dump();
}

std::string newest_checkpoint(const std::string& out_dir) {
    const auto cks = list_checkpoints(out_dir);
    return cks.empty() ? "" : cks.back().second.string();
}

bool check_resume_identity(const TrainingOptions& options, const std::string& checkpoint_dir) {
    const fs::path state_file = fs::path(checkpoint_dir) / "trainer_state.json";
    const json state = json::parse(read_text(state_file), nullptr, false);
    if (state.is_discarded()) throw Error(ErrorCode::CorruptFile, state_file.string() + ": not valid JSON");
    const auto saved = state.find("run");
    if (saved == state.end() || !saved->is_object()) return false;
    std::string differences;
    for (const auto& f : identity_fields(options)) {
        const auto was = saved->find(f.key);
        if (was == saved->end() || *was == f.value) continue;  // a field newer than the checkpoint: not compared
        differences += std::string(differences.empty() ? "" : "; ") + f.flag + " was " + shown(*was) + ", now " + shown(f.value);
    }
    if (!differences.empty())
        throw RunFolderRefused("--resume: " + checkpoint_dir + " belongs to a different run: " + differences +
                               " (give that run's settings, --overwrite to start over, or another --out)");
    return true;
}

}  // namespace t5s
