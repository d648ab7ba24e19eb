#include "trainer/checkpoint.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <cerrno>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/file_io.h"
#include "t5s/atomic_file.h"
#include "t5s/error.h"
#include "t5s/safetensors.h"

namespace t5s {
namespace fs = std::filesystem;

namespace {

DType to_dtype(at::ScalarType t) {
    switch (t) {
        case at::kFloat: return DType::F32;
        case at::kBFloat16: return DType::BF16;
        case at::kHalf: return DType::F16;
        case at::kDouble: return DType::F64;
        case at::kLong: return DType::I64;
        case at::kInt: return DType::I32;
        case at::kByte: return DType::U8;
        default: throw Error(ErrorCode::Internal, "cannot store tensor dtype in safetensors");
    }
}

at::ScalarType to_scalar(DType d) {
    switch (d) {
        case DType::F32: return at::kFloat;
        case DType::BF16: return at::kBFloat16;
        case DType::F16: return at::kHalf;
        case DType::F64: return at::kDouble;
        case DType::I64: return at::kLong;
        case DType::I32: return at::kInt;
        case DType::U8: return at::kByte;
        default: throw Error(ErrorCode::CorruptFile, "unsupported dtype in training state");
    }
}

std::string default_tokenizer_config() {
    nlohmann::json j = {{"tokenizer_class", "T5Tokenizer"},
                        {"eos_token", "</s>"},
                        {"unk_token", "<unk>"},
                        {"pad_token", "<pad>"},
                        {"extra_ids", 100},
                        {"model_max_length", 512},
                        {"legacy", true}};
    nlohmann::json extra = nlohmann::json::array();
    for (int i = 0; i < 100; ++i) extra.push_back("<extra_id_" + std::to_string(i) + ">");
    j["additional_special_tokens"] = extra;
    return j.dump(2) + "\n";
}

std::string default_special_tokens_map() {
    nlohmann::json j = {{"eos_token", "</s>"}, {"unk_token", "<unk>"}, {"pad_token", "<pad>"}};
    nlohmann::json extra = nlohmann::json::array();
    for (int i = 0; i < 100; ++i) extra.push_back("<extra_id_" + std::to_string(i) + ">");
    j["additional_special_tokens"] = extra;
    return j.dump(2) + "\n";
}

}  // namespace

void write_tensor_file(const fs::path& file, const std::map<std::string, at::Tensor>& tensors) {
    std::vector<at::Tensor> keep;
    std::vector<TensorToWrite> out;
    keep.reserve(tensors.size());
    for (const auto& [name, t] : tensors) {
        at::Tensor c = t.detach().to(at::kCPU).contiguous();
        keep.push_back(c);
        out.push_back({name, to_dtype(c.scalar_type()), std::vector<int64_t>(c.sizes().begin(), c.sizes().end()), c.data_ptr(),
                       static_cast<size_t>(c.numel()) * c.element_size()});
    }
    write_safetensors(file, out);
}

std::map<std::string, at::Tensor> read_tensor_file(const fs::path& file) {
    auto f = SafetensorsFile::open(file);
    std::map<std::string, at::Tensor> out;
    for (const auto& [name, v] : f->tensors()) {
        at::Tensor t = at::empty(v.shape, at::TensorOptions().dtype(to_scalar(v.dtype)));
        if (v.nbytes) std::memcpy(t.data_ptr(), v.data, v.nbytes);
        out[name] = t;
    }
    return out;
}

TokenizerFiles read_tokenizer_files(const fs::path& tokenizer_file, const fs::path& folder) {
    TokenizerFiles t;
    t.files[tokenizer_file.filename().string()] = read_text(tokenizer_file);  // spiece.model or tokenizer.json
    std::error_code ec;
    auto copy_or = [&](const char* name, const std::string& fallback) {
        const fs::path src = folder.empty() ? fs::path() : folder / name;
        if (!src.empty() && fs::exists(src, ec)) t.files[name] = read_text(src);
        else if (!fallback.empty()) t.files[name] = fallback;
    };
    copy_or("tokenizer_config.json", default_tokenizer_config());
    copy_or("special_tokens_map.json", default_special_tokens_map());
    copy_or("added_tokens.json", "");
    copy_or("tokenizer.json", "");  // the fast tokenizer's file, kept beside spiece.model when the base has both
    return t;
}

void write_hf_model(const fs::path& dir, const ModelConfig& config, const std::map<std::string, at::Tensor>& params,
                    const TokenizerFiles& tokenizer, bool bf16) {
    nlohmann::json cfg = nlohmann::json::parse(model_config_to_json(config));
    cfg["torch_dtype"] = bf16 ? "bfloat16" : "float32";
    write_file_atomic(dir / "config.json", cfg.dump(2) + "\n");
    std::map<std::string, at::Tensor> weights;
    for (const auto& [name, t] : params) {
        // save_pretrained drops the aliases of shared.weight (and lm_head when tied).
        if (name == "encoder.embed_tokens.weight" || name == "decoder.embed_tokens.weight") continue;
        if (name == "lm_head.weight" && config.tie_word_embeddings) continue;
        weights[name] = bf16 ? t.detach().to(at::kBFloat16) : t.detach().to(at::kFloat);
    }
    write_tensor_file(dir / "model.safetensors", weights);
    nlohmann::json gen = {{"decoder_start_token_id", config.decoder_start_token_id},
                          {"eos_token_id", config.eos_token_id},
                          {"pad_token_id", config.pad_token_id}};
    write_file_atomic(dir / "generation_config.json", gen.dump(2) + "\n");
    for (const auto& [name, content] : tokenizer.files) write_file_atomic(dir / name, content);
}

void publish_dir(const fs::path& tmp, const fs::path& final) {
    std::error_code ec;
    fsync_dir(tmp);
    fs::path aside;
    if (fs::exists(final, ec)) {
        aside = final.parent_path() / (".old-" + final.filename().string() + "-" + std::to_string(::getpid()));
        fs::remove_all(aside, ec);
        fs::rename(final, aside, ec);
        if (ec) throw Error(ErrorCode::Internal, final.string() + ": cannot replace: " + ec.message());
    }
    fs::rename(tmp, final, ec);
    if (ec) throw Error(ErrorCode::Internal, final.string() + ": cannot publish checkpoint: " + ec.message());
    fsync_dir(final.parent_path());
    if (!aside.empty()) fs::remove_all(aside, ec);
}

std::vector<std::pair<int64_t, fs::path>> list_checkpoints(const fs::path& out_dir) {
    std::vector<std::pair<int64_t, fs::path>> out;
    std::error_code ec;
    if (!fs::is_directory(out_dir, ec)) return out;
    for (const auto& e : fs::directory_iterator(out_dir, ec)) {
        const std::string n = e.path().filename().string();
        if (n.rfind("checkpoint-", 0) != 0 || !e.is_directory()) continue;
        const std::string num = n.substr(11);
        if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) continue;
        if (!fs::exists(e.path() / "trainer_state.json", ec)) continue;
        out.push_back({std::stoll(num), e.path()});
    }
    std::sort(out.begin(), out.end());
    return out;
}

