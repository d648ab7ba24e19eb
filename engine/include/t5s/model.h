#pragma once
// The public face of the engine: load a Hugging Face T5-family checkpoint and run it. Only plain
// C++ types here; LibTorch stays inside the engine library.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "t5s/enum_names.h"
#include "t5s/generation_config.h"
#include "t5s/generation_options.h"
#include "t5s/kernel_policy.h"
#include "t5s/model_config.h"
#include "t5s/tokenizer.h"

namespace t5s {

enum class Device { Auto, Cpu, Cuda };
enum class Precision { Fp32, Bf16, Fp16, Int8 };
// Every front end (CLI, serve, train, the app's settings.json) parses these through the tables:
// parse_enum<Device>(text), to_string(device).
template <>
struct EnumNames<Device> {
    static constexpr const char* kWhat = "device";  // Auto: CUDA if available, else CPU
    static constexpr EnumName<Device> kNames[] = {
        {Device::Auto, "auto"}, {Device::Cpu, "cpu"}, {Device::Cuda, "cuda"}, {Device::Cuda, "gpu", kAlias}};
};
template <>
struct EnumNames<Precision> {
    static constexpr const char* kWhat = "dtype";
    static constexpr EnumName<Precision> kNames[] = {{Precision::Fp32, "fp32"},
                                                     {Precision::Bf16, "bf16"},
                                                     {Precision::Fp16, "fp16"},
                                                     {Precision::Int8, "int8"},
                                                     {Precision::Fp32, "float32", kAlias},
                                                     {Precision::Bf16, "bfloat16", kAlias},
                                                     {Precision::Fp16, "float16", kAlias}};
};

// Most intra-op threads accepted: more is never faster, and 100000 exhausted the process.
constexpr int kMaxThreads = 1024;

struct RuntimeOptions {
    Device device = Device::Auto;  // Auto: CUDA if available, else CPU
    Precision precision = Precision::Fp32;
    int threads = 0;                      // intra-op threads; 0 = number of physical cores
    std::filesystem::path adapter;        // LoRA adapter folder (PEFT format) applied at load; empty: none
    int device_index = 0;                 // which CUDA device ("cuda:N"); the first by default
    std::optional<KernelPolicy> kernels;  // CPU kernels (t5s/kernel_policy.h); empty: default_kernel_policy()
};

struct ModelInfo {
    std::filesystem::path dir;
    std::string model_type;        // "t5" / "mt5"
    std::string variant;           // e.g. "T5 v1.0 (relu, tied head)" or "T5 v1.1 (gated-gelu, untied)"
    std::string stored_dtype;      // dtype(s) of the tensors on disk, e.g. "F32" or "BF16"
    std::string precision;         // precision it runs in
    int64_t activation_bytes = 4;  // bytes of one activation value (CPU int8 computes in fp32)
    std::string device;            // "cpu" or "cuda:0"
    int threads = 0;
    ModelConfig config;                  // token ids as generation_config.json sets them, where it does
    GenerationConfig generation_config;  // generation_config.json (present = false without one)
    int64_t parameter_count = 0;         // unique parameters (tied weights counted once)
    int64_t weight_bytes = 0;            // bytes of the weights as loaded at `precision`
    std::string matmul_kernel;           // what multiplies the decoder's weights, e.g. "int8 AMX" (see T5Network)
    std::string cpu_class;               // the CPU class its kernels were chosen for, e.g. "avx2" (t5s/kernel_policy.h)
    std::string cpu_class_detected;      // this CPU's class (differs when T5S_CPU_CLASS or the options cap it)
    std::vector<std::pair<std::string, std::string>> kernels;  // (kernel, choice): describe_kernels()
    int tokenizer_vocab = 0;                                   // 0 if the folder has no spiece.model or tokenizer.json
    std::vector<std::string> files;                            // files read
    std::string content_hash;                                  // fingerprint of config + weights (sizes and sampled bytes), hex
    std::filesystem::path adapter;                             // the LoRA adapter applied now; empty: none
    int64_t adapter_parameter_count = 0;
};

// A dense float32 array (row-major) for tests and tools.
struct FloatArray {
    std::vector<int64_t> shape;
    std::vector<float> data;
};

struct ScoreResult {
    double loss = 0.0;  // HF loss with labels: mean over all non-ignored target tokens
    std::vector<std::vector<int>> target_ids;
    std::vector<std::vector<int>> argmax;  // teacher-forced argmax per target position
};

using IdBatch = std::vector<std::vector<int>>;
class StepDecoding;

class Model {
public:
    // Throws t5s::Error naming the file and the problem.
    static std::unique_ptr<Model> load(const std::filesystem::path& dir, const RuntimeOptions& options = {});
    virtual ~Model() = default;

    virtual const ModelInfo& info() const = 0;
    virtual bool has_tokenizer() const = 0;
    virtual const Tokenizer& tokenizer() const = 0;  // throws if the folder had no spiece.model or tokenizer.json

    // Ids in (right-padded internally; rows may differ in length), numbers out.
    virtual FloatArray encoder_hidden(const IdBatch& input_ids) const = 0;                            // [B, S, d_model]
    virtual FloatArray logits(const IdBatch& input_ids, const IdBatch& decoder_input_ids) const = 0;  // [B, T, V]
    // labels: target ids per row (padded with -100 internally); decoder inputs are labels shifted right.
    virtual ScoreResult score(const IdBatch& input_ids, const IdBatch& labels) const = 0;
    // Per row: the mean log-probability of its labels (teacher-forced), i.e. minus score()'s loss for
    // that row alone. The base version scores row by row; the LibTorch model runs one batched pass.
    virtual std::vector<double> mean_log_probs(const IdBatch& input_ids, const IdBatch& labels) const;

    virtual std::vector<std::vector<Candidate>> generate_ids(const IdBatch& input_ids, const GenerationOptions& options,
                                                             GenerationControl* control = nullptr) const = 0;
    // Texts in, candidates out (tokenize, batch, generate, decode, no_copy/distinct filtering).
    virtual std::vector<GenerationResult> generate(const std::vector<std::string>& texts, const GenerationOptions& options,
                                                   GenerationControl* control = nullptr) const = 0;

    // Switches the LoRA adapter (a PEFT adapter folder; empty path: none) without reloading the
    // base. Validated completely before anything changes (a bad folder leaves the current one on);
    // requests already running finish with the adapter they started with, the next one uses the new.
    virtual void set_adapter(const std::filesystem::path& dir);
    // While the returned holder lives, set_adapter waits: a generation decoding on another thread
    // (the scheduler's) keeps the adapter it started with. Null for a model without adapters.
    virtual std::shared_ptr<const void> pin_adapter() const { return nullptr; }

    // The step-by-step decoding interface (engine/src/torch/step_decoding.h) for engine code that
    // drives decoding itself, such as the serving scheduler; null for a model without one.
    virtual const StepDecoding* step_decoding() const { return nullptr; }
};

// Physical cores of this machine (the default thread count).
int physical_core_count();

}  // namespace t5s
