#pragma once
// The HTTP API of `t5studio serve` on a cpp-httplib server: POST /augment (JSON or Server-Sent
// Events), GET/PUT /v1/settings, /health, /ready, /metrics, and Label Studio's ML-backend routes;
// before any route, the request guard (Host, Origin, credentials, Content-Type: request_guard.h)
// and the server's size and time limits (guarded_server.h). Every refusal is one JSON line
// {"error": "..."}: 400/401/403/404/405/408/413/415/431/503.
#include <string>

namespace t5s::serve {

class GuardedServer;
class RequestGuard;
class Service;

// `guard` and `service` must outlive `server`.
void install_routes(GuardedServer& server, Service& service, const RequestGuard& guard);

// Equal strings in time independent of where they differ.
bool constant_time_equal(const std::string& a, const std::string& b);

}  // namespace t5s::serve