namespace {

// The pid a writer put at the end of its temp name, or 0 when there is none.
pid_t writer_pid(const std::string& name) {
    const size_t dash = name.find_last_of('-');
    if (dash == std::string::npos) return 0;
    std::string digits = name.substr(dash + 1);
    const size_t end = digits.find_first_not_of("0123456789");
    if (end != std::string::npos) digits.resize(end);  // .spiece-tmp-<pid>.model, .vocab
    if (digits.empty() || digits.size() > 9) return 0;
    return static_cast<pid_t>(std::stol(digits));
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

int recover_abandoned_dirs(const fs::path& out_dir) {
    int recovered = 0;
    std::error_code ec;
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(out_dir, ec)) entries.push_back(e.path());
    for (const auto& path : entries) {
        const std::string n = path.filename().string();
        const bool temp = n.rfind(".tmp-", 0) == 0 || n.rfind(".spiece-tmp-", 0) == 0;
        const bool aside = n.rfind(".old-", 0) == 0;
        if (!temp && !aside) continue;
        const pid_t pid = writer_pid(n);
        if (pid <= 0 || pid == ::getpid() || process_alive(pid)) continue;
        if (aside) {
            const std::string name = n.substr(5, n.find_last_of('-') - 5);
            if (!name.empty() && !fs::exists(out_dir / name, ec)) {
                fs::rename(path, out_dir / name, ec);
                if (!ec) ++recovered;
                continue;
            }
        }
        if (fs::remove_all(path, ec) > 0 && !ec) ++recovered;
    }
    if (recovered) fsync_dir(out_dir);
    return recovered;
}

}  // namespace t5s
