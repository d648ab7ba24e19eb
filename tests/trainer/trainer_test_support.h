#pragma once
// Shared helpers for the trainer tests. c10 defines CHECK: include ATen first, then drop it.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace t5s::test {

inline std::filesystem::path trainer_work() {
    std::filesystem::path p = T5S_TRAINER_WORK;
    std::filesystem::create_directories(p);
    return p;
}

inline void write_text(const std::filesystem::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

// A small JSONL of mixed-language pairs for end-to-end runs.
inline std::string small_jsonl(int n) {
    const char* src[] = {"Tom is a good boy.", "猫が好きです。", "我们走吧。", "I like green tea.", "It is raining.", "今日は暑いです。"};
    const char* tgt[] = {"我爱你。", "I like cats.", "Let's go.", "我喜欢绿茶。", "下雨了。", "It is hot today."};
    std::string out;
    for (int i = 0; i < n; ++i) {
        out += std::string("{\"source\": \"") + src[i % 6] + " " + std::to_string(i) + "\", \"target\": \"" + tgt[i % 6] + "\"}\n";
    }
    return out;
}

struct ProcessResult {
    int status = -1;
    std::string out, err;
};

}  // namespace t5s::test
