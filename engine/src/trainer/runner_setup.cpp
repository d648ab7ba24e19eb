// Runner setup: device, data (with the validation split), tokenizer and model (fresh, fine-tuned or
// resumed), optimizer, seeds or the resumed state, and the memory plan.
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "base/file_io.h"
#include "t5s/error.h"
#include "t5s/run_folder.h"
#include "torch/lora.h"
#include "torch/runtime.h"
#include "trainer/runner.h"

namespace t5s {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

void set_seed(at::Generator gen, uint64_t seed) {
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(seed);
}

void set_state(at::Generator gen, const at::Tensor& state) {
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state);
}

}  // namespace

void Runner::prepare() {
    setup_runtime();
    log_path_ = o_.log_file.empty() ? fs::path(o_.out_dir) / "train_log.jsonl" : fs::path(o_.log_file);
    setup_data_and_model();
    if (train_.empty())
        throw Error(ErrorCode::InvalidArgument, o_.data_file + ": no training pairs left after the validation split");
    setup_optimizer();
    st_.micro_batch = o_.batch_size;
    st_.grad_accum = o_.grad_accum;
    seed_or_resume();
    const int world = dist_ ? dist_->world_size() : 1;
    const int64_t global_batch = static_cast<int64_t>(st_.micro_batch) * world;
    batches_per_epoch_ = (static_cast<int64_t>(train_.size()) + global_batch - 1) / global_batch;
    total_steps_ = o_.steps > 0 ? o_.steps
                                : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(o_.epochs * batches_per_epoch_ /
                                                                                      static_cast<double>(st_.grad_accum))));
    plan_memory();
    if (device_.is_cuda()) cuda_reset_peak(device_.index() < 0 ? 0 : device_.index());
}

MemorySample Runner::memory() const {
    if (device_.is_cuda()) return cuda_memory(device_.index() < 0 ? 0 : device_.index());
    return host_memory();
}

void Runner::setup_runtime() {
    RuntimeOptions ro;
    ro.device = o_.device;
    ro.precision = o_.precision == Precision::Fp16 ? Precision::Fp16 : Precision::Fp32;
    ro.threads = o_.threads;
    if (o_.precision == Precision::Fp16 && ro.device == Device::Auto && !cuda_available())
        throw Error(ErrorCode::InvalidArgument, "--precision fp16 needs a CUDA GPU; use bf16 on the CPU");
    ResolvedRuntime rt = resolve_runtime(ro);
    device_ = rt.device;
    // One process per GPU: LOCAL_RANK picks it (torchrun, srun and PyTorchJob all set it).
    if (device_.is_cuda() && dist_) device_ = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(dist_->local_rank()));
}

void Runner::setup_data_and_model() {
    out_ = o_.out_dir;
    std::error_code ec;
    fs::create_directories(out_, ec);
    if (ec) throw Error(ErrorCode::InvalidArgument, out_.string() + ": cannot create output directory: " + ec.message());
    if (is_writer()) out_lock_ = std::make_unique<RunFolderLock>(out_.string());

    if (!o_.model_dir.empty() && !fs::is_directory(o_.model_dir, ec))
        throw Error(ErrorCode::FileNotFound, o_.model_dir + ": model directory not found");
    if (!o_.init_config.empty() && !fs::exists(o_.init_config, ec))
        throw Error(ErrorCode::FileNotFound, o_.init_config + ": config file not found");
    // Rank 0 only: on a shared file system another node's live writer has a pid unknown here.
    if (const int n = (!dist_ || dist_->rank() == 0) ? recover_abandoned_dirs(out_) : 0)
        message(TrainingEvent::Kind::Message, out_.string() + ": cleaned " + std::to_string(n) + " folder(s) a killed run left");
    if (o_.resume) {
        auto cks = list_checkpoints(out_);
        if (!cks.empty()) {
            resume_from_ = cks.back().second;
            if (!check_resume_identity(o_, resume_from_.string()))
                message(TrainingEvent::Kind::Message, "--resume: " + resume_from_.string() +
                                                          " predates run identities; its model, data and prefix are not checked");
        } else message(TrainingEvent::Kind::Message, "--resume: no checkpoint in " + out_.string() + ", starting fresh");
    }
    std::vector<TextPair> pairs;
    int64_t bad_rows = 0;
    load_data(pairs, bad_rows);
    load_tokenizer_and_model(pairs);

    for (const auto& p : pairs) train_.push_back(tokenize_pair(*tok_, p.source, p.target, o_.max_source_len, o_.max_target_len));
    for (const auto& p : eval_text_)
        eval_.push_back(tokenize_pair(*tok_, p.source, p.target, o_.max_source_len, o_.max_target_len));
    DataReport report = make_data_report(train_, pairs, bad_rows, tok_->unk_id(), o_.max_source_len, o_.max_target_len);
    TrainingEvent e;
    e.kind = TrainingEvent::Kind::Report;
    e.message = report.to_text() + "\neval: " + std::to_string(eval_.size()) + " pairs";
    emit(e);
}

