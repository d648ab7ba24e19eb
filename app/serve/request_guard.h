#pragma once
// Who may use `t5studio serve`, checked on every request before its body is read:
// - Host must name this server: localhost, a loopback address, the --host it is bound to or, bound
//   to a wildcard address such as 0.0.0.0, any IP address (a page whose origin is an address is that
//   address), each with the bound port if it names one; or an --allow-host name with any port (a
//   proxy's). Other names are how DNS rebinding reaches a loopback server: 403.
// - Origin, when present (browsers send it), must be an --allow-origin: 403 otherwise.
// - Credentials: one rule for every route but GET /ready (a probe): the Bearer key
//   (--api-key-file) or HTTP Basic (--basic-auth-file), whichever is configured: 401 otherwise.
//   /webhook and /train teach the model, so they need configured credentials: 403 without any.
// - POST and PUT bodies are JSON: Content-Type application/json, 415 otherwise.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace httplib {
struct Request;
}

namespace t5s::serve {

struct ServeConfig;

struct Refusal {
    int status = 0;
    std::string message;
    std::map<std::string, std::string> headers;  // WWW-Authenticate for a 401
};

class RequestGuard {
public:
    explicit RequestGuard(const ServeConfig& config);
    void set_port(int port) { port_ = port; }  // once bound (--port 0 picks one)

    // The first reason to refuse `req`, or none. Its method and path are known routes.
    std::optional<Refusal> check(const httplib::Request& req) const;
    // Host and Origin alone (also for a CORS preflight, which carries no credentials).
    std::optional<Refusal> check_caller(const httplib::Request& req) const;

    bool host_allowed(const std::string& host_header) const;
    bool origin_allowed(const std::string& origin) const;  // "" (no Origin header) is allowed
    bool authorized(const httplib::Request& req) const;
    bool has_credentials() const { return !api_key_.empty() || !basic_auth_.empty(); }
    // GET /ready, /health and /metrics: answered without credentials (Host and Origin still checked).
    static bool is_probe(const httplib::Request& req);

private:
    std::string api_key_, basic_auth_header_, basic_auth_;
    std::vector<std::string> origins_, hosts_;                          // lower case; hosts_: --allow-host
    std::string bound_host_;                                            // --host unless a wildcard address
    bool any_origin_ = false, any_host_ = false, any_address_ = false;  // any_address_: bound to 0.0.0.0 / ::
    int port_ = 0;
};

// "application/json" with any parameters (charset), in any case.
bool is_json_content_type(const std::string& value);
// localhost, 127.0.0.0/8, ::1 (with or without brackets).
bool is_loopback_name(const std::string& host);

}  // namespace t5s::serve
