#pragma once
// Local fine-tuning and training from scratch of T5-family models. Torch-free public API: plain
// settings structs in, plain-number events out. LibTorch stays inside t5s_trainer.
//
//   TrainingOptions o; o.model_dir = "t5-small"; o.data_file = "pairs.jsonl"; o.out_dir = "run";
//   TrainingJob job(o);
//   job.run([](const TrainingEvent& e) { ... });   // blocks; pause()/resume()/stop() from any thread
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t5s/input_reader.h"  // BadRowPolicy, BadRow
#include "t5s/model.h"

namespace t5s {

enum class OptimizerKind { AdamW, Adafactor };
enum class ScheduleKind { Constant, Linear, Cosine };
// Training uses the model's Device and Precision (one enum each). Precision::Int8 is inference-only
// (validate_training_options rejects it); bf16/fp16 = autocast (weights stay fp32); fp16 is CUDA-only.
using TrainPrecision = Precision;
using TrainDevice = Device;
// Why a run ended. Its names are what the CLI prints and the history stores (a contract).
enum class StopReason { Completed, Stopped, EarlyStopping, TimeLimit };

template <>
struct EnumNames<OptimizerKind> {
    static constexpr const char* kWhat = "optimizer";
    static constexpr EnumName<OptimizerKind> kNames[] = {{OptimizerKind::AdamW, "adamw"},
                                                         {OptimizerKind::Adafactor, "adafactor"}};
};
template <>
struct EnumNames<ScheduleKind> {
    static constexpr const char* kWhat = "schedule";
    static constexpr EnumName<ScheduleKind> kNames[] = {
        {ScheduleKind::Constant, "constant"}, {ScheduleKind::Linear, "linear"}, {ScheduleKind::Cosine, "cosine"}};
};
template <>
struct EnumNames<StopReason> {
    static constexpr const char* kWhat = "stop reason";
    static constexpr EnumName<StopReason> kNames[] = {{StopReason::Completed, "completed"},
                                                      {StopReason::Stopped, "stopped"},
                                                      {StopReason::EarlyStopping, "early_stopping"},
                                                      {StopReason::TimeLimit, "time_limit"}};
};

// ------------------------------------------------------------------------------------------------
// Data

struct DataOptions {
    std::string source_field;                      // JSONL/CSV column of the input ("" = the column rule, t5s/input_reader.h)
    std::string target_field;                      // column of the output ("" = the column rule)
    bool no_header = false;                        // CSV/TSV without a header: column 1 the source, column 2 the target
    BadRowPolicy on_bad_row = BadRowPolicy::Skip;  // skip (and report) or stop at the first bad row
    std::string source_prefix;                     // prepended to every source (e.g. "paraphrase: "; neutral "")
};

struct TextPair {
    std::string source, target;
    std::string origin;  // "file:line" it came from
};

struct PairSet {
    std::vector<TextPair> pairs;
    std::vector<BadRow> bad_rows;  // rows skipped (on_bad_row = skip)
};

// JSONL (.jsonl/.json), CSV (.csv) or TSV (.tsv/.txt) with a header row. Throws t5s::Error with
// "file:line: reason" on a bad row when on_bad_row = Fail, and when nothing usable is left.
PairSet load_pairs(const std::string& file, const DataOptions& options);

struct LengthHistogram {
    std::vector<int64_t> bucket_upper;  // inclusive upper bound of each bucket in tokens
    std::vector<int64_t> counts;        // pairs per bucket
    int64_t max_len = 0;
    double mean_len = 0;
};

struct DataReport {
    int64_t pairs = 0;
    int64_t bad_rows = 0;
    int64_t duplicates = 0;                          // exact (source, target) repeats
    int64_t identical_pairs = 0;                     // source == target
    LengthHistogram source_lengths, target_lengths;  // token counts including </s>
    int64_t truncated_sources = 0;                   // longer than max_source_len
    int64_t truncated_targets = 0;                   // longer than max_target_len
    double source_unk_rate = 0;                      // <unk> tokens / tokens
    double target_unk_rate = 0;
    std::vector<std::string> warnings;  // e.g. a high <unk> rate (an English vocabulary meeting Japanese)
    std::string to_text() const;        // multi-line human summary
};

// ------------------------------------------------------------------------------------------------
// Settings

struct TrainingOptions {
    // Start point: exactly one of model_dir (fine-tune an HF checkpoint folder) or init_config (a
    // config.json to train from scratch with a SentencePiece vocabulary trained on the data).
    std::string model_dir;    // HF folder: config.json, model.safetensors|pytorch_model.bin, spiece.model or tokenizer.json
    std::string init_config;  // config.json for a fresh random model ("" = fine-tune)
    int vocab_size = 8000;    // SentencePiece pieces for init_config (the model gets +100 sentinels)
    std::string data_file;    // training pairs (JSONL/CSV/TSV)
    std::vector<std::string> extra_data_files;  // more training files, same format rules
    std::string eval_file;                      // validation pairs ("" = split eval_split off the training data)
    double eval_split = 0.05;                   // fraction held out when eval_file is empty (0 = no eval)
    int64_t max_eval_pairs = 500;               // cap on evaluated pairs (0 = all)
    DataOptions data;                           // field names, bad-row policy
    std::string out_dir;                        // checkpoints, logs, final model

