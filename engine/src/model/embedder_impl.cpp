// t5s::Embedder on LibTorch: a sentence-transformers folder (encoder, pooling, Dense, Normalize).
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <numeric>

#include "embed/embedder_config.h"
#include "t5s/embed_tokenizer.h"
#include "t5s/embedder.h"
#include "t5s/error.h"
#include "t5s/process_memory.h"
#include "t5s/settings_fields.h"
#include "t5s/text_offsets.h"
#include "t5s/tokenizer.h"
#include "text/unicode_text.h"
#include "torch/bert_encoder.h"
#include "torch/runtime.h"
#include "torch/torch_errors.h"
#include "torch/weight_loader.h"

namespace t5s {
namespace {

namespace fs = std::filesystem;
using embed_detail::EmbedderSpec;

// Checkpoints saved from a task model carry the encoder under "bert." / "roberta.".
std::map<std::string, at::Tensor> encoder_tensors(LoadedWeights& loaded) {
    std::map<std::string, at::Tensor> out;
    for (auto& [name, t] : loaded.tensors) {
        std::string n = name;
        for (const char* prefix : {"bert.", "roberta."})
            if (n.rfind(prefix, 0) == 0) n = n.substr(std::string(prefix).size());
        if (n.rfind("embeddings.", 0) == 0 || n.rfind("encoder.", 0) == 0) out[n] = t;
    }
    return out;
}

AffineLinear load_dense(const embed_detail::DenseConfig& d, std::vector<std::string>& files) {
    LoadedWeights w = load_checkpoint_tensors(d.dir);
    const std::string file = w.files.back();
    files.insert(files.end(), w.files.begin(), w.files.end());
    auto get = [&](const std::string& name, std::vector<int64_t> shape) {
        auto it = w.tensors.find(name);
        if (it == w.tensors.end()) throw Error(ErrorCode::CorruptFile, file + ": missing tensor '" + name + "'");
        if (it->second.sizes() != at::IntArrayRef(shape)) {
            throw Error(ErrorCode::CorruptFile, file + ": tensor '" + name + "' has shape " + c10::str(it->second.sizes()) +
                                                    ", " + (d.dir / "config.json").string() + " implies " +
                                                    c10::str(at::IntArrayRef(shape)));
        }
        return it->second.to(at::kFloat).contiguous();
    };
    AffineLinear a{Linear(get("linear.weight", {d.out_features, d.in_features})), at::Tensor()};
    if (d.bias) a.bias = get("linear.bias", {d.out_features});
    return a;
}

class TorchEmbedder final : public Embedder {
public:
    TorchEmbedder(const fs::path& dir, const RuntimeOptions& options) : spec_(embed_detail::read_embedder_spec(dir)) {
        rt_ = resolve_runtime(options);
        info_.files = spec_.files;
        load_tokenizer();
        LoadedWeights loaded = load_checkpoint_tensors(spec_.transformer_dir);
        info_.files.insert(info_.files.end(), loaded.files.begin(), loaded.files.end());
        std::map<std::string, at::Tensor> params = encoder_tensors(loaded);
        loaded.tensors.clear();
        with_out_of_memory_as_error([&] {
            for (auto& [name, t] : params) t = t.to(rt_.device, rt_.compute_dtype).contiguous();
            encoder_ = std::make_unique<BertEncoder>(spec_.encoder, std::move(params), loaded.files.back());
            if (rt_.precision == Precision::Int8) encoder_->quantize_int8(rt_.kernels);
            for (const auto& d : spec_.dense) {
                AffineLinear a = load_dense(d, info_.files);
                a.linear = Linear(a.linear.weight().to(rt_.device));
                if (a.bias.defined()) a.bias = a.bias.to(rt_.device);
                dense_.push_back(std::move(a));
            }
            return 0;
        });
        release_free_heap();
        info_.dir = dir;
        info_.architecture = spec_.encoder.architecture;
        info_.pooling = spec_.pooling;
        info_.normalize = spec_.normalize;
        info_.dense_layers = static_cast<int>(spec_.dense.size());
        info_.dim = spec_.dense.empty() ? spec_.encoder.hidden_size : spec_.dense.back().out_features;
        info_.precision = to_string(rt_.precision);
        info_.device = rt_.device.str();
    }

    const EmbedderInfo& info() const override { return info_; }

    std::vector<std::vector<float>> embed(const std::vector<std::string>& texts, const EmbedOptions& options) const override {
        if (options.batch_size < 1)
            throw Error(ErrorCode::InvalidArgument, range_message("batch_size", at_least(1), options.batch_size));
        c10::InferenceMode guard;
        const std::vector<std::vector<int>> ids = token_ids(texts, options);
        // Similar lengths together: less padding (the result does not depend on the grouping).
        std::vector<size_t> order(texts.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a].size() > ids[b].size(); });
        std::vector<std::vector<float>> out(texts.size());
        for (size_t start = 0; start < order.size(); start += static_cast<size_t>(options.batch_size)) {
            const size_t end = std::min(order.size(), start + static_cast<size_t>(options.batch_size));
            std::vector<size_t> rows(order.begin() + static_cast<long>(start), order.begin() + static_cast<long>(end));
            at::Tensor emb = with_out_of_memory_as_error([&] { return embed_rows(ids, rows); });
            for (size_t r = 0; r < rows.size(); ++r) {
                const float* p = emb[static_cast<int64_t>(r)].data_ptr<float>();
                out[rows[r]].assign(p, p + emb.size(1));
            }
        }
        return out;
    }

