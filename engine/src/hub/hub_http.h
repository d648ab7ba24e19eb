#pragma once
// The Hub client's HTTP: one libcurl easy handle per exchange, TLS, proxies (curl's usual
// environment), HTTP/2 where the server offers it. Internal to the hub library (engine/src/hub).
// The server may be hostile, so: http and https only (for redirects too, which are followed here
// hop by hop); the token goes only to the endpoint's own scheme, host and port; every body has a
// byte limit; a transfer slower than 1 KiB/s for the stall timeout is dropped; the cancel test is
// asked at least every 100 ms, whether bytes flow or not.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

namespace t5s::hub {

struct HttpResponse {
    long status = 0;                             // 0: no HTTP answer (see curl_error)
    std::map<std::string, std::string> headers;  // of the last response, names lower-case
    std::string body;                            // in memory: the answer (get) or an error page (bounded)
    std::string redirect_url;                    // a 3xx's Location, made absolute
    std::string curl_error;                      // "" when the exchange completed
    bool connect_failed = false;                 // refused, unreachable, DNS: the network is down
    bool aborted = false;                        // cancelled, or the chunk callback asked to stop
    bool write_failed = false;                   // the output file could not be written (disk full)
    bool too_large = false;                      // the body passed its byte limit: the transfer was stopped there
    std::string refused_url;                     // a redirect to this URL (not http/https) was not followed
    std::string header(const std::string& lower_name) const;
};

// "scheme://host:port" (lower case, default port filled in) of an http or https URL; "" for
// anything else, or what curl cannot parse.
std::string http_origin(const std::string& url);

class HttpClient {
public:
    // The token is sent only to URLs whose http_origin equals the endpoint's (the Hub's own rule:
    // an LFS redirect to a CDN, or any other host or port, gets no Authorization).
    HttpClient(std::string token, const std::string& endpoint, long connect_timeout_s, long stall_timeout_s,
               std::function<bool()> cancelled);
    // GET into memory (API answers, small files), at most `max_bytes`; follows redirects.
    HttpResponse get(const std::string& url, int64_t max_bytes) const;
    // HEAD without following redirects: the Hub's metadata sits on the first answer.
    HttpResponse head(const std::string& url) const;
    // GET appended to `out`, from byte `offset` (Range) when > 0, at most `max_bytes` written
    // (more: too_large, and nothing past the limit reaches the file); follows redirects.
    // `on_chunk` gets the bytes written so far in this call and returns false to stop (cancel).
    HttpResponse download(const std::string& url, std::FILE* out, int64_t offset, int64_t max_bytes,
                          const std::function<bool(int64_t)>& on_chunk) const;

private:
    struct Request;
    HttpResponse follow(const Request& q, std::string url) const;
    HttpResponse exchange(const Request& q, const std::string& url) const;

    std::string token_;
    std::string token_origin_;
    long connect_timeout_s_;
    long stall_timeout_s_;
    std::function<bool()> cancelled_;
};

}  // namespace t5s::hub
