// t5s::Model implemented on LibTorch: loading, teacher-forced scoring, generation.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <shared_mutex>

#include "decode/batch_decoder.h"
#include "t5s/candidate_scores.h"
#include "t5s/device.h"
#include "t5s/error.h"
#include "t5s/generation_limits.h"
#include "t5s/model.h"
#include "t5s/process_memory.h"
#include "t5s/seed.h"
#include "torch/lora.h"
#include "torch/mean_log_probs.h"
#include "torch/runtime.h"
#include "torch/t5_network.h"
#include "torch/torch_errors.h"
#include "torch/weight_loader.h"

namespace t5s {
namespace {

namespace fs = std::filesystem;

// Right-pads id rows into [B, S] plus the attention mask.
std::pair<at::Tensor, at::Tensor> pad_batch(const IdBatch& rows, int64_t pad_value, at::Device device) {
    if (rows.empty()) throw Error(ErrorCode::InvalidArgument, "empty batch");
    size_t width = 0;
    for (const auto& r : rows) width = std::max(width, r.size());
    if (width == 0) throw Error(ErrorCode::InvalidArgument, "every input in the batch is empty");
    at::Tensor ids = at::full({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)}, pad_value, at::kLong);
    at::Tensor mask = at::zeros({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)}, at::kLong);
    for (size_t i = 0; i < rows.size(); ++i) {
        for (size_t j = 0; j < rows[i].size(); ++j) ids[i][j] = rows[i][j];
        if (!rows[i].empty()) mask[i].narrow(0, 0, static_cast<int64_t>(rows[i].size())).fill_(1);
    }
    return {ids.to(device), mask.to(device)};
}

FloatArray to_float_array(const at::Tensor& t) {
    at::Tensor c = t.to(at::kCPU, at::kFloat).contiguous();
    FloatArray a;
    a.shape.assign(c.sizes().begin(), c.sizes().end());
    a.data.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    return a;
}

// Turns allocation failures into ErrorCode::OutOfMemory so front ends can offer a smaller batch.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
    return with_out_of_memory_as_error(std::forward<F>(f));
}

// FNV-1a over each file's size and 16 sampled 4 KiB windows: cheap even for multi-GB weights,
// and changes whenever a checkpoint is re-saved or fine-tuned.
std::string fingerprint_files(const std::vector<std::string>& files) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](const void* data, size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    };
    std::vector<char> buf(4096);
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary | std::ios::ate);
        const uint64_t size = static_cast<uint64_t>(in.tellg());
        mix(&size, sizeof size);
        for (int k = 0; k < 16 && size > 0; ++k) {
            in.seekg(static_cast<std::streamoff>(size / 16 * k));
            in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
            mix(buf.data(), static_cast<size_t>(in.gcount()));
            in.clear();
        }
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return hex;
}

class TorchModel final : public Model {
public:
    TorchModel(const fs::path& dir, const RuntimeOptions& options) {
        rt_ = resolve_runtime(options);
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) throw Error(ErrorCode::FileNotFound, dir.string() + ": model directory not found");
        const fs::path config_path = dir / "config.json";
        ModelConfig config = load_model_config(config_path);
        info_.files.push_back(config_path.string());
        const fs::path generation_path = dir / "generation_config.json";
        info_.generation_config = load_model_generation_defaults(dir);  // + config.json's tasks and default prefix
        apply_generation_token_ids(info_.generation_config, generation_path.string(), &config);
        const LoadHeapScope heap_scope;  // freed load temporaries go back to the system, not the heap
        LoadedWeights loaded = load_checkpoint_tensors(dir, WeightStorage::Mapped);
        info_.files.insert(info_.files.end(), loaded.files.begin(), loaded.files.end());
        auto params = select_t5_parameters(loaded, config, loaded.files.back());
        loaded.tensors.clear();

        const fs::path tokenizer_file = Tokenizer::folder_file(dir);  // spiece.model, else tokenizer.json
        if (!tokenizer_file.empty()) {
            tokenizer_ = Tokenizer::load_folder(dir);
            info_.files.push_back(tokenizer_file.string());
            info_.tokenizer_vocab = tokenizer_->vocab_size();
            if (tokenizer_->vocab_size() > config.vocab_size) {
                throw Error(ErrorCode::CorruptFile,
                            tokenizer_file.string() + ": tokenizer has " + std::to_string(tokenizer_->vocab_size()) +
                                " ids but config.json vocab_size is " + std::to_string(config.vocab_size));
            }
        }
        for (const auto& [name, t] : params) info_.parameter_count += t.numel();

