#pragma once
// Runner: one training run, as steps that each return a typed result. run() strings them together:
//   prepare()            data, tokenizer, model, optimizer, resume point, memory plan
//   check_stop()         pause / stop / time limit -> an optional StopReason
//   next_micro_batches() the micro-batches of one optimizer step (DistributedSampler order)
//   train_step()         forward + backward + (all-reduce) + optimizer step -> StepOutcome
//   report_step()        log line + Step event
//   eval_and_save()      eval, checkpoint, early stopping -> an optional StopReason
//   finish()             last checkpoint, final model, Finished event -> TrainingResult
#include <ATen/ATen.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "t5s/run_folder.h"
#include "t5s/tokenizer.h"
#include "t5s/trainer.h"
#include "trainer/block_cache.h"
#include "trainer/checkpoint.h"
#include "trainer/core.h"
#include "trainer/data_internal.h"
#include "trainer/distributed.h"
#include "trainer/memory.h"
#include "trainer/optim.h"

namespace t5s {

struct LoraAdapter;

// Everything a checkpoint needs besides the weights and optimizer tensors.
struct RunState {
    int64_t step = 0;            // optimizer steps done
    int64_t epoch = 0;           // current epoch
    int64_t batch_in_epoch = 0;  // global batches of `epoch` already consumed (all ranks together)
    double best_eval = -1;
    std::string best_checkpoint;
    int evals_without_improvement = 0;
    int micro_batch = 0, grad_accum = 0;  // per-rank micro-batch after OOM reductions
    double loss_scale = 65536.0;          // fp16 dynamic loss scale
    int64_t good_steps = 0;               // fp16: steps since the last overflow
    int64_t tokens_seen = 0;
};

// One global micro-batch position and this rank's rows of it.
struct MicroBatch {
    int64_t epoch = 0, index = 0;  // position in the epoch's global batch order
    std::vector<int64_t> rows;     // this rank's share (DistributedSampler: every world_size-th row)
};

enum class StepStatus { Done, RetryAfterOom };

struct StepOutcome {
    StepStatus status = StepStatus::Done;
    double loss = 0;         // global token-weighted mean over the effective batch
    double grad_norm = 0;    // before clipping
    double lr = 0;           // the learning rate the optimizer used
    bool skipped = false;    // fp16 overflow: no update
    int64_t tokens = 0;      // source + target tokens of the global batch
    double allreduce_s = 0;  // wall time in the gradient all-reduce (distributed runs)
};

// Loss and throughput accumulated between two Step events.
struct LogWindow {
    double loss_sum = 0;
    int steps = 0;
    int64_t tokens = 0;
    double allreduce_s = 0;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

class Runner {
public:
    using Clock = std::chrono::steady_clock;
    Runner(const TrainingOptions& o, std::atomic<bool>& paused, std::atomic<bool>& stop,
           const std::function<void(const TrainingEvent&)>& cb, Distributed* dist)
        : o_(o), paused_(paused), stop_(stop), cb_(cb), dist_(dist) {}

    TrainingResult run();

private:
    // Events and log lines come from rank 0 only.
    bool is_writer() const { return dist_ == nullptr || dist_->rank() == 0; }
    void emit(const TrainingEvent& e) {
        if (cb_ && is_writer()) cb_(e);
    }
    void message(TrainingEvent::Kind kind, const std::string& text);
    // An event stamped with where the run stands (step N of total), as the progress events (Step,
    // Eval, Finished) report it.
    TrainingEvent progress_event(TrainingEvent::Kind kind) const {
        TrainingEvent e;
        e.kind = kind;
        e.step = st_.step;
        e.total_steps = total_steps_;
        return e;
    }

    // runner_setup.cpp
    void prepare();
    void setup_runtime();
    void setup_data_and_model();
    void load_data(std::vector<TextPair>& pairs, int64_t& bad_rows);
    void load_tokenizer_and_model(const std::vector<TextPair>& pairs);
    void setup_optimizer();
    void seed_or_resume();
    void load_resume_state(const std::filesystem::path& ckpt);
    void plan_memory();

    // trainer.cpp
    std::optional<StopReason> check_stop();
    std::vector<MicroBatch> next_micro_batches();
    StepOutcome train_step();
    bool backward_all(const std::vector<Batch>& batches, int64_t global_target_tokens, double& step_loss);
    void recover_from_oom(const std::vector<MicroBatch>& micro);
    void report_step(const StepOutcome& s, LogWindow& window, TrainingResult& result);
    std::optional<StopReason> eval_and_save();
    TrainingResult finish(StopReason reason, TrainingResult result);
    std::vector<std::vector<int64_t>>& epoch_batches();

    // runner_lora.cpp: LoRA runs train an adapter on a frozen base
    bool lora_run() const { return o_.lora || !o_.adapter_dir.empty(); }
    void setup_lora();
    void write_weights(const std::filesystem::path& dir, bool bf16);  // full model or adapter folder
    void write_merged();                                              // out/merged (--merge)
    ModelConfig trained_config() const;                               // model_.config + the training prefix as its task

    // runner_io.cpp
    double evaluate(std::vector<SampleGeneration>* samples);
    void save_checkpoint(const std::string& reason);
    void prune_checkpoints();
    void write_final();
    void log_line(const nlohmann::json& j);
    void truncate_log_after(int64_t step);
    MemorySample memory() const;

    const TrainingOptions& o_;
    std::atomic<bool>& paused_;
    std::atomic<bool>& stop_;
    const std::function<void(const TrainingEvent&)>& cb_;
    Distributed* dist_ = nullptr;     // null: a single process
    CpuBlockCacheScope block_cache_;  // the run's large CPU tensors reuse freed blocks (declared first: outlives them)

    at::Device device_{at::kCPU};
    std::filesystem::path out_, spiece_, tokenizer_src_;
    std::unique_ptr<RunFolderLock> out_lock_;  // rank 0: no second run writes out_ while this one does
    TokenizerFiles tokenizer_files_;
    std::unique_ptr<Tokenizer> tok_;
    TrainableModel model_;
    std::shared_ptr<LoraAdapter> lora_;  // LoRA runs: the trained adapter (model_.named holds its tensors)
    std::unique_ptr<Optimizer> opt_;
    double base_lr_ = 5e-4;
    double dropout_ = 0;
    std::vector<TokenizedPair> train_, eval_;
    std::vector<TextPair> eval_text_;
    RunState st_;
    int64_t total_steps_ = 0;
    int64_t batches_per_epoch_ = 0;
    int64_t cached_epoch_ = -1;
    std::vector<std::vector<int64_t>> batches_;  // the epoch's global batches (global micro-batch each)
    std::filesystem::path log_path_;
    std::filesystem::path resume_from_;
    Clock::time_point t0_;
    double last_loss_ = 0;
    int64_t baseline_rss_ = 0;    // process RSS when the run started
    int64_t estimated_peak_ = 0;  // the memory plan's total
};

}  // namespace t5s
