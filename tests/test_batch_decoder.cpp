// decode::BatchDecoder directly, with a deterministic schedule: inputs join one per step, leave at
// different steps (their places taken by later rows), one is removed mid-way, and the cache moves
// left and grows (rows, positions, encoder length) while rows run. Every input's candidates must
// equal Model::generate on that input alone (batch invariance: what serve's concurrency rests on).
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "decode/batch_decoder.h"
#include "serve_test_support.h"
#include "skip.h"

using namespace t5s;

namespace {

struct Input {
    std::string text;
    GenerationOptions options;
    int joins_at = 0;  // step before which it joins
};

std::vector<Input> staggered_inputs() {
    const std::vector<std::string> texts = {"hello world", "paraphrase: the cat sat on the mat",
                                            "a much longer sentence with many more words in it than the others have, to pad", "x",
                                            "translate English to German: How old are you?"};
    std::vector<Input> inputs;
    for (int i = 0; i < 14; ++i) {
        GenerationOptions o;
        o.drop_invalid_text = false;          // the raw decoder screens nothing: so must Model::generate, to compare
        o.max_new_tokens = 3 + (i * 5) % 11;  // short rows leave while long ones run
        o.min_new_tokens = i % 3 == 0 ? o.max_new_tokens : 0;
        if (i % 4 == 1) o.num_beams = 3, o.num_return_sequences = 2;
        if (i % 4 == 2) o.do_sample = true, o.num_return_sequences = 2, o.top_k = 20, o.seed = 40 + i;
        inputs.push_back({texts[static_cast<size_t>(i) % texts.size()], o, i < 10 ? i : 10 + 3 * (i - 10)});
    }
    return inputs;
}

}  // namespace

namespace {

void check_rows_joining_and_leaving(const Model& model) {
    const auto inputs = staggered_inputs();
    const decode::GroupId removed = 6;  // cancelled mid-way: the others must not notice
    decode::BatchDecoder decoder(model);
    std::map<decode::GroupId, std::vector<Candidate>> served;
    int step = 0, max_rows = 0;
    size_t next = 0;
    while (next < inputs.size() || decoder.rows() > 0) {
        while (next < inputs.size() && inputs[next].joins_at <= step) {
            const Input& in = inputs[next];
            decoder.add({static_cast<decode::GroupId>(next), model.tokenizer().encode(in.text), in.options});
            ++next;
        }
        if (step == 9) decoder.remove(removed);
        const decode::StepReport report = decoder.step();
        max_rows = std::max(max_rows, report.rows);
        for (auto id : report.groups_finished) served[id] = decoder.take_results(id);
        REQUIRE(++step < 200);
    }
    CHECK(max_rows > 8);
    CHECK(served.count(removed) == 0);
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (i == removed) continue;
        INFO("input " << i << " beams " << inputs[i].options.num_beams << " sample " << inputs[i].options.do_sample);
        const auto alone = model.generate({inputs[i].text}, inputs[i].options)[0].candidates;
        const auto& got = served[static_cast<decode::GroupId>(i)];
        const size_t n = std::min(got.size(), static_cast<size_t>(inputs[i].options.num_return_sequences));
        REQUIRE(n == alone.size());
        for (size_t k = 0; k < n; ++k) {
            CHECK(got[k].ids == alone[k].ids);
            CHECK(got[k].score == Approx(alone[k].score).margin(1e-4));
        }
    }
}

}  // namespace

TEST_CASE("batch decoder: rows joining and leaving at every step equal each input alone", "[scheduler]") {
    check_rows_joining_and_leaving(*test::tiny_serving_model());
}

TEST_CASE("batch decoder: rows joining and leaving, the decode step in one pass over the panels", "[scheduler]") {
    // The path real models take by default (the tiny model's weights are under the packing size):
    // every weight on the batch-invariant panels, the step in one pass over its own buffers.
    RuntimeOptions r;
    r.device = Device::Cpu;
    r.threads = 1;
    r.kernels = kernel_policy_for(CpuClass::Avx2);
    r.kernels->fp32_gemm = Fp32Gemm::Panels, r.kernels->packing = WeightPacking::All;
    if (!r.kernels->one_pass_step) {
        T5S_SKIP("T5S_ONE_PASS_STEP=0 or T5S_FUSED_KERNELS=0 in the environment: no one-pass step to check");
    }
    const auto model = Model::load(test::model_dir("t5v10-tied-relu"), r);
    // Panels take raw rows, so the policy's one pass runs (the policy test asserts the path itself).
    REQUIRE(model->info().matmul_kernel.rfind("fp32 panels", 0) == 0);
    check_rows_joining_and_leaving(*model);
}

