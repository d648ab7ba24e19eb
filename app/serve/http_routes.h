#pragma once
// The HTTP API of `t5studio serve` on a cpp-httplib server: POST /augment (JSON or Server-Sent
// Events), GET/PUT /v1/settings, /health, /ready, /metrics; Bearer-key checks; 400/401/404/405/
// 413/503 answers with one JSON line {"error": "..."}.
#include <string>

namespace httplib {
class Server;
}

namespace t5s::serve {

class Service;

void install_routes(httplib::Server& server, Service& service);

// Equal strings in time independent of where they differ.
bool constant_time_equal(const std::string& a, const std::string& b);

}  // namespace t5s::serve
