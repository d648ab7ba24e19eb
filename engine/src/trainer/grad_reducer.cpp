#include "trainer/grad_reducer.h"

#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

namespace t5s {

GradientReducer::GradientReducer(const std::vector<at::Tensor>& params, c10::intrusive_ptr<c10d::Backend> group,
                                 int64_t bucket_bytes, bool overlap)
    : group_(std::move(group)), overlap_(overlap) {
    for (const auto& p : params)
        if (p.requires_grad()) params_.push_back(p);
    // Reverse order: the backward reaches the last layers first. A bucket holds one dtype and
    // device; a parameter larger than a bucket gets one of its own.
    bucket_of_.assign(params_.size(), 0);
    int64_t bytes = 0;
    for (size_t k = params_.size(); k-- > 0;) {
        const at::Tensor& p = params_[k];
        const int64_t nbytes = static_cast<int64_t>(p.numel()) * static_cast<int64_t>(p.element_size());
        const bool fits = !buckets_.empty() && bytes + nbytes <= bucket_bytes &&
                          params_[buckets_.back().members.front()].scalar_type() == p.scalar_type() &&
                          params_[buckets_.back().members.front()].device() == p.device();
        if (!fits) {
            buckets_.emplace_back();
            bytes = 0;
        }
        Bucket& b = buckets_.back();
        b.offsets.push_back(b.members.empty() ? 0 : b.offsets.back() + params_[b.members.back()].numel());
        b.members.push_back(k);
        bucket_of_[k] = buckets_.size() - 1;
        bytes += nbytes;
    }
    for (Bucket& b : buckets_) {
        const at::Tensor& last = params_[b.members.back()];
        b.flat = at::empty({b.offsets.back() + last.numel()}, last.options().requires_grad(false));
    }
    ready_.assign(params_.size(), 0);
    if (!overlap_) return;
    for (size_t k = 0; k < params_.size(); ++k) {
        // The accumulator node is kept alive here: a leaf holds it only weakly, and a new one would
        // not carry the hook.
        auto acc = torch::autograd::impl::grad_accumulator(params_[k]);
        const uintptr_t key = acc->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this, k](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
                on_gradient_ready(k);
                return outputs;
            }));
        hooks_.emplace_back(std::move(acc), key);
    }
}

GradientReducer::~GradientReducer() {
    for (auto& [node, key] : hooks_) node->del_post_hook(key);
    for (Bucket& b : buckets_) {
        if (!b.work) continue;
        try {
            b.work->wait();  // never leave a collective writing into a freed buffer
        } catch (const std::exception&) {
        }
    }
}

void GradientReducer::reset() {
    next_launch_ = 0;
    launched_early_ = 0;
    std::fill(ready_.begin(), ready_.end(), 0);
    for (Bucket& b : buckets_) b.pending = static_cast<int>(b.members.size());
}

void GradientReducer::arm() {
    std::lock_guard<std::mutex> lock(mutex_);
    reset();
    armed_ = true;
}

void GradientReducer::on_gradient_ready(size_t param) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!armed_ || ready_[param]) return;
    ready_[param] = 1;
    Bucket& b = buckets_[bucket_of_[param]];
    if (--b.pending == 0) launch_ready_in_order();
}

void GradientReducer::launch(Bucket& b) {
    c10::NoGradGuard no_grad;
    for (size_t i = 0; i < b.members.size(); ++i) {
        const at::Tensor& p = params_[b.members[i]];
        at::Tensor slot = b.flat.narrow(0, b.offsets[i], p.numel());
        const at::Tensor& g = p.grad();
        if (g.defined()) slot.copy_(g.reshape({-1}));
        else slot.zero_();  // this rank produced no gradient for it: it adds nothing to the sum
    }
    std::vector<at::Tensor> one{b.flat};
    b.work = group_->allreduce(one);
}

void GradientReducer::launch_ready_in_order() {
    while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
        launch(buckets_[next_launch_++]);
        ++launched_early_;
    }
}

void GradientReducer::finish() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!armed_) reset();  // no backward this step (a rank without rows): every bucket goes out now
    armed_ = false;
    while (next_launch_ < buckets_.size()) launch(buckets_[next_launch_++]);
    lock.unlock();
    c10::NoGradGuard no_grad;
    for (Bucket& b : buckets_) {
        auto work = std::move(b.work);
        work->wait();
        for (size_t i = 0; i < b.members.size(); ++i) {
            at::Tensor& p = params_[b.members[i]];
            at::Tensor sum = b.flat.narrow(0, b.offsets[i], p.numel()).view_as(p);
            at::Tensor& g = p.mutable_grad();
            if (g.defined()) g.copy_(sum);
            else g = sum.clone();
        }
    }
}

}  // namespace t5s
