// Optimizers and schedules against transformers: AdamW 20-step parity (losses 1e-3, step-0 grad
// norms 1e-4), Adafactor parity (golden from make_adafactor_golden.py), schedule formulas, clipping.
#include "trainer/trainer_test_support.h"

#include <c10/core/GradMode.h>

#include "trainer/core.h"
#include "trainer/golden_batch.h"
#include "trainer/optim.h"

using namespace t5s;
using namespace t5s::test;

namespace {

double grad_norm_total(const std::vector<NamedParam>& ps) {
    double s = 0;
    for (const auto& p : ps)
        if (p.tensor.grad().defined()) s += p.tensor.grad().to(at::kDouble).pow(2).sum().item<double>();
    return std::sqrt(s);
}

}  // namespace

TEST_CASE("schedules follow transformers' get_*_schedule_with_warmup", "[trainer][schedule]") {
    // constant_with_warmup
    CHECK(schedule_factor(ScheduleKind::Constant, 0, 10, 100) == Approx(0.0));
    CHECK(schedule_factor(ScheduleKind::Constant, 5, 10, 100) == Approx(0.5));
    CHECK(schedule_factor(ScheduleKind::Constant, 50, 10, 100) == Approx(1.0));
    // linear: max(0, (total - step) / (total - warmup))
    CHECK(schedule_factor(ScheduleKind::Linear, 10, 10, 100) == Approx(1.0));
    CHECK(schedule_factor(ScheduleKind::Linear, 55, 10, 100) == Approx(0.5));
    CHECK(schedule_factor(ScheduleKind::Linear, 100, 10, 100) == Approx(0.0));
    CHECK(schedule_factor(ScheduleKind::Linear, 3, 0, 4) == Approx(0.25));
    // cosine (num_cycles 0.5): 0.5 * (1 + cos(pi * progress))
    CHECK(schedule_factor(ScheduleKind::Cosine, 55, 10, 100) == Approx(0.5));
    CHECK(schedule_factor(ScheduleKind::Cosine, 32, 10, 100) == Approx(0.5 * (1 + std::cos(M_PI * 22.0 / 90.0))));
    CHECK(schedule_factor(ScheduleKind::Cosine, 100, 10, 100) == Approx(0.0).margin(1e-12));
}

TEST_CASE("clip_grad_norm matches torch.nn.utils.clip_grad_norm_", "[trainer][optim]") {
    at::Tensor a = at::zeros({2}, at::kFloat).requires_grad_(true);
    at::Tensor b = at::zeros({1}, at::kFloat).requires_grad_(true);
    a.mutable_grad() = at::tensor({3.0f, 0.0f});
    b.mutable_grad() = at::tensor({4.0f});
    std::vector<NamedParam> ps{{"a", a, true}, {"b", b, true}};
    CHECK(clip_grad_norm(ps, 0.0) == Approx(5.0));
    CHECK(a.grad()[0].item<double>() == Approx(3.0));
    CHECK(clip_grad_norm(ps, 1.0) == Approx(5.0));
    CHECK(a.grad()[0].item<double>() == Approx(3.0 / (5.0 + 1e-6)).epsilon(1e-6));
    CHECK(b.grad()[0].item<double>() == Approx(4.0 / (5.0 + 1e-6)).epsilon(1e-6));
}

TEST_CASE("20 AdamW steps match transformers (losses 1e-3, step-0 grad norms 1e-4)", "[trainer][parity]") {
    const auto g = golden("train_adamw");
    const Batch batch = golden_batch(g);
    for (const std::string name : {"t5v10-tied-relu", "flan-gated-gelu-bf16"}) {
        INFO(name);
        const auto& ref = g["models"][name];
        TrainableModel m = load_trainable(model_dir(name), at::kCPU);
        m.net->set_training(true, 0.0);  // the golden ran model.eval(): dropout off, grads on
        int64_t count = 0;
        for (const auto& p : m.named) count += p.tensor.numel();
        CHECK(count == ref["num_parameters"].get<int64_t>());
        auto opt = make_adamw(m.named, {0.9, 0.999, 1e-8, 0.0});
        double max_loss_diff = 0;
        for (int step = 0; step < 20; ++step) {
            at::Tensor loss = forward_loss(*m.net, batch, TrainPrecision::Fp32);
            loss.backward();
            max_loss_diff = std::max(max_loss_diff, std::abs(loss.item<double>() - ref["loss_per_step"][step].get<double>()));
            if (step == 0) {
                CHECK(std::abs(grad_norm_total(m.named) - ref["step0_grad_norm"]["total"].get<double>()) < 1e-4);
                for (const auto& [pname, value] : ref["step0_grad_norm"]["per_param"].items()) {
                    INFO(pname);
                    const double mine = m.params.at(pname).grad().to(at::kDouble).norm().item<double>();
                    CHECK(std::abs(mine - value.get<double>()) < 1e-4);
                }
            }
            opt->step(1e-3);
            for (auto& p : m.named) p.tensor.mutable_grad() = at::Tensor();
        }
        WARN(name << ": max |loss diff| over 20 AdamW steps = " << max_loss_diff);
        CHECK(max_loss_diff < 1e-3);
    }
}

