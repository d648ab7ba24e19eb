// The self-attention cache's row gathers (beam reorder, finished-row compaction) against
// index_select on the filled part of the cache.
#include <ATen/ATen.h>
// c10 defines its own CHECK; Catch2's must win in test files.
#undef CHECK
#include <catch2/catch.hpp>

#include "torch/t5_network.h"

using namespace t5s;

namespace {
DecoderState cache(int64_t rows, int64_t layers, int64_t length) {
    DecoderState st;
    st.capacity = 6;
    st.length = length;
    for (int64_t l = 0; l < layers; ++l) {
        st.self_k.push_back(at::randn({rows, 2, st.capacity, 4}));
        st.self_v.push_back(at::randn({rows, 2, st.capacity, 4}));
        st.cross_k.push_back(at::randn({rows, 2, 3, 4}));
        st.cross_v.push_back(at::randn({rows, 2, 3, 4}));
    }
    st.cross_bias = at::zeros({rows, 1, 1, 3});
    return st;
}
std::vector<at::Tensor> filled(const std::vector<at::Tensor>& ts, int64_t length) {
    std::vector<at::Tensor> out;
    for (const auto& t : ts) out.push_back(t.narrow(2, 0, length).clone());
    return out;
}
}  // namespace

TEST_CASE("beam reorder gathers the filled cache rows, repeatedly", "[cache]") {
    DecoderState st = cache(4, 3, 2);
    for (const auto& order :
         {std::vector<int64_t>{2, 2, 0, 3}, std::vector<int64_t>{1, 0, 3, 3}, std::vector<int64_t>{0, 1, 2, 3}}) {
        const at::Tensor rows = at::tensor(order, at::kLong);
        const auto k_before = filled(st.self_k, st.length), v_before = filled(st.self_v, st.length);
        T5Network::reorder_beams(st, rows);
        for (size_t l = 0; l < st.self_k.size(); ++l) {
            CHECK(at::equal(st.self_k[l].narrow(2, 0, st.length), k_before[l].index_select(0, rows)));
            CHECK(at::equal(st.self_v[l].narrow(2, 0, st.length), v_before[l].index_select(0, rows)));
            CHECK(st.self_k[l].sizes() == at::IntArrayRef({4, 2, 6, 4}));
        }
        // The next step writes at `length` into whatever tensors the state now holds.
        for (auto& t : st.self_k) t.narrow(2, st.length, 1).fill_(static_cast<double>(st.length));
        st.length += 1;
    }
    CHECK(at::equal(st.self_k[0].select(2, 3), at::full({4, 2, 4}, 3.0)));
    CHECK_THROWS(T5Network::reorder_beams(st, at::tensor(std::vector<int64_t>{0, 1, 2, 9}, at::kLong)));
}

TEST_CASE("finished-row compaction keeps the filled cache of the remaining rows", "[cache]") {
    DecoderState st = cache(5, 2, 3);
    const auto k_before = filled(st.self_k, 3), v_before = filled(st.self_v, 3);
    const at::Tensor cross_before = st.cross_k[1].clone();
    const at::Tensor keep = at::tensor(std::vector<int64_t>{0, 3, 4}, at::kLong);
    T5Network::select_rows(st, keep);
    REQUIRE(st.batch() == 3);
    for (size_t l = 0; l < st.self_k.size(); ++l) {
        CHECK(at::equal(st.self_k[l].narrow(2, 0, 3), k_before[l].index_select(0, keep)));
        CHECK(at::equal(st.self_v[l].narrow(2, 0, 3), v_before[l].index_select(0, keep)));
    }
    CHECK(at::equal(st.cross_k[1], cross_before.index_select(0, keep)));
}
