#pragma once
// The learning loop: the annotators' decisions in the history (accepted candidates, edited texts)
// train the current LoRA adapter further, in bounded rounds, and a round's adapter is adopted only
// when it lowers the loss on a held-out slice of those decisions. Torch-free; the training is the
// existing LoRA trainer (t5s/trainer.h), the pairs come from the history (t5s/history_store.h).
//
// Folder layout (the "adapter dir", e.g. the app's data folder/learning):
//   current.json              {"version": N}  the version in use (0 or missing: the base model alone)
//   v0001/ v0002/ ...         adopted versions: PEFT adapter folders + manifest.json
//   rejected/r0003.json       manifests of rounds that were not adopted, with "why"
// Every file is written atomically (temp + fsync + rename); a round trains in a hidden temp folder
// and a version folder appears by one rename, before current.json names it, so a crash or a cancel
// mid-round leaves the current version in use.
//
//   LearningOptions o; o.model_dir = "base"; o.history_path = "h.sqlite"; o.adapter_dir = "learning";
//   LearningRoundResult r = run_learning_round(o);   // blocks; cancel via the flag
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "t5s/trainer.h"

namespace t5s {

// A round's tunable bounds and schedule, declared (and defaulted) here once: `learn`'s flags, serve's
// --learn-* settings, the app's settings.json "learn" and the engine thread's LearnNow all hold this
// struct; the field table (t5s/training_fields.h) names its fields for flags, JSON and ranges.
struct LearningRoundSettings {
    // Automatic rounds (serve's learner, the app): one every N new accepted/edited pairs (0 = only
    // on request). A single round (run_learning_round, `learn`) does not read it; no table row.
    int64_t every = 50;
    int64_t min_new_pairs = 1;  // fewer new (never trained) pairs: no round (status "waiting")
    // The round's defaults were chosen on JSTS pairs outside the documented test set (tests/bench/
    // learning_defaults.py, docs/learning-loop.md "Learning curve"): after 400 fed pairs LoRA on every linear layer
    // lowered the dev loss by 0.20 where q,v alone did by 0.15 (a tie at 100 pairs: data-bound);
    // past ~3 passes over a round's pairs the held-out loss rises again (and rounds get rejected),
    // so epochs bounds a round and max_steps only caps it.
    int64_t max_steps = 100;    // optimizer steps of a round (upper bound)
    double epochs = 3.0;        // passes over new + replay pairs, capped by max_steps
    double max_time_s = 300;    // wall-time bound of the training (0 = none)
    int64_t replay_pairs = 64;  // older (already trained) pairs sampled into a round
    int holdout_every = 5;      // one pair in this many (by a hash of the pair) is held out, never trained
    int64_t max_holdout = 200;  // cap on the held-out pairs scored
    int batch_size = 8;
    double lr = 1e-3;
    int lora_r = 8;  // a new adapter's rank (a continued version keeps its own r and alpha)
    double lora_alpha = 16;
    std::string lora_targets = "all-linear";  // q,k,v,o,wi,wo (wi_0,wi_1 gated); a continued version keeps its own
    int threads = 0;                          // 0 = physical cores
    Device device = Device::Cpu;
    uint64_t seed = 42;
    double min_improvement = 0;  // adopted only if loss_after < loss_before - min_improvement
};

// One round: its settings and where its model, pairs and versions are.
//   LearningOptions o{settings};  // then the paths
struct LearningOptions : LearningRoundSettings {
    std::string model_dir;      // the base model (HF folder)
    std::string history_path;   // the history whose decisions are the training pairs
    std::string adapter_dir;    // the versions folder (created when missing)
    std::string source_prefix;  // prepended to every source, e.g. "paraphrase: " (the base's task prefix)
};

struct LearningRoundResult {
    std::string status;   // "adopted" | "rejected" | "waiting" (too few new pairs)
    std::string why;      // one line: why rejected / waiting, or what was adopted
    int64_t version = 0;  // the version in use after the round
    int64_t previous_version = 0;
    int64_t round = 0;        // the round's number (adopted and rejected share the sequence)
    int64_t pairs_total = 0;  // accepted/edited pairs in the history
    int64_t pairs_new = 0, pairs_replay = 0, pairs_heldout = 0;
    int64_t negatives = 0;                     // rejected candidates in the history (reported, not trained on)
    double loss_before = -1, loss_after = -1;  // held-out loss, current vs new adapter
    int64_t steps = 0;
    double elapsed_s = 0;
    std::string adapter;  // the folder of the version in use ("" = base)
    std::string to_json() const;
};

struct AdapterVersion {
    int64_t version = 0;
    std::string dir;
    std::string manifest_json;  // as written
    bool current = false;
};

// Runs one round (see the top of this file). on_event sees the trainer's events; cancel (may be
// null) stops the training at its next step and the round throws Error(Cancelled) leaving the
// current version. Any exception (from the trainer or from on_event) leaves the current version.
LearningRoundResult run_learning_round(const LearningOptions& options,
                                       const std::function<void(const TrainingEvent&)>& on_event = {},
                                       const std::atomic<bool>* cancel = nullptr);

// The held-out loss (mean over target tokens) of base + adapter ("" = base) on pairs.
double heldout_loss(const std::string& model_dir, const std::string& adapter, const std::vector<TextPair>& pairs,
                    int threads = 0);

// Adopted versions, oldest first. An empty or missing folder: none.
std::vector<AdapterVersion> list_adapter_versions(const std::string& adapter_dir);
int64_t current_adapter_version(const std::string& adapter_dir);                   // 0 = base
std::string adapter_version_dir(const std::string& adapter_dir, int64_t version);  // "" for 0
// Makes `version` (0 = the base alone) the current one; InvalidArgument for an unknown version.
void restore_adapter_version(const std::string& adapter_dir, int64_t version);
// The version of an adapter folder made by the loop (its manifest.json), 0 for any other folder.
int64_t adapter_version_of_dir(const std::string& dir);

}  // namespace t5s
