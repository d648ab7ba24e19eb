#pragma once
// One pull's network side: requests with retries and backoff, HTTP status -> PullError, and one
// file into blobs/ (resume, size and SHA-256 check, rename). Internal to engine/src/hub.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "hub/hub_http.h"
#include "t5s/hub_pull.h"

namespace t5s::hub {

struct FileMeta {
    std::string etag;  // normalised (no quotes, no W/); a safe file name (is_blob_name)
    int64_t size = -1;
    std::string location;  // where to GET the bytes: an http(s) URL
    std::string commit;    // X-Repo-Commit
};

// Listings and JSON files: a bound before parsing (a big repository's listing is a few MiB).
constexpr int64_t kMaxTextBytes = int64_t(32) << 20;

class Fetcher {
public:
    Fetcher(const PullOptions& options, std::string endpoint, std::string token, std::function<bool()> cancelled);

    // GET with retries; 401/403/404/5xx/network mapped to PullError naming `what`. An answer
    // over `max_bytes` is refused (PullFailure::Server).
    std::string get_text(const std::string& url, const std::string& what, int64_t max_bytes = kMaxTextBytes);
    // HEAD /REPO/resolve/COMMIT/FILE, following relative redirects. An ETag that is no safe file
    // name, or a Location that is not http(s), is refused (PullFailure::Server).
    FileMeta head_file(const std::string& repo, const std::string& commit, const std::string& file);
    // Makes blobs/<etag> complete: reuses it, resumes <etag>.incomplete, or downloads; never
    // writes past meta.size (which must be known: a server sending more is refused, the partial
    // file removed); checks the size and (when `sha256` is set) the hash before the rename. `on_bytes(file_bytes, network_bytes)`
    // reports the file's bytes on disk and those fetched in this call. Returns the network bytes.
    int64_t fetch_blob(const FileMeta& meta, const std::filesystem::path& blobs, const std::string& file,
                       const std::string& sha256, const std::function<void(int64_t, int64_t)>& on_bytes);

    bool cancelled() const { return cancelled_ && cancelled_(); }
    const std::string& endpoint() const { return endpoint_; }

private:
    [[noreturn]] void check_status(const HttpResponse& r, const std::string& what) const;  // always throws
    bool retryable(const HttpResponse& r) const;
    void backoff(int attempt, const std::string& what, const HttpResponse& r);

    const PullOptions& options_;
    std::string endpoint_;
    HttpClient http_;
    std::function<bool()> cancelled_;
};

// "https://host" + "/ORG/NAME/resolve/REV/FILE" with the path parts URL-encoded.
std::string resolve_url(const std::string& endpoint, const std::string& repo, const std::string& rev, const std::string& file);

}  // namespace t5s::hub
