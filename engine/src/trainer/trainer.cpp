// TrainingJob: data -> tokenizer/model -> memory plan -> the training loop with eval, checkpoints,
// resume, early stopping, pause/stop and CUDA OOM recovery.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/autograd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <thread>

#include "atomic_file.h"
#include "file_io.h"
#include "t5s/error.h"
#include "t5s/model.h"
#include "t5s/tokenizer.h"
#include "t5s/trainer.h"
#include "torch/decoding.h"
#include "torch/runtime.h"
#include "trainer/checkpoint.h"
#include "trainer/core.h"
#include "trainer/memory.h"
#include "torch/torch_errors.h"

namespace t5s {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;


// Everything a checkpoint needs besides the weights and optimizer tensors.
struct RunState {
    int64_t step = 0;              // optimizer steps done
    int64_t epoch = 0;             // current epoch
    int64_t batch_in_epoch = 0;    // micro-batches of `epoch` already consumed
    double best_eval = -1;
    std::string best_checkpoint;
    int evals_without_improvement = 0;
    int micro_batch = 0, grad_accum = 0;  // after OOM reductions
    double loss_scale = 65536.0;   // fp16 dynamic loss scale
    int64_t good_steps = 0;        // fp16: steps since the last overflow
    int64_t tokens_seen = 0;
};

class Runner {
public:
    Runner(const TrainingOptions& o, std::atomic<bool>& paused, std::atomic<bool>& stop,
           const std::function<void(const TrainingEvent&)>& cb)
        : o_(o), paused_(paused), stop_(stop), cb_(cb) {}

    TrainingResult run();

private:
    void emit(TrainingEvent e) {
        if (cb_) cb_(e);
    }
    void message(TrainingEvent::Kind kind, const std::string& text) {
        TrainingEvent e;
        e.kind = kind;
        e.message = text;
        e.step = st_.step;
        emit(e);
    }
    void setup_runtime();
    void setup_data_and_model();
    void load_resume_state(const fs::path& ckpt);
    double evaluate(std::vector<SampleGeneration>* samples);
    void save_checkpoint(const std::string& reason);
    void prune_checkpoints();
    void write_final();
    void log_line(const json& j);
    void truncate_log_after(int64_t step);
    MemorySample memory() const;
    int64_t baseline_rss_ = 0;    // process RSS when the run started
    int64_t estimated_peak_ = 0;  // the memory plan's total
    std::vector<std::vector<int64_t>>& epoch_batches();

    const TrainingOptions& o_;
    std::atomic<bool>& paused_;
    std::atomic<bool>& stop_;
    const std::function<void(const TrainingEvent&)>& cb_;

