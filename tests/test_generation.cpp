// Generation behaviour beyond the goldens: seeds, batching, hot-swapped settings, cancel,
// distinct/no-copy candidates, and reduced precisions compared with fp32.
#include <ATen/ATen.h>
// c10 defines its own CHECK; Catch2's must win in test files.
#undef CHECK
#include <catch2/catch.hpp>

#include <iostream>
#include <set>

#include "t5s/error.h"
#include "test_support.h"
#include "text/text_normalize.h"
#include "torch/linear.h"

using namespace t5s;
using namespace t5s::test;

namespace {
std::unique_ptr<Model> load(const std::string& name, Precision p = Precision::Fp32) {
    return Model::load(model_dir(name), RuntimeOptions{Device::Cpu, p, 0});
}
std::vector<std::string> texts_of(const std::vector<Candidate>& c) {
    std::vector<std::string> out;
    for (const auto& x : c) out.push_back(x.text);
    return out;
}
}  // namespace

TEST_CASE("sampling: same seed, same candidates; other seed, different", "[generation]") {
    auto m = load("flan-gated-gelu-bf16");
    GenerationOptions o;
    o.do_sample = true;
    o.num_return_sequences = 8;
    o.max_new_tokens = 10;
    o.seed = 7;
    o.drop_invalid_text = false;  // a random-weight model's samples need not form characters; seeds are the point here
    auto a = m->generate({"Tom is a good boy."}, o);
    auto b = m->generate({"Tom is a good boy."}, o);
    CHECK(texts_of(a[0].candidates) == texts_of(b[0].candidates));
    CHECK(a[0].seed == 7);
    o.seed = 8;
    auto c = m->generate({"Tom is a good boy."}, o);
    CHECK(texts_of(a[0].candidates) != texts_of(c[0].candidates));
}

TEST_CASE("top_k = 1 sampling equals greedy", "[generation]") {
    auto m = load("t5v10-tied-relu");
    const auto g = golden("t5v10-tied-relu");
    GenerationOptions greedy;
    greedy.max_new_tokens = 12;
    GenerationOptions topk1 = greedy;
    topk1.do_sample = true;
    topk1.top_k = 1;
    topk1.seed = 3;
    for (const auto& ids : ids_of(g["input_ids"])) {
        CHECK(m->generate_ids({ids}, greedy)[0][0].ids == m->generate_ids({ids}, topk1)[0][0].ids);
    }
}

TEST_CASE("batched beams equal each input alone; batch size does not change results", "[generation]") {
    auto m = load("flan-gated-gelu-bf16");
    const IdBatch inputs = ids_of(golden("flan-gated-gelu-bf16")["input_ids"]);
    GenerationOptions o;
    o.num_beams = 4;
    o.num_return_sequences = 2;
    o.max_new_tokens = 8;
    auto all = m->generate_ids(inputs, o);
    for (size_t i = 0; i < inputs.size(); ++i) {
        auto alone = m->generate_ids({inputs[i]}, o)[0];
        REQUIRE(alone.size() == all[i].size());
        for (size_t k = 0; k < alone.size(); ++k) {
            CHECK(alone[k].ids == all[i][k].ids);
            CHECK(std::abs(alone[k].score - all[i][k].score) < 1e-4);
        }
    }
    GenerationOptions greedy;
    greedy.max_new_tokens = 12;
    greedy.batch_size = 1;
    auto one_by_one = m->generate_ids(inputs, greedy);
    greedy.batch_size = 3;
    auto together = m->generate_ids(inputs, greedy);
    for (size_t i = 0; i < inputs.size(); ++i) CHECK(one_by_one[i][0].ids == together[i][0].ids);
}

namespace {

// The first candidate's ids of `input`, through generate_ids (decode_batch on this thread) or
// through generate (the texts as one request to a scheduler: the desktop's and the CLI's path).
std::vector<int> first_ids(const Model& m, const std::vector<int>& input, const GenerationOptions& o, GenerationControl* control,
                           bool through_scheduler) {
    if (!through_scheduler) return m.generate_ids({input}, o, control)[0][0].ids;
    std::string text = m.tokenizer().decode(input);
    return m.generate({text}, o, control)[0].candidates[0].ids;
}

}  // namespace