namespace {

// Our panel kernel's rows do not depend on the rows beside them, nor do the fused step kernels':
// with both (`bitwise`), a joint pass must give the same bits as encoding alone; elsewhere the
// same ids and scores to rounding.
void check_joint_pass_equals_alone(const Model& m, bool bitwise) {
    INFO("kernel " << m.info().matmul_kernel << (bitwise ? ", bitwise" : ""));
    const auto inputs = staggered_inputs();
    decode::BatchDecoder decoder(m);
    std::map<decode::GroupId, std::vector<Candidate>> served;
    std::vector<decode::GroupSpec> first, second;
    for (size_t i = 0; i < inputs.size(); ++i) {
        decode::GroupSpec spec{static_cast<decode::GroupId>(i), m.tokenizer().encode(inputs[i].text), inputs[i].options};
        (i < 9 ? first : second).push_back(spec);
    }
    // Inputs of one length side by side: they attend in the encoder as one batch.
    std::stable_sort(first.begin(), first.end(), [](const decode::GroupSpec& a, const decode::GroupSpec& b) {
        return a.input_ids.size() < b.input_ids.size();
    });
    REQUIRE(first[0].input_ids.size() == first[1].input_ids.size());
    decoder.add(first);
    CHECK(decoder.groups() == 9);
    for (int step = 0; decoder.rows() > 0 || !second.empty(); ++step) {
        if (step == 2) {
            decoder.add(second);  // a second pass joins rows already running
            second.clear();
        }
        for (auto id : decoder.step().groups_finished) served[id] = decoder.take_results(id);
        REQUIRE(step < 200);
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        INFO("input " << i << " beams " << inputs[i].options.num_beams << " sample " << inputs[i].options.do_sample);
        const auto alone = m.generate({inputs[i].text}, inputs[i].options)[0].candidates;
        const auto& got = served[static_cast<decode::GroupId>(i)];
        const size_t n = std::min(got.size(), static_cast<size_t>(inputs[i].options.num_return_sequences));
        REQUIRE(n == alone.size());
        for (size_t k = 0; k < n; ++k) {
            CHECK(got[k].ids == alone[k].ids);
            if (bitwise && inputs[i].options.num_beams == 1) CHECK(got[k].score == alone[k].score);
            CHECK(got[k].score == Approx(alone[k].score).margin(1e-4));
        }
    }
}

}  // namespace

TEST_CASE("batch decoder: inputs joining in one encoder pass equal each input alone", "[scheduler]") {
    const auto model = test::tiny_serving_model();
    const bool panels = model->info().matmul_kernel.rfind("fp32 panels", 0) == 0;
    check_joint_pass_equals_alone(*model, panels && default_kernel_policy().step != KernelIsa::Off);
}

TEST_CASE("batch decoder: with the AVX2 class's panel kernel, a joint pass is bitwise each input alone", "[scheduler]") {
    // The same process, the kernel policy an AVX2-only CPU gets without any switch (every weight
    // on the panels), whatever this CPU's own choice or the environment's switches.
    RuntimeOptions r;
    r.device = Device::Cpu;
    r.threads = 1;
    r.kernels = choose_kernel_policy(capped_to(detect_cpu_features(), CpuClass::Avx2), KernelSwitches{});
    r.kernels->fp32_gemm = Fp32Gemm::Panels;  // also on a CPU below AVX2 (portable panels: the same bits)
    r.kernels->packing = WeightPacking::All;
    const auto model = Model::load(test::model_dir("t5v10-tied-relu"), r);
    REQUIRE(model->info().matmul_kernel.rfind("fp32 panels", 0) == 0);
    check_joint_pass_equals_alone(*model, true);
}

