#include "serve/request_guard.h"

#include <arpa/inet.h>
#include <httplib.h>

#include <algorithm>
#include <cctype>

#include "serve/http_routes.h"
#include "serve/serve_config.h"

namespace t5s::serve {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string trimmed(const std::string& s) {
    const auto first = s.find_first_not_of(" \t"), last = s.find_last_not_of(" \t");
    return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

bool is_wildcard_address(const std::string& host) { return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]"; }

std::string unbracketed(const std::string& host) {
    return host.size() > 1 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2) : host;
}

// "name", "name:port", "[v6]", "[v6]:port" -> name (brackets off) and port ("" when none).
bool split_host(const std::string& value, std::string* name, std::string* port) {
    if (!value.empty() && value.front() == '[') {
        const auto close = value.find(']');
        if (close == std::string::npos) return false;
        *name = value.substr(1, close - 1);
        const std::string rest = value.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') return false;
        *port = rest.empty() ? "" : rest.substr(1);
        return true;
    }
    const auto colon = value.find(':');
    if (colon != std::string::npos && value.find(':', colon + 1) != std::string::npos) return false;  // bare IPv6
    *name = value.substr(0, colon);
    *port = colon == std::string::npos ? "" : value.substr(colon + 1);
    return true;
}

std::string origin_key(const std::string& origin) {
    std::string o = lower(trimmed(origin));
    while (!o.empty() && o.back() == '/') o.pop_back();
    return o;
}

Refusal refuse(int status, std::string message) { return Refusal{status, std::move(message), {}}; }

}  // namespace

bool is_json_content_type(const std::string& value) {
    const std::string media = lower(trimmed(value.substr(0, value.find(';'))));
    return media == "application/json";
}

bool is_loopback_name(const std::string& host_in) {
    const std::string host = lower(unbracketed(host_in));
    if (host == "localhost") return true;
    in_addr v4{};
    if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

RequestGuard::RequestGuard(const ServeConfig& config)
    : api_key_(config.api_key), basic_auth_(config.basic_auth), port_(config.port) {
    if (!basic_auth_.empty()) {  // USER:PASSWORD (cli_serve refuses a file without the ':')
        const auto colon = basic_auth_.find(':');
        const std::string password = colon == std::string::npos ? "" : basic_auth_.substr(colon + 1);
        basic_auth_header_ = httplib::make_basic_authentication_header(basic_auth_.substr(0, colon), password).second;
    }
    for (const auto& o : config.allow_origins) {
        if (o == "*") any_origin_ = true;
        origins_.push_back(origin_key(o));
    }
    for (const auto& h : config.allow_hosts) {
        if (h == "*") any_host_ = true;
        hosts_.push_back(lower(unbracketed(h)));
    }
    if (!is_wildcard_address(config.host)) bound_host_ = lower(unbracketed(config.host));
    any_address_ = is_wildcard_address(config.host);
}

bool RequestGuard::host_allowed(const std::string& host_header) const {
    if (any_host_) return true;
    std::string name, port;
    if (host_header.empty() || !split_host(lower(trimmed(host_header)), &name, &port)) return false;
    // A name the user allows may come with any port (a proxy's); this server's own names with its own.
    if (std::find(hosts_.begin(), hosts_.end(), name) != hosts_.end()) return true;
    // Bound to every interface, the server is reached under names and ports it cannot know (a
    // Kubernetes Service, a load balancer); it has credentials there (serve refuses to start
    // without), which a rebinding page does not, so the Host check guards loopback servers.
    if (any_address_) return true;
    if (!port.empty() && port != std::to_string(port_)) return false;
    return is_loopback_name(name) || name == bound_host_;
}

bool RequestGuard::origin_allowed(const std::string& origin) const {
    if (origin.empty() || any_origin_) return true;
    return std::find(origins_.begin(), origins_.end(), origin_key(origin)) != origins_.end();
}

// Probes and scrapers read these without credentials (Kubernetes' httpGet probes and Prometheus'
// plain scrape send none); they change nothing and show no credentials.
bool RequestGuard::is_probe(const httplib::Request& req) {
    return req.method == "GET" && (req.path == "/ready" || req.path == "/health" || req.path == "/metrics");
}

bool RequestGuard::authorized(const httplib::Request& req) const {
    if (!has_credentials()) return true;
    const std::string given = req.get_header_value("Authorization");
    return (!api_key_.empty() && constant_time_equal(given, "Bearer " + api_key_)) ||
           (!basic_auth_.empty() && constant_time_equal(given, basic_auth_header_));
}

std::optional<Refusal> RequestGuard::check_caller(const httplib::Request& req) const {
    if (req.get_header_value_count("Host") > 1 || !host_allowed(req.get_header_value("Host")))
        return refuse(403, "the Host header '" + req.get_header_value("Host") +
                               "' does not name this server (localhost, a loopback address, --host, or an --allow-host name, "
                               "with port " +
                               std::to_string(port_) + ")");
    if (req.get_header_value_count("Origin") > 1 || !origin_allowed(req.get_header_value("Origin")))
        return refuse(403, "the Origin header '" + req.get_header_value("Origin") +
                               "' is not allowed (start serve with --allow-origin ORIGIN to serve that web page)");
    return std::nullopt;
}

std::optional<Refusal> RequestGuard::check(const httplib::Request& req) const {
    if (auto r = check_caller(req)) return r;
    const bool teaches = req.path == "/webhook" || req.path == "/train";
    if (teaches && !has_credentials())
        return refuse(
            403, req.path + " teaches the model, so it needs credentials: start serve with --basic-auth-file or --api-key-file");
    if (!is_probe(req) && !authorized(req)) {
        Refusal r = refuse(401,
                           "missing or wrong credentials (Authorization: Bearer KEY from --api-key-file, or HTTP Basic from "
                           "--basic-auth-file)");
        r.headers["WWW-Authenticate"] = basic_auth_.empty() ? "Bearer" : "Basic realm=\"t5studio\"";
        return r;
    }
    if ((req.method == "POST" || req.method == "PUT") && !is_json_content_type(req.get_header_value("Content-Type")))
        return refuse(415,
                      "the Content-Type header must be application/json (got '" + req.get_header_value("Content-Type") + "')");
    return std::nullopt;
}

}  // namespace t5s::serve