TEST_CASE("a setting changed mid-generation takes effect at the next step", "[generation][hotswap]") {
    auto m = load("t5v10-tied-relu");
    const bool through_scheduler = GENERATE(false, true);
    INFO((through_scheduler ? "generate (scheduler)" : "generate_ids"));
    GenerationOptions o;
    o.max_new_tokens = 10;
    o.min_new_tokens = 10;        // keep every row decoding past the switch
    o.drop_invalid_text = false;  // forced tokens of a random-weight model need not form characters
    const int switch_after = 3;   // steps done when the user moves the slider
    const float penalty = 50.0f;
    int changed_rows = 0;
    for (const auto& input : ids_of(golden("t5v10-tied-relu")["input_ids"])) {
        if (through_scheduler && m->tokenizer().encode(m->tokenizer().decode(input)) != input) continue;  // text must round-trip
        const auto baseline = first_ids(*m, input, o, nullptr, through_scheduler);
        GenerationControl control;
        control.live_settings = std::make_shared<SettingsHandle>(o);
        control.on_step = [&](const StepInfo& s) {
            if (s.step == switch_after) {
                GenerationOptions changed = o;
                changed.repetition_penalty = penalty;
                control.live_settings->set(changed);
            }
        };
        const auto swapped = first_ids(*m, input, o, &control, through_scheduler);
        // Unchanged before the switch...
        CHECK(std::vector<int>(swapped.begin(), swapped.begin() + switch_after) ==
              std::vector<int>(baseline.begin(), baseline.begin() + switch_after));
        // ...and the very next token is the argmax of the penalised logits for that prefix.
        std::vector<int> dec = {0};
        dec.insert(dec.end(), swapped.begin(), swapped.begin() + switch_after);
        FloatArray logits = m->logits({input}, {dec});
        const int64_t V = logits.shape[2];
        std::vector<float> last(logits.data.end() - V, logits.data.end());
        for (int id : std::set<int>(dec.begin(), dec.end())) last[id] = last[id] < 0 ? last[id] * penalty : last[id] / penalty;
        last[1] = -INFINITY;  // min_new_tokens still bans </s>
        const int expected = static_cast<int>(std::max_element(last.begin(), last.end()) - last.begin());
        CHECK(swapped[switch_after] == expected);
        changed_rows += swapped[switch_after] != baseline[switch_after];
    }
    CHECK(changed_rows >= 1);  // the switch really changed a token (the check above is not vacuous)
}

TEST_CASE("cancel stops generation within one step", "[generation][cancel]") {
    auto m = load("t5v10-tied-relu");
    const bool through_scheduler = GENERATE(false, true);
    INFO((through_scheduler ? "generate (scheduler)" : "generate_ids"));
    GenerationOptions o;
    o.max_new_tokens = 50;
    o.min_new_tokens = 50;
    GenerationControl control;
    int steps = 0;
    control.on_step = [&](const StepInfo& s) {
        steps = s.step;
        if (s.step == 2) control.cancel = true;
    };
    try {
        if (through_scheduler) m->generate({"hello world"}, o, &control);
        else m->generate_ids({{5, 6, 7, 1}}, o, &control);
        FAIL("not cancelled");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::Cancelled);
    }
    CHECK(steps == 2);
}

TEST_CASE("distinct + no-copy candidates are all different and never the input", "[generation]") {
    auto m = load("flan-gated-gelu-bf16");
    GenerationOptions o;
    o.do_sample = true;
    o.num_return_sequences = 8;
    o.max_new_tokens = 6;
    o.seed = 11;
    o.distinct = true;
    o.no_copy = true;
    o.temperature = 1.5f;
    o.drop_invalid_text = false;  // this checks distinct and no_copy; a random model's bytes need not form characters
    const std::string input = "猫が好きです。";
    auto r = m->generate({input}, o)[0];
    CHECK(r.candidates.size() == 8);
    std::set<std::string> seen;
    for (const auto& c : r.candidates) {
        CHECK(normalize_for_compare(c.text) != normalize_for_compare(input));
        CHECK(seen.insert(normalize_for_compare(c.text)).second);
    }
}