void Runner::load_data(std::vector<TextPair>& pairs, int64_t& bad_rows) {
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
    if (o_.max_eval_pairs > 0 && static_cast<int64_t>(eval_text_.size()) > o_.max_eval_pairs)
        eval_text_.resize(o_.max_eval_pairs);
}

void Runner::load_tokenizer_and_model(const std::vector<TextPair>& pairs) {
    std::error_code ec;
    if (!resume_from_.empty()) {
        spiece_ = Tokenizer::folder_file(resume_from_);                // spiece.model, else tokenizer.json
        if (spiece_.empty()) spiece_ = resume_from_ / "spiece.model";  // loading it says it is missing
        tokenizer_src_ = resume_from_;
    } else if (!o_.model_dir.empty()) {
        spiece_ = Tokenizer::folder_file(o_.model_dir);
        tokenizer_src_ = o_.model_dir;
        if (spiece_.empty())
            throw Error(ErrorCode::FileNotFound, o_.model_dir + ": the model folder has no spiece.model or tokenizer.json");
    } else {
        spiece_ = out_ / "spiece.model";
        if (dist_ && dist_->rank() != 0) dist_->barrier();  // rank 0 trains the vocabulary, the others wait for it
        if (!fs::exists(spiece_, ec)) {
            message(TrainingEvent::Kind::Message,
                    "training a " + std::to_string(o_.vocab_size) + "-piece SentencePiece vocabulary on the data");
            std::vector<std::string> texts;
            for (const auto& p : pairs) texts.push_back(p.source), texts.push_back(p.target);
            const std::string prefix = (out_ / (".spiece-tmp-" + std::to_string(::getpid()))).string();
            train_sentencepiece(texts, prefix, o_.vocab_size, std::max(1, o_.threads));
            fs::rename(prefix + ".model", spiece_, ec);
            if (ec) throw Error(ErrorCode::Internal, spiece_.string() + ": " + ec.message());
        }
        if (dist_ && dist_->rank() == 0) dist_->barrier();
    }
    tok_ = std::make_unique<Tokenizer>(spiece_.filename() == "tokenizer.json" ? Tokenizer::load_tokenizer_json(spiece_)
                                                                              : Tokenizer::load(spiece_));
    tokenizer_files_ = read_tokenizer_files(spiece_, tokenizer_src_);

    if (lora_run()) {
        model_ = load_trainable(o_.model_dir, device_);  // the frozen base; the adapter comes in setup_lora
    } else if (!resume_from_.empty()) {
        model_ = load_trainable(resume_from_, device_);
    } else if (!o_.model_dir.empty()) {
        model_ = load_trainable(o_.model_dir, device_);
    } else {
        ModelConfig c = parse_model_config(read_text(o_.init_config), o_.init_config);
        c.vocab_size = tok_->vocab_size();
        model_ = init_trainable(c, o_.seed, device_);  // same seed on every rank: the same initial weights
    }
    if (tok_->vocab_size() > model_.config.vocab_size)
        throw Error(ErrorCode::CorruptFile, spiece_.string() + ": tokenizer has more ids than the model's vocab_size");
    dropout_ = o_.dropout >= 0 ? o_.dropout : model_.config.dropout_rate;
    if (lora_run()) setup_lora();
    model_.net->set_training(true, dropout_);
    model_.net->set_gradient_checkpointing(o_.gradient_checkpointing);
}

