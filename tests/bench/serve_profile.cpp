// Where does a continuous-batching step go? (a developer tool, not a test)
//
//   t5s_serve_profile --model DIR [--threads 2] [--clients 16] [--requests 64] [--new-tokens 32] [--top 20]
//
// Drives decode::BatchDecoder the way serve_bench.py drives `t5studio serve`, without HTTP: each
// of --clients closed-loop clients sends its next request (a 24-word text, exactly --new-tokens
// tokens) as soon as the previous one finished, so requests join and leave the running batch
// all the time. Prints the time per step spent joining (encoding + entering the cache) and
// decoding, and the decode steps' ATen operators (top-level, by name and shapes). Time inside
// MKL's packed GEMM and the fused kernels is not an ATen operator: it shows as the uncovered share.
#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "decode/batch_decoder.h"
#include "t5s/candidate_scores.h"
#include "t5s/model.h"
#include "t5s/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
// CPU seconds of the whole process: on a shared machine, the work done rather than the wait.
double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct OpStat {
    int64_t calls = 0;
    double seconds = 0;
};

struct Profiler {
    std::map<std::string, OpStat> by_name, by_key;
};
Profiler g_prof, g_join_prof, g_score_prof;
Profiler* g_current = nullptr;
thread_local int g_depth = 0;

struct Ctx : at::ObserverContext {
    Clock::time_point start;
    int depth = 0;
    std::string shapes;
};

std::string shapes_of(const at::RecordFunction& fn) {
    std::ostringstream s;
    int n = 0;
    for (const c10::IValue& v : fn.inputs()) {
        if (!v.isTensor() || n == 3) continue;
        const at::Tensor& t = v.toTensor();
        s << (n++ ? " " : "") << "[";
        for (int64_t d = 0; d < t.dim(); ++d) s << (d ? "," : "") << t.size(d);
        s << "]";
    }
    return s.str();
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
    auto ctx = std::make_unique<Ctx>();
    ctx->depth = ++g_depth;
    if (g_current && ctx->depth == 1) ctx->shapes = shapes_of(fn);
    ctx->start = Clock::now();
    return ctx;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext* base) {
    auto* ctx = static_cast<Ctx*>(base);
    --g_depth;
    if (!ctx || !g_current || ctx->depth != 1) return;
    Profiler& prof = *g_current;
    const double dt = since(ctx->start);
    const std::string name = fn.name();
    auto& n = prof.by_name[name];
    n.calls++, n.seconds += dt;
    auto& k = prof.by_key[name + " " + ctx->shapes];
    k.calls++, k.seconds += dt;
}

