// The kernel policy in one process: the same model loaded with this CPU's kernels and with forced
// fallbacks (the AVX2-only class of an AMD EPYC, the portable code, ATen op by op, VNNI instead
// of AMX, FBGEMM instead of ours) gives the same results on the same inputs: bit for bit where
// the kernels promise it (the panel kernel's AVX2 and portable code; AMX and VNNI), to rounding
// or to int8 rounding elsewhere; the decode step in one pass and with a tensor per operation bit for
// bit. The env-driven ctest entries still cover each switch alone.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "skip.h"
#include "t5s/model.h"
#include "test_support.h"
#include "torch/t5_network.h"
#include "torch/vocab_kernels.h"

using namespace t5s;
using namespace t5s::test;

namespace {

const char* const kModel = "t5v10-tied-relu";

std::unique_ptr<Model> load(Precision p, KernelPolicy kernels) {
    kernels.packing = WeightPacking::All;  // the tiny model's weights are all under the size threshold
    RuntimeOptions o{Device::Cpu, p, 0};
    o.kernels = kernels;
    return Model::load(model_dir(kModel), o);
}

IdBatch inputs(const Model& m) {
    return {m.tokenizer().encode("paraphrase: The quick brown fox jumps over the lazy dog."),
            m.tokenizer().encode("paraphrase: Tom is a good boy.")};
}

GenerationOptions greedy() {
    GenerationOptions o;
    o.max_new_tokens = 12;
    return o;
}

struct Outputs {
    FloatArray logits;                           // teacher-forced on fixed decoder inputs
    std::vector<std::vector<Candidate>> greedy;  // per input
};

Outputs run(const Model& m) {
    const IdBatch in = inputs(m);
    const IdBatch decoder_in(in.size(), std::vector<int>{0, 5, 9, 13, 21});
    return {m.logits(in, decoder_in), m.generate_ids(in, greedy())};
}

double max_abs(const std::vector<float>& v) {
    double m = 0;
    for (float x : v) m = std::max(m, std::abs(static_cast<double>(x)));
    return m;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(static_cast<double>(a[i]) - b[i]));
    return m;
}

void check_bitwise(const Outputs& a, const Outputs& b) {
    CHECK(a.logits.data == b.logits.data);
    REQUIRE(a.greedy.size() == b.greedy.size());
    for (size_t i = 0; i < a.greedy.size(); ++i) {
        CHECK(a.greedy[i][0].ids == b.greedy[i][0].ids);
        CHECK(a.greedy[i][0].score == b.greedy[i][0].score);
    }
}

// Each token `other` decoded greedily is a maximum, to `tol`, of `reference`'s own logits after
// the same prefix: both are greedy decodings, whichever way a near-tie rounds.
void check_greedy_under(const Model& reference, const Outputs& other, double tol) {
    const IdBatch in = inputs(reference);
    for (size_t i = 0; i < in.size(); ++i) {
        const std::vector<int>& ids = other.greedy[i][0].ids;
        REQUIRE(!ids.empty());
        std::vector<int> prefix{reference.info().config.decoder_start_token_id};
        prefix.insert(prefix.end(), ids.begin(), ids.end() - 1);
        const FloatArray l = reference.logits({in[i]}, {prefix});
        const int64_t vocab = l.shape[2];
        for (size_t t = 0; t < ids.size(); ++t) {
            const float* row = l.data.data() + t * vocab;
            const float best = *std::max_element(row, row + vocab);
            INFO("input " << i << " step " << t);
            CHECK(row[ids[t]] >= best - tol);
        }
    }
}

}  // namespace

TEST_CASE("panel kernel: AVX2 code and its portable fallback give the same bits through the model", "[policy]") {
    KernelPolicy avx2 = kernel_policy_for(CpuClass::Avx2);
    avx2.fp32_gemm = Fp32Gemm::Panels;
    KernelPolicy portable = avx2;
    portable.fp32_panels = KernelIsa::Portable;
    const auto fast = load(Precision::Fp32, avx2), slow = load(Precision::Fp32, portable);
    INFO("fast " << fast->info().matmul_kernel << ", fallback " << slow->info().matmul_kernel);
    CHECK(slow->info().matmul_kernel == "fp32 panels (portable)");
    if (detect_cpu_features().avx2_fma) CHECK(fast->info().matmul_kernel == "fp32 panels (AVX2)");
    check_bitwise(run(*fast), run(*slow));
}