TEST_CASE("Adafactor matches transformers.optimization.Adafactor", "[trainer][parity]") {
    const auto g = load_json(std::filesystem::path(T5S_TRAINER_TEST_DIR) / "goldens" / "train_adafactor.json");
    const Batch batch = golden_batch(load_json(data_dir() / "goldens" / "train_adamw.json"));
    for (const auto& run : g["runs"]) {
        const std::string name = run["model"];
        INFO(name << " " << run["settings"].dump());
        TrainableModel m = load_trainable(model_dir(name), at::kCPU);
        m.net->set_training(true, 0.0);
        AdafactorSettings s;
        s.scale_parameter = run["settings"]["scale_parameter"];
        s.relative_step = run["settings"]["relative_step"];
        s.warmup_init = run["settings"]["warmup_init"];
        const double lr = run["settings"]["lr"].is_null() ? 0.0 : run["settings"]["lr"].get<double>();
        if (!run["settings"]["beta1"].is_null()) s.beta1 = run["settings"]["beta1"];
        s.weight_decay = run["settings"]["weight_decay"];
        for (auto& p : m.named) p.decay = true;  // the golden applies weight decay to every parameter
        auto opt = make_adafactor(m.named, s);
        double max_diff = 0;
        const auto& losses = run["loss_per_step"];
        for (size_t step = 0; step < losses.size(); ++step) {
            at::Tensor loss = forward_loss(*m.net, batch, TrainPrecision::Fp32);
            loss.backward();
            max_diff = std::max(max_diff, std::abs(loss.item<double>() - losses[step].get<double>()));
            opt->step(lr);
            for (auto& p : m.named) p.tensor.mutable_grad() = at::Tensor();
        }
        // Final weights too: a stricter check of the update rule than the losses.
        double wmax = 0;
        for (const auto& [pname, ref] : run["final_param_sums"].items()) {
            wmax = std::max(wmax, std::abs(m.params.at(pname).sum().item<double>() - ref.get<double>()));
        }
        WARN(name << " adafactor: max |loss diff| " << max_diff << ", max |param-sum diff| " << wmax);
        CHECK(max_diff < 1e-3);
        CHECK(wmax < 1e-3);
    }
}

TEST_CASE("optimizer state round-trips through state_tensors", "[trainer][optim]") {
    const Batch batch = golden_batch(golden("train_adamw"));
    for (OptimizerKind kind : {OptimizerKind::AdamW, OptimizerKind::Adafactor}) {
        TrainableModel a = load_trainable(model_dir("t5v10-tied-relu"), at::kCPU);
        TrainableModel b = load_trainable(model_dir("t5v10-tied-relu"), at::kCPU);
        a.net->set_training(true, 0.0);
        b.net->set_training(true, 0.0);
        auto make = [&](TrainableModel& m) {
            return kind == OptimizerKind::AdamW ? make_adamw(m.named, {}) : make_adafactor(m.named, {});
        };
        auto oa = make(a);
        auto ob = make(b);
        auto step = [&](TrainableModel& m, Optimizer& o) {
            forward_loss(*m.net, batch, TrainPrecision::Fp32).backward();
            o.step(1e-3);
            for (auto& p : m.named) p.tensor.mutable_grad() = at::Tensor();
        };
        for (int i = 0; i < 3; ++i) step(a, *oa);
        // b gets a's weights and optimizer state, then both take the same step.
        {
            c10::NoGradGuard ng;
            for (auto& [n, t] : b.params) t.copy_(a.params.at(n));
        }
        std::map<std::string, at::Tensor> st;
        oa->state_tensors(st);
        std::map<std::string, at::Tensor> copied;
        for (auto& [k, v] : st) copied[k] = v.clone();
        ob->load_state_tensors(copied);
        step(a, *oa);
        step(b, *ob);
        double diff = 0;
        for (auto& [n, t] : a.params) diff = std::max(diff, (t - b.params.at(n)).abs().max().item<double>());
        CHECK(diff == 0.0);
    }
}
