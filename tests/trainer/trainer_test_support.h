#pragma once
// Shared helpers for the trainer tests. c10 defines CHECK: include ATen first, then drop it.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "test_support.h"

extern char** environ;

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
    const char* src[] = {"Tom is a good boy.", "猫が好きです。", "我们走吧。",
                         "I like green tea.",  "It is raining.", "今日は暑いです。"};
    const char* tgt[] = {"我爱你。", "I like cats.", "Let's go.", "我喜欢绿茶。", "下雨了。", "It is hot today."};
    std::string out;
    for (int i = 0; i < n; ++i) {
        out +=
            std::string("{\"source\": \"") + src[i % 6] + " " + std::to_string(i) + "\", \"target\": \"" + tgt[i % 6] + "\"}\n";
    }
    return out;
}

struct ProcessResult {
    int status = -1;
    std::string out, err;
};

// The CLI (T5S_CLI_BIN) as a child process, stdout and stderr appended to `log`.
inline pid_t spawn_cli(const std::vector<std::string>& args, const std::filesystem::path& log) {
    std::vector<std::string> all{T5S_CLI_BIN};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, T5S_CLI_BIN, &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    REQUIRE(rc == 0);
    return pid;
}

inline int wait_exit(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::map<int64_t, double> step_losses(const std::filesystem::path& log) {
    std::map<int64_t, double> out;
    std::ifstream in(log);
    std::string line;
    while (std::getline(in, line)) {
        auto j = nlohmann::json::parse(line);
        if (j.contains("loss")) {
            const int64_t step = j["step"];
            REQUIRE(out.count(step) == 0);  // each step logged once
            out[step] = j["loss"];
        }
    }
    return out;
}

}  // namespace t5s::test
