#pragma once
// Test-only access to an EngineThread's insides; built only with T5S_TEST_HOOKS (on with the test
// suite, off in packages). Not part of the product's interface.
#include "t5s/engine_thread.h"

namespace t5s {

struct EngineTestAccess {
    // Kills one lane as an escaped exception would: EngineDied, alive() false until restart().
    static void crash_lane(EngineThread& engine, bool io_lane);
};

}  // namespace t5s
