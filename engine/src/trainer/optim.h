#pragma once
// Optimizers and learning-rate schedules, written over plain at::Tensors so their state is easy to
// checkpoint: AdamW (torch.optim.AdamW's single-tensor math) and Adafactor (a port of
// transformers.optimization.Adafactor).
#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t5s/trainer.h"

namespace t5s {

struct NamedParam {
    std::string name;
    at::Tensor tensor;  // fp32 leaf with requires_grad
    bool decay = true;  // weight decay applies (not to layer norms, as HF's Trainer)
};

class Optimizer {
public:
    virtual ~Optimizer() = default;
    // One update of every parameter that has a gradient. `lr` = scheduled learning rate (ignored
    // by Adafactor with relative_step). Returns the effective lr used (for logging).
    virtual double step(double lr) = 0;
    virtual void state_tensors(std::map<std::string, at::Tensor>& out) const = 0;      // for checkpoints
    virtual void load_state_tensors(const std::map<std::string, at::Tensor>& in) = 0;  // throws on mismatch
    virtual int64_t state_bytes() const = 0;
};

struct AdamWSettings {
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
};

struct AdafactorSettings {
    double eps1 = 1e-30, eps2 = 1e-3;  // transformers' eps=(1e-30, 1e-3)
    double clip_threshold = 1.0;
    double decay_rate = -0.8;
    double beta1 = -1;  // < 0: no first moment (transformers' beta1=None)
    double weight_decay = 0.0;
    bool scale_parameter = true;
    bool relative_step = true;
    bool warmup_init = false;
};

std::unique_ptr<Optimizer> make_adamw(std::vector<NamedParam> params, AdamWSettings s);
std::unique_ptr<Optimizer> make_adafactor(std::vector<NamedParam> params, AdafactorSettings s);

// transformers' get_{constant,linear,cosine}_schedule_with_warmup multiplier at optimizer step `step`
// (0-based: the lr used by the step-th update).
double schedule_factor(ScheduleKind kind, int64_t step, int64_t warmup, int64_t total);

// torch.nn.utils.clip_grad_norm_: returns the total L2 norm before clipping; clips when max_norm > 0.
double clip_grad_norm(const std::vector<NamedParam>& params, double max_norm);

}  // namespace t5s
