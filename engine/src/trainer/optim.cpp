#include "trainer/optim.h"

#include <ATen/ops/_fused_adamw.h>  // LibTorch >= 2.1, the oldest the build accepts
#include <c10/core/GradMode.h>

#include <cmath>

#include "t5s/error.h"

namespace t5s {
namespace {

at::Tensor state_of(const std::map<std::string, at::Tensor>& in, const std::string& key, const at::Tensor& like) {
    auto it = in.find(key);
    if (it == in.end()) throw Error(ErrorCode::CorruptFile, "optimizer state: missing '" + key + "'");
    if (it->second.sizes() != like.sizes())
        throw Error(ErrorCode::CorruptFile, "optimizer state: shape mismatch for '" + key + "'");
    return it->second.to(like.device(), like.scalar_type()).contiguous();
}

class AdamW final : public Optimizer {
public:
    AdamW(std::vector<NamedParam> params, AdamWSettings s) : params_(std::move(params)), s_(s) {
        for (auto& p : params_) {
            m_.push_back(at::zeros_like(p.tensor, at::MemoryFormat::Contiguous));
            v_.push_back(at::zeros_like(p.tensor, at::MemoryFormat::Contiguous));
            steps_.push_back(0);
        }
    }
    double step(double lr) override {
        c10::NoGradGuard no_grad;
        if (fused_step(lr)) return lr;
        for (size_t i = 0; i < params_.size(); ++i) {
            at::Tensor p = params_[i].tensor;
            const at::Tensor& g = p.grad();
            if (!g.defined()) continue;
            const int64_t t = ++steps_[i];
            const double wd = params_[i].decay ? s_.weight_decay : 0.0;
            if (wd != 0) p.mul_(1.0 - lr * wd);
            m_[i].lerp_(g, 1.0 - s_.beta1);
            v_[i].mul_(s_.beta2).addcmul_(g, g, 1.0 - s_.beta2);
            const double bc1 = 1.0 - std::pow(s_.beta1, static_cast<double>(t));
            const double bc2 = 1.0 - std::pow(s_.beta2, static_cast<double>(t));
            at::Tensor denom = (v_[i].sqrt() / std::sqrt(bc2)).add_(s_.eps);
            p.addcdiv_(m_[i], denom, -lr / bc1);
        }
        return lr;
    }
    void state_tensors(std::map<std::string, at::Tensor>& out) const override {
        for (size_t i = 0; i < params_.size(); ++i) {
            out["exp_avg/" + params_[i].name] = m_[i];
            out["exp_avg_sq/" + params_[i].name] = v_[i];
            out["step/" + params_[i].name] = at::scalar_tensor(static_cast<double>(steps_[i]), at::kDouble).reshape({1});
        }
    }
    void load_state_tensors(const std::map<std::string, at::Tensor>& in) override {
        for (size_t i = 0; i < params_.size(); ++i) {
            m_[i].copy_(state_of(in, "exp_avg/" + params_[i].name, m_[i]));
            v_[i].copy_(state_of(in, "exp_avg_sq/" + params_[i].name, v_[i]));
            auto it = in.find("step/" + params_[i].name);
            if (it == in.end()) throw Error(ErrorCode::CorruptFile, "optimizer state: missing step of '" + params_[i].name + "'");
            steps_[i] = static_cast<int64_t>(it->second.item<double>());
        }
        step_tensors_.clear();  // rebuilt from steps_ on the next step
    }
    int64_t state_bytes() const override {
        int64_t b = 0;
        for (auto& t : m_) b += 2 * t.numel() * static_cast<int64_t>(t.element_size());
        return b;
    }

private:
    // torch's fused AdamW kernel (what transformers' Trainer uses by default): one pass over each
    // parameter instead of six. Same update formula as the loop below. Used when every parameter
    // with a gradient is a dense fp32 tensor on one device; false = take the loop.
    bool fused_step(double lr) {
        for (const NamedParam& np : params_) {
            const at::Tensor& grad = np.tensor.grad();
            if (grad.defined() && (np.tensor.scalar_type() != at::kFloat || grad.is_sparse() ||
                                   grad.scalar_type() != at::kFloat || np.tensor.device() != params_[0].tensor.device())) {
                return false;
            }
        }
        std::vector<at::Tensor> p[2], g[2], m[2], v[2], t[2];  // [0] no decay, [1] decay
        for (size_t i = 0; i < params_.size(); ++i) {
            const at::Tensor& param = params_[i].tensor;
            const at::Tensor& grad = param.grad();
            if (!grad.defined()) continue;
            const int k = params_[i].decay && s_.weight_decay != 0 ? 1 : 0;
            p[k].push_back(param), g[k].push_back(grad), m[k].push_back(m_[i]), v[k].push_back(v_[i]);
            t[k].push_back(step_tensor(i));
            ++steps_[i];  // host copy of the count the kernel's step tensor will hold
        }
        for (int k = 0; k < 2; ++k) {
            if (p[k].empty()) continue;
            for (at::Tensor& step : t[k]) step.add_(1);
            at::_fused_adamw_(p[k], g[k], m[k], v[k], {}, t[k], lr, s_.beta1, s_.beta2, k ? s_.weight_decay : 0.0, s_.eps,
                              /*amsgrad=*/false, /*maximize=*/false);
        }
        return true;
    }
    // The fused kernel keeps each parameter's step count in a float tensor on its device.
    at::Tensor& step_tensor(size_t i) {
        if (step_tensors_.size() < params_.size()) step_tensors_.resize(params_.size());
        if (!step_tensors_[i].defined()) {
            step_tensors_[i] = at::full({}, static_cast<double>(steps_[i]), params_[i].tensor.options().dtype(at::kFloat));
        }
        return step_tensors_[i];
    }
    std::vector<at::Tensor> step_tensors_;
    std::vector<NamedParam> params_;
    AdamWSettings s_;
    std::vector<at::Tensor> m_, v_;
    std::vector<int64_t> steps_;
};

// transformers.optimization.Adafactor, operation for operation.
class Adafactor final : public Optimizer {
public:
    Adafactor(std::vector<NamedParam> params, AdafactorSettings s) : params_(std::move(params)), s_(s) {
        for (auto& p : params_) {
            State st;
            const auto shape = p.tensor.sizes();
            st.factored = shape.size() >= 2;
            auto opts = p.tensor.options().dtype(at::kFloat);
            if (s_.beta1 >= 0) st.exp_avg = at::zeros_like(p.tensor, opts);
            if (st.factored) {
                st.row = at::zeros(shape.slice(0, shape.size() - 1), opts);
                std::vector<int64_t> col(shape.begin(), shape.end() - 2);
                col.push_back(shape.back());
                st.col = at::zeros(col, opts);
            } else {
                st.sq = at::zeros_like(p.tensor, opts);
            }
            state_.push_back(std::move(st));
        }
    }

