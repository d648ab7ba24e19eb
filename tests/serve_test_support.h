#pragma once
// What the scheduler and batch-decoder tests share: the tiny tied-relu model on one CPU thread.
#include <memory>

#include "t5s/model.h"
#include "test_support.h"

namespace t5s::test {

inline std::unique_ptr<Model> tiny_serving_model() {
    RuntimeOptions r;
    r.device = Device::Cpu;
    r.threads = 1;
    return Model::load(model_dir("t5v10-tied-relu"), r);
}

}  // namespace t5s::test
