#pragma once
// The LibTorch network behind a t5s::Model, for engine code that drives decoding itself (the
// serving scheduler's shared batch). Throws t5s::Error(Internal) for another Model implementation.
#include "t5s/model.h"
#include "torch/t5_network.h"

namespace t5s {

const T5Network& torch_network_of(const Model& model);

}  // namespace t5s
