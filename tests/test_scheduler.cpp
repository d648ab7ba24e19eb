// Continuous batching (t5s/scheduler.h): requests decoded together in one running batch, joining
// and leaving at every step, give exactly what Model::generate gives each text alone.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "serve_test_support.h"
#include "t5s/scheduler.h"

using namespace t5s;

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
    std::string text;
    GenerationOptions options;
    std::vector<std::string> named;
};

// Every option field is named: the request does not depend on the scheduler's defaults.
const std::vector<std::string> kAllFields = {"max_new_tokens",
                                             "min_new_tokens",
                                             "num_beams",
                                             "length_penalty",
                                             "early_stopping",
                                             "num_return_sequences",
                                             "do_sample",
                                             "temperature",
                                             "top_k",
                                             "top_p",
                                             "repetition_penalty",
                                             "no_repeat_ngram_size",
                                             "seed",
                                             "no_copy",
                                             "distinct",
                                             "max_rounds",
                                             "batch_size",
                                             "encoder_no_repeat_ngram_size",
                                             "encoder_repetition_penalty",
                                             "bad_words_ids",
                                             "bad_words",
                                             "min_p",
                                             "typical_p",
                                             "epsilon_cutoff",
                                             "eta_cutoff"};

std::vector<Case> mixed_cases() {
    const std::vector<std::string> texts = {"paraphrase: the cat sat on the mat",
                                            "hello world",
                                            "translate English to German: How old are you?",
                                            "a much longer sentence with many more words in it than the others have, to pad",
                                            "x",
                                            "summarize: studies have shown that owning a dog is good for you"};
    std::vector<Case> cases;
    for (size_t i = 0; i < 24; ++i) {
        GenerationOptions o;
        o.max_new_tokens = 6 + static_cast<int>(i * 7 % 17);
        switch (i % 6) {
            case 0: break;  // greedy
            case 1: o.num_beams = 3, o.num_return_sequences = 2; break;
            case 2:
                o.do_sample = true, o.num_return_sequences = 3, o.top_k = 20, o.top_p = 0.9f, o.temperature = 0.8f,
                o.seed = 100 + static_cast<int64_t>(i);
                break;
            case 3: o.repetition_penalty = 1.3f, o.no_repeat_ngram_size = 2, o.min_new_tokens = 4; break;
            case 4: o.num_beams = 4, o.length_penalty = 0.6f, o.early_stopping = true, o.num_return_sequences = 1; break;
            case 5: o.do_sample = true, o.distinct = true, o.no_copy = true, o.num_return_sequences = 4, o.seed = 7; break;
        }
        cases.push_back({texts[i % texts.size()], o, kAllFields});
    }
    // transformers' further processors and warpers: every row with its own request's, and its own input.
    for (size_t i = 0; i < 6; ++i) {
        GenerationOptions o;
        o.max_new_tokens = 8 + static_cast<int>(i);
        switch (i % 3) {
            case 0: o.encoder_no_repeat_ngram_size = 2, o.encoder_repetition_penalty = 0.8f, o.bad_words = "the,cat"; break;
            case 1:
                o.num_beams = 3, o.num_return_sequences = 2, o.encoder_no_repeat_ngram_size = 1, o.bad_words_ids = {{5}, {13, 8}};
                break;
            case 2:
                o.do_sample = true, o.num_return_sequences = 3, o.top_k = 30, o.min_p = 0.05f, o.typical_p = 0.9f,
                o.epsilon_cutoff = 3e-4f, o.eta_cutoff = 1e-3f, o.seed = 40 + static_cast<int64_t>(i);
                break;
        }
        cases.push_back({texts[(i + 1) % texts.size()], o, kAllFields});
    }
    return cases;
}

struct Waiter {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<std::optional<RequestOutcome>> outcomes;
    explicit Waiter(size_t n) : outcomes(n) {}
    RequestEvents events_for(size_t i) {
        RequestEvents e;
        e.on_done = [this, i](const RequestOutcome& o) {
            std::lock_guard<std::mutex> lock(mutex);
            outcomes[i] = o;
            cv.notify_all();
        };
        return e;
    }
    bool wait_all(std::chrono::seconds limit) {
        std::unique_lock<std::mutex> lock(mutex);
        return cv.wait_for(lock, limit, [&] {
            for (const auto& o : outcomes)
                if (!o) return false;
            return true;
        });
    }
};

