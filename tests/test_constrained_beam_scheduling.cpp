// Constrained beam search inside the shared batch: a request gets what it gets alone when it decodes
// beside other requests (greedy, sampled, plain and group beams, joining and leaving at different
// steps, one cancelled mid-way), through decode::BatchDecoder and through the Scheduler.
#include <catch2/catch.hpp>

#include "scheduling_invariance.h"
#include "serve_test_support.h"

using namespace t5s;

namespace {

GenerationOptions constrained(int beams, int returned, int max_new_tokens) {
    GenerationOptions o;
    o.num_beams = beams, o.num_return_sequences = returned, o.max_new_tokens = max_new_tokens;
    return o;
}

// Constrained searches of several shapes (words and ids, phrasal and disjunctive) between other kinds of rows.
std::vector<test::InvarianceCase> mixed_cases() {
    const std::vector<std::string> texts = {
        "paraphrase: the cat sat on the mat", "hello world", "translate English to German: How old are you?",
        "a much longer sentence with many more words in it than the others have, to pad", "x"};
    std::vector<test::InvarianceCase> cases;
    for (size_t i = 0; i < 15; ++i) {
        GenerationOptions o;
        o.max_new_tokens = 5 + static_cast<int>(i * 7 % 13);
        switch (i % 5) {
            case 0:
                o = constrained(4, 2, 8 + static_cast<int>(i));
                o.force_words = "Tom,walked|walking";
                break;
            case 1:
                o = constrained(5, 3, 6 + static_cast<int>(i));
                o.force_words_ids = {{{{290}, {302, 266, 279}}, true}, {{{321, 298, 300}}, false}};
                o.no_repeat_ngram_size = 2, o.repetition_penalty = 1.5f;
                break;
            case 2: o.num_beams = 3, o.num_return_sequences = 2; break;
            case 3: o.do_sample = true, o.num_return_sequences = 2, o.top_k = 20, o.seed = 40 + static_cast<int64_t>(i); break;
            case 4:
                o.num_beams = 4, o.num_beam_groups = 2, o.diversity_penalty = 0.5f, o.num_return_sequences = 2;
                if (i == 9) o = constrained(3, 3, 12), o.force_words = "park", o.length_penalty = 0.6f, o.early_stopping = true;
                break;
        }
        o.drop_invalid_text = false;  // the raw decoder screens nothing: so must Model::generate, to compare
        cases.push_back({texts[i % texts.size()], o});
    }
    return cases;
}

std::string describe(size_t i, const GenerationOptions& o) {
    return "case " + std::to_string(i) + " beams " + std::to_string(o.num_beams) + " force_words " + o.force_words;
}

}  // namespace

TEST_CASE("batch decoder: constrained beam inputs joining and leaving beside other rows equal each alone",
          "[scheduler][constrained_beam]") {
    auto model = test::tiny_serving_model();
    const decode::GroupId removed = 5;  // a constrained search cancelled mid-way: the others must not notice
    test::check_joining_and_leaving(*model, mixed_cases(), removed, describe);
}

TEST_CASE("scheduler: concurrent constrained beam requests equal each request alone", "[scheduler][constrained_beam]") {
    auto model = test::tiny_serving_model();
    test::check_concurrent_requests(*model, mixed_cases(), describe);
}
