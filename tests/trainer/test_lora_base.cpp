// LoRA on a frozen base held in bf16, fp16 or int8: the same numbers as an fp32 base whose weights
// were rounded the same way (so the frozen-linear backward is right), a loss curve close to the
// fp32 base's, and the smaller weights really held (the fp32 tensors are gone).
#include "trainer/trainer_test_support.h"

#include <c10/core/GradMode.h>

#include <algorithm>

#include "t5s/model.h"
#include "torch/int8_gemm.h"
#include "trainer/core.h"
#include "trainer/golden_batch.h"

using namespace t5s;
using namespace t5s::test;

namespace {

bool held_below_fp32(const std::string& name) {
    return name.find("layer_norm") == std::string::npos && name.find("relative_attention_bias") == std::string::npos;
}

// What the held form represents, back in fp32.
at::Tensor rounded(const at::Tensor& w, Precision p) {
    if (p == Precision::Bf16) return w.to(at::kBFloat16).to(at::kFloat);
    if (p == Precision::Fp16) return w.to(at::kHalf).to(at::kFloat);
    auto [q, scale] = quantize_int8_rows(w);
    return q.to(at::kFloat) * scale;
}

struct Run {
    std::vector<double> losses;
    std::vector<at::Tensor> adapter;
    int64_t weight_bytes = 0;
    bool only_norms_and_biases_left = false;
};

// 10 AdamW steps (lr 1e-3, no dropout) continuing the PEFT adapter on the golden batch.
Run train_10_steps(Precision held, bool round_base, Precision rounding, bool checkpointing) {
    TrainableModel m = load_trainable(model_dir("t5v10-tied-relu"), at::kCPU);
    if (round_base) {
        c10::NoGradGuard no_grad;
        for (auto& [n, t] : m.params)
            if (held_below_fp32(n)) t.copy_(rounded(t, rounding));
    }
    auto adapter = make_lora_trainable(m, load_lora_adapter(data_dir() / "lora" / "t5v10-qv-wo", m.config), at::kCPU, held);
    m.net->set_training(true, 0.0);
    m.net->set_gradient_checkpointing(checkpointing);
    auto opt = make_adamw(m.named, {0.9, 0.999, 1e-8, 0.0});
    const Batch batch = golden_batch(golden("train_adamw"));
    Run r;
    for (int step = 0; step < 10; ++step) {
        at::manual_seed(3);  // the adapter's dropout, if its config has one
        at::Tensor loss = forward_loss(*m.net, batch, TrainPrecision::Fp32);
        loss.backward();
        r.losses.push_back(loss.item<double>());
        opt->step(1e-3);
        for (auto& p : m.named) p.tensor.mutable_grad() = at::Tensor();
    }
    for (const auto& p : m.named) r.adapter.push_back(p.tensor.detach().clone());
    r.weight_bytes = m.net->weight_bytes();
    r.only_norms_and_biases_left =
        std::none_of(m.params.begin(), m.params.end(), [](const auto& p) { return held_below_fp32(p.first); });
    return r;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
    double w = 0;
    for (size_t i = 0; i < a.size(); ++i) w = std::max(w, std::abs(a[i] - b[i]));
    return w;
}

}  // namespace

TEST_CASE("LoRA on a bf16 / fp16 / int8 base computes what the rounded fp32 base computes", "[trainer][lora][lora_base]") {
    const Run fp32 = train_10_steps(Precision::Fp32, false, Precision::Fp32, false);
    const std::vector<std::pair<Precision, bool>> cases{
        {Precision::Bf16, false}, {Precision::Fp16, false}, {Precision::Int8, true}};
    for (const auto& [held, ckpt] : cases) {
        INFO(to_string(held) << (ckpt ? " with gradient checkpointing" : ""));
        const Run low = train_10_steps(held, false, held, ckpt);
        const Run reference = train_10_steps(Precision::Fp32, true, held, false);
        // Same weight values, same fp32 arithmetic: only the order of sums may differ.
        CHECK(max_diff(low.losses, reference.losses) < 1e-5);
        double adapter_diff = 0;
        for (size_t i = 0; i < low.adapter.size(); ++i)
            adapter_diff = std::max(adapter_diff, (low.adapter[i] - reference.adapter[i]).abs().max().item<double>());
        CHECK(adapter_diff < 1e-5);
        // The fp32 matmul weights are gone: only norms and position biases stay in params.
        CHECK(low.only_norms_and_biases_left);
        CHECK_FALSE(fp32.only_norms_and_biases_left);
        // Against the real fp32 base the curve moves by the rounding of the weights only. bf16 keeps 8
        // bits of mantissa (relative error <= 2^-9), fp16 11 bits, int8 7 bits of each row's maximum:
        // the losses may differ by 3 % (bf16, fp16) or 10 % (int8) of what 10 steps lower the loss
        // (measured: 0.6 %, 0.01 %, 2 % of it).
        const double lowered = fp32.losses.front() - fp32.losses.back();
        CHECK(lowered > 0.1);
        CHECK(max_diff(low.losses, fp32.losses) < (held == Precision::Int8 ? 0.10 : 0.03) * lowered);
        const double ratio = double(low.weight_bytes) / double(fp32.weight_bytes);
        CHECK(ratio < (held == Precision::Int8 ? 0.3 : 0.55));
        WARN(to_string(held) << " base: weights " << ratio * 100 << " % of fp32's; max |loss - fp32 base loss| over 10 steps "
                             << max_diff(low.losses, fp32.losses) << " (loss " << fp32.losses.front() << " -> "
                             << fp32.losses.back() << ")");
    }
}
