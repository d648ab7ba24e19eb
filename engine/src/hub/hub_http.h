#pragma once
// The Hub client's HTTP: one libcurl easy handle per call, TLS, proxies (curl's usual environment),
// HTTP/2 where the server offers it. Internal to the hub library (engine/src/hub).
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

namespace t5s::hub {

struct HttpResponse {
    long status = 0;                             // 0: no HTTP answer (see curl_error)
    std::map<std::string, std::string> headers;  // of the last response, names lower-case
    std::string body;
    std::string curl_error;       // "" when the exchange completed
    bool connect_failed = false;  // refused, unreachable, DNS: the network is down
    bool aborted = false;         // the chunk callback asked to stop
    bool write_failed = false;    // the output file could not be written (disk full)
    std::string header(const std::string& lower_name) const;
};

class HttpClient {
public:
    HttpClient(std::string token, long connect_timeout_s, long low_speed_timeout_s);
    // GET into memory (API answers, small files); follows redirects.
    HttpResponse get(const std::string& url) const;
    // HEAD without following redirects: the Hub's metadata sits on the first answer.
    HttpResponse head(const std::string& url) const;
    // GET appended to `out`, from byte `offset` (Range) when > 0; follows redirects. `on_chunk`
    // gets the bytes written so far in this call and returns false to stop (cancel).
    HttpResponse download(const std::string& url, std::FILE* out, int64_t offset,
                          const std::function<bool(int64_t)>& on_chunk) const;

private:
    std::string token_;
    long connect_timeout_s_;
    long low_speed_timeout_s_;
};

}  // namespace t5s::hub