void require_same(const GenerationResult& alone, const GenerationResult& served) {
    REQUIRE(served.candidates.size() == alone.candidates.size());
    for (size_t k = 0; k < alone.candidates.size(); ++k) {
        CHECK(served.candidates[k].ids == alone.candidates[k].ids);
        CHECK(served.candidates[k].text == alone.candidates[k].text);
        CHECK(served.candidates[k].score == Approx(alone.candidates[k].score).margin(1e-4));
    }
    CHECK(served.rounds == alone.rounds);
}

void run_mixed(int max_batch) {
    auto model = test::tiny_serving_model();
    const auto cases = mixed_cases();
    std::vector<GenerationResult> alone;
    for (const auto& c : cases) alone.push_back(model->generate({c.text}, c.options)[0]);

    Scheduler scheduler(*model, {max_batch, 1000}, nullptr);
    std::atomic<int> max_rows{0};
    scheduler.set_step_observer([&](const StepStats& s) { max_rows = std::max(max_rows.load(), s.rows); });
    Waiter waiter(cases.size());
    // Four client threads submit interleaved, so requests join a batch that is already running.
    std::vector<std::thread> clients;
    for (size_t t = 0; t < 4; ++t) {
        clients.emplace_back([&, t] {
            for (size_t i = t; i < cases.size(); i += 4) {
                ServeRequest r{{cases[i].text}, cases[i].options, cases[i].named, 0.0};
                REQUIRE(scheduler.submit(r, waiter.events_for(i)) != nullptr);
            }
        });
    }
    for (auto& c : clients) c.join();
    REQUIRE(waiter.wait_all(std::chrono::seconds(120)));
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO("case " << i << " beams " << cases[i].options.num_beams << " sample " << cases[i].options.do_sample);
        const RequestOutcome& o = *waiter.outcomes[i];
        REQUIRE_FALSE(o.error);
        REQUIRE(o.results.size() == 1);
        require_same(alone[i], o.results[0]);
        int64_t tokens = 0;
        for (const auto& c : o.results[0].candidates) tokens += static_cast<int64_t>(c.ids.size());
        CHECK(o.output_tokens == tokens);
    }
    CHECK(max_rows.load() <= std::max(max_batch, 4));  // a beam group of 4 may run alone above the limit
    if (max_batch > 1) CHECK(max_rows.load() > 4);     // requests really shared steps
    CHECK(scheduler.stats().running_sequences == 0);
}

}  // namespace

TEST_CASE("scheduler: mixed concurrent requests equal each request alone", "[scheduler]") { run_mixed(16); }

TEST_CASE("scheduler: one row per step gives the same outputs", "[scheduler]") { run_mixed(1); }

TEST_CASE("scheduler: several texts in one request each equal their alone run", "[scheduler]") {
    auto model = test::tiny_serving_model();
    GenerationOptions o;
    o.do_sample = true;
    o.seed = 42;
    o.num_return_sequences = 2;
    o.max_new_tokens = 12;
    const std::vector<std::string> texts = {"first input here", "second", "third one, a bit longer than the second"};
    Scheduler scheduler(*model, {8, 10}, nullptr);
    Waiter waiter(1);
    REQUIRE(scheduler.submit({texts, o, kAllFields, 0.0}, waiter.events_for(0)));
    REQUIRE(waiter.wait_all(std::chrono::seconds(60)));
    const RequestOutcome& out = *waiter.outcomes[0];
    REQUIRE_FALSE(out.error);
    for (size_t i = 0; i < texts.size(); ++i) require_same(model->generate({texts[i]}, o)[0], out.results[i]);
    CHECK(out.results[0].seed == 42);
}