    at::Device device_{at::kCPU};
    fs::path out_, spiece_, tokenizer_src_;
    TokenizerFiles tokenizer_files_;
    std::unique_ptr<Tokenizer> tok_;
    TrainableModel model_;
    std::unique_ptr<Optimizer> opt_;
    double dropout_ = 0;
    std::vector<TokenizedPair> train_, eval_;
    std::vector<TextPair> eval_text_;
    RunState st_;
    int64_t total_steps_ = 0;
    int64_t batches_per_epoch_ = 0;
    int64_t cached_epoch_ = -1;
    std::vector<std::vector<int64_t>> batches_;
    fs::path log_path_;
    fs::path resume_from_;
    Clock::time_point t0_;
    double last_loss_ = 0;
};

MemorySample Runner::memory() const {
    if (device_.is_cuda()) return cuda_memory(device_.index() < 0 ? 0 : device_.index());
    return host_memory();
}

void Runner::setup_runtime() {
    RuntimeOptions ro;
    ro.device = o_.device == TrainDevice::Cuda ? Device::Cuda : o_.device == TrainDevice::Cpu ? Device::Cpu : Device::Auto;
    ro.precision = o_.precision == TrainPrecision::Fp16 ? Precision::Fp16 : Precision::Fp32;
    ro.threads = o_.threads;
    if (o_.precision == TrainPrecision::Fp16 && ro.device == Device::Auto && !cuda_available())
        throw Error(ErrorCode::InvalidArgument, "--precision fp16 needs a CUDA GPU; use bf16 on the CPU");
    ResolvedRuntime rt = resolve_runtime(ro);
    device_ = rt.device;
}

std::vector<std::vector<int64_t>>& Runner::epoch_batches() {
    if (cached_epoch_ != st_.epoch) {
        batches_ = make_epoch_batches(train_, st_.micro_batch, o_.group_by_length, o_.seed, st_.epoch);
        cached_epoch_ = st_.epoch;
    }
    return batches_;
}

void Runner::setup_data_and_model() {
    out_ = o_.out_dir;
    std::error_code ec;
    fs::create_directories(out_, ec);
    if (ec) throw Error(ErrorCode::InvalidArgument, out_.string() + ": cannot create output directory: " + ec.message());

    if (!o_.model_dir.empty() && !fs::is_directory(o_.model_dir, ec))
        throw Error(ErrorCode::FileNotFound, o_.model_dir + ": model directory not found");
    if (!o_.init_config.empty() && !fs::exists(o_.init_config, ec))
        throw Error(ErrorCode::FileNotFound, o_.init_config + ": config file not found");
    // Resume point.
    if (o_.resume) {
        auto cks = list_checkpoints(out_);
        if (!cks.empty()) resume_from_ = cks.back().second;
        else message(TrainingEvent::Kind::Message, "--resume: no checkpoint in " + out_.string() + ", starting fresh");
    }

    // Data.
    std::vector<TextPair> pairs;
    int64_t bad_rows = 0;
    std::vector<std::string> files{o_.data_file};
    files.insert(files.end(), o_.extra_data_files.begin(), o_.extra_data_files.end());
    for (const auto& f : files) {
        PairSet ps = load_pairs(f, o_.data);
        bad_rows += static_cast<int64_t>(ps.bad_rows.size());
        for (const auto& b : ps.bad_rows) message(TrainingEvent::Kind::Message, "skipped " + b.where + ": " + b.reason);
        pairs.insert(pairs.end(), std::make_move_iterator(ps.pairs.begin()), std::make_move_iterator(ps.pairs.end()));
    }
    if (!o_.eval_file.empty()) {
        PairSet ps = load_pairs(o_.eval_file, o_.data);
        for (const auto& b : ps.bad_rows) message(TrainingEvent::Kind::Message, "skipped " + b.where + ": " + b.reason);
        eval_text_ = std::move(ps.pairs);
    } else if (o_.eval_split > 0 && pairs.size() >= 10) {
        // Deterministic split: a seeded shuffle of indices, the first share held out.
        std::vector<size_t> idx(pairs.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::mt19937_64 rng(o_.seed ^ 0x5eed5eedull);
        for (size_t i = idx.size(); i > 1; --i) std::swap(idx[i - 1], idx[static_cast<size_t>(rng() % i)]);
        const size_t n_eval = std::max<size_t>(1, static_cast<size_t>(std::round(pairs.size() * o_.eval_split)));
        std::vector<bool> is_eval(pairs.size(), false);
        for (size_t i = 0; i < n_eval; ++i) is_eval[idx[i]] = true;
        std::vector<TextPair> train;
        for (size_t i = 0; i < pairs.size(); ++i) (is_eval[i] ? eval_text_ : train).push_back(std::move(pairs[i]));
        pairs = std::move(train);
    }
    if (o_.max_eval_pairs > 0 && static_cast<int64_t>(eval_text_.size()) > o_.max_eval_pairs) eval_text_.resize(o_.max_eval_pairs);

    // Tokenizer and model.
    if (!resume_from_.empty()) {
        spiece_ = resume_from_ / "spiece.model";
        tokenizer_src_ = resume_from_;
    } else if (!o_.model_dir.empty()) {
        spiece_ = fs::path(o_.model_dir) / "spiece.model";
        tokenizer_src_ = o_.model_dir;
        if (!fs::exists(spiece_, ec)) throw Error(ErrorCode::FileNotFound, spiece_.string() + ": the model folder has no spiece.model");
    } else {
        spiece_ = out_ / "spiece.model";
        if (!fs::exists(spiece_, ec)) {
            message(TrainingEvent::Kind::Message, "training a " + std::to_string(o_.vocab_size) + "-piece SentencePiece vocabulary on the data");
            std::vector<std::string> texts;
            for (const auto& p : pairs) texts.push_back(p.source), texts.push_back(p.target);
            const std::string prefix = (out_ / (".spiece-tmp-" + std::to_string(::getpid()))).string();
            train_sentencepiece(texts, prefix, o_.vocab_size, std::max(1, o_.threads));
            fs::rename(prefix + ".model", spiece_, ec);
            if (ec) throw Error(ErrorCode::Internal, spiece_.string() + ": " + ec.message());
        }
    }
    tok_ = std::make_unique<Tokenizer>(Tokenizer::load(spiece_));
    tokenizer_files_ = read_tokenizer_files(spiece_, tokenizer_src_);

    if (!resume_from_.empty()) {
        model_ = load_trainable(resume_from_, device_);
    } else if (!o_.model_dir.empty()) {
        model_ = load_trainable(o_.model_dir, device_);
    } else {
        ModelConfig c = parse_model_config(read_text(o_.init_config), o_.init_config);
        c.vocab_size = tok_->vocab_size();
        model_ = init_trainable(c, o_.seed, device_);
    }
    if (tok_->vocab_size() > model_.config.vocab_size)
        throw Error(ErrorCode::CorruptFile, spiece_.string() + ": tokenizer has more ids than the model's vocab_size");
    dropout_ = o_.dropout >= 0 ? o_.dropout : model_.config.dropout_rate;
    model_.net->set_training(true, dropout_);
    model_.net->set_gradient_checkpointing(o_.gradient_checkpointing);

    // Tokenize.
    for (const auto& p : pairs) train_.push_back(tokenize_pair(*tok_, p.source, p.target, o_.max_source_len, o_.max_target_len));
    for (const auto& p : eval_text_) eval_.push_back(tokenize_pair(*tok_, p.source, p.target, o_.max_source_len, o_.max_target_len));
    DataReport report = make_data_report(train_, pairs, bad_rows, tok_->unk_id(), o_.max_source_len, o_.max_target_len);
    {
        TrainingEvent e;
        e.kind = TrainingEvent::Kind::Report;
        e.message = report.to_text() + "\neval: " + std::to_string(eval_.size()) + " pairs";
        emit(e);
    }
}

void Runner::load_resume_state(const fs::path& ck) {
    json j = json::parse(read_text(ck / "trainer_state.json"));
    st_.step = j.at("global_step");
    st_.epoch = j.at("epoch");
    st_.batch_in_epoch = j.at("batch_in_epoch");
    st_.best_eval = j.value("best_eval_loss", -1.0);
    st_.best_checkpoint = j.value("best_checkpoint", "");
    st_.evals_without_improvement = j.value("evals_without_improvement", 0);
    st_.micro_batch = j.value("micro_batch", o_.batch_size);
    st_.grad_accum = j.value("grad_accum", o_.grad_accum);
    st_.loss_scale = j.value("loss_scale", 65536.0);
    st_.good_steps = j.value("good_steps", 0);
    st_.tokens_seen = j.value("tokens_seen", 0);
    if (j.value("optimizer", "") != to_string(o_.optimizer))
        throw Error(ErrorCode::InvalidArgument, (ck / "trainer_state.json").string() + ": checkpoint was trained with optimizer '" +
                                                    j.value("optimizer", "") + "', not '" + to_string(o_.optimizer) + "'");
    auto state = read_tensor_file(ck / "training_state.safetensors");
    opt_->load_state_tensors(state);
    auto it = state.find("rng/cpu");
    if (it != state.end()) {
        at::Generator gen = at::detail::getDefaultCPUGenerator();
        std::lock_guard<std::mutex> lock(gen.mutex());
        gen.set_state(it->second);
    }
    if (device_.is_cuda()) {
        auto itc = state.find("rng/cuda");
        if (itc != state.end()) {
            at::Generator gen = at::globalContext().defaultGenerator(device_);
            std::lock_guard<std::mutex> lock(gen.mutex());
            gen.set_state(itc->second);
        }
    }
    truncate_log_after(st_.step);
    message(TrainingEvent::Kind::Message, "resumed from " + ck.string() + " at step " + std::to_string(st_.step));
}

void Runner::log_line(const json& j) {
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
            Batch b = make_batch_from_ids(src, src, device_);
            GenerationOptions g;
            g.max_new_tokens = o_.sample_max_new_tokens;
            at::Tensor enc = net.encode(b.input_ids, b.attention_mask);
            auto out = decode_greedy_or_sample(net, enc, b.attention_mask, g, nullptr, nullptr);
            for (size_t k = 0; k < n; ++k) {
                samples->push_back({eval_text_[k].source, eval_text_[k].target, out[k].empty() ? "" : tok_->decode(out[k][0].ids)});
            }
        }
    }
    net.set_training(true, dropout_);
    return tokens ? sum / tokens : -1;
}

