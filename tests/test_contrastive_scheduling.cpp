// Contrastive search inside the shared batch: a request gets what it gets alone when it decodes
// beside other requests (greedy, sampled, beams, other contrastive widths, joining and leaving at
// different steps, one cancelled mid-way), through serve::BatchDecoder and through the Scheduler.
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

GenerationOptions contrastive(float alpha, int top_k, int max_new_tokens) {
    GenerationOptions o;
    o.penalty_alpha = alpha, o.top_k = top_k, o.max_new_tokens = max_new_tokens;
    return o;
}

// Contrastive searches of several widths and processors between other kinds of rows.
std::vector<Case> mixed_cases() {
    const std::vector<std::string> texts = {"paraphrase: the cat sat on the mat", "hello world", "translate English to German: How old are you?",
                                            "a much longer sentence with many more words in it than the others have, to pad", "x"};
    std::vector<Case> cases;
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

void check_same(const std::vector<Candidate>& alone, const std::vector<Candidate>& got) {
    REQUIRE(got.size() == alone.size());
    for (size_t k = 0; k < alone.size(); ++k) {
        CHECK(got[k].ids == alone[k].ids);
        CHECK(got[k].score == Approx(alone[k].score).margin(1e-4));
    }
}

}  // namespace

TEST_CASE("batch decoder: contrastive inputs joining and leaving beside other rows equal each alone", "[scheduler][contrastive]") {
    auto model = test::tiny_serving_model();
    const auto cases = mixed_cases();
    const serve::GroupId removed = 10;  // a contrastive search cancelled mid-way: the others must not notice
    bool removed_running = false;
    serve::BatchDecoder decoder(*model);
    std::map<serve::GroupId, std::vector<Candidate>> served;
    int max_rows = 0;
    size_t next = 0;
    for (int step = 0; next < cases.size() || decoder.rows() > 0; ++step) {
        // One input joins every other step, so rows of every kind are mid-way when others arrive.
        if (next < cases.size() && step % 2 == 0) {
            decoder.add({static_cast<serve::GroupId>(next), model->tokenizer().encode(cases[next].text), cases[next].options});
            ++next;
        }
        if (step == 2 * static_cast<int>(removed) + 2 && decoder.rows_of(removed) > 0) {  // two steps after it joined
            decoder.remove(removed);
            removed_running = true;
        }
        const serve::StepReport report = decoder.step();
        max_rows = std::max(max_rows, report.rows);
        for (auto id : report.groups_finished) served[id] = decoder.take_results(id);
        REQUIRE(step < 400);
    }
    CHECK(max_rows > 10);
    CHECK(removed_running);
    CHECK(served.count(removed) == 0);
    for (size_t i = 0; i < cases.size(); ++i) {
        if (i == removed) continue;
        INFO("case " << i << " top_k " << cases[i].options.top_k << " penalty_alpha " << cases[i].options.penalty_alpha);
        check_same(model->generate({cases[i].text}, cases[i].options)[0].candidates, served[static_cast<serve::GroupId>(i)]);
    }
}

TEST_CASE("scheduler: concurrent contrastive requests equal each request alone", "[scheduler][contrastive]") {
    auto model = test::tiny_serving_model();
    const auto cases = mixed_cases();
    std::vector<GenerationResult> alone;
    for (const auto& c : cases) alone.push_back(model->generate({c.text}, c.options)[0]);

    std::vector<std::string> named;  // every field: the requests do not depend on the scheduler's defaults
    for (const auto& f : generation_fields()) named.push_back(f.json);
    Scheduler scheduler(*model, {32, 1000}, nullptr);
    std::atomic<int> max_rows{0};
    scheduler.set_step_observer([&](const StepStats& s) { max_rows = std::max(max_rows.load(), s.rows); });
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<std::optional<RequestOutcome>> outcomes(cases.size());
    // Three client threads submit interleaved, so requests join a batch that is already running.
    std::vector<std::thread> clients;
    for (size_t t = 0; t < 3; ++t) {
        clients.emplace_back([&, t] {
            for (size_t i = t; i < cases.size(); i += 3) {
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
        INFO("case " << i << " top_k " << cases[i].options.top_k << " penalty_alpha " << cases[i].options.penalty_alpha);
        const RequestOutcome& o = *outcomes[i];
        REQUIRE_FALSE(o.error);
        REQUIRE(o.results.size() == 1);
        check_same(alone[i].candidates, o.results[0].candidates);
    }
    CHECK(max_rows.load() > 10);  // requests really shared steps
    CHECK(scheduler.stats().running_sequences == 0);
}