    int64_t steps = 0;    // optimizer steps (0 = derive from epochs)
    double epochs = 1.0;  // used when steps == 0
    int batch_size = 8;   // pairs per micro-batch
    int grad_accum = 1;   // micro-batches per optimizer step (effective batch = batch_size * grad_accum)
    OptimizerKind optimizer = OptimizerKind::AdamW;
    double lr = -1;  // peak learning rate (-1 = 5e-4 AdamW; Adafactor: relative step)
    ScheduleKind schedule = ScheduleKind::Linear;
    int64_t warmup_steps = 0;                                      // linear warmup from 0 to lr
    double weight_decay = 0.0;                                     // decoupled (AdamW) / Adafactor weight decay
    double adam_beta1 = 0.9, adam_beta2 = 0.999, adam_eps = 1e-8;  // torch/HF defaults
    double max_grad_norm = 1.0;                                    // clip the global L2 norm (0 = off)
    double dropout = -1;                                           // -1 = config.json dropout_rate; else override
    TrainPrecision precision = TrainPrecision::Fp32;
    bool gradient_checkpointing = false;  // recompute each block in backward
    TrainDevice device = TrainDevice::Auto;
    int threads = 0;           // intra-op threads (0 = physical cores)
    int max_source_len = 128;  // tokens incl. </s>; longer inputs are truncated
    int max_target_len = 128;
    bool group_by_length = true;  // batches of similar length (shuffled batch order)
    uint64_t seed = 42;           // data order, initialisation, dropout