TEST_CASE("batch decoder: op by op and with every weight packed (panels, MKL), a joint pass equals each input alone",
          "[scheduler]") {
    // The kernel paths other CPUs and devices take (CUDA and fp16 go op by op), chosen in process.
    struct Variant {
        const char* name;
        void (*apply)(KernelPolicy&);
    };
    const Variant variants[] = {
        {"op by op", [](KernelPolicy& k) { k.step = KernelIsa::Off, k.vocab = KernelIsa::Off; }},
        {"every weight on the panels", [](KernelPolicy& k) { k.fp32_gemm = Fp32Gemm::Panels, k.packing = WeightPacking::All; }},
        {"every weight packed for MKL",
         [](KernelPolicy& k) { k.fp32_gemm = Fp32Gemm::MklPacked, k.packing = WeightPacking::All; }},
    };
    for (const auto& v : variants) {
        INFO(v.name);
        RuntimeOptions r;
        r.device = Device::Cpu;
        r.threads = 1;
        r.kernels = default_kernel_policy();
        v.apply(*r.kernels);
        const auto model = Model::load(test::model_dir("t5v10-tied-relu"), r);
        check_joint_pass_equals_alone(*model, false);
    }
}

TEST_CASE("batch decoder: a failed joint pass adds none of its inputs", "[scheduler]") {
    auto model = test::tiny_serving_model();
    decode::BatchDecoder decoder(*model);
    GenerationOptions o;
    o.max_new_tokens = 4;
    const std::vector<int> good = model->tokenizer().encode("hello world");
    std::vector<int> bad = good;
    bad[0] = 1 << 30;  // outside the vocabulary: the embedding lookup throws
    CHECK_THROWS(decoder.add(std::vector<decode::GroupSpec>{{1, good, o}, {2, bad, o}}));
    CHECK(decoder.groups() == 0);
    CHECK(decoder.rows() == 0);
    decoder.add(decode::GroupSpec{3, good, o});  // the decoder still works
    CHECK(decoder.groups() == 1);
}

TEST_CASE("batch decoder: a cohort decodes as one group, each member as if alone", "[scheduler]") {
    auto model = test::tiny_serving_model();
    const std::vector<std::string> texts = {"hello world", "paraphrase: the cat sat on the mat", "x",
                                            "a much longer sentence with many more words in it than the others have"};
    GenerationOptions greedy, sampled, beams;
    // The raw decoder screens nothing: so must Model::generate, to compare.
    greedy.drop_invalid_text = sampled.drop_invalid_text = beams.drop_invalid_text = false;
    greedy.max_new_tokens = sampled.max_new_tokens = beams.max_new_tokens = 9;
    greedy.min_new_tokens = 2;
    sampled.do_sample = true, sampled.num_return_sequences = 3, sampled.top_k = 20, sampled.seed = 11;
    beams.num_beams = 3, beams.num_return_sequences = 2;
    for (const GenerationOptions& o : {greedy, sampled, beams}) {
        INFO("beams " << o.num_beams << " sample " << o.do_sample);
        decode::BatchDecoder decoder(*model);
        std::vector<decode::GroupSpec> specs;
        for (size_t i = 0; i < texts.size(); ++i)
            specs.push_back({static_cast<decode::GroupId>(i + 1), model->tokenizer().encode(texts[i]), o, /*cohort=*/5});
        GenerationOptions other = o;
        other.max_new_tokens = 4;  // other options: a group of its own in the same pass
        specs.push_back({9, model->tokenizer().encode("hello world"), other, /*cohort=*/5});
        decoder.add(specs);
        CHECK(decoder.groups() == 5);
        CHECK(decoder.rows_of(2) == decode::BatchDecoder::rows_for(o));
        const decode::GroupId removed = 3;
        std::map<decode::GroupId, std::vector<Candidate>> served;
        for (int step = 0; decoder.rows() > 0; ++step) {
            if (step == 2) {
                decoder.remove(removed);
                CHECK(decoder.rows_of(removed) == 0);
                CHECK(decoder.groups() <= 4);
            }
            for (auto id : decoder.step().groups_finished) served[id] = decoder.take_results(id);
            REQUIRE(step < 100);
        }
        CHECK(served.count(removed) == 0);
        for (size_t i = 0; i < texts.size(); ++i) {
            if (i + 1 == removed) continue;
            INFO("input " << i);
            const auto alone = model->generate({texts[i]}, o)[0].candidates;
            const auto& got = served[static_cast<decode::GroupId>(i + 1)];
            REQUIRE(std::min(got.size(), static_cast<size_t>(o.num_return_sequences)) == alone.size());
            for (size_t k = 0; k < alone.size(); ++k) {
                CHECK(got[k].ids == alone[k].ids);
                CHECK(got[k].score == Approx(alone[k].score).margin(1e-4));
            }
        }
        const auto lone = model->generate({"hello world"}, other)[0].candidates;
        REQUIRE(served[9].size() >= lone.size());
        CHECK(served[9][0].ids == lone[0].ids);
    }
}
