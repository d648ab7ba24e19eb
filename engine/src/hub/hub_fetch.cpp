#include "hub/hub_fetch.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <thread>

#include "hub/hub_paths.h"
#include "hub/sha256.h"

namespace t5s::hub {

namespace fs = std::filesystem;

namespace {

std::string url_encode(const std::string& s, bool keep_slash) {
    static const char* kHex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

std::string normalize_etag(std::string e) {
    if (e.rfind("W/", 0) == 0) e.erase(0, 2);
    e.erase(std::remove(e.begin(), e.end(), '"'), e.end());
    return e;
}

int64_t to_int(const std::string& s) {
    try {
        return s.empty() ? -1 : std::stoll(s);
    } catch (const std::exception&) {
        return -1;
    }
}

std::string http_what(const HttpResponse& r) {
    if (r.status == 0) return r.curl_error.empty() ? "no answer" : shown(r.curl_error);
    return "HTTP " + std::to_string(r.status);
}

}  // namespace

std::string resolve_url(const std::string& endpoint, const std::string& repo, const std::string& rev, const std::string& file) {
    return endpoint + "/" + repo + "/resolve/" + url_encode(rev, false) + "/" + url_encode(file, true);
}

Fetcher::Fetcher(const PullOptions& options, std::string endpoint, std::string token, std::function<bool()> cancelled)
    : options_(options),
      endpoint_(std::move(endpoint)),
      http_(std::move(token), endpoint_, options.connect_timeout_s, options.stall_timeout_s, cancelled),
      cancelled_(std::move(cancelled)) {}

void Fetcher::check_status(const HttpResponse& r, const std::string& what) const {
    if (r.aborted || cancelled())
        throw PullError(PullFailure::Cancelled,
                        what + ": interrupted; what was downloaded is kept, run the same pull again to resume");
    if (r.write_failed) throw PullError(PullFailure::DiskFull, what + ": writing to the cache failed (disk full?)");
    if (!r.refused_url.empty())
        throw PullError(PullFailure::Server, what + ": the server redirects to '" + shown(r.refused_url) +
                                                 "'; only http and https are followed, refused");
    if (r.too_large) throw PullError(PullFailure::Server, what + ": the server's answer is larger than allowed; refused");
    if (r.status == 401 || r.status == 403)
        throw PullError(PullFailure::Unauthorized,
                        what + ": " + http_what(r) +
                            ", access denied (a gated or private repository: accept its licence on its "
                            "page on the Hub while logged in, then set HF_TOKEN to a token of that account)");
    if (r.status == 404)
        throw PullError(PullFailure::NotFound, what + ": not found (HTTP 404): check the repository name and revision");
    if (r.status == 0 && r.connect_failed)
        throw PullError(PullFailure::Network,
                        what + ": cannot reach " + endpoint_ + " (" + r.curl_error + "); check the network or HF_ENDPOINT");
    if (r.status == 0 || r.status >= 500 || r.status == 429)
        throw PullError(r.status == 0 ? PullFailure::Network : PullFailure::Server,
                        what + ": " + http_what(r) + " after " + std::to_string(options_.max_retries) + " retries");
    if (r.status >= 400) throw PullError(PullFailure::BadRequest, what + ": " + http_what(r));
    throw PullError(PullFailure::Network,
                    what + ": transfer failed (" + (r.curl_error.empty() ? http_what(r) : shown(r.curl_error)) + ")");
}

bool Fetcher::retryable(const HttpResponse& r) const {
    if (r.aborted || r.write_failed || r.too_large || !r.refused_url.empty() || cancelled()) return false;
    return r.status == 0 || r.status >= 500 || r.status == 429 || (!r.curl_error.empty() && r.status < 300);
}

void Fetcher::backoff(int attempt, const std::string& what, const HttpResponse& r) {
    const double delay = std::min(8.0, options_.backoff_s * double(1 << std::min(attempt, 10)));
    std::fprintf(stderr, "t5studio pull: %s: %s; retry %d/%d in %.1f s\n", what.c_str(), http_what(r).c_str(), attempt + 1,
                 options_.max_retries, delay);
    // Sleeps in small steps so that a cancel is seen at once.
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(delay);
    while (std::chrono::steady_clock::now() < until && !cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

std::string Fetcher::get_text(const std::string& url, const std::string& what, int64_t max_bytes) {
    for (int attempt = 0;; ++attempt) {
        HttpResponse r = http_.get(url, max_bytes);
        if (r.status >= 200 && r.status < 300 && r.curl_error.empty()) return r.body;
        if (r.too_large && r.status < 300 && !cancelled())
            throw PullError(PullFailure::Server,
                            what + ": the server's answer is larger than " + std::to_string(max_bytes >> 20) + " MiB; refused");
        if (!retryable(r) || attempt >= options_.max_retries) check_status(r, what);
        backoff(attempt, what, r);
    }
}

FileMeta Fetcher::head_file(const std::string& repo, const std::string& commit, const std::string& file) {
    std::string url = resolve_url(endpoint_, repo, commit, file);
    const std::string what = repo + "/" + shown(file);
    for (int attempt = 0, hops = 0;;) {
        HttpResponse r = http_.head(url);
        const std::string location = r.header("location");
        const bool redirect = r.status >= 300 && r.status < 400 && !location.empty();
        const std::string target = !r.redirect_url.empty() ? r.redirect_url : location;
        if (redirect && http_origin(target).empty()) {
            r.refused_url = location;  // the HEAD's own redirects are read here, not by HttpClient::follow
            check_status(r, what);
        }
        if (redirect && location[0] == '/' && location.rfind("//", 0) != 0 && hops++ < 10) {
            url = target;  // a relative redirect (renamed repository): follow it
            continue;
        }
        if ((r.status >= 200 && r.status < 400) && r.curl_error.empty()) {
            FileMeta m;
            const std::string etag = !r.header("x-linked-etag").empty() ? r.header("x-linked-etag") : r.header("etag");
            m.etag = normalize_etag(etag);
            m.size = to_int(!r.header("x-linked-size").empty() ? r.header("x-linked-size") : r.header("content-length"));
            m.location = redirect ? target : url;
            m.commit = r.header("x-repo-commit");
            if (!is_blob_name(m.etag))
                throw PullError(PullFailure::Server, what + ": the server gave no usable ETag ('" + shown(etag) + "')");
            return m;
        }
        if (!retryable(r) || attempt >= options_.max_retries) check_status(r, what);
        backoff(attempt++, what, r);
    }
}

int64_t Fetcher::fetch_blob(const FileMeta& meta, const fs::path& blobs, const std::string& file, const std::string& sha256,
                            const std::function<void(int64_t, int64_t)>& on_bytes) {
    if (meta.size < 0) throw PullError(PullFailure::Server, file + ": the server gave no size; refused");
    std::error_code ec;
    const fs::path blob = blobs / meta.etag, part = blobs / (meta.etag + ".incomplete");
    if (fs::is_regular_file(blob, ec) && int64_t(fs::file_size(blob, ec)) == meta.size) {
        on_bytes(meta.size, 0);
        return 0;
    }
    int64_t network = 0;
    for (int attempt = 0;;) {
        const int64_t have = fs::exists(part, ec) ? int64_t(fs::file_size(part, ec)) : 0;
        if (have >= meta.size) break;  // complete, or too long: the checks below decide
        std::FILE* out = std::fopen(part.c_str(), "ab");
        if (!out) throw PullError(PullFailure::DiskFull, part.string() + ": cannot be written");
        on_bytes(have, network);
        HttpResponse r = http_.download(meta.location, out, have, meta.size - have, [&](int64_t n) {
            on_bytes(have + n, network + n);
            return !cancelled();
        });
        if (std::fclose(out) != 0) r.write_failed = true;
        network += std::max<int64_t>(0, int64_t(fs::file_size(part, ec)) - have);
        if (r.status == 200 && have > 0) {  // the server ignored the Range: start over (a bounded number of times)
            fs::remove(part, ec);
            if (attempt++ >= options_.max_retries) check_status(r, file);
            continue;
        }
        if (r.too_large && r.status < 300 && !cancelled()) {
            fs::remove(part, ec);
            throw PullError(PullFailure::HashMismatch, file + ": the server sent more than the " + std::to_string(meta.size) +
                                                           " bytes announced; stopped there, the download was removed");
        }
        if ((r.status == 200 || r.status == 206) && r.curl_error.empty()) break;
        if (r.status == 416) break;  // nothing left to send: the checks below decide
        const bool progressed = int64_t(fs::file_size(part, ec)) > have;
        if (!retryable(r) || (!progressed && attempt >= options_.max_retries)) check_status(r, file);
        if (!progressed) backoff(attempt++, file, r);  // a dropped connection that brought bytes resumes at once
    }
    const int64_t got = int64_t(fs::file_size(part, ec));
    if (got != meta.size) {
        fs::remove(part, ec);
        throw PullError(PullFailure::HashMismatch,
                        file + ": " + std::to_string(got) + " bytes, the Hub says " + std::to_string(meta.size) + "; removed");
    }
    if (!sha256.empty()) {
        const std::string actual = sha256_file(part, [this] { return cancelled(); });
        if (cancelled())
            throw PullError(
                PullFailure::Cancelled,
                file + ": interrupted during the SHA-256 check; the download is kept, run the same pull again to finish");
        if (actual != sha256) {
            fs::remove(part, ec);
            throw PullError(PullFailure::HashMismatch,
                            file + ": SHA-256 " + actual + " differs from the Hub's " + sha256 + "; the download was removed");
        }
    }
    fs::rename(part, blob, ec);
    if (ec) throw PullError(PullFailure::DiskFull, blob.string() + ": cannot be renamed into place (" + ec.message() + ")");
    return network;
}

}  // namespace t5s::hub
