#pragma once
// Downloading a model from the Hugging Face Hub (or $HF_ENDPOINT: a mirror, or the test server)
// into the cache (t5s/hub.h), with the Hub's own protocol as huggingface_hub speaks it:
//   GET  /api/models/ORG/NAME/revision/REV?blobs=true   commit sha, file list, LFS sha256 + sizes
//   HEAD /ORG/NAME/resolve/COMMIT/FILE                  X-Repo-Commit, X-Linked-Etag / ETag,
//                                                       X-Linked-Size, Location (LFS redirect)
//   GET  (the resolved location) with Range: bytes=N-   resuming blobs/<etag>.incomplete
// config.json and the file list come first: an architecture T5 Studio cannot run is refused before
// any weight is fetched. Only what loading needs is fetched (configs, safetensors in preference to
// .bin, shard indexes, tokenizer files, sentence-transformers module folders). Every LFS file's
// SHA-256 is checked before it is renamed into blobs/; the snapshot's links and refs/REV are
// written only when every file is there, so snapshots/ never holds a partial download.
//
// Runs on any thread: a job body passes its progress callback and its cancel test, e.g.
//   pull_model(o, [&](const PullProgress& p) { job.set_progress(p.done_bytes, p.total_bytes); },
//              [&] { return job.cancel_requested(); });
// Torch-free.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "t5s/error.h"

namespace t5s::hub {

// Why a pull failed: each has its own exit code in `t5studio pull` (docs/model-store.md).
enum class PullFailure {
    BadRequest,    // not a repository id, or options that cannot work
    Unauthorized,  // 401 / 403: gated or private (accept the licence, set HF_TOKEN)
    NotFound,      // 404: no such repository, revision or file
    Network,       // connection refused / unreachable / DNS / timed out
    Server,        // 5xx (or 429) after the retries
    HashMismatch,  // a file's SHA-256 or size differs from the Hub's
    DiskFull,      // not enough free space, or a write failed
    Unsupported,   // an architecture T5 Studio cannot run, or no weights it can read
    Offline,       // HF_HUB_OFFLINE=1 and the revision is not in the cache
    Cancelled,     // the cancel flag was set (Ctrl-C); the partial file stays, resumable
};

}  // namespace t5s::hub

namespace t5s {
template <>
struct EnumNames<hub::PullFailure> {
    static constexpr const char* kWhat = "pull failure";
    using F = hub::PullFailure;
    static constexpr EnumName<F> kNames[] = {{F::BadRequest, "bad_request"}, {F::Unauthorized, "unauthorized"},
                                             {F::NotFound, "not_found"},     {F::Network, "network"},
                                             {F::Server, "server"},          {F::HashMismatch, "hash_mismatch"},
                                             {F::DiskFull, "disk_full"},     {F::Unsupported, "unsupported"},
                                             {F::Offline, "offline"},        {F::Cancelled, "cancelled"}};
};
}  // namespace t5s

namespace t5s::hub {
using t5s::to_string;

class PullError : public Error {
public:
    PullError(PullFailure failure, const std::string& message);
    PullFailure failure() const { return failure_; }

private:
    PullFailure failure_;
};

struct PullOptions {
    std::string repo;               // "ORG/NAME"
    std::string revision = "main";  // branch, tag or commit
    std::string endpoint;           // "" = $HF_ENDPOINT, else https://huggingface.co
    std::filesystem::path cache;    // "" = cache_dir() ($HF_HUB_CACHE / $HF_HOME/hub / ~/.cache/huggingface/hub)
    std::string token;              // "" = $HF_TOKEN, else $HF_HOME/token or ~/.cache/huggingface/token
    bool offline = false;           // also on with HF_HUB_OFFLINE=1: resolve from the cache, no network
    int max_retries = 4;            // per request, on 5xx / 429 / dropped connections
    double backoff_s = 0.5;         // first retry delay; doubled each time, at most 8 s
    long connect_timeout_s = 10;    // per connection attempt
    long stall_timeout_s = 30;      // a transfer under 1 KiB/s for this long is dropped and retried
};

// What a pull is doing now, for a progress line or bar. Bytes are this pull's files; `done`
// includes bytes already in the cache (reused) and resumed from .incomplete files.
struct PullProgress {
    std::string phase;   // "metadata" | "download" | "verify" | "done"
    std::string file;    // the file being fetched ("" outside "download")
    int file_index = 0;  // 1-based
    int file_count = 0;
    int64_t done_bytes = 0;
    int64_t total_bytes = 0;
    double rate_bytes_per_s = 0;  // over this pull's network bytes
    double eta_s = -1;            // -1 = unknown
};

struct PullResult {
    std::string repo;
    std::string commit;
    std::filesystem::path snapshot;  // the folder to open
    std::string kind;                // "generation" | "encoder"
    std::string architecture;        // model_type
    std::vector<std::string> files;  // the files linked from the snapshot
    int64_t total_bytes = 0;
    int64_t downloaded_bytes = 0;  // fetched over the network in this run
    int64_t reused_bytes = 0;      // already complete in blobs/ (or resumed from .incomplete)
    bool from_cache_only = false;  // offline: nothing was fetched
};

// `text` (a name or words a Hub server chose) safe to print: control bytes, DEL, backslash and
// bytes >= 0x80 as \xNN, cut after `max_bytes` of input with "..." (one short line at most).
std::string shown(std::string_view text, size_t max_bytes = 200);

// Throws PullError (one line naming the repository, file or status) on failure. `on_progress` is
// called on the calling thread, at most ~10 times a second plus at phase changes; `cancelled`, when
// given, is asked at least every 100 ms of a transfer (bytes flowing or not), during retry waits and
// during the SHA-256 check: true stops with PullFailure::Cancelled, the partial download kept.
PullResult pull_model(const PullOptions& options, const std::function<void(const PullProgress&)>& on_progress,
                      const std::function<bool()>& cancelled = {});

}  // namespace t5s::hub