void Runner::setup_optimizer() {
    if (o_.optimizer == OptimizerKind::AdamW) {
        opt_ = make_adamw(model_.named, {o_.adam_beta1, o_.adam_beta2, o_.adam_eps, o_.weight_decay});
    } else {
        AdafactorSettings s;
        s.weight_decay = o_.weight_decay;
        s.relative_step = o_.lr < 0;    // no lr: transformers' default relative step sizes
        s.scale_parameter = o_.lr < 0;  // explicit lr: the T5 fine-tuning recipe (scale_parameter=False)
        opt_ = make_adafactor(model_.named, s);
    }
    base_lr_ = o_.lr > 0 ? o_.lr : 5e-4;
}

void Runner::seed_or_resume() {
    if (!resume_from_.empty()) {
        load_resume_state(resume_from_);
        return;
    }
    set_seed(at::detail::getDefaultCPUGenerator(), o_.seed);
    if (device_.is_cuda()) set_seed(at::globalContext().defaultGenerator(device_), o_.seed);
    if (is_writer()) std::ofstream(log_path_, std::ios::trunc);
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
    last_loss_ = j.value("last_loss", 0.0);  // a resumed run that has no step left reports the loss it ended with
    if (j.value("optimizer", "") != to_string(o_.optimizer))
        throw Error(ErrorCode::InvalidArgument, (ck / "trainer_state.json").string() +
                                                    ": checkpoint was trained with optimizer '" + j.value("optimizer", "") +
                                                    "', not '" + to_string(o_.optimizer) + "'");
    // The world size may change between a run and its resume: keep the position in rows consumed
    // and the per-rank micro-batch the user asked for now.
    const int saved_world = j.value("world_size", 1);
    const int world = dist_ ? dist_->world_size() : 1;
    if (saved_world != world) {
        const int64_t rows_done = st_.batch_in_epoch * static_cast<int64_t>(st_.micro_batch) * saved_world;
        st_.micro_batch = o_.batch_size;
        st_.batch_in_epoch = rows_done / (static_cast<int64_t>(st_.micro_batch) * world);
        message(TrainingEvent::Kind::Message, "resuming a " + std::to_string(saved_world) + "-process run with " +
                                                  std::to_string(world) + " processes: global batch " +
                                                  std::to_string(st_.micro_batch * world));
    }
    auto state = read_tensor_file(ck / "training_state.safetensors");
    opt_->load_state_tensors(state);
    auto it = state.find("rng/cpu");
    if (it != state.end()) set_state(at::detail::getDefaultCPUGenerator(), it->second);
    if (device_.is_cuda()) {
        auto itc = state.find("rng/cuda");
        if (itc != state.end()) set_state(at::globalContext().defaultGenerator(device_), itc->second);
    }
    if (is_writer()) truncate_log_after(st_.step);
    message(TrainingEvent::Kind::Message, "resumed from " + ck.string() + " at step " + std::to_string(st_.step));
}

void Runner::plan_memory() {
    TrainingOptions planned = o_;
    planned.device = device_.is_cuda() ? Device::Cuda : Device::Cpu;
    // Batches are padded to their longest pair, not to the limits: plan for the data's longest
    // (length-grouped batching puts the longest together, so that batch is the peak).
    int64_t longest_source = 1, longest_target = 1;
    for (const auto& p : train_) {
        longest_source = std::max<int64_t>(longest_source, static_cast<int64_t>(p.source.size()));
        longest_target = std::max<int64_t>(longest_target, static_cast<int64_t>(p.target.size()));
    }
    planned.max_source_len = static_cast<int>(std::min<int64_t>(o_.max_source_len, longest_source));
    planned.max_target_len = static_cast<int>(std::min<int64_t>(o_.max_target_len, longest_target));
    if (lora_) {  // the adapter's own settings (a continued adapter may differ from the flags)
        planned.lora = true;
        planned.lora_r = static_cast<int>(lora_->settings.r);
        planned.lora_targets.clear();
        for (const auto& [path, m] : lora_->modules) planned.lora_targets += (planned.lora_targets.empty() ? "" : ",") + path;
    }
    MemoryEstimate m =
        estimate_training_memory(model_config_to_json(model_.config), planned, -1, device_.is_cuda() ? -1 : baseline_rss_);
    estimated_peak_ = m.total_bytes;
    TrainingEvent e;
    e.kind = TrainingEvent::Kind::Plan;
    e.message = m.to_text() + " (at the data's longest pair: " + std::to_string(planned.max_source_len) + " source / " +
                std::to_string(planned.max_target_len) + " target tokens)";
    emit(e);
}

}  // namespace t5s