void print_top(const char* title, const std::map<std::string, OpStat>& m, double wall, int top, int64_t steps) {
    std::vector<std::pair<std::string, OpStat>> v(m.begin(), m.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    std::printf("\n%s (share of decode-step wall time; per step)\n", title);
    for (int i = 0; i < static_cast<int>(v.size()) && i < top; ++i) {
        std::printf("  %5.1f%%  %8.3f ms  %6.1f calls  %s\n", 100.0 * v[i].second.seconds / wall,
                    1e3 * v[i].second.seconds / steps, static_cast<double>(v[i].second.calls) / steps, v[i].first.c_str());
    }
}

const char* kWords[] = {"the",       "quick",   "brown", "fox",      "jumps",      "over", "a",         "lazy",     "dog",
                        "while",     "seven",   "tired", "students", "paraphrase", "long", "sentences", "about",    "rivers",
                        "mountains", "markets", "and",   "the",      "weather",    "in",   "small",     "northern", "towns"};

std::string bench_text(int i) {  // serve_bench.py's body()
    const int n = static_cast<int>(sizeof(kWords) / sizeof(kWords[0]));
    std::string text;
    for (int k = 0; k < 24; ++k) text += (k ? " " : "") + std::string(kWords[(i * 7 + k) % n]);
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    std::string model_dir;
    int threads = 2, clients = 16, requests = 64, new_tokens = 32, top = 20, score = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--model") model_dir = v;
        else if (k == "--threads") threads = std::stoi(v);
        else if (k == "--clients") clients = std::stoi(v);
        else if (k == "--requests") requests = std::stoi(v);
        else if (k == "--new-tokens") new_tokens = std::stoi(v);
        else if (k == "--top") top = std::stoi(v);
        else if (k == "--score") score = std::stoi(v);
        else {
            std::fprintf(stderr, "unknown option %s\n", k.c_str());
            return 2;
        }
    }
    if (model_dir.empty()) {
        std::fprintf(stderr,
                     "usage: t5s_serve_profile --model DIR [--threads 2] [--clients 16] [--requests 64] [--new-tokens 32] "
                     "[--score 1|0]\n");
        return 2;
    }
    t5s::RuntimeOptions r;
    r.device = t5s::Device::Cpu;
    r.threads = threads;
    auto model = t5s::Model::load(model_dir, r);
    t5s::decode::BatchDecoder decoder(*model);
    decoder.use_threads_here(threads);
    t5s::GenerationOptions o;
    o.max_new_tokens = o.min_new_tokens = new_tokens;

    int sent = 0, done = 0;
    std::vector<t5s::decode::GroupSpec> arriving;
    auto next = [&] {
        if (sent >= requests) return;
        arriving.push_back({static_cast<t5s::decode::GroupId>(sent + 1), model->tokenizer().encode(bench_text(sent)), o});
        ++sent;
    };
    for (int c = 0; c < std::min(clients, requests); ++c) next();
    auto handle = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit).needsInputs(true));
    double t_add = 0, t_step = 0, cpu_add = 0, cpu_step = 0, t_score = 0;
    int64_t steps = 0, rows = 0, joins = 0;
    const auto t0 = Clock::now();
    while (done < requests) {
        auto t = Clock::now();
        double c = cpu_seconds();
        g_current = &g_join_prof;
        decoder.add(arriving);  // one encoder pass, as the scheduler joins them
        joins += static_cast<int64_t>(arriving.size());
        arriving.clear();
        t_add += since(t);
        cpu_add += cpu_seconds() - c;
        g_current = &g_prof;
        t = Clock::now();
        c = cpu_seconds();
        t5s::decode::StepReport report = decoder.step();
        t_step += since(t);
        cpu_step += cpu_seconds() - c;
        g_current = nullptr;
        steps += 1;
        rows += report.rows;
        for (auto g : report.groups_finished) {
            std::vector<t5s::Candidate> out = decoder.take_results(g);
            if (score) {  // the scheduler's back_score of each finished candidate (quality/scored_rounds.h)
                t = Clock::now();
                g_current = &g_score_prof;
                std::vector<std::string> texts, sources;
                for (const auto& c : out) {
                    texts.push_back(model->tokenizer().decode(c.ids, true));
                    sources.push_back(bench_text(static_cast<int>(g) - 1));
                }
                t5s::back_scores(*model, texts, sources, "", 64);
                g_current = nullptr;
                t_score += since(t);
            }
            ++done;
            next();
        }
    }
    const double wall = since(t0);
    at::removeCallback(handle);
    std::printf("t5s_serve_profile: %s, threads %d, %d clients, %d requests x %d tokens\n", model_dir.c_str(), threads, clients,
                requests, new_tokens);
    std::printf("%lld steps, %.1f rows/step; wall %.2f s -> %.1f tokens/s\n", static_cast<long long>(steps),
                static_cast<double>(rows) / steps, wall, static_cast<double>(requests) * new_tokens / wall);
    std::printf("per step: join %.2f ms (%.2f joins, %.2f ms each), decode %.2f ms\n", 1e3 * t_add / steps,
                static_cast<double>(joins) / steps, 1e3 * t_add / std::max<int64_t>(1, joins), 1e3 * t_step / steps);
    if (score)
        std::printf("per step: scoring finished candidates (back_score) %.2f ms (%.2f ms per request)\n", 1e3 * t_score / steps,
                    1e3 * t_score / requests);
    std::printf("CPU time per step: join %.2f ms (%.2f ms each), decode %.2f ms\n", 1e3 * cpu_add / steps,
                1e3 * cpu_add / std::max<int64_t>(1, joins), 1e3 * cpu_step / steps);
    double covered = 0;
    for (const auto& [name, s] : g_prof.by_name) covered += s.seconds;
    std::printf("operators cover %.1f%% of decode\n", 100.0 * covered / t_step);
    print_top("by operator", g_prof.by_name, t_step, top, steps);
    print_top("by operator and input shapes", g_prof.by_key, t_step, top, steps);
    print_top("joining: by operator and input shapes (share of join wall time)", g_join_prof.by_key, t_add, top, steps);
    if (score)
        print_top("scoring: by operator and input shapes (share of scoring wall time)", g_score_prof.by_key, t_score, top, steps);
    return 0;
}
