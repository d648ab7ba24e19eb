// t5studio learn: one round of the learning loop (t5s/learning.h) headless, for cron or a cluster:
// the history's accepted/edited pairs train the current LoRA adapter version further; the result is
// adopted as the next version only when its held-out loss is lower. --list / --restore N manage the
// versions. Exit codes: 0 adopted (or --list / --restore done), 5 the round was rejected (held-out
// loss not lower; kept under ADAPTER_DIR/rejected with why), 6 waiting (fewer new pairs than
// --every), besides the usual 1 bad input, 2 usage, 3 internal, 4 out of memory.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "common/args.h"
#include "common/runtime_flags.h"
#include "t5s/error.h"
#include "t5s/learning.h"
#include "t5s/training_fields.h"

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
                        static_cast<long long>(m.value("pairs_heldout", 0)), m.value("loss_before", -1.0),
                        m.value("loss_after", -1.0), m.value("created_at", "").c_str());
        }
    }
    if (as_json) std::cout << out.dump() << "\n";
    else if (current == 0) std::printf("* base model (no adapter version in use)\n");
    return 0;
}

}  // namespace

const RuntimeFlags kLearnRuntime{Device::Cpu, false, false, false, true};  // --threads alone: learn runs on the CPU

// learn's flags: one per learning option (t5s/training_fields.h), then the version commands.
const CommandSpec kLearnSpec = {"learn",
                                "one learning round: the history's accepted/edited pairs train the next adapter version "
                                "(exit 0 adopted, 5 rejected, 6 waiting for pairs)",
                                {
                                    settings_flags(learning_fields(), LearningOptions{}, kLearnRuntime.flags()),
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
    a.require("model");  // a round needs both (the table reads them below)
    a.require("history");
    LearningOptions o;
    apply_settings_flags(a, learning_fields(), &o);
    o.adapter_dir = dir;
    o.threads = a.get_threads();
    const LearningRoundResult r = run_learning_round(o, [](const TrainingEvent& e) {
        if (e.kind == TrainingEvent::Kind::Step)
            std::fprintf(stderr, "step %lld/%lld  loss %.4f\n", static_cast<long long>(e.step),
                         static_cast<long long>(e.total_steps), e.loss);
    });
    if (a.has("json")) {
        std::cout << r.to_json() << "\n";
    } else {
        std::printf("%s: %s\n", r.status.c_str(), r.why.c_str());
        std::printf(
            "version in use: %s  (pairs: %lld in all, %lld new, %lld replayed, %lld held out; %lld rejected candidates)\n",
            r.version ? ("v" + std::to_string(r.version)).c_str() : "base", static_cast<long long>(r.pairs_total),
            static_cast<long long>(r.pairs_new), static_cast<long long>(r.pairs_replay), static_cast<long long>(r.pairs_heldout),
            static_cast<long long>(r.negatives));
        if (r.steps > 0)
            std::printf("round %lld: %lld steps in %.1f s\n", static_cast<long long>(r.round), static_cast<long long>(r.steps),
                        r.elapsed_s);
    }
    return r.status == "adopted" ? 0 : r.status == "rejected" ? kExitRejected : kExitWaiting;
}

}  // namespace t5s::cli
