#include "hub/hub_http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

namespace t5s::hub {

namespace {

struct Transfer {
    HttpResponse* response;
    std::FILE* out = nullptr;
    int64_t written = 0;
    const std::function<bool(int64_t)>* on_chunk = nullptr;
    CURL* handle = nullptr;
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    std::string line(data, size * n);
    if (line.rfind("HTTP/", 0) == 0) t->response->headers.clear();  // a new response (redirect)
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
        std::string name = line.substr(0, colon), value = line.substr(colon + 1);
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.erase(0, 1);
        while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
        t->response->headers[name] = value;
    }
    return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    long status = 0;
    curl_easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &status);
    const size_t bytes = size * n;
    if (!t->out || status >= 300) {  // an error page is kept as the body, never written to the file
        if (t->response->body.size() < (64u << 20)) t->response->body.append(data, bytes);
        return bytes;
    }
    if (std::fwrite(data, 1, bytes, t->out) != bytes) {
        t->response->write_failed = true;
        return 0;
    }
    t->written += static_cast<int64_t>(bytes);
    if (t->on_chunk && !(*t->on_chunk)(t->written)) {
        t->response->aborted = true;
        return 0;
    }
    return bytes;
}

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

std::string HttpResponse::header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
}

HttpClient::HttpClient(std::string token, long connect_timeout_s, long low_speed_timeout_s)
    : token_(std::move(token)), connect_timeout_s_(connect_timeout_s), low_speed_timeout_s_(low_speed_timeout_s) {
    global_init();
}

namespace {

HttpResponse perform(const std::string& url, const std::string& token, bool head, bool follow, std::FILE* out, int64_t offset,
                     const std::function<bool(int64_t)>* on_chunk, long connect_timeout_s, long low_speed_timeout_s) {
    HttpResponse r;
    CURL* c = curl_easy_init();
    Transfer t{&r, out, 0, on_chunk, c};
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Accept-Encoding: identity");
    headers = curl_slist_append(headers, "User-Agent: t5studio");
    // curl drops this header when a redirect leaves the host (CURLOPT_UNRESTRICTED_AUTH is off).
    if (!token.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_NOBODY, head ? 1L : 0L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, follow ? 1L : 0L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, connect_timeout_s);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);  // fewer than 1 byte/s for this long: a stall
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, low_speed_timeout_s);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (offset > 0) curl_easy_setopt(c, CURLOPT_RANGE, (std::to_string(offset) + "-").c_str());
    const CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    if (rc != CURLE_OK) {
        r.curl_error = curl_easy_strerror(rc);
        r.connect_failed = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY;
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
    return r;
}

}  // namespace

HttpResponse HttpClient::get(const std::string& url) const {
    return perform(url, token_, false, true, nullptr, 0, nullptr, connect_timeout_s_, low_speed_timeout_s_);
}

HttpResponse HttpClient::head(const std::string& url) const {
    return perform(url, token_, true, false, nullptr, 0, nullptr, connect_timeout_s_, low_speed_timeout_s_);
}

HttpResponse HttpClient::download(const std::string& url, std::FILE* out, int64_t offset,
                                  const std::function<bool(int64_t)>& on_chunk) const {
    return perform(url, token_, false, true, out, offset, &on_chunk, connect_timeout_s_, low_speed_timeout_s_);
}

}  // namespace t5s::hub