    static at::Tensor rms(const at::Tensor& t) { return t.norm(2) / std::sqrt(static_cast<double>(t.numel())); }

    double step(double lr_arg) override {
        c10::NoGradGuard no_grad;
        double last_lr = 0;
        for (size_t i = 0; i < params_.size(); ++i) {
            at::Tensor p = params_[i].tensor;
            if (!p.grad().defined()) continue;
            at::Tensor grad = p.grad().to(at::kFloat);
            State& st = state_[i];
            st.step += 1;
            at::Tensor p32 = p.scalar_type() == at::kFloat ? p : p.to(at::kFloat);
            st.rms = rms(p32).item<double>();
            // _get_lr
            double rel = lr_arg;
            if (s_.relative_step) {
                const double min_step = s_.warmup_init ? 1e-6 * st.step : 1e-2;
                rel = std::min(min_step, 1.0 / std::sqrt(static_cast<double>(st.step)));
            }
            const double scale = s_.scale_parameter ? std::max(s_.eps2, st.rms) : 1.0;
            const double lr = scale * rel;
            last_lr = rel;
            const double beta2t = 1.0 - std::pow(static_cast<double>(st.step), s_.decay_rate);
            at::Tensor update = grad.pow(2) + s_.eps1;
            if (st.factored) {
                st.row.mul_(beta2t).add_(update.mean(-1), 1.0 - beta2t);
                st.col.mul_(beta2t).add_(update.mean(-2), 1.0 - beta2t);
                at::Tensor r = (st.row / st.row.mean(-1, true)).rsqrt_().unsqueeze(-1);
                at::Tensor c = st.col.unsqueeze(-2).rsqrt();
                update = at::mul(r, c);
                update.mul_(grad);
            } else {
                st.sq.mul_(beta2t).add_(update, 1.0 - beta2t);
                update = st.sq.rsqrt().mul_(grad);
            }
            update.div_((rms(update) / s_.clip_threshold).clamp_(1.0));
            update.mul_(lr);
            if (s_.beta1 >= 0) {
                st.exp_avg.mul_(s_.beta1).add_(update, 1.0 - s_.beta1);
                update = st.exp_avg;
            }
            const double wd = params_[i].decay ? s_.weight_decay : 0.0;
            if (wd != 0) p32.add_(p32, -wd * lr);
            p32.add_(-update);
            if (p32.data_ptr() != p.data_ptr()) p.copy_(p32);
        }
        return last_lr;
    }
    void state_tensors(std::map<std::string, at::Tensor>& out) const override {
        for (size_t i = 0; i < params_.size(); ++i) {
            const State& st = state_[i];
            const std::string& n = params_[i].name;
            if (st.factored) out["exp_avg_sq_row/" + n] = st.row, out["exp_avg_sq_col/" + n] = st.col;
            else out["exp_avg_sq/" + n] = st.sq;
            if (st.exp_avg.defined()) out["exp_avg/" + n] = st.exp_avg;
            out["step/" + n] = at::tensor({static_cast<double>(st.step), st.rms}, at::kDouble);
        }
    }
    void load_state_tensors(const std::map<std::string, at::Tensor>& in) override {
        for (size_t i = 0; i < params_.size(); ++i) {
            State& st = state_[i];
            const std::string& n = params_[i].name;
            if (st.factored) {
                st.row.copy_(state_of(in, "exp_avg_sq_row/" + n, st.row));
                st.col.copy_(state_of(in, "exp_avg_sq_col/" + n, st.col));
            } else {
                st.sq.copy_(state_of(in, "exp_avg_sq/" + n, st.sq));
            }
            if (st.exp_avg.defined()) st.exp_avg.copy_(state_of(in, "exp_avg/" + n, st.exp_avg));
            auto it = in.find("step/" + n);
            if (it == in.end()) throw Error(ErrorCode::CorruptFile, "optimizer state: missing step of '" + n + "'");
            at::Tensor v = it->second.to(at::kDouble);
            st.step = static_cast<int64_t>(v[0].item<double>());
            st.rms = v[1].item<double>();
        }
    }
    int64_t state_bytes() const override {
        int64_t b = 0;
        for (const auto& st : state_)
            for (const at::Tensor* t : {&st.row, &st.col, &st.sq, &st.exp_avg})
                if (t->defined()) b += t->numel() * 4;
        return b;
    }

private:
    struct State {
        bool factored = false;
        int64_t step = 0;
        double rms = 0;
        at::Tensor row, col, sq, exp_avg;
    };
    std::vector<NamedParam> params_;
    AdafactorSettings s_;
    std::vector<State> state_;
};

}  // namespace

std::unique_ptr<Optimizer> make_adamw(std::vector<NamedParam> params, AdamWSettings s) {
    return std::make_unique<AdamW>(std::move(params), s);
}
std::unique_ptr<Optimizer> make_adafactor(std::vector<NamedParam> params, AdafactorSettings s) {
    return std::make_unique<Adafactor>(std::move(params), s);
}

double schedule_factor(ScheduleKind kind, int64_t step, int64_t warmup, int64_t total) {
    if (step < warmup) return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup));
    switch (kind) {
        case ScheduleKind::Constant: return 1.0;
        case ScheduleKind::Linear:
            return std::max(0.0, static_cast<double>(total - step) / static_cast<double>(std::max<int64_t>(1, total - warmup)));
        case ScheduleKind::Cosine: {
            const double progress =
                static_cast<double>(step - warmup) / static_cast<double>(std::max<int64_t>(1, total - warmup));
            return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * 0.5 * 2.0 * progress)));
        }
    }
    return 1.0;
}

double clip_grad_norm(const std::vector<NamedParam>& params, double max_norm) {
    c10::NoGradGuard no_grad;
    std::vector<at::Tensor> norms;
    for (const auto& p : params)
        if (p.tensor.grad().defined()) norms.push_back(p.tensor.grad().to(at::kFloat).norm(2));
    if (norms.empty()) return 0.0;
    at::Tensor total = at::stack(norms).norm(2);
    const double value = total.item<double>();
    if (max_norm > 0) {
        at::Tensor coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
        for (const auto& p : params)
            if (p.tensor.grad().defined()) p.tensor.mutable_grad().mul_(coef.to(p.tensor.grad().scalar_type()));
    }
    return value;
}

}  // namespace t5s
