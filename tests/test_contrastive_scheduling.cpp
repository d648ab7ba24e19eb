// Contrastive search inside the shared batch: a request gets what it gets alone when it decodes
// beside other requests (greedy, sampled, beams, other contrastive widths, joining and leaving at
// different steps, one cancelled mid-way), through decode::BatchDecoder and through the Scheduler.
#include <catch2/catch.hpp>

#include "scheduling_invariance.h"
#include "serve_test_support.h"

using namespace t5s;

namespace {

GenerationOptions contrastive(float alpha, int top_k, int max_new_tokens) {
    GenerationOptions o;
    o.penalty_alpha = alpha, o.top_k = top_k, o.max_new_tokens = max_new_tokens;
    return o;
}

// Contrastive searches of several widths and processors between other kinds of rows.
std::vector<test::InvarianceCase> mixed_cases() {
    const std::vector<std::string> texts = {
        "paraphrase: the cat sat on the mat", "hello world", "translate English to German: How old are you?",
        "a much longer sentence with many more words in it than the others have, to pad", "x"};
    std::vector<test::InvarianceCase> cases;
    for (size_t i = 0; i < 15; ++i) {
        GenerationOptions o;
        o.max_new_tokens = 5 + static_cast<int>(i * 7 % 13);
        switch (i % 5) {
            case 0: o = contrastive(0.6f, 4, 6 + static_cast<int>(i)), o.repetition_penalty = 1.5f; break;
            case 1: o = contrastive(0.3f, 2, 4 + static_cast<int>(i)), o.min_new_tokens = 3, o.stop_strings = {"g", "~"}; break;
            case 2: o.num_beams = 3, o.num_return_sequences = 2; break;
            case 3: o.do_sample = true, o.num_return_sequences = 2, o.top_k = 20, o.seed = 40 + static_cast<int64_t>(i); break;
            case 4: o = contrastive(0.8f, 6, 9), o.no_repeat_ngram_size = 2; break;
        }
        o.drop_invalid_text = false;  // the raw decoder screens nothing: so must Model::generate, to compare
        cases.push_back({texts[i % texts.size()], o});
    }
    return cases;
}

std::string describe(size_t i, const GenerationOptions& o) {
    return "case " + std::to_string(i) + " top_k " + std::to_string(o.top_k) + " penalty_alpha " +
           std::to_string(o.penalty_alpha);
}

}  // namespace

TEST_CASE("batch decoder: contrastive inputs joining and leaving beside other rows equal each alone",
          "[scheduler][contrastive]") {
    auto model = test::tiny_serving_model();
    const decode::GroupId removed = 10;  // a contrastive search cancelled mid-way: the others must not notice
    test::check_joining_and_leaving(*model, mixed_cases(), removed, describe);
}

TEST_CASE("scheduler: concurrent contrastive requests equal each request alone", "[scheduler][contrastive]") {
    auto model = test::tiny_serving_model();
    test::check_concurrent_requests(*model, mixed_cases(), describe);
}
