#pragma once
// HF-format checkpoints (what transformers' save_pretrained writes) plus the training state needed
// to resume, written into a temporary folder that is renamed into place only when complete.
#include <ATen/ATen.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "t5s/model_config.h"

namespace t5s {

// The tokenizer files of a checkpoint, held in memory (the folder they came from may be pruned).
struct TokenizerFiles {
    std::map<std::string, std::string> files;  // file name -> content
};
// The tokenizer file (spiece.model, or tokenizer.json for a base saved by a fast tokenizer alone)
// plus tokenizer_config.json / special_tokens_map.json / added_tokens.json / tokenizer.json from
// `folder` when present; missing configs are generated for a T5Tokenizer with 100 sentinels.
TokenizerFiles read_tokenizer_files(const std::filesystem::path& tokenizer_file, const std::filesystem::path& folder);

// Writes config.json, model.safetensors (shared.weight once; lm_head.weight when untied),
// generation_config.json and the tokenizer files into `dir` (which must exist).
void write_hf_model(const std::filesystem::path& dir, const ModelConfig& config, const std::map<std::string, at::Tensor>& params,
                    const TokenizerFiles& tokenizer, bool bf16);

// Tensors -> safetensors (CPU copies in their dtype; F32/BF16/F16/F64/I64/U8 supported).
void write_tensor_file(const std::filesystem::path& file, const std::map<std::string, at::Tensor>& tensors);
std::map<std::string, at::Tensor> read_tensor_file(const std::filesystem::path& file);

// Publishes `tmp` as `final` atomically (rename; an existing `final` is moved aside first and
// removed after). fsyncs the parent directory.
void publish_dir(const std::filesystem::path& tmp, const std::filesystem::path& final);

// Folders that publish_dir's writers left behind when killed (`.tmp-<name>-<pid>`, `.old-<name>-
// <pid>`, `.spiece-tmp-<pid>*`) whose process is gone: a temp folder is removed; a set-aside
// `.old-<name>` whose `<name>` never got replaced is moved back (it is the last published copy).
// Folders of live processes are left alone. Returns how many entries it removed or restored.
int recover_abandoned_dirs(const std::filesystem::path& out_dir);

// checkpoint-<step> folders in `out_dir` that are complete (have trainer_state.json), ascending.
std::vector<std::pair<int64_t, std::filesystem::path>> list_checkpoints(const std::filesystem::path& out_dir);

}  // namespace t5s
