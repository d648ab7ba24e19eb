// Protected spans through decoding: the sentinel guard on synthetic scores, then the
// tiny random model (which does not emit sentinels on its own, so they are forced) keeping every
// span exactly once with greedy, beam and sampling, batched and through the serving scheduler —
// each equal to the run of that input alone.
#include <ATen/ATen.h>
// c10 defines its own CHECK; Catch2's must win in test files.
#undef CHECK
#include <catch2/catch.hpp>

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <ostream>

#include "decode/logits_processors.h"
#include "quality/scored_rounds.h"
#include "serve_test_support.h"
#include "span_test_support.h"
#include "t5s/candidate_scores.h"
#include "t5s/scheduler.h"

namespace t5s {
// How Catch2 (through c10's container printer) shows a span in a failed check.
inline std::ostream& operator<<(std::ostream& out, const Span& s) {
    return out << "[" << s.start << ", " << s.end << ", " << s.label << "]";
}
}  // namespace t5s

using namespace t5s;

using t5s::test::code_point_slice;

namespace {

// The texts of spans in `text`, sorted (a paraphrase may reorder them).
std::vector<std::string> span_texts(const std::string& text, const std::vector<Span>& spans) {
    std::vector<std::string> out;
    for (const auto& s : spans) out.push_back(code_point_slice(text, s.start, s.end) + "|" + s.label);
    std::sort(out.begin(), out.end());
    return out;
}

size_t occurrences(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

const std::vector<std::string> kTexts = {"Send 3 kg to {customer_name} by 5 pm", "我在北京住了3年",
                                         "Order [ID-4411] costs $20 at https://a.example/x"};
const std::vector<std::vector<Span>> kSpans = {{}, {{2, 4, "LOC"}}, {}};

GenerationOptions protected_options() {
    GenerationOptions o;
    o.protect = "numbers,placeholders,urls";
    o.max_new_tokens = 12;
    o.batch_size = 3;
    o.drop_invalid_text = false;  // a random-weight model's words need not form characters: spans are checked here
    return o;
}

std::vector<GenerationOptions> decoding_modes() {
    std::vector<GenerationOptions> modes(4, protected_options());
    modes[1].num_beams = 3, modes[1].num_return_sequences = 2;
    modes[2].do_sample = true, modes[2].num_return_sequences = 3, modes[2].top_k = 20, modes[2].seed = 11;
    modes[3].max_new_tokens = 4, modes[3].num_beams = 2;  // fewer steps than spans + words: forced early
    return modes;
}

// Every candidate has every span of its input exactly once, where its offsets say; returns the
// forced count over all candidates.
int check_spans_kept(const GenerationResult& r, size_t want_candidates) {
    INFO("input: " << r.input);
    REQUIRE_FALSE(r.spans.empty());
    CHECK(std::none_of(r.dropped.begin(), r.dropped.end(),
                       [](const DroppedCandidate& d) { return d.reason.kind == DropReason::LostSpan; }));
    REQUIRE(r.candidates.size() == want_candidates);
    int forced = 0;
    for (const auto& c : r.candidates) {
        INFO("candidate: " << c.text);
        CHECK(span_texts(c.text, c.spans) == span_texts(r.input, r.spans));
        for (const auto& s : r.spans) {
            const std::string piece = code_point_slice(r.input, s.start, s.end);
            CHECK(occurrences(c.text, piece) == occurrences(r.input, piece));
        }
        CHECK(c.forced_spans >= 0);
        CHECK(c.forced_spans <= static_cast<int>(c.spans.size()));
        forced += c.forced_spans;
    }
    return forced;
}

}  // namespace

TEST_CASE("sentinel guard: bans foreign and repeated sentinels and </s> until all are out, forces at the end", "[spans]") {
    const float inf = std::numeric_limits<float>::infinity();
    at::Tensor scores = at::zeros({2, 10});
    const at::Tensor sequences = at::tensor(std::vector<int64_t>{0, 9, 0, 3}).view({2, 2});  // start token + one generated
    const std::vector<int> need = {9, 8};
    const std::vector<const std::vector<int>*> rows = {&need, nullptr};
    apply_sentinel_guard(scores, sequences, rows, {6, 10}, 5, 1);
    CHECK(scores[0][9].item<float>() == -inf);  // already emitted
    CHECK(scores[0][8].item<float>() == 0.0f);  // still owed
    CHECK(scores[0][6].item<float>() == -inf);  // not the input's
    CHECK(scores[0][1].item<float>() == -inf);  // </s> waits
    CHECK(scores[1][1].item<float>() == 0.0f);  // nothing owed: </s> allowed
    CHECK(scores[1][7].item<float>() == -inf);  // but no sentinel
    at::Tensor last = at::randn({2, 10});
    apply_sentinel_guard(last, sequences, rows, {6, 10}, 2, 1);  // one step left, 8 owed: forced
    CHECK(last[0].isfinite().sum().item<int64_t>() == 1);
    CHECK(last[0][8].item<float>() > -inf);
    at::Tensor ending = at::zeros({2, 10});
    ending[0][1] = 5.0f;  // the model wants to end: the owed sentinel takes that score
    ending[0][8] = -2.0f;
    apply_sentinel_guard(ending, sequences, rows, {6, 10}, 5, 1);
    CHECK(ending[0][8].item<float>() == 5.0f);
    CHECK(ending[0][1].item<float>() == -inf);
}

TEST_CASE("spans: every candidate keeps every span exactly once in greedy, beam and sampling, batched as alone", "[spans]") {
    auto model = test::tiny_serving_model();
    int forced = 0;
    for (const GenerationOptions& o : decoding_modes()) {
        INFO("beams " << o.num_beams << " sample " << o.do_sample << " max_new_tokens " << o.max_new_tokens);
        const auto batched = generate_scored(*model, nullptr, kTexts, kSpans, o);
        REQUIRE(batched.size() == kTexts.size());
        for (size_t i = 0; i < kTexts.size(); ++i) {
            forced += check_spans_kept(batched[i], static_cast<size_t>(o.num_return_sequences));
            if (o.do_sample) continue;  // one generator for the whole batch: sampled ids depend on the batch
            const auto alone = generate_scored(*model, nullptr, {kTexts[i]}, {kSpans[i]}, o);
            REQUIRE(alone[0].candidates.size() == batched[i].candidates.size());
            for (size_t k = 0; k < alone[0].candidates.size(); ++k) {
                CHECK(alone[0].candidates[k].ids == batched[i].candidates[k].ids);
                CHECK(alone[0].candidates[k].spans == batched[i].candidates[k].spans);
            }
        }
    }
    CHECK(forced > 0);  // the random model needed forcing
    // The explicit span's label is the row's; detected ones are named after their detector.
    const auto r = generate_scored(*model, nullptr, kTexts, kSpans, protected_options());
    CHECK(r[1].spans.front() == Span{2, 4, "LOC"});
    CHECK(span_texts(r[0].input, r[0].spans) ==
          std::vector<std::string>{"3 kg|number", "5|number", "{customer_name}|placeholder"});
}

TEST_CASE("spans: the serving scheduler keeps them and equals each input alone", "[spans][scheduler]") {
    auto model = test::tiny_serving_model();
    Scheduler scheduler(*model, {16, 100}, nullptr);
    const auto modes = decoding_modes();
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<std::optional<RequestOutcome>> outcomes(modes.size());
    const std::vector<std::string> all = {"max_new_tokens", "num_beams", "num_return_sequences", "do_sample",        "top_k",
                                          "seed",           "protect",   "batch_size",           "drop_invalid_text"};
    for (size_t m = 0; m < modes.size(); ++m) {
        RequestEvents events;
        events.on_done = [&, m](const RequestOutcome& o) {
            std::lock_guard<std::mutex> lock(mutex);
            outcomes[m] = o;
            cv.notify_all();
        };
        ServeRequest request{kTexts, modes[m], all, 0.0, kSpans};
        REQUIRE(scheduler.submit(request, events) != nullptr);
    }
    {
        std::unique_lock<std::mutex> lock(mutex);
        REQUIRE(cv.wait_for(lock, std::chrono::seconds(120), [&] {
            return std::all_of(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.has_value(); });
        }));
    }
    for (size_t m = 0; m < modes.size(); ++m) {
        const RequestOutcome& out = *outcomes[m];
        REQUIRE_FALSE(out.error);
        for (size_t i = 0; i < kTexts.size(); ++i) {
            check_spans_kept(out.results[i], static_cast<size_t>(modes[m].num_return_sequences));
            const auto alone = generate_scored(*model, nullptr, {kTexts[i]}, {kSpans[i]}, modes[m]);
            REQUIRE(alone[0].candidates.size() == out.results[i].candidates.size());
            CHECK(alone[0].spans == out.results[i].spans);
            for (size_t k = 0; k < alone[0].candidates.size(); ++k) {
                CHECK(alone[0].candidates[k].ids == out.results[i].candidates[k].ids);
                CHECK(alone[0].candidates[k].text == out.results[i].candidates[k].text);
                CHECK(alone[0].candidates[k].spans == out.results[i].candidates[k].spans);
                CHECK(alone[0].candidates[k].forced_spans == out.results[i].candidates[k].forced_spans);
            }
        }
    }
}

