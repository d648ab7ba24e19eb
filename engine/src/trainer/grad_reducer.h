#pragma once
// Bucketed gradient all-reduce for data-parallel training, overlapping the backward as DDP does:
// the trainable parameters (requires_grad only, so LoRA adapters alone travel when the base is
// frozen) are packed in reverse order — the order the backward produces their gradients — into
// buckets of about 25 MiB. A post-hook on each parameter's gradient accumulator counts it ready;
// a full bucket is copied into its flat buffer and its all-reduce launched at once, in bucket order
// (every rank issues the collectives in the same order), while the backward goes on. finish() launches
// what is left (gradients a rank did not produce count as zeros), waits, and copies the sums back.
#include <ATen/ATen.h>
#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/autograd/node.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <mutex>
#include <vector>

namespace t5s {

class GradientReducer {
public:
    // `overlap` false: nothing is launched during the backward; finish() does it all (measurement).
    GradientReducer(const std::vector<at::Tensor>& params, c10::intrusive_ptr<c10d::Backend> group, int64_t bucket_bytes,
                    bool overlap);
    ~GradientReducer();
    GradientReducer(const GradientReducer&) = delete;
    GradientReducer& operator=(const GradientReducer&) = delete;

    // The next backward produces this step's final gradients (the last micro-batch): reduce them as
    // they become ready. Earlier micro-batches only accumulate locally.
    void arm();
    // Completes the all-reduce of every bucket (summed over ranks into each .grad) and disarms. Also
    // right without arm(): a rank that had no rows this step sends zeros.
    void finish();

    size_t parameter_count() const { return params_.size(); }
    size_t bucket_count() const { return buckets_.size(); }
    // Buckets launched during the last backward, before finish() (overlap achieved).
    int launched_during_backward() const { return launched_early_; }

private:
    struct Bucket {
        std::vector<size_t> members;  // indices into params_
        std::vector<int64_t> offsets;
        at::Tensor flat;
        int pending = 0;
        c10::intrusive_ptr<c10d::Work> work;
    };
    void reset();  // with mutex_ held: nothing launched, every parameter pending
    void on_gradient_ready(size_t param);
    void launch(Bucket& b);
    void launch_ready_in_order();

    std::vector<at::Tensor> params_;
    std::vector<size_t> bucket_of_;  // param index -> bucket
    std::vector<Bucket> buckets_;
    c10::intrusive_ptr<c10d::Backend> group_;
    bool overlap_ = true;
    std::mutex mutex_;  // hooks may run on the autograd engine's device threads
    bool armed_ = false;
    size_t next_launch_ = 0;
    int launched_early_ = 0;
    std::vector<char> ready_;
    std::vector<std::pair<c10::intrusive_ptr<torch::autograd::Node>, uintptr_t>> hooks_;
};

}  // namespace t5s