void Runner::save_checkpoint(const std::string& reason) {
    const std::string name = "checkpoint-" + std::to_string(st_.step);
    const fs::path tmp = out_ / (".tmp-" + name + "-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp);
    write_hf_model(tmp, model_.config, model_.params, tokenizer_files_, false);
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
              {"last_loss", last_loss_},
              {"reason", reason}};
    // trainer_state.json last: list_checkpoints only accepts folders that have it.
    write_file_atomic(tmp / "trainer_state.json", j.dump(2) + "\n");
    publish_dir(tmp, out_ / name);
    prune_checkpoints();
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
    write_hf_model(tmp, model_.config, model_.params, tokenizer_files_, o_.save_dtype_bf16);
    publish_dir(tmp, out_ / "final");
}

TrainingResult Runner::run() {
    t0_ = Clock::now();
    baseline_rss_ = host_memory().current;  // before data and model: the libraries' share of the peak
    validate_training_options(o_);
    setup_runtime();
    log_path_ = o_.log_file.empty() ? fs::path(o_.out_dir) / "train_log.jsonl" : fs::path(o_.log_file);
    setup_data_and_model();
    if (train_.empty()) throw Error(ErrorCode::InvalidArgument, o_.data_file + ": no training pairs left after the validation split");

    // Optimizer.
    if (o_.optimizer == OptimizerKind::AdamW) {
        opt_ = make_adamw(model_.named, {o_.adam_beta1, o_.adam_beta2, o_.adam_eps, o_.weight_decay});
    } else {
        AdafactorSettings s;
        s.weight_decay = o_.weight_decay;
        s.relative_step = o_.lr < 0;      // no lr: transformers' default relative step sizes
        s.scale_parameter = o_.lr < 0;    // explicit lr: the T5 fine-tuning recipe (scale_parameter=False)
        opt_ = make_adafactor(model_.named, s);
    }
    const double base_lr = o_.lr > 0 ? o_.lr : 5e-4;

    st_.micro_batch = o_.batch_size;
    st_.grad_accum = o_.grad_accum;
    if (!resume_from_.empty()) load_resume_state(resume_from_);
    else {
        at::Generator gen = at::detail::getDefaultCPUGenerator();
        std::lock_guard<std::mutex> lock(gen.mutex());
        gen.set_current_seed(o_.seed);
        std::ofstream(log_path_, std::ios::trunc);
    }
    if (device_.is_cuda()) {
        at::Generator gen = at::globalContext().defaultGenerator(device_);
        if (resume_from_.empty()) {
            std::lock_guard<std::mutex> lock(gen.mutex());
            gen.set_current_seed(o_.seed);
        }
    }
    batches_per_epoch_ = static_cast<int64_t>((train_.size() + st_.micro_batch - 1) / st_.micro_batch);
    total_steps_ = o_.steps > 0 ? o_.steps
                                : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(o_.epochs * batches_per_epoch_ /
                                                                                      static_cast<double>(st_.grad_accum))));

    // Memory plan.
    {
        TrainingOptions planned = o_;
        planned.device = device_.is_cuda() ? TrainDevice::Cuda : TrainDevice::Cpu;
        // Batches are padded to their longest pair, not to the limits: plan for the data's longest
        // (length-grouped batching puts the longest together, so that batch is the peak).
        int64_t longest_source = 1, longest_target = 1;
        for (const auto& p : train_) {
            longest_source = std::max<int64_t>(longest_source, static_cast<int64_t>(p.source.size()));
            longest_target = std::max<int64_t>(longest_target, static_cast<int64_t>(p.target.size()));
        }
        planned.max_source_len = static_cast<int>(std::min<int64_t>(o_.max_source_len, longest_source));
        planned.max_target_len = static_cast<int>(std::min<int64_t>(o_.max_target_len, longest_target));
        MemoryEstimate m = estimate_training_memory(model_config_to_json(model_.config), planned, -1,
                                                    device_.is_cuda() ? -1 : baseline_rss_);
        estimated_peak_ = m.total_bytes;
        TrainingEvent e;
        e.kind = TrainingEvent::Kind::Plan;
        e.message = m.to_text() + " (at the data's longest pair: " + std::to_string(planned.max_source_len) + " source / " +
                    std::to_string(planned.max_target_len) + " target tokens)";
        emit(e);
    }
    if (device_.is_cuda()) cuda_reset_peak(device_.index() < 0 ? 0 : device_.index());

    TrainingResult result;
    const bool fp16 = o_.precision == TrainPrecision::Fp16;
    double loss_acc = 0;
    int loss_count = 0;
    int64_t tokens_since_log = 0;
    auto t_log = Clock::now();
    std::string stop_reason = "completed";
    bool stopped_early = false;

    while (st_.step < total_steps_) {
        while (paused_.load() && !stop_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (stop_.load()) {
            stop_reason = "stopped";
            break;
        }
        if (o_.max_time_s > 0 && std::chrono::duration<double>(Clock::now() - t0_).count() > o_.max_time_s) {
            stop_reason = "time_limit";
            message(TrainingEvent::Kind::Message, "time limit reached at step " + std::to_string(st_.step));
            break;
        }
        // Gather the micro-batches of one optimizer step (crossing epochs as needed).
        struct Pos {
            int64_t epoch, index;
        };
        std::vector<std::pair<Pos, std::vector<int64_t>>> micro;
        for (int k = 0; k < st_.grad_accum; ++k) {
            if (st_.batch_in_epoch >= static_cast<int64_t>(epoch_batches().size())) {
                st_.epoch += 1;
                st_.batch_in_epoch = 0;
            }
            auto& bs = epoch_batches();
            micro.push_back({{st_.epoch, st_.batch_in_epoch}, bs[static_cast<size_t>(st_.batch_in_epoch)]});
            st_.batch_in_epoch += 1;
        }
        int64_t target_total = 0, token_total = 0;
        std::vector<Batch> batches;
        for (auto& m : micro) {
            batches.push_back(make_batch(train_, m.second, device_));
            target_total += batches.back().target_tokens;
            token_total += batches.back().source_tokens + batches.back().target_tokens;
        }
        double step_loss = 0;
        bool oom = false;
        try {
            for (const Batch& b : batches) {
                at::Tensor loss = forward_loss(*model_.net, b, o_.precision);
                // Token-weighted accumulation: the sum over micro-batches equals the HF mean loss of
                // the whole effective batch.
                const double w = static_cast<double>(b.target_tokens) / static_cast<double>(std::max<int64_t>(1, target_total));
                step_loss += loss.item<double>() * w;
                at::Tensor scaled = loss * (w * (fp16 ? st_.loss_scale : 1.0));
                scaled.backward();
            }
        } catch (const std::exception& e) {
            if (!(device_.is_cuda() && o_.auto_reduce_batch_on_oom && is_out_of_memory(e) && st_.micro_batch > 1)) {
                if (is_out_of_memory(e)) throw out_of_memory_error(e, "training");
                throw;
            }
            oom = true;
        }
        if (oom) {
            for (auto& p : model_.named) p.tensor.mutable_grad() = at::Tensor();
            cuda_empty_cache();
            // Same effective batch: halve the micro-batch, double accumulation; redo this step
            // from the start of the current epoch position.
            const int64_t consumed = micro.front().first.index * st_.micro_batch;
            st_.epoch = micro.front().first.epoch;
            st_.micro_batch = std::max(1, st_.micro_batch / 2);
            st_.grad_accum *= 2;
            cached_epoch_ = -1;
            st_.batch_in_epoch = consumed / st_.micro_batch;
            message(TrainingEvent::Kind::Message, "CUDA out of memory: micro-batch reduced to " + std::to_string(st_.micro_batch) +
                                                      ", gradient accumulation " + std::to_string(st_.grad_accum));
            log_line({{"event", "oom"}, {"step", st_.step}, {"micro_batch", st_.micro_batch}, {"grad_accum", st_.grad_accum}});
            continue;
        }
        // fp16: unscale and skip the step on overflow.
        bool skip = false;
        if (fp16) {
            c10::NoGradGuard ng;
            for (auto& p : model_.named)
                if (p.tensor.grad().defined()) p.tensor.mutable_grad().mul_(1.0 / st_.loss_scale);
        }
        const double grad_norm = clip_grad_norm(model_.named, o_.max_grad_norm);
        if (fp16) {
            if (!std::isfinite(grad_norm)) {
                skip = true;
                st_.loss_scale *= 0.5;
                st_.good_steps = 0;
            } else if (++st_.good_steps % 2000 == 0) {
                st_.loss_scale *= 2.0;
            }
        }
        const double lr = base_lr * schedule_factor(o_.schedule, st_.step, o_.warmup_steps, total_steps_);
        double used_lr = lr;
        if (!skip) used_lr = opt_->step(lr);
        for (auto& p : model_.named) p.tensor.mutable_grad() = at::Tensor();
        st_.step += 1;
        st_.tokens_seen += token_total;
        last_loss_ = step_loss;
        loss_acc += step_loss;
        loss_count += 1;
        tokens_since_log += token_total;

        const MemorySample mem = memory();
        if (st_.step % o_.log_every == 0 || st_.step == total_steps_) {
            const double dt = std::chrono::duration<double>(Clock::now() - t_log).count();
            const double elapsed = std::chrono::duration<double>(Clock::now() - t0_).count();
            TrainingEvent e;
            e.kind = TrainingEvent::Kind::Step;
            e.step = st_.step;
            e.total_steps = total_steps_;
            e.epoch = st_.epoch + static_cast<double>(st_.batch_in_epoch) / std::max<int64_t>(1, static_cast<int64_t>(epoch_batches().size()));
            e.loss = loss_acc / loss_count;
            e.lr = used_lr;
            e.grad_norm = grad_norm;
            e.tokens_per_s = dt > 0 ? tokens_since_log / dt : 0;
            e.elapsed_s = elapsed;
            e.memory_bytes = mem.current;
            e.peak_memory_bytes = mem.peak;
            e.batch_size = st_.micro_batch;
            e.grad_accum = st_.grad_accum;
            const double per_step = dt / std::max(1, loss_count);
            e.eta_s = per_step * static_cast<double>(total_steps_ - st_.step);
            log_line({{"step", e.step}, {"epoch", e.epoch}, {"loss", e.loss}, {"lr", e.lr}, {"grad_norm", grad_norm},
                      {"tokens_per_s", e.tokens_per_s}, {"memory_bytes", e.memory_bytes}, {"peak_memory_bytes", e.peak_memory_bytes},
                      {"elapsed_s", elapsed}, {"skipped", skip}});
            emit(e);
            loss_acc = 0;
            loss_count = 0;
            tokens_since_log = 0;
            t_log = Clock::now();
        }
        result.peak_memory_bytes = std::max(result.peak_memory_bytes, mem.peak);

        const bool last = st_.step == total_steps_;
        const bool do_save = (o_.save_every > 0 && st_.step % o_.save_every == 0) || last;
        const bool do_eval = !eval_.empty() && ((o_.eval_every > 0 && st_.step % o_.eval_every == 0) || (o_.eval_every == 0 && do_save) || last);
        bool improved = false;
        if (do_eval) {
            std::vector<SampleGeneration> samples;
            const double el = evaluate(&samples);
            improved = st_.best_eval < 0 || el < st_.best_eval;
            if (improved) {
                st_.best_eval = el;
                st_.evals_without_improvement = 0;
            } else {
                st_.evals_without_improvement += 1;
            }
            TrainingEvent e;
            e.kind = TrainingEvent::Kind::Eval;
            e.step = st_.step;
            e.total_steps = total_steps_;
            e.eval_loss = el;
            e.best_eval_loss = st_.best_eval;
            e.samples = samples;
            e.elapsed_s = std::chrono::duration<double>(Clock::now() - t0_).count();
            json js = json::array();
            for (const auto& s : samples) js.push_back({{"source", s.source}, {"reference", s.reference}, {"prediction", s.prediction}});
            log_line({{"step", st_.step}, {"eval_loss", el}, {"best_eval_loss", st_.best_eval}, {"samples", js}});
            emit(e);
        }
        if (improved) st_.best_checkpoint = "checkpoint-" + std::to_string(st_.step);
        if (do_save || improved) save_checkpoint(improved ? "best" : "periodic");
        if (o_.patience > 0 && st_.evals_without_improvement >= o_.patience) {
            stop_reason = "early_stopping";
            stopped_early = true;
            message(TrainingEvent::Kind::Message, "early stopping: no eval improvement in " + std::to_string(o_.patience) + " evals");
            break;
        }
    }
    if ((stop_reason == "stopped" || stop_reason == "time_limit") && st_.step > 0) {
        const auto cks = list_checkpoints(out_);
        if (cks.empty() || cks.back().first != st_.step) save_checkpoint(stop_reason);
    }
    (void)stopped_early;
    write_final();

    result.steps = st_.step;
    result.final_loss = last_loss_;
    result.best_eval_loss = st_.best_eval;
    result.final_model_dir = (out_ / "final").string();
    result.best_checkpoint = st_.best_checkpoint.empty() ? "" : (out_ / st_.best_checkpoint).string();
    result.stop_reason = stop_reason;
    result.elapsed_s = std::chrono::duration<double>(Clock::now() - t0_).count();
    result.peak_memory_bytes = std::max(result.peak_memory_bytes, memory().peak);
    if (estimated_peak_ > 0 && result.peak_memory_bytes > 0) {
        // The plan's honesty check, for the user and for calibrating the estimate.
        char buf[160];
        std::snprintf(buf, sizeof buf, "memory: measured peak %.0f MiB, estimated %.0f MiB (%+.0f%%)",
                      result.peak_memory_bytes / 1048576.0, estimated_peak_ / 1048576.0,
                      100.0 * (double(estimated_peak_) - double(result.peak_memory_bytes)) / double(result.peak_memory_bytes));
        message(TrainingEvent::Kind::Message, buf);
    }
    TrainingEvent e;
    e.kind = TrainingEvent::Kind::Finished;
    e.step = st_.step;
    e.total_steps = total_steps_;
    e.loss = last_loss_;
    e.best_eval_loss = st_.best_eval;
    e.elapsed_s = result.elapsed_s;
    e.peak_memory_bytes = result.peak_memory_bytes;
    e.stop_reason = stop_reason;
    e.message = result.final_model_dir;
    emit(e);
    return result;
}

}  // namespace

TrainingJob::TrainingJob(TrainingOptions options) : options_(std::move(options)) {}
TrainingJob::~TrainingJob() = default;

TrainingResult TrainingJob::run(const std::function<void(const TrainingEvent&)>& on_event) {
    Runner r(options_, paused_, stop_, on_event);
    try {
        return r.run();
    } catch (const Error&) {
        throw;
    } catch (const c10::Error& e) {
        if (is_out_of_memory(e)) throw out_of_memory_error(e);
        throw Error(ErrorCode::Internal, std::string("torch: ") + e.what_without_backtrace());
    } catch (const std::bad_alloc& e) {
        throw out_of_memory_error(e);
    }
}

}  // namespace t5s