TEST_CASE("bf16 and int8 on the CPU agree with fp32", "[generation][precision]") {
    for (const char* name : {"t5v10-tied-relu", "flan-gated-gelu-bf16"}) {
        const IdBatch inputs = ids_of(golden(name)["input_ids"]);
        auto fp32 = load(name);
        GenerationOptions o;
        o.max_new_tokens = 12;
        auto ref = fp32->generate_ids(inputs, o);
        const FloatArray ref_logits = fp32->logits(inputs, {{0, 5, 6}, {0, 7, 8}, {0, 9, 10}});
        // 18 decoder rows: int8 switches the head to its oneDNN form from 16 rows.
        const IdBatch wide_ids{{0, 5, 6, 7, 8, 9}, {0, 7, 8, 9, 10, 11}, {0, 9, 10, 11, 12, 13}};
        const FloatArray ref_wide = fp32->logits(inputs, wide_ids);
        for (Precision p : {Precision::Bf16, Precision::Int8}) {
            auto m = load(name, p);
            auto out = m->generate_ids(inputs, o);
            size_t same = 0, total = 0;
            for (size_t i = 0; i < inputs.size(); ++i) {
                const auto& a = ref[i][0].ids;
                const auto& b = out[i][0].ids;
                for (size_t t = 0; t < a.size(); ++t, ++total) same += t < b.size() && a[t] == b[t];
            }
            const FloatArray lg = m->logits(inputs, {{0, 5, 6}, {0, 7, 8}, {0, 9, 10}});
            double max_diff = 0, max_ref = 0;
            for (size_t k = 0; k < lg.data.size(); ++k) {
                max_diff = std::max(max_diff, std::abs(static_cast<double>(lg.data[k] - ref_logits.data[k])));
                max_ref = std::max(max_ref, std::abs(static_cast<double>(ref_logits.data[k])));
            }
            const FloatArray lw = m->logits(inputs, wide_ids);
            REQUIRE(lw.data.size() == ref_wide.data.size());
            for (size_t k = 0; k < lw.data.size(); ++k) {
                max_diff = std::max(max_diff, std::abs(static_cast<double>(lw.data[k] - ref_wide.data[k])));
                max_ref = std::max(max_ref, std::abs(static_cast<double>(ref_wide.data[k])));
            }
            const double agreement = static_cast<double>(same) / static_cast<double>(total);
            std::cout << "PRECISION " << name << " " << to_string(p) << ": greedy token agreement with fp32 " << agreement * 100
                      << "% (" << same << "/" << total << "), max|logit diff| " << max_diff << " (max|logit| " << max_ref
                      << ")\n";
            // 5% of the largest logit. Exception: int8 through FBGEMM/oneDNN on CPUs without VNNI
            // (T5S_INT8_KERNEL=fbgemm, or no AVX2), whose kernels quantise activations to 7 bits (linear.cpp: 8 would saturate),
            // about twice the per-layer error; measured on such a CPU: 0.28 of 6.6 (t5v10) and 1.28 of 19.7 (flan).
            const bool seven_bit = p == Precision::Int8 && default_kernel_policy().int8_reduced_range;  // FBGEMM only
            CHECK(max_diff < (seven_bit ? 0.10 : 0.05) * std::max(1.0, max_ref));
            // The logit bound above is the precise check; token agreement only guards against gross
            // breakage. Greedy decoding counts every token after the first flipped argmax as a
            // disagreement (the rest continues from another prefix), and these tiny random models
            // have flat logits (max |logit| 6.6 and 19.7; the top two often within 0.1), so one
            // rounding-level difference early costs most of a 12-token row. Measured here: bf16
            // 96.4% and 100%, hence 90%; int8 rounds weights and activations to 8 bits, hence half.
            CHECK(agreement >= (p == Precision::Bf16 ? 0.9 : 0.5));
            CHECK(m->info().weight_bytes < fp32->info().weight_bytes);
        }
    }
}
