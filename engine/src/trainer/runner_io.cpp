// Runner files: evaluation with sample generations, checkpoints (written by rank 0 alone, published
// by rename), pruning, the final model and the JSONL log.
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>
#include <unistd.h>

#include <fstream>

#include "decode/batch_decoder.h"
#include "t5s/atomic_file.h"
#include "t5s/run_folder.h"
#include "trainer/runner.h"

namespace t5s {
namespace fs = std::filesystem;
using json = nlohmann::json;

void Runner::log_line(const json& j) {
    if (!is_writer()) return;
    std::ofstream out(log_path_, std::ios::app);
    out << j.dump() << "\n";
}

void Runner::truncate_log_after(int64_t step) {
    // The killed run may have logged steps after its last checkpoint: drop them so the curve continues.
    std::ifstream in(log_path_);
    if (!in) return;
    std::string line, kept;
    while (std::getline(in, line)) {
        try {
            json j = json::parse(line);
            if (j.value("step", int64_t(0)) > step) continue;
        } catch (...) {
            continue;  // a line cut by the kill
        }
        kept += line + "\n";
    }
    in.close();
    write_file_atomic(log_path_, kept);
}

double Runner::evaluate(std::vector<SampleGeneration>* samples) {
    if (eval_.empty()) return -1;
    T5Network& net = *model_.net;
    net.set_training(false, 0.0);
    double sum = 0;
    int64_t tokens = 0;
    {
        c10::NoGradGuard no_grad;
        const int B = std::max(1, st_.micro_batch * 2);
        for (size_t i = 0; i < eval_.size(); i += B) {
            std::vector<int64_t> rows;
            for (size_t k = i; k < std::min(eval_.size(), i + B); ++k) rows.push_back(static_cast<int64_t>(k));
            Batch b = make_batch(eval_, rows, device_);
            const double l = forward_loss(net, b, o_.precision).item<double>();
            sum += l * b.target_tokens;
            tokens += b.target_tokens;
        }
        if (samples && o_.sample_count > 0) {
            const size_t n = std::min(eval_.size(), static_cast<size_t>(o_.sample_count));
            std::vector<std::vector<int>> src;
            for (size_t k = 0; k < n; ++k) src.push_back(eval_[k].source);
            GenerationOptions g;
            g.max_new_tokens = o_.sample_max_new_tokens;
            decode::BatchDecoder decoder(net, nullptr);  // greedy, no protected spans
            auto out = decode::decode_batch(decoder, src, g);
            for (size_t k = 0; k < n; ++k) {
                samples->push_back(
                    {eval_text_[k].source, eval_text_[k].target, out[k].empty() ? "" : tok_->decode(out[k][0].ids)});
            }
        }
    }
    net.set_training(true, dropout_);
    return tokens ? sum / tokens : -1;
}

void Runner::save_checkpoint(const std::string& reason) {
    const std::string name = "checkpoint-" + std::to_string(st_.step);
    if (!is_writer()) {
        dist_->barrier();  // every rank returns once rank 0 has published the checkpoint
        return;
    }
    const fs::path tmp = out_ / (".tmp-" + name + "-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp);
    write_weights(tmp, false);
    std::map<std::string, at::Tensor> state;
    opt_->state_tensors(state);
    {
        at::Generator gen = at::detail::getDefaultCPUGenerator();
        std::lock_guard<std::mutex> lock(gen.mutex());
        state["rng/cpu"] = gen.get_state();
    }
    if (device_.is_cuda()) {
        at::Generator gen = at::globalContext().defaultGenerator(device_);
        std::lock_guard<std::mutex> lock(gen.mutex());
        state["rng/cuda"] = gen.get_state();
    }
    write_tensor_file(tmp / "training_state.safetensors", state);
    json j = {{"global_step", st_.step},
              {"epoch", st_.epoch},
              {"batch_in_epoch", st_.batch_in_epoch},
              {"best_eval_loss", st_.best_eval},
              {"best_checkpoint", st_.best_checkpoint},
              {"evals_without_improvement", st_.evals_without_improvement},
              {"micro_batch", st_.micro_batch},
              {"grad_accum", st_.grad_accum},
              {"loss_scale", st_.loss_scale},
              {"good_steps", st_.good_steps},
              {"tokens_seen", st_.tokens_seen},
              {"optimizer", to_string(o_.optimizer)},
              {"schedule", to_string(o_.schedule)},
              {"total_steps", total_steps_},
              {"seed", o_.seed},
              {"world_size", dist_ ? dist_->world_size() : 1},
              {"last_loss", last_loss_},
              {"reason", reason},
              {"run", json::parse(run_identity_json(o_))}};  // what --resume checks: the same run, not another one
    // trainer_state.json last: list_checkpoints only accepts folders that have it.
    write_file_atomic(tmp / "trainer_state.json", j.dump(2) + "\n");
    publish_dir(tmp, out_ / name);
    prune_checkpoints();
    if (dist_) dist_->barrier();
    TrainingEvent e;
    e.kind = TrainingEvent::Kind::Checkpoint;
    e.step = st_.step;
    e.message = (out_ / name).string();
    emit(e);
}

void Runner::prune_checkpoints() {
    auto cks = list_checkpoints(out_);
    const size_t keep = static_cast<size_t>(o_.keep_last);
    for (size_t i = 0; i + keep < cks.size(); ++i) {
        if (cks[i].second.filename().string() == st_.best_checkpoint) continue;
        std::error_code ec;
        // Rename first so a crash mid-delete never leaves a half folder that looks like a checkpoint.
        const fs::path doomed = out_ / (".del-" + cks[i].second.filename().string());
        fs::rename(cks[i].second, doomed, ec);
        fs::remove_all(ec ? cks[i].second : doomed, ec);
    }
}

void Runner::write_final() {
    const fs::path tmp = out_ / (".tmp-final-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp);
    write_weights(tmp, o_.save_dtype_bf16);
    publish_dir(tmp, out_ / "final");
    if (lora_ && o_.merge_adapter) write_merged();
}

}  // namespace t5s
