// Soak: many generations through t5s::EngineThread on a tiny real model, mixing greedy,
// beam and sampling, interactive Generate and BatchAugment, with UpdateSettings sent while jobs run
// and every generation recorded in a history database. Measures the process's resident memory,
// open file descriptors (/proc/self/fd) and threads (/proc/self/task) at start, after warm-up and
// at the end, and fails when RSS grew by more than the bound after warm-up or fds/threads grew.
// A benchmark program, not a timed unit test: ctest runs a short version (tests/soak.cmake),
// tests/soak/run_soak.sh the full 10,000.
//
// usage: t5s_soak --model DIR [--generations N] [--warmup N] [--max-rss-growth FRACTION] [--work DIR]
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "t5s/engine_thread.h"
#include "t5s/process_memory.h"

using namespace t5s;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
    std::filesystem::path model;
    int64_t generations = 10000;
    int64_t warmup = 500;
    double max_rss_growth = 0.05;
    std::filesystem::path work;
};

[[noreturn]] void usage(const std::string& problem) {
    std::fprintf(stderr,
                 "t5s_soak: %s\nusage: t5s_soak --model DIR [--generations N] [--warmup N] "
                 "[--max-rss-growth FRACTION] [--work DIR]\n",
                 problem.c_str());
    std::exit(2);
}

Args parse_args(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) usage("missing value after " + flag);
        const std::string value = argv[++i];
        if (flag == "--model") a.model = value;
        else if (flag == "--generations") a.generations = std::atoll(value.c_str());
        else if (flag == "--warmup") a.warmup = std::atoll(value.c_str());
        else if (flag == "--max-rss-growth") a.max_rss_growth = std::atof(value.c_str());
        else if (flag == "--work") a.work = value;
        else usage("unknown flag " + flag);
    }
    if (a.model.empty()) usage("--model is required");
    if (a.generations < 1 || a.warmup < 0 || a.warmup >= a.generations) usage("need 0 <= --warmup < --generations");
    return a;
}

int count_entries(const char* dir) {  // entries of a /proc directory, without . and ..
    int n = 0;
    if (DIR* d = ::opendir(dir)) {
        while (dirent* e = ::readdir(d))
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++n;
        ::closedir(d);
    }
    return n;
}

struct Sample {
    int64_t generations = 0;
    double rss_mb = 0;
    int fds = 0;
    int threads = 0;
};

Sample sample(int64_t generations) {
    // Live memory only: the freed buffers the last request left in the heap (kept for the next
    // one, t5s/process_memory.h) depend on which request came last, not on a leak.
    release_free_heap();
    // Listing /proc/self/fd holds one fd of its own: not counted.
    return {generations, process_rss_bytes() / 1048576.0, count_entries("/proc/self/fd") - 1, count_entries("/proc/self/task")};
}

void print(const char* label, const Sample& s) {
    std::printf("soak %-8s after %6lld generations: RSS %8.1f MB, open fds %3d, threads %3d\n", label,
                static_cast<long long>(s.generations), s.rss_mb, s.fds, s.threads);
    std::fflush(stdout);
}