        guarded([&] {
            for (auto& [name, t] : params) {
                // fp16: the feed-forward output projection stays fp32 (transformers' _keep_in_fp32_modules).
                const bool keep_fp32 = rt_.precision == Precision::Fp16 && name.find("DenseReluDense.wo") != std::string::npos;
                t = t.to(rt_.device, keep_fp32 ? at::kFloat : rt_.compute_dtype).contiguous();
            }
            net_ = std::make_unique<T5Network>(config, std::move(params));
            net_->set_kernel_policy(rt_.kernels);
            // Both fuse q|k|v first; packing fuses straight into the packed form.
            if (rt_.precision == Precision::Int8) net_->quantize_int8();
            else net_->pack_for_cpu_decoding();  // fuses only, unless fp32/bf16 on the CPU
            return 0;
        });
        // The checkpoint's copies freed above (fp32 before quantising or packing) sit in malloc's
        // heap between live blocks; hand their pages back to the system.
        release_free_heap();
        release_clean_file_pages();

        info_.dir = dir;
        info_.model_type = config.model_type;
        info_.variant = std::string(config.is_gated_act ? "T5 v1.1 style (" : "T5 v1.0 style (") + config.feed_forward_proj +
                        ", " + (config.tie_word_embeddings ? "tied head" : "untied head") + ")";
        info_.stored_dtype = loaded.stored_dtypes;
        info_.precision = to_string(rt_.precision);
        info_.activation_bytes = static_cast<int64_t>(c10::elementSize(rt_.compute_dtype));
        info_.device = rt_.device.str();
        info_.threads = rt_.threads;
        info_.config = config;
        info_.weight_bytes = net_->weight_bytes();
        info_.matmul_kernel = net_->matmul_kernel();
        info_.cpu_class = to_string(rt_.kernels.cpu);
        info_.cpu_class_detected = to_string(rt_.kernels.detected);
        info_.kernels = describe_kernels(rt_.kernels);
        info_.content_hash = fingerprint_files(info_.files);
        if (!options.adapter.empty()) set_adapter(options.adapter);
    }

    void set_adapter(const fs::path& dir) override {
        std::shared_ptr<LoraAdapter> next;
        if (!dir.empty()) {
            next = std::make_shared<LoraAdapter>(load_lora_adapter(dir, net_->config()));
            for (auto& [path, m] : next->modules) m.a = m.a.to(rt_.device), m.b = m.b.to(rt_.device);
        }
        std::unique_lock<std::shared_mutex> lock(adapter_mutex_);
        guarded([&] {
            net_->set_adapter(next.get());
            return 0;
        });
        adapter_ = next;
        info_.adapter = dir;
        info_.adapter_parameter_count = next ? next->parameter_count() : 0;
    }

    const ModelInfo& info() const override { return info_; }
    const T5Network& network() const { return *net_; }
    const StepDecoding* step_decoding() const override { return net_.get(); }
    std::shared_ptr<const void> pin_adapter() const override {
        return std::make_shared<std::shared_lock<std::shared_mutex>>(adapter_mutex_);
    }
    bool has_tokenizer() const override { return tokenizer_.has_value(); }
    const Tokenizer& tokenizer() const override {
        if (!tokenizer_)
            throw Error(ErrorCode::FileNotFound,
                        info_.dir.string() + ": no tokenizer (spiece.model or tokenizer.json) in the model folder");
        return *tokenizer_;
    }

    FloatArray encoder_hidden(const IdBatch& input_ids) const override {
        c10::InferenceMode guard;
        std::shared_lock<std::shared_mutex> adapter_lock(adapter_mutex_);
        check_ids(input_ids);
        auto [ids, mask] = pad_batch(input_ids, net_->config().pad_token_id, rt_.device);
        return guarded([&] { return to_float_array(net_->encode(ids, mask)); });
    }

    FloatArray logits(const IdBatch& input_ids, const IdBatch& decoder_input_ids) const override {
        c10::InferenceMode guard;
        std::shared_lock<std::shared_mutex> adapter_lock(adapter_mutex_);
        check_ids(input_ids);
        check_ids(decoder_input_ids);
        auto [ids, mask] = pad_batch(input_ids, net_->config().pad_token_id, rt_.device);
        auto [dec, dec_mask] = pad_batch(decoder_input_ids, net_->config().pad_token_id, rt_.device);
        return guarded([&] { return to_float_array(net_->lm_logits(net_->decode(dec, net_->encode(ids, mask), mask))); });
    }

    ScoreResult score(const IdBatch& input_ids, const IdBatch& labels) const override {
        c10::InferenceMode guard;
        std::shared_lock<std::shared_mutex> adapter_lock(adapter_mutex_);
        check_ids(input_ids);
        check_ids(labels);
        auto [ids, mask] = pad_batch(input_ids, net_->config().pad_token_id, rt_.device);
        auto [lab, lab_mask] = pad_batch(labels, -100, rt_.device);
        return guarded([&] {
            at::Tensor logits = net_->lm_logits(net_->decode(net_->shift_right(lab), net_->encode(ids, mask), mask));
            ScoreResult r;
            r.loss = T5Network::loss(logits, lab).item<double>();
            at::Tensor am = logits.argmax(-1).cpu();
            for (size_t i = 0; i < labels.size(); ++i) {
                r.target_ids.push_back(labels[i]);
                std::vector<int> row;
                for (size_t j = 0; j < labels[i].size(); ++j) row.push_back(static_cast<int>(am[i][j].item<int64_t>()));
                r.argmax.push_back(std::move(row));
            }
            return r;
        });
    }

    std::vector<std::vector<Candidate>> generate_ids(const IdBatch& input_ids, const GenerationOptions& options,
                                                     GenerationControl* control) const override {
        validate_generation_options(options);
        std::shared_lock<std::shared_mutex> adapter_lock(adapter_mutex_);
        check_ids(input_ids);
        for (const auto& row : input_ids) {
            if (row.empty()) throw Error(ErrorCode::InvalidArgument, "an input has no tokens");
        }
        check_source_lengths(input_ids, net_->config(), options);
        // One batch_size chunk at a time through the serving decoder's steps (each input as if alone).
        decode::BatchDecoder decoder(*net_, has_tokenizer() ? &tokenizer() : nullptr);
        std::vector<std::vector<Candidate>> out;
        for (size_t start = 0; start < input_ids.size(); start += static_cast<size_t>(options.batch_size)) {
            const size_t end = std::min(input_ids.size(), start + static_cast<size_t>(options.batch_size));
            IdBatch chunk(input_ids.begin() + static_cast<long>(start), input_ids.begin() + static_cast<long>(end));
            check_memory_for(chunk, options);
            auto decoded = guarded([&] { return decode::decode_batch(decoder, chunk, options, control); });
            for (auto& cands : decoded) out.push_back(std::move(cands));
        }
        return out;
    }

    std::vector<GenerationResult> generate(const std::vector<std::string>& texts, const GenerationOptions& options,
                                           GenerationControl* control) const override {
        return generate_scored(*this, nullptr, texts, options, control);
    }

    std::vector<double> mean_log_probs(const IdBatch& input_ids, const IdBatch& labels) const override {
        c10::InferenceMode guard;
        std::shared_lock<std::shared_mutex> adapter_lock(adapter_mutex_);
        check_ids(input_ids);
        check_ids(labels);
        if (input_ids.size() != labels.size())
            throw Error(ErrorCode::InvalidArgument, "mean_log_probs: inputs and labels differ in rows");
        auto [ids, mask] = pad_batch(input_ids, net_->config().pad_token_id, rt_.device);
        auto [lab, lab_mask] = pad_batch(labels, -100, rt_.device);
        return guarded([&] { return per_row_mean_log_probs(*net_, ids, mask, lab); });
    }