TEST_CASE("scheduler: cancel and timeout take rows out at the next step", "[scheduler]") {
    auto model = test::tiny_serving_model();
    Scheduler scheduler(*model, {4, 2}, nullptr);
    GenerationOptions long_run;
    long_run.max_new_tokens = 400;
    long_run.min_new_tokens = 400;  // never ends early
    std::promise<void> stepped;
    std::atomic<bool> once{false};
    scheduler.set_step_observer([&](const StepStats&) {
        if (!once.exchange(true)) stepped.set_value();
    });
    Waiter waiter(3);
    auto job = scheduler.submit({{"some text"}, long_run, {"max_new_tokens", "min_new_tokens"}, 0.0}, waiter.events_for(0));
    REQUIRE(job);
    REQUIRE(stepped.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    CHECK(scheduler.stats().running_sequences == 1);
    // The queue holds 2: with the batch limited to 4 rows, a 4-beam request waits behind it.
    GenerationOptions beams = long_run;
    beams.num_beams = 4;
    REQUIRE(scheduler.submit({{"queued"}, beams, {"max_new_tokens", "min_new_tokens", "num_beams"}, 0.0}, waiter.events_for(1)));
    REQUIRE(scheduler.submit({{"times out"}, long_run, {"max_new_tokens", "min_new_tokens"}, 0.05}, waiter.events_for(2)));
    CHECK(scheduler.submit({{"refused"}, long_run, {}, 0.0}, {}) == nullptr);  // queue full
    scheduler.cancel(job->id());
    REQUIRE(waiter.wait_all(std::chrono::seconds(60)));
    REQUIRE(waiter.outcomes[0]->error);
    CHECK(waiter.outcomes[0]->error->code == ErrorCode::Cancelled);
    CHECK(waiter.outcomes[0]->results[0].candidates.empty());
    REQUIRE(waiter.outcomes[2]->error);
    CHECK(waiter.outcomes[2]->error->message.find("timed out") != std::string::npos);
    CHECK_FALSE(waiter.outcomes[1]->error);
    CHECK(scheduler.stats().running_sequences == 0);
    CHECK(scheduler.jobs().size() == 0);
}

TEST_CASE("scheduler: live defaults apply to requests that do not name the setting", "[scheduler]") {
    auto model = test::tiny_serving_model();
    auto defaults = std::make_shared<SettingsHandle>();
    Scheduler scheduler(*model, {8, 8}, defaults);
    GenerationOptions mine;
    mine.max_new_tokens = 3;
    Waiter before(1), after(2);
    REQUIRE(scheduler.submit({{"hello world"}, mine, {}, 0.0}, before.events_for(0)));
    REQUIRE(before.wait_all(std::chrono::seconds(30)));
    CHECK(before.outcomes[0]->options.max_new_tokens == GenerationOptions{}.max_new_tokens);
    GenerationOptions d;
    d.max_new_tokens = 5;
    d.num_beams = 2;
    defaults->set(d);
    REQUIRE(scheduler.submit({{"hello world"}, mine, {}, 0.0}, after.events_for(0)));
    REQUIRE(scheduler.submit({{"hello world"}, mine, {"max_new_tokens"}, 0.0}, after.events_for(1)));
    REQUIRE(after.wait_all(std::chrono::seconds(30)));
    CHECK(after.outcomes[0]->options.max_new_tokens == 5);
    CHECK(after.outcomes[0]->options.num_beams == 2);
    CHECK(after.outcomes[1]->options.max_new_tokens == 3);  // named: keeps its own
    CHECK(after.outcomes[1]->options.num_beams == 2);
    CHECK(after.outcomes[0]->results[0].candidates[0].ids ==
          model->generate({"hello world"}, after.outcomes[0]->options)[0].candidates[0].ids);
}

TEST_CASE("scheduler: bad requests are refused naming the field", "[scheduler]") {
    auto model = test::tiny_serving_model();
    Scheduler scheduler(*model, {8, 8}, nullptr);
    GenerationOptions o;
    o.temperature = -1.0f;
    o.do_sample = true;
    CHECK_THROWS_WITH(scheduler.submit({{"x"}, o, {"temperature", "do_sample"}, 0.0}, {}), Catch::Contains("temperature"));
    CHECK_THROWS_WITH(scheduler.submit({{}, o, {}, 0.0}, {}), Catch::Contains("texts"));
    CHECK_THROWS_WITH(scheduler.submit({{"x"}, o, {"nonsense"}, 0.0}, {}), Catch::Contains("nonsense"));
    CHECK_THROWS_WITH(scheduler.submit({{std::string("\xff\xfe")}, {}, {}, 0.0}, {}), Catch::Contains("text"));
}

TEST_CASE("scheduler: drain finishes running requests and refuses new ones", "[scheduler]") {
    auto model = test::tiny_serving_model();
    Scheduler scheduler(*model, {8, 8}, nullptr);
    GenerationOptions o;
    o.max_new_tokens = 20;
    o.min_new_tokens = 20;
    o.drop_invalid_text = false;  // 20 forced tokens of a random-weight model need not form characters
    Waiter waiter(2);
    REQUIRE(scheduler.submit({{"one"}, o, {"max_new_tokens", "min_new_tokens", "drop_invalid_text"}, 0.0}, waiter.events_for(0)));
    REQUIRE(scheduler.submit({{"two"}, o, {"max_new_tokens", "min_new_tokens", "drop_invalid_text"}, 0.0}, waiter.events_for(1)));
    CHECK(scheduler.drain(Clock::now() + std::chrono::seconds(60)));
    REQUIRE(waiter.wait_all(std::chrono::seconds(1)));
    CHECK_FALSE(waiter.outcomes[0]->error);
    CHECK(waiter.outcomes[0]->results[0].candidates[0].ids.size() == 20);
    CHECK(scheduler.submit({{"late"}, o, {}, 0.0}, {}) == nullptr);
}

// Nothing escapes the scheduler thread: an exception that is not a t5s::Error thrown inside a
// step (here by the step observer, code that runs on that thread), or by a caller's candidate
// callback, fails the requests it hit with its message, and the next requests are served.
TEST_CASE("scheduler: a foreign exception in a step fails its requests, not the server", "[scheduler][errors]") {
    auto model = test::tiny_serving_model();
    Scheduler scheduler(*model, {8, 8}, nullptr);
    std::atomic<bool> throw_next{true};
    scheduler.set_step_observer([&](const StepStats&) {
        if (throw_next.exchange(false)) throw std::runtime_error("injected failure in a step");
    });
    GenerationOptions o;
    o.max_new_tokens = 5;
    Waiter hit(1);
    REQUIRE(scheduler.submit({{"hello world"}, o, {"max_new_tokens"}, 0.0}, hit.events_for(0)));
    REQUIRE(hit.wait_all(std::chrono::seconds(30)));
    REQUIRE(hit.outcomes[0]->error);
    CHECK(hit.outcomes[0]->error->code == ErrorCode::Internal);
    CHECK(hit.outcomes[0]->error->message == "injected failure in a step");

    Waiter next(2);
    RequestEvents throwing = next.events_for(1);
    throwing.on_candidate = [](size_t, const Candidate&) { throw std::logic_error("client went away oddly"); };
    REQUIRE(scheduler.submit({{"hello world"}, o, {"max_new_tokens"}, 0.0}, next.events_for(0)));
    REQUIRE(scheduler.submit({{"the cat"}, o, {"max_new_tokens"}, 0.0}, throwing));
    REQUIRE(next.wait_all(std::chrono::seconds(30)));
    REQUIRE_FALSE(next.outcomes[0]->error);
    CHECK(next.outcomes[0]->results[0].candidates[0].ids == model->generate({"hello world"}, o)[0].candidates[0].ids);
    REQUIRE(next.outcomes[1]->error);
    CHECK(next.outcomes[1]->error->message.find("client went away oddly") != std::string::npos);
    CHECK(scheduler.stats().running_sequences == 0);
    CHECK(scheduler.jobs().size() == 0);
}

TEST_CASE("scheduler: the memory pre-check counts activations in the compute dtype", "[scheduler]") {
    RuntimeOptions r;
    r.device = Device::Cpu;
    r.threads = 1;
    r.precision = Precision::Int8;
    CHECK(Model::load(test::model_dir("t5v10-tied-relu"), r)->info().activation_bytes == 4);  // CPU int8 computes in fp32
    r.precision = Precision::Bf16;
    CHECK(Model::load(test::model_dir("t5v10-tied-relu"), r)->info().activation_bytes == 2);
}
