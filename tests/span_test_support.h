#pragma once
// What the span tests share: a code-point slice decoded independently of the code under test.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace t5s::test {

// The text of [start, end) in code points.
inline std::string code_point_slice(const std::string& s, int64_t start, int64_t end) {
    std::vector<size_t> starts;
    for (size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
    }
    starts.push_back(s.size());
    REQUIRE(end < static_cast<int64_t>(starts.size()));
    return s.substr(starts[static_cast<size_t>(start)], starts[static_cast<size_t>(end)] - starts[static_cast<size_t>(start)]);
}

}  // namespace t5s::test