    std::vector<std::vector<int>> token_ids(const std::vector<std::string>& texts, const EmbedOptions& options) const override {
        std::vector<std::vector<int>> ids(texts.size());
        for (size_t i = 0; i < texts.size(); ++i)
            ids[i] = tokenizer_->encode(prepare(options.prefix + texts[i]), info_.max_seq_length);
        return ids;
    }

private:
    void load_tokenizer() {
        tokenizer_ = EmbedTokenizer::load(spec_.transformer_dir);
        const bool wordpiece = tokenizer_->kind() == EmbedTokenizer::Kind::WordPiece;
        const fs::path file =
            EmbedTokenizer::folder_file(spec_.transformer_dir);  // vocab.txt, sentencepiece.bpe.model or tokenizer.json
        info_.files.push_back(file.string());
        info_.tokenizer = wordpiece ? "wordpiece" : "sentencepiece-xlmr";
        const auto& enc = spec_.encoder;
        if (tokenizer_->vocab_size() > enc.vocab_size) {
            throw Error(ErrorCode::CorruptFile, file.string() + ": tokenizer has " + std::to_string(tokenizer_->vocab_size()) +
                                                    " ids but " + enc.file.string() + " vocab_size is " +
                                                    std::to_string(enc.vocab_size) + " (tokenizer and model do not match)");
        }
        if (enc.position_offset > 0 && tokenizer_->pad_id() != enc.pad_token_id) {
            throw Error(ErrorCode::CorruptFile, file.string() + ": padding id " + std::to_string(tokenizer_->pad_id()) +
                                                    " differs from pad_token_id " + std::to_string(enc.pad_token_id) + " in " +
                                                    enc.file.string() + " (XLM-R positions depend on it)");
        }
        // As sentence-transformers: max_seq_length, else the tokenizer's limit, never past the positions.
        const int positions = enc.max_position_embeddings - enc.position_offset;
        int limit = spec_.max_seq_length > 0 ? spec_.max_seq_length : tokenizer_->model_max_length();
        info_.max_seq_length = limit > 0 ? std::min(limit, positions) : positions;
    }

    std::string prepare(const std::string& text) const {
        if (!spec_.do_lower_case) return text;
        require_valid_utf8(text, "input text");
        return embed_detail::u32_to_utf8(embed_detail::to_lower(decode_code_points(text)));
    }

    // Pooled, Dense, normalised embeddings of ids[rows], as float32 [rows, dim] on the CPU.
    at::Tensor embed_rows(const std::vector<std::vector<int>>& ids, const std::vector<size_t>& rows) const {
        size_t width = 0;
        for (size_t r : rows) width = std::max(width, ids[r].size());
        const int64_t b = static_cast<int64_t>(rows.size()), s = static_cast<int64_t>(width);
        at::Tensor id_t = at::full({b, s}, tokenizer_->pad_id(), at::kLong);
        at::Tensor mask = at::zeros({b, s}, at::kLong);
        auto id_a = id_t.accessor<int64_t, 2>();
        auto mask_a = mask.accessor<int64_t, 2>();
        for (int64_t i = 0; i < b; ++i) {
            const auto& row = ids[rows[static_cast<size_t>(i)]];
            for (size_t j = 0; j < row.size(); ++j) {
                id_a[i][static_cast<int64_t>(j)] = row[j];
                mask_a[i][static_cast<int64_t>(j)] = 1;
            }
        }
        id_t = id_t.to(rt_.device);
        mask = mask.to(rt_.device);
        at::Tensor hidden = encoder_->forward(id_t, mask).to(at::kFloat);
        at::Tensor x = pool(hidden, mask);
        for (size_t i = 0; i < dense_.size(); ++i) {
            x = dense_[i](x);
            if (spec_.dense[i].tanh) x = at::tanh(x);
        }
        if (spec_.normalize) x = x / x.norm(2, {1}, true).clamp_min(1e-12);  // torch.nn.functional.normalize
        return x.to(at::kCPU).contiguous();
    }

    at::Tensor pool(const at::Tensor& hidden, const at::Tensor& mask) const {
        if (spec_.pooling == "cls") return hidden.select(1, 0);
        at::Tensor m = mask.unsqueeze(-1).to(at::kFloat);
        if (spec_.pooling == "max") return hidden.masked_fill(m.eq(0), -1e9).amax(1);
        return (hidden * m).sum(1) / m.sum(1).clamp_min(1e-9);
    }

    EmbedderSpec spec_;
    ResolvedRuntime rt_;
    EmbedderInfo info_;
    std::unique_ptr<EmbedTokenizer> tokenizer_;
    std::unique_ptr<BertEncoder> encoder_;
    std::vector<AffineLinear> dense_;
};

}  // namespace

std::unique_ptr<Embedder> Embedder::load(const fs::path& dir, const RuntimeOptions& options) {
    return std::make_unique<TorchEmbedder>(dir, options);
}

}  // namespace t5s