private:
    // Refuses (OutOfMemory, one line) a batch whose estimated peak exceeds the memory free now,
    // before anything is allocated: --max-new-tokens 99999999 asked for tens of GB.
    void check_memory_for(const IdBatch& chunk, const GenerationOptions& options) const {
        size_t longest = 0;
        for (const auto& row : chunk) longest = std::max(longest, row.size());
        const bool cuda = rt_.device.is_cuda();
        int64_t available = recommend_profile(cuda ? Device::Cuda : Device::Cpu).free_bytes;
        if (cuda) {
            const DeviceMemory m = query_device_memory();
            available += m.cuda.reserved_bytes - m.cuda.allocated_bytes;  // cached by torch, free to reuse
        }
        check_generation_memory(net_->config(), static_cast<int64_t>(chunk.size()), static_cast<int64_t>(longest), options,
                                static_cast<int64_t>(c10::elementSize(rt_.compute_dtype)), available, rt_.device.str());
    }

    void check_ids(const IdBatch& batch) const {
        const int64_t v = net_->config().vocab_size;
        for (const auto& row : batch) {
            for (int id : row) {
                if (id < 0 || id >= v) {
                    throw Error(ErrorCode::InvalidArgument,
                                "token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(v) + ")");
                }
            }
        }
    }

    ResolvedRuntime rt_;
    ModelInfo info_;
    std::optional<Tokenizer> tokenizer_;
    std::unique_ptr<T5Network> net_;
    std::shared_ptr<LoraAdapter> adapter_;     // what net_'s LoRA terms reference
    mutable std::shared_mutex adapter_mutex_;  // requests share it; set_adapter takes it alone
};

}  // namespace

void Model::set_adapter(const fs::path&) { throw Error(ErrorCode::Unsupported, "this model does not take LoRA adapters"); }

std::unique_ptr<Model> Model::load(const fs::path& dir, const RuntimeOptions& options) {
    return std::make_unique<TorchModel>(dir, options);
}

}  // namespace t5s
