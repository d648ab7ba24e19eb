// TrainingJob: the training loop of a Runner — stop checks, one optimizer step at a time (with CUDA
// OOM recovery and the fp16 loss scale), step reports, eval / checkpoints / early stopping, and the
// end of the run. Setup lives in runner_setup.cpp, files in runner_io.cpp.
#include <c10/core/GradMode.h>

#include <cmath>
#include <thread>

#include "t5s/error.h"
#include "t5s/training_step_json.h"
#include "torch/torch_errors.h"
#include "trainer/data_internal.h"
#include "trainer/runner.h"

namespace t5s {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

void Runner::message(TrainingEvent::Kind kind, const std::string& text) {
    TrainingEvent e;
    e.kind = kind;
    e.message = text;
    e.step = st_.step;
    emit(e);
}

std::vector<std::vector<int64_t>>& Runner::epoch_batches() {
    if (cached_epoch_ != st_.epoch) {
        // Global batches: the order a single process with batch micro_batch * world_size would see.
        const int world = dist_ ? dist_->world_size() : 1;
        batches_ = make_epoch_batches(train_, st_.micro_batch * world, o_.group_by_length, o_.seed, st_.epoch);
        cached_epoch_ = st_.epoch;
    }
    return batches_;
}

std::optional<StopReason> Runner::check_stop() {
    while (paused_.load() && !stop_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    int64_t flags[2] = {stop_.load() ? 1 : 0, o_.max_time_s > 0 && seconds_since(t0_) > o_.max_time_s ? 1 : 0};
    if (dist_) dist_->all_reduce_sum(flags, 2);  // one rank's stop (or clock) stops them all at the same step
    const bool stop = flags[0] > 0, time_up = flags[1] > 0;
    if (stop) return StopReason::Stopped;
    if (time_up) {
        message(TrainingEvent::Kind::Message, "time limit reached at step " + std::to_string(st_.step));
        return StopReason::TimeLimit;
    }
    return std::nullopt;
}

std::vector<MicroBatch> Runner::next_micro_batches() {
    const int rank = dist_ ? dist_->rank() : 0;
    const int world = dist_ ? dist_->world_size() : 1;
    std::vector<MicroBatch> micro;
    for (int k = 0; k < st_.grad_accum; ++k) {
        if (st_.batch_in_epoch >= static_cast<int64_t>(epoch_batches().size())) {
            st_.epoch += 1;
            st_.batch_in_epoch = 0;
        }
        const auto& global = epoch_batches()[static_cast<size_t>(st_.batch_in_epoch)];
        MicroBatch m{st_.epoch, st_.batch_in_epoch, {}};
        // DistributedSampler's split: rank r takes rows r, r + world, r + 2 * world, ...
        for (size_t i = static_cast<size_t>(rank); i < global.size(); i += static_cast<size_t>(world))
            m.rows.push_back(global[i]);
        micro.push_back(std::move(m));
        st_.batch_in_epoch += 1;
    }
    return micro;
}

// Forward + backward of every micro-batch; gradients summed into .grad. Each loss is weighted by its
// share of the global target tokens, so the sum equals the mean loss of the whole effective batch
// (across ranks too). Returns false when CUDA ran out of memory and the step should be retried.
bool Runner::backward_all(const std::vector<Batch>& batches, int64_t global_target_tokens, double& step_loss) {
    const bool fp16 = o_.precision == Precision::Fp16;
    try {
        for (const Batch& b : batches) {
            at::Tensor loss = forward_loss(*model_.net, b, o_.precision);
            const double w =
                static_cast<double>(b.target_tokens) / static_cast<double>(std::max<int64_t>(1, global_target_tokens));
            step_loss += loss.item<double>() * w;
            at::Tensor scaled = loss * (w * (fp16 ? st_.loss_scale : 1.0));
            if (dist_ && &b == &batches.back()) dist_->expect_final_backward(model_.named);  // all-reduce overlaps it
            scaled.backward();
        }
    } catch (const std::exception& e) {
        if (!(device_.is_cuda() && o_.auto_reduce_batch_on_oom && is_out_of_memory(e) && st_.micro_batch > 1 && !dist_)) {
            if (is_out_of_memory(e)) throw out_of_memory_error(e, "training");
            throw;
        }
        return false;
    }
    return true;
}

void Runner::recover_from_oom(const std::vector<MicroBatch>& micro) {
    for (auto& p : model_.named) p.tensor.mutable_grad() = at::Tensor();
    cuda_empty_cache();
    // Same effective batch: halve the micro-batch, double accumulation; redo this step from the
    // start of the current epoch position.
    const int64_t consumed = micro.front().index * st_.micro_batch;
    st_.epoch = micro.front().epoch;
    st_.micro_batch = std::max(1, st_.micro_batch / 2);
    st_.grad_accum *= 2;
    cached_epoch_ = -1;
    st_.batch_in_epoch = consumed / st_.micro_batch;
    message(TrainingEvent::Kind::Message, "CUDA out of memory: micro-batch reduced to " + std::to_string(st_.micro_batch) +
                                              ", gradient accumulation " + std::to_string(st_.grad_accum));
    log_line({{"event", "oom"}, {"step", st_.step}, {"micro_batch", st_.micro_batch}, {"grad_accum", st_.grad_accum}});
}

StepOutcome Runner::train_step() {
    if (dist_) dist_->seed_step_generators(o_.seed, st_.step, device_);  // per-rank dropout masks
    const std::vector<MicroBatch> micro = next_micro_batches();
    int64_t counts[2] = {0, 0};  // target tokens, source + target tokens (this rank)
    std::vector<Batch> batches;
    for (const auto& m : micro) {
        if (m.rows.empty()) continue;  // the epoch's last global batch has fewer rows than ranks
        batches.push_back(make_batch(train_, m.rows, device_));
        counts[0] += batches.back().target_tokens;
        counts[1] += batches.back().source_tokens + batches.back().target_tokens;
    }
    if (dist_) dist_->all_reduce_sum(counts, 2);  // the global token counts normalise every rank's loss

    StepOutcome out;
    out.tokens = counts[1];
    if (!backward_all(batches, counts[0], out.loss)) {
        recover_from_oom(micro);
        out.status = StepStatus::RetryAfterOom;
        return out;
    }
    if (dist_) {
        const auto t = Clock::now();
        dist_->all_reduce_gradients(model_.named);  // sum: each rank's loss was already weighted globally
        out.allreduce_s = seconds_since(t);
        double loss = out.loss;
        dist_->all_reduce_sum(&loss, 1);
        out.loss = loss;
    }
    const bool fp16 = o_.precision == Precision::Fp16;
    if (fp16) {
        c10::NoGradGuard ng;
        for (auto& p : model_.named)
            if (p.tensor.grad().defined()) p.tensor.mutable_grad().mul_(1.0 / st_.loss_scale);
    }
    out.grad_norm = clip_grad_norm(model_.named, o_.max_grad_norm);
    if (fp16) {
        if (!std::isfinite(out.grad_norm)) {
            out.skipped = true;
            st_.loss_scale *= 0.5;
            st_.good_steps = 0;
        } else if (++st_.good_steps % 2000 == 0) {
            st_.loss_scale *= 2.0;
        }
    }
    out.lr = base_lr_ * schedule_factor(o_.schedule, st_.step, o_.warmup_steps, total_steps_);
    if (!out.skipped) out.lr = opt_->step(out.lr);
    for (auto& p : model_.named) p.tensor.mutable_grad() = at::Tensor();
    st_.step += 1;
    st_.tokens_seen += out.tokens;
    last_loss_ = out.loss;
    return out;
}

void Runner::report_step(const StepOutcome& s, LogWindow& window, TrainingResult& result) {
    window.loss_sum += s.loss;
    window.steps += 1;
    window.tokens += s.tokens;
    window.allreduce_s += s.allreduce_s;
    const MemorySample mem = memory();
    result.peak_memory_bytes = std::max(result.peak_memory_bytes, mem.peak);
    if (st_.step % o_.log_every != 0 && st_.step != total_steps_) return;
    const double dt = seconds_since(window.start);
    TrainingEvent e = progress_event(TrainingEvent::Kind::Step);
    e.epoch =
        st_.epoch + static_cast<double>(st_.batch_in_epoch) / std::max<int64_t>(1, static_cast<int64_t>(epoch_batches().size()));
    e.loss = window.loss_sum / window.steps;
    e.lr = s.lr;
    e.grad_norm = s.grad_norm;
    e.tokens_per_s = dt > 0 ? window.tokens / dt : 0;
    e.elapsed_s = seconds_since(t0_);
    e.memory_bytes = mem.current;
    e.peak_memory_bytes = mem.peak;
    e.batch_size = st_.micro_batch;
    e.grad_accum = st_.grad_accum;
    e.eta_s = dt / std::max(1, window.steps) * static_cast<double>(total_steps_ - st_.step);
    json line = training_step_json(e);
    line["peak_memory_bytes"] = e.peak_memory_bytes;
    line["skipped"] = s.skipped;
    if (dist_) {
        line["world_size"] = dist_->world_size();
        line["allreduce_s"] = window.allreduce_s;  // rank 0's time in the gradient all-reduce since the last line
        line["gradient_backend"] = dist_->gradient_backend();
        line["allreduce_buckets_overlapped"] = dist_->gradient_buckets_overlapped();  // [during the backward, all]
    }
    log_line(line);
    emit(e);
    window = LogWindow{};
}

std::optional<StopReason> Runner::eval_and_save() {
    const bool last = st_.step == total_steps_;
    const bool do_save = (o_.save_every > 0 && st_.step % o_.save_every == 0) || last;
    const bool do_eval =
        !eval_.empty() && ((o_.eval_every > 0 && st_.step % o_.eval_every == 0) || (o_.eval_every == 0 && do_save) || last);
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
        TrainingEvent e = progress_event(TrainingEvent::Kind::Eval);
        e.eval_loss = el;
        e.best_eval_loss = st_.best_eval;
        e.samples = samples;
        e.elapsed_s = seconds_since(t0_);
        json js = json::array();
        for (const auto& s : samples)
            js.push_back({{"source", s.source}, {"reference", s.reference}, {"prediction", s.prediction}});
        log_line({{"step", st_.step}, {"eval_loss", el}, {"best_eval_loss", st_.best_eval}, {"samples", js}});
        emit(e);
    }
    if (improved) st_.best_checkpoint = "checkpoint-" + std::to_string(st_.step);
    if (do_save || improved) save_checkpoint(improved ? "best" : "periodic");
    if (o_.patience > 0 && st_.evals_without_improvement >= o_.patience) {
        message(TrainingEvent::Kind::Message, "early stopping: no eval improvement in " + std::to_string(o_.patience) + " evals");
        return StopReason::EarlyStopping;
    }
    return std::nullopt;
}

TrainingResult Runner::finish(StopReason reason, TrainingResult result) {
    if ((reason == StopReason::Stopped || reason == StopReason::TimeLimit) && st_.step > 0) {
        const auto cks = list_checkpoints(out_);
        if (cks.empty() || cks.back().first != st_.step) save_checkpoint(to_string(reason));
    }
    if (is_writer()) write_final();
    if (dist_) dist_->barrier();  // no rank reports success before the final model is in place

    result.steps = st_.step;
    result.final_loss = last_loss_;
    result.best_eval_loss = st_.best_eval;
    result.final_model_dir = (out_ / "final").string();
    result.best_checkpoint = st_.best_checkpoint.empty() ? "" : (out_ / st_.best_checkpoint).string();
    result.stop_reason = reason;
    result.elapsed_s = seconds_since(t0_);
    result.peak_memory_bytes = std::max(result.peak_memory_bytes, memory().peak);
    if (estimated_peak_ > 0 && result.peak_memory_bytes > 0) {
        // The plan's honesty check, for the user and for calibrating the estimate.
        char buf[160];
        std::snprintf(buf, sizeof buf, "memory: measured peak %.0f MiB, estimated %.0f MiB (%+.0f%%)",
                      result.peak_memory_bytes / 1048576.0, estimated_peak_ / 1048576.0,
                      100.0 * (double(estimated_peak_) - double(result.peak_memory_bytes)) / double(result.peak_memory_bytes));
        message(TrainingEvent::Kind::Message, buf);
    }
    TrainingEvent e = progress_event(TrainingEvent::Kind::Finished);
    e.loss = last_loss_;
    e.best_eval_loss = st_.best_eval;
    e.elapsed_s = result.elapsed_s;
    e.peak_memory_bytes = result.peak_memory_bytes;
    e.stop_reason = reason;
    e.message = result.final_model_dir;
    emit(e);
    return result;
}

TrainingResult Runner::run() {
    t0_ = Clock::now();
    baseline_rss_ = host_memory().current;  // before data and model: the libraries' share of the peak
    prepare();
    TrainingResult result;
    LogWindow window;
    StopReason reason = StopReason::Completed;
    while (st_.step < total_steps_) {
        if (auto stop = check_stop()) {
            reason = *stop;
            break;
        }
        const StepOutcome s = train_step();
        if (s.status == StepStatus::RetryAfterOom) continue;
        report_step(s, window, result);
        if (auto stop = eval_and_save()) {
            reason = *stop;
            break;
        }
    }
    return finish(reason, std::move(result));
}

TrainingJob::TrainingJob(TrainingOptions options) : options_(std::move(options)) {}
TrainingJob::~TrainingJob() = default;

TrainingResult TrainingJob::run(const std::function<void(const TrainingEvent&)>& on_event) {
    try {
        validate_training_options(options_);
        std::unique_ptr<Distributed> dist = Distributed::from_environment(options_.device, options_.dist_timeout_s);
        Runner r(options_, paused_, stop_, on_event, dist.get());
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
