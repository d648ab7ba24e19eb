#pragma once
// The long-lived threads that run requests (the engine's model lane, serve's scheduler) keep a
// finished request's freed buffers in the heap for the next one (t5s/process_memory.h,
// kKeptFreeHeapBytes). Once such a thread has had nothing to do for a while, it gives them back:
// an annotator's app or an idle server does not hold its last batch's memory.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "t5s/process_memory.h"

namespace t5s {

// Long enough that a stream of requests (a file augmented batch after batch, a client's next
// call) reuses the buffers; short enough that an idle process soon shrinks.
constexpr std::chrono::milliseconds kIdleBeforeHeapRelease{2000};

// Waits on `cv` (with `lock` held) until `ready()`. When `*heap_to_release` is set (the caller
// ran a request since the last release) and nothing is ready within `idle`, calls `release`
// without the lock held, clears the flag, and goes on waiting.
template <class Ready>
void wait_for_work(
    std::condition_variable& cv, std::unique_lock<std::mutex>& lock, bool* heap_to_release, Ready ready,
    std::chrono::milliseconds idle = kIdleBeforeHeapRelease, const std::function<void()>& release = [] { release_free_heap(); }) {
    if (*heap_to_release && !cv.wait_for(lock, idle, ready)) {
        lock.unlock();
        release();
        lock.lock();
        *heap_to_release = false;
    }
    cv.wait(lock, ready);
}

}  // namespace t5s