TEST_CASE("fp32: this CPU's kernels, the AVX2 class's, the portable code and ATen op by op agree", "[policy]") {
    const auto here = load(Precision::Fp32, default_kernel_policy());
    const Outputs want = run(*here);
    KernelPolicy op_by_op = default_kernel_policy();
    op_by_op.step = op_by_op.vocab = KernelIsa::Off;
    for (const KernelPolicy& p : {kernel_policy_for(CpuClass::Avx2), kernel_policy_for(CpuClass::Baseline), op_by_op}) {
        const auto m = load(Precision::Fp32, p);
        const Outputs got = run(*m);
        INFO("class " << to_string(p.cpu) << ", " << m->info().matmul_kernel << ", step "
                      << (p.step == KernelIsa::Off ? "op by op" : "fused"));
        REQUIRE(got.logits.shape == want.logits.shape);
        CHECK(max_abs_diff(got.logits.data, want.logits.data) <= 1e-4 * std::max(1.0, max_abs(want.logits.data)));
        check_greedy_under(*here, got, 1e-3);
    }
}

TEST_CASE("int8: AMX, VNNI and AVX2 agree bit for bit; FBGEMM, the AVX2 class's path, to int8 rounding", "[policy]") {
    const KernelPolicy here = default_kernel_policy();
    const auto m = load(Precision::Int8, here);
    const Outputs want = run(*m);
    INFO("this CPU: " << m->info().matmul_kernel);
    if (here.int8 == Int8Kernel::Amx) {
        KernelPolicy vnni = here;
        vnni.int8 = Int8Kernel::Vnni;
        const auto v = load(Precision::Int8, vnni);
        CHECK(v->info().matmul_kernel == "int8 AVX512-VNNI");
        check_bitwise(want, run(*v));
    }
    const bool packed_kernel_here =
        here.int8 == Int8Kernel::Amx || here.int8 == Int8Kernel::Vnni || here.int8 == Int8Kernel::Avx2;
    if (detect_cpu_features().avx2_fma && packed_kernel_here) {
        // Only the int8 kernel changes (the step and vocabulary kernels stay this CPU's).
        KernelPolicy avx2_int8 = here;
        avx2_int8.int8 = Int8Kernel::Avx2;
        const auto a = load(Precision::Int8, avx2_int8);
        CHECK(a->info().matmul_kernel == "int8 AVX2");
        check_bitwise(want, run(*a));
    }
    // The AVX2 class as a whole (FBGEMM, 7-bit activations), and with our AVX2 kernel asked for.
    KernelPolicy avx2 = kernel_policy_for(CpuClass::Avx2);
    const auto f = load(Precision::Int8, avx2);
    CHECK(f->info().matmul_kernel == "int8 FBGEMM");
    avx2.int8 = detect_cpu_features().avx2_fma ? Int8Kernel::Avx2 : Int8Kernel::Fbgemm;
    const auto c = load(Precision::Int8, avx2);
    CHECK(c->info().matmul_kernel == (detect_cpu_features().avx2_fma ? "int8 AVX2" : "int8 FBGEMM"));
    // Both quantise weights alike; activations get 8 bits (ours) or 7 (FBGEMM without VNNI), the
    // error test_generation's precision check bounds against fp32 (5% and 10% of the range).
    for (const Outputs& got : {run(*c), run(*f)})
        CHECK(max_abs_diff(got.logits.data, want.logits.data) <= 0.15 * std::max(1.0, max_abs(want.logits.data)));
    // The CUDA path's twin: the same weights, activations rounded to 8 bits symmetric, int32 sums.
    KernelPolicy rows = here;
    rows.int8 = Int8Kernel::Rows;
    const auto r = load(Precision::Int8, rows);
    CHECK(r->info().matmul_kernel == "int8 rows (int32 products)");
    CHECK(r->info().weight_bytes <= m->info().weight_bytes);  // no dequantised copy kept, the tied table held once
    const Outputs twin = run(*r);
    CHECK(max_abs_diff(twin.logits.data, want.logits.data) <= 0.15 * std::max(1.0, max_abs(want.logits.data)));
}

TEST_CASE("vocabulary kernels: every instruction set here picks ATen's token", "[policy]") {
    std::vector<KernelIsa> isas;
    if (detect_cpu_features().avx2_fma) isas.push_back(KernelIsa::Avx2);
    if (detect_cpu_features().avx512) isas.push_back(KernelIsa::Avx512);
    at::manual_seed(11);
    const at::Tensor logits = at::randn({6, 32128}) * 5;
    const at::Tensor want_next = std::get<1>(logits.max(-1));
    const at::Tensor want_lp = at::log_softmax(logits, -1);
    for (KernelIsa isa : isas) {
        INFO("isa " << static_cast<int>(isa));
        at::Tensor next, logprob, inplace = logits.clone();
        REQUIRE(greedy_pick_cpu(logits, next, logprob, isa));
        CHECK(at::equal(next, want_next));
        CHECK((logprob - want_lp.gather(1, want_next.unsqueeze(1)).squeeze(1)).abs().max().item<double>() < 1e-5);
        REQUIRE(log_softmax_inplace_cpu(inplace, isa));
        CHECK((inplace - want_lp).abs().max().item<double>() < 1e-5);
    }
    at::Tensor next, logprob;
    CHECK(!greedy_pick_cpu(logits, next, logprob, KernelIsa::Off));  // the policy's "off": ATen runs
}