// Waits (deadline 120 s) for the end of `job`: ModelLoaded / GenerationDone / JobFinished (ok) or JobFailed.
// Returns the number of generations (inputs) it produced, or -1 after printing the failure.
int64_t wait_end(EngineThread& engine, JobId job) {
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    int64_t rows = 0;
    while (Clock::now() < deadline) {
        for (auto& e : engine.drain_events()) {
            if (auto* m = std::get_if<ModelLoaded>(&e); m && m->job == job) return 0;
            if (auto* d = std::get_if<GenerationDone>(&e); d && d->job == job) return static_cast<int64_t>(d->results.size());
            if (auto* r = std::get_if<BatchRowDone>(&e); r && r->job == job) ++rows;
            if (auto* f = std::get_if<JobFinished>(&e); f && f->job == job) return rows;
            if (auto* f = std::get_if<JobFailed>(&e); f && f->job == job) {
                std::fprintf(stderr, "t5s_soak: job %llu failed: %s\n", static_cast<unsigned long long>(job), f->message.c_str());
                return -1;
            }
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::fprintf(stderr, "t5s_soak: job %llu did not finish within 120 s\n", static_cast<unsigned long long>(job));
    return -1;
}

// Request k's decoding mode: greedy, beam search or sampling, in turn.
GenerationOptions options_for(int64_t k) {
    GenerationOptions o;
    o.max_new_tokens = 8 + static_cast<int>(k % 5);
    switch (k % 3) {
        case 0: break;  // greedy
        case 1:
            o.num_beams = 3;
            o.num_return_sequences = 2;
            break;
        default:
            o.do_sample = true;
            o.temperature = 0.7f + 0.1f * static_cast<float>(k % 4);
            o.top_p = 0.9f;
            o.num_return_sequences = 2;
            o.seed = k;
    }
    return o;
}

const char* kTexts[] = {"the weather is lovely today",
                        "今日は良い天気です",
                        "我们走吧。",
                        "a cat sat on the mat",
                        "translate English to Chinese: good morning",
                        "paraphrase: 猫が好きです。"};

}  // namespace

int main(int argc, char** argv) {
    const Args args = parse_args(argc, argv);
    const std::filesystem::path work =
        args.work.empty() ? std::filesystem::temp_directory_path() / ("t5s_soak_" + std::to_string(::getpid())) : args.work;
    std::filesystem::create_directories(work);
    std::filesystem::remove(work / "soak-history.sqlite");
    const Sample start = sample(0);
    print("start", start);

    EngineConfig config;
    config.history_db = work / "soak-history.sqlite";
    config.telemetry_hz = 4.0;  // the sampler thread runs as in the app
    EngineThread engine(config);
    RuntimeOptions runtime;
    runtime.device = Device::Cpu;
    runtime.threads = 1;
    if (wait_end(engine, engine.submit(LoadModel{args.model, runtime})) < 0) return 1;
    const auto t0 = Clock::now();
    Sample warm;
    int64_t done = 0, requests = 0, failures = 0, setting_updates = 0;
    std::vector<Sample> curve;
    while (done < args.generations) {
        JobId job = 0;
        if (requests % 10 == 9) {  // a small batch job every 10th request
            BatchAugment b;
            b.name = "soak " + std::to_string(requests);
            for (int r = 0; r < 4; ++r) b.rows.push_back(kTexts[(requests + r) % 6]);
            b.options = options_for(requests);
            job = engine.submit(b);
        } else {
            Generate g;
            g.texts = {kTexts[requests % 6]};
            if (requests % 4 == 0) g.texts.push_back(kTexts[(requests + 1) % 6]);
            g.options = options_for(requests);
            job = engine.submit(g);
        }
        if (requests % 25 == 0) {  // settings changed while the job runs (applies at the next token)
            engine.submit(UpdateSettings{options_for(requests + 1)});
            ++setting_updates;
        }
        ++requests;
        const int64_t n = wait_end(engine, job);
        if (n < 0) {
            ++failures;
            if (failures > 3) break;
            continue;
        }
        const int64_t before = done;
        done += n;
        if (before < args.warmup && done >= args.warmup) {
            warm = sample(done);
            print("warm", warm);
        }
        if (before * 10 / args.generations != done * 10 / args.generations) curve.push_back(sample(done));
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    for (const auto& s : curve) print("progress", s);
    engine.drain_events();
    const Sample end = sample(done);
    print("end", end);
    const double growth = warm.rss_mb > 0 ? (end.rss_mb - warm.rss_mb) / warm.rss_mb : 1.0;
    std::printf(
        "soak: %lld generations (%lld requests, %lld settings updates, %lld failed) in %.1f s; "
        "RSS after warm-up %.1f MB -> end %.1f MB (%+.2f%%, bound %.1f%%); fds %d -> %d; threads %d -> %d\n",
        static_cast<long long>(done), static_cast<long long>(requests), static_cast<long long>(setting_updates),
        static_cast<long long>(failures), seconds, warm.rss_mb, end.rss_mb, 100 * growth, 100 * args.max_rss_growth, warm.fds,
        end.fds, warm.threads, end.threads);
    bool ok = failures == 0 && done >= args.generations;
    if (growth > args.max_rss_growth) ok = (std::printf("soak FAILED: RSS grew %.2f%% after warm-up\n", 100 * growth), false);
    if (end.fds > warm.fds) ok = (std::printf("soak FAILED: open fds grew %d -> %d\n", warm.fds, end.fds), false);
    if (end.threads > warm.threads) ok = (std::printf("soak FAILED: threads grew %d -> %d\n", warm.threads, end.threads), false);
    if (args.work.empty()) std::filesystem::remove_all(work);
    return ok ? 0 : 1;
}
