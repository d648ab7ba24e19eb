// transformers' remaining controls inside the shared batch: a request with stop strings, suppressed,
// biased or forced tokens, a length decay or renormalized scores gets what it gets alone when it
// decodes beside other requests (greedy, sampled, plain and group beams, joining at different
// steps), through serve::BatchDecoder and through the Scheduler.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "decode/batch_decoder.h"
#include "serve_test_support.h"
#include "t5s/generation_fields.h"
#include "t5s/scheduler.h"

using namespace t5s;

namespace {

struct Case {
    std::string text;
    GenerationOptions options;
};

// Each control on each kind of search, in turn.
std::vector<Case> control_cases() {
    const std::vector<std::string> texts = {"Tom is a good boy.", "猫が好きです。", "gggg is is is vvv", "hello world", "x"};
    std::vector<Case> cases;
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

void check_same(const std::vector<Candidate>& alone, const std::vector<Candidate>& got) {
    REQUIRE(got.size() == alone.size());
    for (size_t k = 0; k < alone.size(); ++k) {
        CHECK(got[k].ids == alone[k].ids);
        CHECK(got[k].score == Approx(alone[k].score).margin(1e-4));
    }
}

}  // namespace

TEST_CASE("batch decoder: requests with the controls joining beside other rows equal each alone", "[scheduler][controls]") {
    auto model = test::tiny_serving_model();
    const auto cases = control_cases();
    serve::BatchDecoder decoder(*model);
    std::map<serve::GroupId, std::vector<Candidate>> served;
    int max_rows = 0;
    size_t next = 0;
    for (int step = 0; next < cases.size() || decoder.rows() > 0; ++step) {
        if (next < cases.size() && step % 2 == 0) {  // one joins every other step: others are mid-way
            decoder.add({static_cast<serve::GroupId>(next), model->tokenizer().encode(cases[next].text), cases[next].options});
            ++next;
        }
        const serve::StepReport report = decoder.step();
        max_rows = std::max(max_rows, report.rows);
        for (auto id : report.groups_finished) served[id] = decoder.take_results(id);
        REQUIRE(step < 400);
    }
    CHECK(max_rows > 6);
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO("case " << i << " " << generation_options_to_json(cases[i].options));
        check_same(model->generate({cases[i].text}, cases[i].options)[0].candidates, served[static_cast<serve::GroupId>(i)]);
    }
}

TEST_CASE("scheduler: concurrent requests with the controls equal each request alone", "[scheduler][controls]") {
    auto model = test::tiny_serving_model();
    const auto cases = control_cases();
    std::vector<GenerationResult> alone;
    for (const auto& c : cases) alone.push_back(model->generate({c.text}, c.options)[0]);
    std::vector<std::string> named;  // every field: the requests do not depend on the scheduler's defaults
    for (const auto& f : generation_fields()) named.push_back(f.json);
    Scheduler scheduler(*model, {32, 1000}, nullptr);
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<std::optional<RequestOutcome>> outcomes(cases.size());
    std::vector<std::thread> clients;
    for (size_t t = 0; t < 2; ++t) {
        clients.emplace_back([&, t] {
            for (size_t i = t; i < cases.size(); i += 2) {
                RequestEvents events;
                events.on_done = [&, i](const RequestOutcome& o) {
                    std::lock_guard<std::mutex> lock(mutex);
                    outcomes[i] = o;
                    cv.notify_all();
                };
                REQUIRE(scheduler.submit(ServeRequest{{cases[i].text}, cases[i].options, named, 0.0}, events) != nullptr);
            }
        });
    }
    for (auto& c : clients) c.join();
    {
        std::unique_lock<std::mutex> lock(mutex);
        REQUIRE(cv.wait_for(lock, std::chrono::seconds(120),
                            [&] { return std::all_of(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.has_value(); }); }));
    }
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO("case " << i << " " << generation_options_to_json(cases[i].options));
        const RequestOutcome& o = *outcomes[i];
        REQUIRE_FALSE(o.error);
        REQUIRE(o.results.size() == 1);
        check_same(alone[i].candidates, o.results[0].candidates);
    }
}

TEST_CASE("batch decoder: stop strings without the model's tokenizer are refused, and nothing joins", "[scheduler][controls]") {
    auto model = test::tiny_serving_model();
    serve::BatchDecoder bare(*model->step_decoding(), /*tokenizer=*/nullptr);  // as the trainer's decoder
    GenerationOptions o;
    o.stop_strings = {"~"};
    CHECK_THROWS_WITH(bare.add({1, model->tokenizer().encode("hello"), o}), Catch::Contains("stop_strings") && Catch::Contains("tokenizer"));
    CHECK(bare.rows() == 0);
}
