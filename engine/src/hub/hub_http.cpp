#include "hub/hub_http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

namespace t5s::hub {

namespace {

constexpr size_t kMaxHeaderBytes = 256 << 10;  // all headers of one answer
constexpr size_t kErrorPageBytes = 64 << 10;   // kept of an error page or a redirect's body
constexpr long kStallBytesPerS = 1024;         // slower than this for the stall timeout: dropped
constexpr long kPollMs = 100;                  // the cancel test's period while nothing arrives
constexpr int kMaxRedirects = 10;

struct Transfer {
    HttpResponse* response;
    std::FILE* out = nullptr;
    int64_t max_bytes = 0;
    const std::function<bool(int64_t)>* on_chunk = nullptr;
    CURL* handle = nullptr;
    int64_t written = 0;
    size_t header_bytes = 0;
};

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    if ((t->header_bytes += size * n) > kMaxHeaderBytes) {
        t->response->too_large = true;
        return 0;
    }
    std::string line(data, size * n);
    if (line.rfind("HTTP/", 0) == 0) t->response->headers.clear();  // a new response (an interim 100)
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
        std::string name = lower(line.substr(0, colon)), value = line.substr(colon + 1);
        while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.erase(0, 1);
        while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
        t->response->headers[name] = value;
    }
    return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    HttpResponse& r = *t->response;
    long status = 0;
    curl_easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &status);
    const size_t bytes = size * n;
    if (status >= 300) {  // an error page or a redirect's body: a little is kept, never written to the file
        if (r.body.size() + bytes > kErrorPageBytes) return 0;
        r.body.append(data, bytes);
        return bytes;
    }
    if (t->written + int64_t(bytes) > t->max_bytes) {  // nothing past the limit is kept
        r.too_large = true;
        return 0;
    }
    if (!t->out) {
        r.body.append(data, bytes);
    } else if (std::fwrite(data, 1, bytes, t->out) != bytes) {
        r.write_failed = true;
        return 0;
    }
    t->written += int64_t(bytes);
    if (t->on_chunk && *t->on_chunk && !(*t->on_chunk)(t->written)) {
        r.aborted = true;
        return 0;
    }
    return bytes;
}

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// A Location of file://, gopher://, ... must never be fetched: requests and redirects are http(s).
void only_http(CURL* c) {
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85 has the string forms and deprecates the bitmasks
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, long(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, long(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}

// Runs the transfer in a multi handle, so that `cancelled` is asked every kPollMs even while a
// server sends nothing (an easy perform would only notice between bytes).
CURLcode run_transfer(CURL* c, const std::function<bool()>& cancelled, HttpResponse& r) {
    CURLM* m = curl_multi_init();
    if (!m) return CURLE_OUT_OF_MEMORY;
    curl_multi_add_handle(m, c);
    CURLcode rc = CURLE_OK;
    for (int running = 1;;) {
        if (curl_multi_perform(m, &running) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
        if (!running) break;
        if (cancelled && cancelled()) {
            r.aborted = true;
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        curl_multi_poll(m, nullptr, 0, kPollMs, nullptr);
    }
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(m, &left))
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == c) rc = msg->data.result;
    curl_multi_remove_handle(m, c);
    curl_multi_cleanup(m);
    return rc;
}

}  // namespace

std::string HttpResponse::header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
}

std::string http_origin(const std::string& url) {
    std::string origin;
    CURLU* u = curl_url();
    char *scheme = nullptr, *host = nullptr, *port = nullptr;
    if (u && curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK && curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
        const std::string s = lower(scheme);
        if (s == "http" || s == "https") origin = s + "://" + lower(host) + ":" + port;
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return origin;
}

struct HttpClient::Request {
    bool head = false;
    bool follow = false;
    std::FILE* out = nullptr;
    int64_t offset = 0;
    int64_t max_bytes = 0;
    long max_time_s = 0;  // 0: no limit (downloads: the stall rule and the size limit bound them)
    const std::function<bool(int64_t)>* on_chunk = nullptr;
};

HttpClient::HttpClient(std::string token, const std::string& endpoint, long connect_timeout_s, long stall_timeout_s,
                       std::function<bool()> cancelled)
    : token_(std::move(token)),
      token_origin_(http_origin(endpoint)),
      connect_timeout_s_(connect_timeout_s),
      stall_timeout_s_(stall_timeout_s),
      cancelled_(std::move(cancelled)) {
    global_init();
}

HttpResponse HttpClient::exchange(const Request& q, const std::string& url) const {
    HttpResponse r;
    CURL* c = curl_easy_init();
    if (!c) {
        r.curl_error = "cannot start libcurl";
        return r;
    }
    Transfer t{&r, q.out, q.max_bytes, q.on_chunk, c};
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Accept-Encoding: identity");
    headers = curl_slist_append(headers, "User-Agent: t5studio");
    // Redirects are followed here, one exchange each, so this rule holds on every hop.
    if (!token_.empty() && !token_origin_.empty() && http_origin(url) == token_origin_)
        headers = curl_slist_append(headers, ("Authorization: Bearer " + token_).c_str());
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    only_http(c);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_NOBODY, q.head ? 1L : 0L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, connect_timeout_s_);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, kStallBytesPerS);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, stall_timeout_s_);
    if (q.max_time_s > 0) curl_easy_setopt(c, CURLOPT_TIMEOUT, q.max_time_s);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (q.offset > 0) curl_easy_setopt(c, CURLOPT_RANGE, (std::to_string(q.offset) + "-").c_str());
    const CURLcode rc = run_transfer(c, cancelled_, r);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    char* redirect = nullptr;
    if (curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &redirect) == CURLE_OK && redirect) r.redirect_url = redirect;
    if (rc != CURLE_OK) {
        r.curl_error = curl_easy_strerror(rc);
        r.connect_failed = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY;
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
    return r;
}

HttpResponse HttpClient::follow(const Request& q, std::string url) const {
    for (int hop = 0;; ++hop) {
        HttpResponse r = exchange(q, url);
        if (!q.follow || r.status < 300 || r.status >= 400 || r.aborted) return r;
        const std::string target = !r.redirect_url.empty() ? r.redirect_url : r.header("location");
        if (target.empty()) return r;
        if (http_origin(target).empty()) {
            r.refused_url = target;
            return r;
        }
        if (hop >= kMaxRedirects) {
            r.curl_error = "more than " + std::to_string(kMaxRedirects) + " redirects";
            return r;
        }
        url = target;
    }
}

HttpResponse HttpClient::get(const std::string& url, int64_t max_bytes) const {
    Request q;
    q.follow = true;
    q.max_bytes = max_bytes;
    q.max_time_s = 10 * stall_timeout_s_;
    return follow(q, url);
}

HttpResponse HttpClient::head(const std::string& url) const {
    Request q;
    q.head = true;
    q.max_time_s = 10 * stall_timeout_s_;
    return follow(q, url);
}

HttpResponse HttpClient::download(const std::string& url, std::FILE* out, int64_t offset, int64_t max_bytes,
                                  const std::function<bool(int64_t)>& on_chunk) const {
    Request q;
    q.follow = true;
    q.out = out;
    q.offset = offset;
    q.max_bytes = max_bytes;
    q.on_chunk = &on_chunk;
    return follow(q, url);
}

}  // namespace t5s::hub
