// t5studio pull ORG/NAME[@REV]: a model from the Hugging Face Hub (or $HF_ENDPOINT) into the
// Hugging Face cache, resumable. A thin front end over t5s::hub::pull_model (t5s/hub_pull.h):
// progress on stderr (and as JSON lines on stdout with --json), Ctrl-C stops it resumably, and each
// failure has its own exit code (kPullExitCodes, listed in docs/model-store.md).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "common/args.h"
#include "common/json_output.h"
#include "t5s/hub.h"
#include "t5s/hub_pull.h"

namespace t5s::cli {

const CommandSpec kPullSpec = {
    "pull",
    "download a model from the Hugging Face Hub into the Hugging Face cache (resumable)",
    {
        {"repo", "ORG/NAME[@REV]", "repository, optionally at a branch, tag or commit (default main)", kPositional},
        {"revision", "REV", "branch, tag or commit (instead of @REV)"},
        {"endpoint", "URL", "Hub address (default $HF_ENDPOINT, else https://huggingface.co)"},
        {"cache-dir", "DIR", "cache folder (default $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub)"},
        {"retries", "N",
         "retries per request on server errors and dropped connections, 0..20 (default 4; backoff 0.5 s doubling, at most 8 s)"},
        {"stall-timeout", "S", "drop (and retry) a transfer slower than 1 KiB/s for S seconds, 1..600 (default 30)"},
        {"offline", "", "no network: only resolve it from the cache (also HF_HUB_OFFLINE=1)"},
        {"json", "", "progress and the result as JSON lines on stdout"},
    }};

namespace {

std::atomic<bool> g_interrupted{false};  // set by SIGINT / SIGTERM; the transfer asks it every 100 ms

void on_interrupt(int) { g_interrupted.store(true); }

int exit_code(hub::PullFailure f) {
    switch (f) {
        case hub::PullFailure::BadRequest: return 1;
        case hub::PullFailure::Unauthorized: return 10;
        case hub::PullFailure::NotFound: return 11;
        case hub::PullFailure::Network: return 12;
        case hub::PullFailure::Server: return 13;
        case hub::PullFailure::HashMismatch: return 14;
        case hub::PullFailure::DiskFull: return 15;
        case hub::PullFailure::Unsupported: return 16;
        case hub::PullFailure::Offline: return 17;
        case hub::PullFailure::Cancelled: return 130;
    }
    return 3;
}

std::string mib(int64_t bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
    return b;
}

// Progress: every report as a JSON line with --json; on stderr a line redrawn in place on a
// terminal, else one line per file and at most one a second.
struct ProgressPrinter {
    bool json = false, tty = false;
    std::string last_file;
    std::chrono::steady_clock::time_point last_line{};
    void operator()(const hub::PullProgress& p);
};

void ProgressPrinter::operator()(const hub::PullProgress& p) {
    if (json) {
        print_json({{"event", "progress"},
                    {"phase", p.phase},
                    {"file", p.file},
                    {"file_index", p.file_index},
                    {"file_count", p.file_count},
                    {"done_bytes", p.done_bytes},
                    {"total_bytes", p.total_bytes},
                    {"rate_bytes_per_s", p.rate_bytes_per_s},
                    {"eta_s", p.eta_s}});
        std::fflush(stdout);
    }
    if (p.phase != "download") return;
    const auto now = std::chrono::steady_clock::now();
    if (!tty && p.file == last_file && now - last_line < std::chrono::seconds(1)) return;
    last_file = p.file;
    last_line = now;
    char eta[32] = "?";
    if (p.eta_s >= 0) std::snprintf(eta, sizeof eta, "%.0f s", p.eta_s);
    std::fprintf(stderr, "%s[%d/%d] %s  %s / %s  %s/s  ETA %s%s", tty ? "\r\033[K" : "", p.file_index, p.file_count,
                 hub::shown(p.file, 300).c_str(), mib(p.done_bytes).c_str(), mib(p.total_bytes).c_str(),
                 mib(int64_t(p.rate_bytes_per_s)).c_str(), eta, tty ? "" : "\n");
}

hub::PullOptions options_from(const Args& args) {
    const std::vector<std::string>& repos = args.all("repo");
    if (repos.size() != 1) throw UsageError("give one repository: t5studio pull ORG/NAME[@REV]");
    const auto ref = hub::parse_repo_ref(repos.front());
    if (!ref) throw UsageError("'" + repos.front() + "' is not a repository id (ORG/NAME or ORG/NAME@REV)");
    hub::PullOptions o;
    o.repo = ref->repo;
    o.revision = args.get("revision", ref->revision);
    o.endpoint = args.get("endpoint");
    o.cache = args.get("cache-dir");
    o.max_retries = args.get_int("retries", 4, 0, 20);
    o.stall_timeout_s = args.get_int("stall-timeout", 30, 1, 600);
    o.offline = args.has("offline");
    return o;
}

}  // namespace

int run_pull(const Argv& argv) {
    Args args(argv, kPullSpec);
    const hub::PullOptions options = options_from(args);
    const bool json = args.has("json"), tty = isatty(fileno(stderr));
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    try {
        ProgressPrinter printer{json, tty, "", {}};
        auto progress = [&](const hub::PullProgress& p) { printer(p); };
        const hub::PullResult r = hub::pull_model(options, progress, [] { return g_interrupted.load(); });
        if (tty) std::fprintf(stderr, "\n");
        if (json) {
            print_json({{"event", "done"},
                        {"repo", r.repo},
                        {"commit", r.commit},
                        {"snapshot", r.snapshot.string()},
                        {"kind", r.kind},
                        {"architecture", r.architecture},
                        {"files", r.files},
                        {"total_bytes", r.total_bytes},
                        {"downloaded_bytes", r.downloaded_bytes},
                        {"reused_bytes", r.reused_bytes},
                        {"offline", r.from_cache_only}});
        } else {
            std::cout << r.repo << "@" << r.commit << " (" << r.architecture << ", " << r.kind << "): " << r.snapshot.string()
                      << "\n"
                      << mib(r.downloaded_bytes) << " downloaded, " << mib(r.reused_bytes) << " already here\n"
                      << "open it with: t5studio info --model " << r.repo
                      << (options.revision == "main" ? "" : "@" + options.revision) << "\n";
        }
        return 0;
    } catch (const hub::PullError& e) {
        if (tty) std::fprintf(stderr, "\n");
        if (json) print_json({{"event", "error"}, {"failure", to_string(e.failure())}, {"message", e.what()}});
        std::cerr << "t5studio pull: " << e.what() << "\n";
        return exit_code(e.failure());
    }
}

}  // namespace t5s::cli
