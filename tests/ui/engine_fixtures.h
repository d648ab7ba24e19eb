#pragma once
// The engine-thread tests' one fixture header: the tiny real checkpoint and the runtime its cases
// load it with, engine configs (quiet; on the fake model), and EventLog, the drain-and-wait loop
// every file's event waiter is built on (each keeps its own names for what it waits for).
#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "fake_model.h"
#include "t5s/engine_thread.h"

namespace t5s::test {

// The tiny random checkpoint in the repository (tests/data/models).
inline std::filesystem::path tiny_model_dir() { return std::filesystem::path(T5S_TEST_DATA) / "models" / "t5v10-tied-relu"; }

// One CPU thread: the real-model cases' runtime, the same on every machine.
inline RuntimeOptions one_cpu_thread() {
    RuntimeOptions ro;
    ro.device = Device::Cpu;
    ro.threads = 1;
    return ro;
}

// No telemetry sampler: no TelemetrySample among the events a case reads.
inline EngineConfig quiet_config() {
    EngineConfig config;
    config.telemetry_hz = 0;
    return config;
}

// quiet_config() whose models are the fake model (fake_model.h): nothing is read from the folder.
inline EngineConfig fake_model_config() {
    EngineConfig config = quiet_config();
    config.model_factory = [](const std::filesystem::path& d, const RuntimeOptions& o) { return make_fake_model(d, o); };
    return config;
}

// Every event drained from the engine so far, in order (job ids are unique, so earlier events
// count too), and a wait on them with a deadline that wakes on the next event, never on a sleep.
struct EventLog {
    explicit EventLog(EngineThread& e) : engine(e) {}

    EngineThread& engine;
    std::vector<Event> all;

    // The index in `all` of the first event from `from` on that `match` accepts, draining the engine
    // until `seconds` have passed (nullopt then; 0 seconds: what has arrived by now).
    template <class Match>
    std::optional<size_t> find(Match match, double seconds, size_t from = 0) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        for (;;) {
            for (auto& e : engine.drain_events()) all.push_back(std::move(e));
            for (; from < all.size(); ++from)
                if (match(all[from])) return from;
            const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
            if (left <= 0) return std::nullopt;
            engine.wait_for_events(left);
        }
    }

    // How many events of type T for `job` have been drained so far.
    template <class T>
    size_t count(JobId job) const {
        size_t n = 0;
        for (const Event& e : all) {
            const T* t = std::get_if<T>(&e);
            n += t && t->job == job ? 1 : 0;
        }
        return n;
    }
};

// `e` as a T of `job`, or null.
template <class T>
const T* of_job(const Event& e, JobId job) {
    const T* t = std::get_if<T>(&e);
    return t && t->job == job ? t : nullptr;
}

}  // namespace t5s::test
