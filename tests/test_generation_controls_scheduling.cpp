// transformers' remaining controls inside the shared batch: a request with stop strings, suppressed,
// biased or forced tokens, a length decay or renormalized scores gets what it gets alone when it
// decodes beside other requests (greedy, sampled, plain and group beams, joining at different
// steps), through decode::BatchDecoder and through the Scheduler.
#include <catch2/catch.hpp>

#include "decode/batch_decoder.h"
#include "scheduling_invariance.h"
#include "serve_test_support.h"
#include "t5s/generation_fields.h"

using namespace t5s;

namespace {

// Each control on each kind of search, in turn.
std::vector<test::InvarianceCase> control_cases() {
    const std::vector<std::string> texts = {"Tom is a good boy.", "猫が好きです。", "gggg is is is vvv", "hello world", "x"};
    std::vector<test::InvarianceCase> cases;
    for (size_t i = 0; i < 16; ++i) {
        GenerationOptions o;
        o.max_new_tokens = 6 + static_cast<int>(i % 5);
        switch (i % 4) {
            case 0: break;
            case 1: o.do_sample = true, o.num_return_sequences = 2, o.top_k = 20, o.seed = 7 + static_cast<int64_t>(i); break;
            case 2: o.num_beams = 3, o.num_return_sequences = 2; break;
            case 3: o.num_beams = 4, o.num_beam_groups = 2, o.diversity_penalty = 0.5f, o.num_return_sequences = 2; break;
        }
        switch (i % 8) {
            case 0: o.stop_strings = {"~~", "g", " "}; break;
            case 1: o.suppress_tokens = {129, 130}, o.begin_suppress_tokens = {443}; break;
            case 2: o.sequence_bias = {{{129}, -3.0f}, {{443, 291}, 4.0f}}; break;
            case 3: o.forced_bos_token_id = 308, o.forced_eos_token_id = {1}; break;
            case 4: o.exponential_decay_length_penalty = LengthDecay{1, 1.5f}; break;
            case 5: o.renormalize_logits = true, o.sequence_bias = {{{130}, 2.0f}}; break;
            case 6: o.stop_strings = {"~", "\x7f"}; break;
            case 7: o.max_time = 1e-9; break;  // passed at the first step: one token per candidate
        }
        o.drop_invalid_text = false;  // the raw decoder screens nothing: so must Model::generate, to compare
        cases.push_back({texts[i % texts.size()], o});
    }
    return cases;
}

std::string describe(size_t i, const GenerationOptions& o) {
    return "case " + std::to_string(i) + " " + generation_options_to_json(o);
}

}  // namespace

// Fewer and shorter cases than the other methods' mixes: they share fewer rows, from two clients.
constexpr test::Sharing kControlsSharing{6, 2, false};

TEST_CASE("batch decoder: requests with the controls joining beside other rows equal each alone", "[scheduler][controls]") {
    auto model = test::tiny_serving_model();
    test::check_joining_and_leaving(*model, control_cases(), std::nullopt, describe, kControlsSharing);
}

TEST_CASE("scheduler: concurrent requests with the controls equal each request alone", "[scheduler][controls]") {
    auto model = test::tiny_serving_model();
    test::check_concurrent_requests(*model, control_cases(), describe, kControlsSharing);
}

TEST_CASE("batch decoder: stop strings without the model's tokenizer are refused, and nothing joins", "[scheduler][controls]") {
    auto model = test::tiny_serving_model();
    decode::BatchDecoder bare(*model->step_decoding(), /*tokenizer=*/nullptr);  // as the trainer's decoder
    GenerationOptions o;
    o.stop_strings = {"~"};
    CHECK_THROWS_WITH(bare.add({1, model->tokenizer().encode("hello"), o}),
                      Catch::Contains("stop_strings") && Catch::Contains("tokenizer"));
    CHECK(bare.rows() == 0);
}