    int64_t eval_every = 0;  // steps between evals (0 = at each save and at the end)
    int64_t save_every = 0;  // steps between checkpoints (0 = only at the end)
    int keep_last = 2;       // checkpoints kept besides the best (>= 1)
    int patience = 0;        // stop after this many evals without improvement (0 = off)
    int sample_count = 3;    // validation inputs generated at each eval
    int sample_max_new_tokens = 40;
    bool resume = false;                   // continue from the newest checkpoint in out_dir
    double max_time_s = 0;                 // stop (with a checkpoint) after this much wall time (0 = no limit)
    bool auto_reduce_batch_on_oom = true;  // CUDA OOM: halve micro-batch, double accumulation
    std::string log_file;                  // JSONL per step ("" = out_dir/train_log.jsonl)
    int log_every = 1;                     // steps between log lines / progress events
    bool save_dtype_bf16 = false;          // store the final model in bf16 (half the size)
    double dist_timeout_s = 120;           // data-parallel runs: a collective that waits longer fails,
                                           // naming the lost rank (never a hang)
    // LoRA (PEFT format): the base stays frozen (no gradients, no optimizer state); only the
    // adapter trains, in fp32. Checkpoints and out/final are adapter folders.
    bool lora = false;
    int lora_r = 8;
    double lora_alpha = 16;
    double lora_dropout = 0.05;
    std::string lora_targets = "q,v";  // comma-separated q,k,v,o,wi,wi_0,wi_1,wo or "all-linear"
    bool lora_rslora = false;          // scale alpha / sqrt(r) instead of alpha / r
    std::string adapter_dir;           // continue this adapter (its config decides r, alpha, targets); implies lora
    bool merge_adapter = false;        // also write out/merged: the adapter folded into a full HF checkpoint
    Precision lora_base_precision = Precision::Fp32;  // the frozen base's weights: fp32, bf16, fp16 or int8
                                                      // (dequantised per product; adapters and activations unchanged)          //
                                                      // also write out/merged: the adapter folded into a full HF checkpoint
};

// Throws t5s::Error(InvalidArgument) naming the first bad field.
void validate_training_options(const TrainingOptions& options);

// Every field as JSON (enums by name), and back: missing fields keep their defaults, unknown ones are
// ignored, a malformed text or a wrong type throws t5s::Error(InvalidArgument).
std::string training_options_to_json(const TrainingOptions& options);
TrainingOptions training_options_from_json(const std::string& json);

// ------------------------------------------------------------------------------------------------
// Memory planning

struct MemoryEstimate {
    int64_t parameters = 0;
    int64_t trainable_parameters = 0;  // LoRA: the adapter's; else all parameters
    int64_t weight_bytes = 0;
    int64_t gradient_bytes = 0;
    int64_t optimizer_bytes = 0;
    int64_t activation_bytes = 0;          // at the chosen settings
    int64_t activation_bytes_no_ckpt = 0;  // without gradient checkpointing
    int64_t activation_bytes_ckpt = 0;     // with gradient checkpointing
    int64_t total_bytes = 0;               // weights + grads + optimizer + activations + workspace
    int64_t process_bytes = -1;            // CPU: what the process already holds before the model
                                           // (LibTorch and its CUDA libraries: hundreds of MiB); -1 = unknown
    int64_t free_bytes = 0;                // free memory on the device (host: MemAvailable)
    bool fits = true;
    int suggested_batch_size = 0;  // largest micro-batch that fits (0 = not even 1)
    std::string device;            // "cpu" or "cuda:0"
    std::string to_text() const;
};

// Parameter count from a config.json-shaped model (no weights loaded).
// total_bytes is comparable with the measured peak: on CPU that is the process's peak RSS, so the
// process's own baseline (process_bytes, measured before the model is loaded) is part of it.
MemoryEstimate estimate_training_memory(const std::string& config_json_text, const TrainingOptions& options,
                                        int64_t free_bytes /* <0: query the device */, int64_t process_bytes = -1);

// ------------------------------------------------------------------------------------------------
// Events

struct SampleGeneration {
    std::string source, reference, prediction;
};

struct TrainingEvent {
    enum class Kind { Report, Plan, Step, Eval, Checkpoint, Message, Finished };
    Kind kind = Kind::Step;
    int64_t step = 0;  // optimizer steps done
    int64_t total_steps = 0;
    double epoch = 0;       // fractional epochs done
    double loss = 0;        // train loss (mean over the logged steps)
    double eval_loss = -1;  // -1 when not evaluated
    double best_eval_loss = -1;
    double lr = 0;
    double grad_norm = 0;     // before clipping
    double tokens_per_s = 0;  // source + target tokens processed per second
    double elapsed_s = 0;
    double eta_s = 0;
    int64_t memory_bytes = 0;       // process RSS (CPU) or allocated device memory (CUDA)
    int64_t peak_memory_bytes = 0;  // peak RSS / peak device allocation so far
    int batch_size = 0;             // current micro-batch (changes after an OOM reduction)
    int grad_accum = 0;
    std::vector<SampleGeneration> samples;           // Eval events
    std::string message;                             // Report/Plan/Message/Checkpoint text (checkpoint path)
    StopReason stop_reason = StopReason::Completed;  // Finished events only
};

struct TrainingResult {
    int64_t steps = 0;
    double final_loss = 0;
    double best_eval_loss = -1;
    std::string final_model_dir;  // out_dir/final
    std::string best_checkpoint;  // "" when never evaluated
    StopReason stop_reason = StopReason::Completed;
    double elapsed_s = 0;
    int64_t peak_memory_bytes = 0;
};

// One training run. run() blocks on the calling thread; pause/resume/stop are safe from any thread
// and take effect at the next micro-batch boundary (stop saves a checkpoint first).
class TrainingJob {
public:
    explicit TrainingJob(TrainingOptions options);
    ~TrainingJob();
    TrainingJob(const TrainingJob&) = delete;
    TrainingJob& operator=(const TrainingJob&) = delete;

    // Throws t5s::Error (code OutOfMemory when memory ran out beyond recovery).
    TrainingResult run(const std::function<void(const TrainingEvent&)>& on_event);

    void pause() { paused_.store(true); }
    void resume() { paused_.store(false); }
    void stop() { stop_.store(true); }
    bool paused() const { return paused_.load(); }
    const TrainingOptions& options() const { return options_; }
    void set_options(TrainingOptions options) { options_ = std::move(options); }  // before run() only

private:
    TrainingOptions options_;
    std::atomic<bool> paused_{false};
    std::atomic<bool> stop_{false};
};

// This process's rank in a data-parallel launch (RANK under torchrun / PyTorchJob, SLURM_PROCID
// under srun); 0 for a single process. Rank 0 alone writes checkpoints, logs and the history.
// Throws t5s::Error(InvalidArgument) when the launch variables are inconsistent.
int training_rank_from_environment();

// Trains a SentencePiece unigram model with byte fallback in T5's id layout (pad 0, eos 1, unk 2,
// no bos) on the given texts; writes `model_prefix`.model. Throws t5s::Error.
void train_sentencepiece(const std::vector<std::string>& texts, const std::string& model_prefix, int vocab_size, int threads = 1);

}  // namespace t5s
