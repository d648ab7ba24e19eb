#pragma once
// The fixed training batch of a trainer golden (tests/make_goldens.py writes its "batch": input_ids,
// attention_mask, labels with -100 on padding) as a trainer Batch.
#include "trainer/core.h"
#include "trainer/trainer_test_support.h"

namespace t5s::test {

inline at::Tensor long_2d(const nlohmann::json& rows) {
    std::vector<int64_t> flat;
    for (const auto& r : rows)
        for (const auto& v : r) flat.push_back(v.get<int64_t>());
    return at::tensor(flat, at::kLong).view({static_cast<int64_t>(rows.size()), -1});
}

inline Batch golden_batch(const nlohmann::json& g) {
    Batch b;
    b.input_ids = long_2d(g["batch"]["input_ids"]);
    b.attention_mask = long_2d(g["batch"]["attention_mask"]);
    b.labels = long_2d(g["batch"]["labels"]);
    b.target_tokens = (b.labels != -100).sum().item<int64_t>();
    return b;
}

}  // namespace t5s::test
