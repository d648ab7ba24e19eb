// t5studio learn: one round of the learning loop (t5s/learning.h) headless, for cron or a cluster:
// the history's accepted/edited pairs train the current LoRA adapter version further; the result is
// adopted as the next version only when its held-out loss is lower. --list / --restore N manage the
// versions. Exit codes: 0 adopted (or --list / --restore done), 5 the round was rejected (held-out
// loss not lower; kept under ADAPTER_DIR/rejected with why), 6 waiting (fewer new pairs than
// --every), besides the usual 1 bad input, 2 usage, 3 internal, 4 out of memory.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/runtime_flags.h"
#include "t5s/error.h"
#include "t5s/learning.h"

namespace t5s::cli {
namespace {

constexpr int kExitRejected = 5, kExitWaiting = 6;

int list_versions(const std::string& dir, bool as_json) {
    const auto versions = list_adapter_versions(dir);
    const int64_t current = current_adapter_version(dir);
    nlohmann::json out = {{"current", current}, {"versions", nlohmann::json::array()}};
    for (const auto& v : versions) {
        nlohmann::json m = nlohmann::json::parse(v.manifest_json, nullptr, false);
        if (m.is_object()) m.erase("trained_pairs");
        out["versions"].push_back({{"version", v.version}, {"dir", v.dir}, {"current", v.current}, {"manifest", m}});
        if (!as_json) {
            std::printf("%s v%lld  round %lld  pairs %lld new + %lld replay (%lld held out)  held-out loss %.4f -> %.4f  %s\n",
                        v.current ? "*" : " ", static_cast<long long>(v.version), static_cast<long long>(m.value("round", 0)),
                        static_cast<long long>(m.value("pairs_new", 0)), static_cast<long long>(m.value("pairs_replay", 0)),
                        static_cast<long long>(m.value("pairs_heldout", 0)), m.value("loss_before", -1.0), m.value("loss_after", -1.0),
                        m.value("created_at", "").c_str());
        }
    }
    if (as_json) std::cout << out.dump() << "\n";
    else if (current == 0) std::printf("* base model (no adapter version in use)\n");
    return 0;
}

}  // namespace

const CommandSpec kLearnSpec = {"learn", "one learning round: the history's accepted/edited pairs train the next adapter version "
                                         "(exit 0 adopted, 5 rejected, 6 waiting for pairs)", {
    {"model", "DIR", "the base model folder"},
    {"history", "PATH", "the history database whose decisions are the training pairs"},
    {"adapter-dir", "DIR", "the versions folder (default: HISTORY's folder/learning)"},
    {"every", "N", "run only when at least N pairs are new since the current version (default 1)"},
    {"max-steps", "N", "optimizer steps of the round, at most (default 100; a round makes about 3 passes over its pairs)"},
    {"max-time", "SECONDS", "wall time of the training, at most (default 300; 0 = none)"},
    {"replay", "N", "older pairs replayed beside the new ones (default 64)"},
    {"holdout-every", "N", "one pair in N is held out for the adoption test, never trained on (default 5)"},
    {"lr", "X", "learning rate (default 1e-3)"},
    {"epochs", "X", "passes over the round's new + replayed pairs, capped by --max-steps (default 3)"},
    {"lora-r", "N", "rank of a new adapter (default 8; a round that continues a version keeps its rank)"},
    {"lora-targets", "LIST", "layers of a new adapter: q,k,v,o,wi,wo,wi_0,wi_1 or all-linear (the default)"},
    {"batch-size", "N", "pairs per step (default 8)"},
    {"source-prefix", "TEXT", "task prefix the base model expects, e.g. \"paraphrase: \" (default none)"},
    {"seed", "S", "data order and held-out choice (default 42)"},
    RuntimeFlags{Device::Cpu, false, false, false, true}.flags(),  // --threads alone: learn runs on the CPU
    {"list", "", "list the adopted versions (current marked *) and exit"},
    {"restore", "N", "make version N the current one (0 = the base model alone) and exit"},
    {"json", "", "print the result as one JSON line"},
}};

int run_learn(const Argv& argv) {
    Args a(argv, kLearnSpec);
    std::string dir = a.get("adapter-dir");
    if (dir.empty()) {
        if (!a.has("history")) throw UsageError("give --adapter-dir, or --history (the versions go beside it)");
        dir = (std::filesystem::path(a.get("history")).parent_path() / "learning").string();
    }
    if (a.has("list")) return list_versions(dir, a.has("json"));
    if (a.has("restore")) {
        const int64_t v = a.get_int64("restore", 0, 0, INT64_MAX);
        restore_adapter_version(dir, v);
        if (a.has("json")) std::cout << nlohmann::json({{"current", v}, {"adapter", adapter_version_dir(dir, v)}}).dump() << "\n";
        else std::cout << "current version: " << (v == 0 ? std::string("base model") : "v" + std::to_string(v)) << "\n";
        return 0;
    }
    LearningOptions o;
    o.model_dir = a.require("model");
    o.history_path = a.require("history");
    o.adapter_dir = dir;
    o.min_new_pairs = a.get_int64("every", 1, 1, INT64_MAX);
    o.max_steps = a.get_int64("max-steps", o.max_steps, 1, INT64_MAX);
    o.max_time_s = a.get_double("max-time", o.max_time_s);
    if (o.max_time_s < 0) throw UsageError("--max-time must be >= 0 seconds");
    o.replay_pairs = a.get_int64("replay", o.replay_pairs, 0, INT64_MAX);
    o.holdout_every = a.get_int("holdout-every", o.holdout_every, 2, 1000000);
    o.lr = a.get_double("lr", o.lr);
    if (!(o.lr > 0)) throw UsageError("--lr must be > 0");
    o.batch_size = a.get_int("batch-size", o.batch_size, 1, 1 << 16);
    o.epochs = a.get_double("epochs", o.epochs);
    if (!(o.epochs > 0)) throw UsageError("--epochs must be > 0");
    o.lora_r = a.get_int("lora-r", o.lora_r, 1, 4096);
    if (a.has("lora-targets")) o.lora_targets = a.get("lora-targets");
    o.source_prefix = a.get("source-prefix");
    o.seed = static_cast<uint64_t>(a.get_int64("seed", 42));
    o.threads = a.get_threads();
    const LearningRoundResult r = run_learning_round(o, [](const TrainingEvent& e) {
        if (e.kind == TrainingEvent::Kind::Step)
            std::fprintf(stderr, "step %lld/%lld  loss %.4f\n", static_cast<long long>(e.step), static_cast<long long>(e.total_steps), e.loss);
    });
    if (a.has("json")) {
        std::cout << r.to_json() << "\n";
    } else {
        std::printf("%s: %s\n", r.status.c_str(), r.why.c_str());
        std::printf("version in use: %s  (pairs: %lld in all, %lld new, %lld replayed, %lld held out; %lld rejected candidates)\n",
                    r.version ? ("v" + std::to_string(r.version)).c_str() : "base", static_cast<long long>(r.pairs_total),
                    static_cast<long long>(r.pairs_new), static_cast<long long>(r.pairs_replay), static_cast<long long>(r.pairs_heldout),
                    static_cast<long long>(r.negatives));
        if (r.steps > 0) std::printf("round %lld: %lld steps in %.1f s\n", static_cast<long long>(r.round), static_cast<long long>(r.steps), r.elapsed_s);
    }
    return r.status == "adopted" ? 0 : r.status == "rejected" ? kExitRejected : kExitWaiting;
}

}  // namespace t5s::cli