TEST_CASE("screening drops a candidate that lost or doubled a span as lost_span, kept in dropped", "[spans]") {
    InputRounds input;
    GenerationOptions o;
    o.protect = "numbers";
    CHECK(plan_input(&input, "Pay $5 now", {}, o) == "Pay <extra_id_0> now");
    Candidate good, lost, twice;
    good.text = "Now pay $5";
    good.spans = {{8, 10, "number"}};
    lost.text = "Pay five now";
    twice.text = "$5, $5 now";
    twice.spans = {{0, 2, "number"}};
    const std::vector<Candidate> kept = screen_round(&input, {good, lost, twice}, o);
    REQUIRE(kept.size() == 1);
    CHECK(kept[0].text == good.text);
    REQUIRE(input.dropped.size() == 2);
    CHECK(to_string(input.dropped[0].reason) == "lost_span");
    CHECK(input.dropped[0].candidate.text == lost.text);
    CHECK(input.dropped[1].reason.kind == DropReason::LostSpan);
    CHECK(std::string(option_of(input.dropped[1].reason.kind)) == "protect");
    CHECK(source_spans(input) == std::vector<Span>{{4, 6, "number"}});
    // Without protection nothing is checked.
    InputRounds plain;
    plan_input(&plain, "Pay $5 now", {}, GenerationOptions{});
    CHECK(screen_round(&plain, {lost}, GenerationOptions{}).size() == 1);
}