namespace {

// Whether `m` runs its next decode step in one pass (StepDecoding::decodes_in_one_pass) for a
// state as generation starts one: the test below must know which paths it compared.
bool steps_in_one_pass(const Model& m) {
    const StepDecoding* net = m.step_decoding();
    REQUIRE(net != nullptr);
    const std::vector<int> ids = m.tokenizer().encode("paraphrase: Tom is a good boy.");
    const at::Tensor in = at::tensor(std::vector<int64_t>(ids.begin(), ids.end()), at::kLong).unsqueeze(0);
    const at::AutoGradMode no_grad(false);
    const std::vector<at::Tensor> encoded = net->encode_each({in});
    const DecoderState st = net->start_decoding(encoded[0], at::ones_like(in), 8, 1);
    return net->decodes_in_one_pass(st);
}

std::vector<std::vector<Candidate>> every_search(const Model& m) {
    const IdBatch in = inputs(m);
    GenerationOptions beams = greedy(), sampled = greedy(), contrastive = greedy();
    beams.num_beams = 4, beams.num_return_sequences = 2;
    sampled.do_sample = true, sampled.num_return_sequences = 3, sampled.top_k = 20, sampled.seed = 7;
    contrastive.penalty_alpha = 0.6f, contrastive.top_k = 4;  // reads each step's final hidden state
    std::vector<std::vector<Candidate>> all;
    for (const GenerationOptions& o : {greedy(), beams, sampled, contrastive}) {
        for (auto& candidates : m.generate_ids(in, o)) all.push_back(std::move(candidates));
    }
    return all;
}

void check_same_candidates(const std::vector<std::vector<Candidate>>& a, const std::vector<std::vector<Candidate>>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        REQUIRE(a[i].size() == b[i].size());
        for (size_t j = 0; j < a[i].size(); ++j) {
            INFO("search/input " << i << ", candidate " << j);
            CHECK(a[i][j].ids == b[i][j].ids);
            CHECK(a[i][j].score == b[i][j].score);  // bits: scores sum every step's log-probabilities
        }
    }
}

void check_one_pass_matches(const char* model, Precision precision, const KernelPolicy& with_one_pass) {
    REQUIRE(with_one_pass.one_pass_step);
    KernelPolicy per_operation = with_one_pass;
    per_operation.one_pass_step = false;
    RuntimeOptions o{Device::Cpu, precision, 0};
    o.kernels = with_one_pass;
    o.kernels->packing = WeightPacking::All;  // the tiny models' weights are under the size threshold
    const auto one_pass = Model::load(model_dir(model), o);
    o.kernels = per_operation;
    o.kernels->packing = WeightPacking::All;
    const auto per_op = Model::load(model_dir(model), o);
    INFO(model << ", " << one_pass->info().matmul_kernel);
    REQUIRE(steps_in_one_pass(*one_pass));
    REQUIRE(!steps_in_one_pass(*per_op));
    check_same_candidates(every_search(*one_pass), every_search(*per_op));
}

}  // namespace

TEST_CASE("the decode step in one pass and with a tensor per operation give the same bits", "[policy]") {
    const KernelPolicy here = default_kernel_policy();
    if (!here.one_pass_step) {
        T5S_SKIP("T5S_ONE_PASS_STEP=0 or T5S_FUSED_KERNELS=0 in the environment: only the tensor step runs");
    }
    SECTION("fp32, this CPU's GEMM") { check_one_pass_matches(kModel, Precision::Fp32, here); }
    SECTION("fp32, the AVX2 class's panels") {
        KernelPolicy panels = kernel_policy_for(CpuClass::Avx2);
        panels.fp32_gemm = Fp32Gemm::Panels;
        check_one_pass_matches(kModel, Precision::Fp32, panels);
    }
    SECTION("a gated-gelu model (flan-t5), its activation through ATen on the step's buffers") {
        check_one_pass_matches("flan-gated-gelu-bf16", Precision::Fp32, here);
    }
    SECTION("int8, our packed kernel") {
        KernelPolicy ours = here;
        if (ours.int8 == Int8Kernel::Fbgemm) {
            if (!detect_cpu_features().avx2_fma) {
                T5S_SKIP("no AVX2 here: int8 runs FBGEMM, whose form the one-pass step does not take");
            }
            ours.int8 = Int8Kernel::Avx2;
        }
        check_one_pass_matches(kModel, Precision::Int8, ours);
    }
}
