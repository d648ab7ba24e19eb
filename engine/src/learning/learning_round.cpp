// One round of the learning loop (t5s/learning.h): pairs from the history, a held-out slice by a
// hash of each pair, the LoRA trainer on new + replayed pairs, adoption only on a lower held-out loss.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "base/file_io.h"
#include "t5s/atomic_file.h"
#include "t5s/error.h"
#include "t5s/history_store.h"
#include "t5s/learning.h"
#include "t5s/model.h"
#include "t5s/settings_json.h"
#include "t5s/training_fields.h"
#include "t5s/training_record.h"
#include "t5s/utc_time.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace t5s {
namespace {

std::string pair_key(const TextPair& p) {
    uint64_t h = 0xcbf29ce484222325ULL;
    auto mix = [&h](const std::string& s) {
        for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    };
    mix(p.source), mix(std::string("\x1f")), mix(p.target);
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

// One round at a time per versions folder (serve and a cron'd `learn` may share it): an flock on
// DIR/.lock, released when the process ends whatever happens.
struct RoundLock {
    int fd = -1;
    explicit RoundLock(const fs::path& dir) {
        const std::string path = (dir / ".lock").string();
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) throw Error(ErrorCode::InvalidArgument, path + ": cannot open the learning lock file");
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            ::close(fd);
            throw Error(ErrorCode::InvalidArgument, dir.string() + ": another learning round is running on this folder");
        }
    }
    ~RoundLock() {
        if (fd >= 0) ::close(fd);
    }
    RoundLock(const RoundLock&) = delete;
    RoundLock& operator=(const RoundLock&) = delete;
};

