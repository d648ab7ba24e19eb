// LoRA runs: the base loaded as for fine-tuning, then frozen (no gradients, so no optimizer state);
// the adapter's A/B tensors become the only trainable parameters (and so the only ones a
// data-parallel run all-reduces). Checkpoints and out/final are PEFT adapter folders plus the
// tokenizer files; --merge adds out/merged, a full HF checkpoint with the adapter folded in.
#include <c10/core/GradMode.h>
#include <unistd.h>

#include <cstdio>

#include "t5s/atomic_file.h"
#include "torch/lora.h"
#include "trainer/runner.h"

namespace t5s {
namespace fs = std::filesystem;

void Runner::setup_lora() {
    int64_t base_count = 0;
    for (const auto& p : model_.named) base_count += p.tensor.numel();
    LoraAdapter adapter;
    if (!resume_from_.empty()) {
        adapter = load_lora_adapter(resume_from_, model_.config);
    } else if (!o_.adapter_dir.empty()) {
        adapter = load_lora_adapter(o_.adapter_dir, model_.config);  // its config decides r, alpha, targets
    } else {
        LoraSettings s;
        s.r = o_.lora_r;
        s.alpha = o_.lora_alpha;
        s.dropout = o_.lora_dropout;
        s.targets = parse_lora_targets(o_.lora_targets, model_.config);
        s.rslora = o_.lora_rslora;
        s.base_model = o_.model_dir;
        adapter = init_lora_adapter(model_.config, s, static_cast<int64_t>(o_.seed));  // same seed on every rank
    }
    if (adapter.settings.base_model.empty()) adapter.settings.base_model = o_.model_dir;
    lora_ = make_lora_trainable(model_, std::move(adapter), device_, o_.lora_base_precision);
    const int64_t trainable = lora_->parameter_count();
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "LoRA r=%lld alpha=%g dropout=%g%s on %zu layers, base held in %s: trainable parameters %lld of %lld (%.3f%%)",
                  static_cast<long long>(lora_->settings.r), lora_->settings.alpha, lora_->settings.dropout,
                  lora_->settings.rslora ? " rsLoRA" : "", lora_->modules.size(), to_string(o_.lora_base_precision),
                  static_cast<long long>(trainable), static_cast<long long>(base_count + trainable),
                  100.0 * trainable / double(base_count + trainable));
    message(TrainingEvent::Kind::Message, buf);
}

// The saved config.json records the prefix the model was trained with as its default task, so
// generate, serve and the app apply it without being told (t5s/model_config.h).
ModelConfig Runner::trained_config() const { return with_training_task(model_.config, o_.data.source_prefix); }

void Runner::write_weights(const fs::path& dir, bool bf16) {
    if (!lora_) {
        write_hf_model(dir, trained_config(), model_.params, tokenizer_files_, bf16);
        return;
    }
    save_lora_adapter(dir, *lora_);  // adapters stay fp32 (PEFT's default)
    for (const auto& [name, content] : tokenizer_files_.files) write_file_atomic(dir / name, content);
}

void Runner::write_merged() {
    const fs::path tmp = out_ / (".tmp-merged-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp);
    {
        c10::NoGradGuard no_grad;
        // merge_lora_into replaces entries, never the base. A base held below fp32 for training is
        // merged from its fp32 checkpoint, as PEFT merges into the loaded model.
        std::map<std::string, at::Tensor> merged =
            o_.lora_base_precision == Precision::Fp32 ? model_.params : load_trainable(o_.model_dir, at::kCPU).params;
        merge_lora_into(merged, *lora_);
        write_hf_model(tmp, trained_config(), merged, tokenizer_files_, o_.save_dtype_bf16);
    }
    publish_dir(tmp, out_ / "merged");
}

}  // namespace t5s
