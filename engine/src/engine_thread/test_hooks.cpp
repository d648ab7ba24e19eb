// EngineTestAccess (test_hooks.h): compiled only with T5S_TEST_HOOKS.
#include "engine_thread/test_hooks.h"

#include "engine_thread/engine_impl.h"

namespace t5s {

void EngineTestAccess::crash_lane(EngineThread& engine, bool io_lane) {
    detail::EngineImpl& impl = *engine.impl_;
    detail::LaneTask task{impl.jobs.create(JobKind::Io), Command{}, detail::Clock::now(), nullptr, nullptr};
    task.crash_lane = true;
    impl.enqueue(io_lane ? impl.io_lane : impl.model_lane, std::move(task));
}

}  // namespace t5s
