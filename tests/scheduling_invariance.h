#pragma once
// The invariance every decoding method must keep inside the shared batch: a request gets what it
// gets alone when it decodes beside other requests — through decode::BatchDecoder (inputs joining
// every other step, one group cancelled mid-way) and through the Scheduler (client threads
// submitting interleaved). Each method's test file brings its own mix of cases.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "decode/batch_decoder.h"
#include "t5s/generation_fields.h"
#include "t5s/model.h"
#include "t5s/scheduler.h"

namespace t5s::test {

struct InvarianceCase {
    std::string text;
    GenerationOptions options;
};

// What a failing case prints: its index and the settings that make it what it is.
using DescribeCase = std::function<std::string(size_t index, const GenerationOptions&)>;

inline void check_same_candidates(const std::vector<Candidate>& alone, const std::vector<Candidate>& got) {
    REQUIRE(got.size() == alone.size());
    for (size_t k = 0; k < alone.size(); ++k) {
        CHECK(got[k].ids == alone[k].ids);
        CHECK(got[k].score == Approx(alone[k].score).margin(1e-4));
    }
}

// How much the cases must overlap: more than `min_shared_rows` rows in one step, and the clients
// submitting at once.
struct Sharing {
    int min_shared_rows = 10;
    int clients = 3;
    bool scheduler_rows_checked = true;  // the scheduler's steps held more than min_shared_rows rows
};

// The cases through one BatchDecoder, one joining every other step; `removed` (if any) is
// cancelled two steps after it joined, and the others must not notice.
inline void check_joining_and_leaving(const Model& model, const std::vector<InvarianceCase>& cases,
                                      std::optional<decode::GroupId> removed, const DescribeCase& describe,
                                      Sharing sharing = {}) {
    bool removed_running = false;
    decode::BatchDecoder decoder(model);
    std::map<decode::GroupId, std::vector<Candidate>> served;
    int max_rows = 0;
    size_t next = 0;
    for (int step = 0; next < cases.size() || decoder.rows() > 0; ++step) {
        // One input joins every other step, so rows of every kind are mid-way when others arrive.
        if (next < cases.size() && step % 2 == 0) {
            decoder.add({static_cast<decode::GroupId>(next), model.tokenizer().encode(cases[next].text), cases[next].options});
            ++next;
        }
        if (removed && step == 2 * static_cast<int>(*removed) + 2 && decoder.rows_of(*removed) > 0) {
            decoder.remove(*removed);
            removed_running = true;
        }
        const decode::StepReport report = decoder.step();
        max_rows = std::max(max_rows, report.rows);
        for (auto id : report.groups_finished) served[id] = decoder.take_results(id);
        REQUIRE(step < 400);
    }
    CHECK(max_rows > sharing.min_shared_rows);
    if (removed) {
        CHECK(removed_running);
        CHECK(served.count(*removed) == 0);
    }
    for (size_t i = 0; i < cases.size(); ++i) {
        if (removed && i == *removed) continue;
        INFO(describe(i, cases[i].options));
        check_same_candidates(model.generate({cases[i].text}, cases[i].options)[0].candidates,
                              served[static_cast<decode::GroupId>(i)]);
    }
}

// The cases as Scheduler requests from several client threads, so requests join a running batch;
// every field is named, so the requests do not depend on the scheduler's defaults.
inline void check_concurrent_requests(const Model& model, const std::vector<InvarianceCase>& cases, const DescribeCase& describe,
                                      Sharing sharing = {}) {
    std::vector<GenerationResult> alone;
    for (const auto& c : cases) alone.push_back(model.generate({c.text}, c.options)[0]);
    std::vector<std::string> named;
    for (const auto& f : generation_fields()) named.push_back(f.json);
    Scheduler scheduler(model, {32, 1000}, nullptr);
    std::atomic<int> max_rows{0};
    scheduler.set_step_observer([&](const StepStats& s) { max_rows = std::max(max_rows.load(), s.rows); });
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<std::optional<RequestOutcome>> outcomes(cases.size());
    std::vector<std::thread> clients;
    const size_t n = static_cast<size_t>(sharing.clients);
    for (size_t t = 0; t < n; ++t) {
        clients.emplace_back([&, t] {
            for (size_t i = t; i < cases.size(); i += n) {
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
        REQUIRE(cv.wait_for(lock, std::chrono::seconds(120), [&] {
            return std::all_of(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.has_value(); });
        }));
    }
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO(describe(i, cases[i].options));
        const RequestOutcome& o = *outcomes[i];
        REQUIRE_FALSE(o.error);
        REQUIRE(o.results.size() == 1);
        check_same_candidates(alone[i].candidates, o.results[0].candidates);
    }
    if (sharing.scheduler_rows_checked) {
        CHECK(max_rows.load() > sharing.min_shared_rows);  // requests really shared steps
        CHECK(scheduler.stats().running_sequences == 0);
    }
}

}  // namespace t5s::test