// Removes the round's temp folder whatever happens.
struct TempDir {
    fs::path path;
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

int64_t count_negatives(HistoryStore& store, const fs::path& tmp) {
    ExportOptions o;
    o.overwrite = true;
    const std::string path = (tmp / "all-decisions.jsonl").string();
    store.export_to(path, o);
    std::ifstream in(path);
    int64_t n = 0;
    for (std::string line; std::getline(in, line);) {
        const json j = json::parse(line, nullptr, false);
        if (j.is_object() && j.value("state", "") == "rejected") ++n;
    }
    return n;
}

std::set<std::string> trained_keys(const std::string& version_dir) {
    std::set<std::string> keys;
    if (version_dir.empty()) return keys;
    const json j = json::parse(read_text(fs::path(version_dir) / "manifest.json"), nullptr, false);
    if (j.is_object() && j.contains("trained_pairs") && j["trained_pairs"].is_array())
        for (const auto& k : j["trained_pairs"])
            if (k.is_string()) keys.insert(k.get<std::string>());
    return keys;
}

int64_t next_round(const std::string& adapter_dir) {
    int64_t last = 0;
    for (const auto& v : list_adapter_versions(adapter_dir)) {
        const json j = json::parse(v.manifest_json, nullptr, false);
        last = std::max({last, v.version, j.is_object() ? j.value("round", int64_t{0}) : int64_t{0}});
    }
    std::error_code ec;
    const fs::path rejected = fs::path(adapter_dir) / "rejected";
    if (fs::is_directory(rejected, ec))
        for (const auto& e : fs::directory_iterator(rejected)) {
            const std::string name = e.path().stem().string();
            if (name.size() > 1 && name[0] == 'r') last = std::max(last, static_cast<int64_t>(std::atoll(name.c_str() + 1)));
        }
    return last + 1;
}

void write_pairs(const fs::path& file, const std::vector<TextPair>& pairs, const std::string& prefix) {
    std::ofstream out(file, std::ios::binary);
    for (const auto& p : pairs) out << json({{"source", prefix + p.source}, {"target", p.target}}).dump() << "\n";
    if (!out) throw Error(ErrorCode::Internal, file.string() + ": cannot write the round's training pairs");
}

struct Split {
    std::vector<TextPair> heldout, fresh, replay;
    int64_t total = 0;
};

Split split_pairs(const std::vector<TextPair>& pairs, const std::set<std::string>& trained, const LearningOptions& o) {
    Split s;
    s.total = static_cast<int64_t>(pairs.size());
    std::vector<TextPair> older;
    std::string smallest;
    for (const auto& p : pairs) {
        const std::string k = pair_key(p);
        if (smallest.empty() || k < smallest) smallest = k;
    }
    const int every = std::max(2, o.holdout_every);
    for (const auto& p : pairs) {
        const std::string k = pair_key(p);
        const bool hold = std::stoull(k.substr(8), nullptr, 16) % static_cast<uint64_t>(every) == 0;
        if (hold && static_cast<int64_t>(s.heldout.size()) < o.max_holdout) s.heldout.push_back(p);
        else if (trained.count(k)) older.push_back(p);
        else s.fresh.push_back(p);
    }
    if (s.heldout.empty() && pairs.size() >= 2) {  // a small set: hold out the pair with the smallest key
        auto is_smallest = [&](const TextPair& p) { return pair_key(p) == smallest; };
        for (auto* v : {&s.fresh, &older}) {
            auto it = std::find_if(v->begin(), v->end(), is_smallest);
            if (it != v->end()) {
                s.heldout.push_back(*it);
                v->erase(it);
                break;
            }
        }
    }
    std::mt19937_64 rng(o.seed);
    std::shuffle(older.begin(), older.end(), rng);
    if (static_cast<int64_t>(older.size()) > o.replay_pairs)
        older.resize(static_cast<size_t>(std::max<int64_t>(0, o.replay_pairs)));
    s.replay = std::move(older);
    return s;
}

TrainingOptions round_training_options(const LearningOptions& o, const fs::path& tmp, const std::string& current_dir,
                                       int64_t pairs, int64_t round) {
    TrainingOptions t;
    t.model_dir = o.model_dir;
    t.data_file = (tmp / "train.jsonl").string();
    t.eval_split = 0;
    t.out_dir = (tmp / "run").string();
    t.batch_size = o.batch_size;
    const auto per_epoch = static_cast<double>((pairs + o.batch_size - 1) / o.batch_size);
    t.steps = std::max<int64_t>(1, std::min<int64_t>(o.max_steps, static_cast<int64_t>(std::ceil(o.epochs * per_epoch))));
    t.lr = o.lr;
    t.schedule = ScheduleKind::Constant;
    t.max_time_s = o.max_time_s;
    t.threads = o.threads;
    t.device = o.device;
    t.seed = o.seed + static_cast<uint64_t>(round);
    t.sample_count = 0;
    t.keep_last = 1;
    t.lora = true;
    t.adapter_dir = current_dir;
    t.lora_r = o.lora_r;
    t.lora_alpha = o.lora_alpha;
    t.lora_targets = o.lora_targets;
    return t;
}

// What the round trained with: every learning option (from its field table) and the adapter's own
// shape (a round that continues a version keeps that version's r, alpha and targets, whatever the
// options say).
json round_settings(const LearningOptions& o, const std::string& adapter_dir) {
    json s = settings_to_json(learning_fields(), o);
    const fs::path file = fs::path(adapter_dir) / "adapter_config.json";
    std::error_code ec;
    const json cfg = fs::is_regular_file(file, ec) ? json::parse(read_text(file), nullptr, false) : json();
    if (cfg.is_object()) {
        if (cfg.contains("r")) s["lora_r"] = cfg["r"];
        if (cfg.contains("lora_alpha")) s["lora_alpha"] = cfg["lora_alpha"];
        if (cfg.contains("target_modules")) s["lora_targets"] = cfg["target_modules"];
    }
    return s;
}

json round_manifest(const LearningOptions& o, const LearningRoundResult& r, const TrainingResult& tr,
                    const std::vector<double>& train_losses) {
    json curve = json::array();  // 4 decimals: a curve, not a checkpoint
    for (double l : train_losses) curve.push_back(std::round(l * 1e4) / 1e4);
    return {{"kind", "t5studio-learning"},
            {"round", r.round},
            {"base_model", o.model_dir},
            {"previous_version", r.previous_version},
            {"created_at", utc_iso8601(unix_ms_now(), /*milliseconds=*/false)},
            {"pairs_total", r.pairs_total},
            {"pairs_new", r.pairs_new},
            {"pairs_replay", r.pairs_replay},
            {"pairs_heldout", r.pairs_heldout},
            {"negatives", r.negatives},
            {"loss_before", r.loss_before},
            {"loss_after", r.loss_after},
            {"steps", r.steps},
            {"stop_reason", to_string(tr.stop_reason)},
            {"elapsed_s", r.elapsed_s},
            {"train_losses", curve},
            {"settings", round_settings(o, tr.final_model_dir)}};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string LearningRoundResult::to_json() const {
    return json({{"status", status},
                 {"why", why},
                 {"version", version},
                 {"previous_version", previous_version},
                 {"round", round},
                 {"pairs_total", pairs_total},
                 {"pairs_new", pairs_new},
                 {"pairs_replay", pairs_replay},
                 {"pairs_heldout", pairs_heldout},
                 {"negatives", negatives},
                 {"loss_before", loss_before},
                 {"loss_after", loss_after},
                 {"steps", steps},
                 {"elapsed_s", elapsed_s},
                 {"adapter", adapter}})
        .dump();
}

double heldout_loss(const std::string& model_dir, const std::string& adapter, const std::vector<TextPair>& pairs, int threads) {
    if (pairs.empty()) throw Error(ErrorCode::InvalidArgument, model_dir + ": no held-out pairs to score");
    RuntimeOptions r;
    r.device = Device::Cpu;
    r.threads = threads;
    r.adapter = adapter;
    const auto model = Model::load(model_dir, r);
    const Tokenizer& tok = model->tokenizer();
    double sum = 0;
    int64_t tokens = 0;
    constexpr size_t kBatch = 16, kMaxLen = 128;
    for (size_t i = 0; i < pairs.size(); i += kBatch) {
        IdBatch in, labels;
        int64_t n = 0;
        for (size_t j = i; j < std::min(pairs.size(), i + kBatch); ++j) {
            in.push_back(tok.encode(pairs[j].source));
            labels.push_back(tok.encode(pairs[j].target));
            for (auto* v : {&in.back(), &labels.back()})
                if (v->size() > kMaxLen) v->resize(kMaxLen), v->back() = tok.eos_id();
            n += static_cast<int64_t>(labels.back().size());
        }
        sum += model->score(in, labels).loss * static_cast<double>(n);
        tokens += n;
    }
    return sum / static_cast<double>(tokens);
}

namespace {

// The accepted and edited pairs of the history (none: an empty list).
std::vector<TextPair> decision_pairs(HistoryStore& store, const fs::path& tmp) {
    try {
        return load_pairs(export_history_pairs(store, tmp.string()).path, DataOptions{}).pairs;
    } catch (const Error& e) {
        if (e.code() != ErrorCode::InvalidArgument) throw;  // InvalidArgument: no pairs yet
    }
    return {};
}

// Keeps the round's manifest under rejected/, with why; the current version stays in use.
void reject_round(const LearningOptions& o, LearningRoundResult& r, json manifest) {
    char why[160];
    std::snprintf(why, sizeof why, "held-out loss %.4f -> %.4f did not improve", r.loss_before, r.loss_after);
    r.status = "rejected", r.why = why;
    manifest["status"] = r.status, manifest["why"] = r.why;
    fs::create_directories(fs::path(o.adapter_dir) / "rejected");
    write_file_atomic(fs::path(o.adapter_dir) / "rejected" / ("r" + std::to_string(r.round) + ".json"), manifest.dump(2) + "\n");
}

// The trained adapter becomes the next version (one rename: the folder appears whole) and the one in use.
void adopt_round(const LearningOptions& o, LearningRoundResult& r, json manifest, const std::set<std::string>& trained,
                 const std::string& final_dir) {
    int64_t version = 0;
    for (const auto& v : list_adapter_versions(o.adapter_dir)) version = std::max(version, v.version);
    ++version;
    manifest["version"] = version, manifest["status"] = "adopted";
    manifest["trained_pairs"] = json(std::vector<std::string>(trained.begin(), trained.end()));
    write_file_atomic(fs::path(final_dir) / "manifest.json", manifest.dump(2) + "\n");
    const std::string dir = adapter_version_dir(o.adapter_dir, version);
    fs::rename(final_dir, dir);
    fsync_dir(o.adapter_dir);
    restore_adapter_version(o.adapter_dir, version);
    char why[160];
    std::snprintf(why, sizeof why, "held-out loss %.4f -> %.4f", r.loss_before, r.loss_after);
    r.status = "adopted", r.why = why, r.version = version, r.adapter = dir;
}

}  // namespace

LearningRoundResult run_learning_round(const LearningOptions& o, const std::function<void(const TrainingEvent&)>& on_event,
                                       const std::atomic<bool>* cancel) {
    const auto t0 = std::chrono::steady_clock::now();
    if (o.model_dir.empty() || o.history_path.empty() || o.adapter_dir.empty())
        throw Error(ErrorCode::InvalidArgument, "learning: model_dir, history_path and adapter_dir are required");
    fs::create_directories(o.adapter_dir);
    const RoundLock lock(o.adapter_dir);
    LearningRoundResult r;
    r.previous_version = r.version = current_adapter_version(o.adapter_dir);
    const std::string current_dir = adapter_version_dir(o.adapter_dir, r.version);
    r.adapter = current_dir;
    r.round = next_round(o.adapter_dir);
    TempDir tmp{fs::path(o.adapter_dir) / (".round-" + std::to_string(::getpid()) + "-" + std::to_string(r.round))};
    fs::remove_all(tmp.path);
    fs::create_directories(tmp.path);

    HistoryStoreOptions so;
    so.create_if_missing = false;
    HistoryStore store(o.history_path, so);
    r.negatives = count_negatives(store, tmp.path);
    Split s = split_pairs(decision_pairs(store, tmp.path), trained_keys(current_dir), o);
    r.pairs_total = s.total;
    r.pairs_new = static_cast<int64_t>(s.fresh.size());
    r.pairs_replay = static_cast<int64_t>(s.replay.size());
    r.pairs_heldout = static_cast<int64_t>(s.heldout.size());
    if (r.pairs_new < std::max<int64_t>(1, o.min_new_pairs) || s.heldout.empty()) {
        r.status = "waiting";
        r.why = std::to_string(r.pairs_new) + " new pairs (a round needs " +
                std::to_string(std::max<int64_t>(1, o.min_new_pairs)) +
                (s.heldout.empty() ? " and at least 2 pairs in all)" : ")");
        r.round = 0;
        r.elapsed_s = seconds_since(t0);
        return r;
    }
    for (auto& p : s.heldout) p.source = o.source_prefix + p.source;
    r.loss_before = heldout_loss(o.model_dir, current_dir, s.heldout, o.threads);

    std::vector<TextPair> train = s.fresh;
    train.insert(train.end(), s.replay.begin(), s.replay.end());
    write_pairs(tmp.path / "train.jsonl", train, o.source_prefix);
    TrainingJob job(round_training_options(o, tmp.path, current_dir, static_cast<int64_t>(train.size()), r.round));
    if (cancel && cancel->load()) throw Error(ErrorCode::Cancelled, o.adapter_dir + ": learning round cancelled");
    std::vector<double> train_losses;  // the round's curve, kept in its manifest
    const TrainingResult tr = job.run([&](const TrainingEvent& e) {
        if (e.kind == TrainingEvent::Kind::Step) train_losses.push_back(e.loss);
        if (cancel && cancel->load()) job.stop();
        if (on_event) on_event(e);
    });
    if (cancel && cancel->load()) throw Error(ErrorCode::Cancelled, o.adapter_dir + ": learning round cancelled");
    r.steps = tr.steps;
    r.loss_after = heldout_loss(o.model_dir, tr.final_model_dir, s.heldout, o.threads);
    r.elapsed_s = seconds_since(t0);

    std::set<std::string> keys = trained_keys(current_dir);
    for (const auto& p : s.fresh) keys.insert(pair_key(p));
    json manifest = round_manifest(o, r, tr, train_losses);
    if (r.loss_after < r.loss_before - o.min_improvement) adopt_round(o, r, std::move(manifest), keys, tr.final_model_dir);
    else reject_round(o, r, std::move(manifest));
    return r;
}

}  // namespace t5s
