// t5studio serve: the HTTP augmentation service (app/serve/) with continuous batching
// (t5s/scheduler.h). Binds first and prints {"listening":"HOST:PORT"} (--port 0 picks a free port),
// then loads the model(s) (/ready answers 503 until then). Configured recipes (--recipe NAME=FILE,
// --recipes DIR: serve/serve_recipes.h) are read and checked before it binds, their step models
// loaded with the replicas. SIGTERM / SIGINT: stop accepting,
// finish running requests (up to --drain-timeout), flush the history, exit 0.
#include <httplib.h>
#include <signal.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "common/args.h"
#include "common/json_output.h"
#include "common/runtime_flags.h"
#include "serve/guarded_server.h"
#include "serve/http_routes.h"
#include "serve/request_guard.h"
#include "serve/service.h"
#include "t5s/error.h"

namespace t5s::cli {
namespace {

std::string read_api_key(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorCode::FileNotFound, path + ": cannot open the API key file");
    std::stringstream s;
    s << in.rdbuf();
    std::string key = s.str();
    const auto first = key.find_first_not_of(" \t\r\n"), last = key.find_last_not_of(" \t\r\n");
    if (first == std::string::npos) throw Error(ErrorCode::InvalidArgument, path + ": the API key file is empty");
    return key.substr(first, last - first + 1);
}

std::vector<std::string> split_devices(const std::string& list) {
    std::vector<std::string> out;
    std::stringstream s(list);
    for (std::string d; std::getline(s, d, ',');) {
        if (d.empty()) throw UsageError("--devices: empty entry in '" + list + "'");
        try {
            runtime_from_flags(d, "fp32", 1);  // cpu, cuda or cuda:N; whether the device exists is checked at load
        } catch (const Error& e) {
            throw UsageError("--devices: " + std::string(e.what()));
        }
        out.push_back(d);
    }
    return out;
}

const RuntimeFlags kServeRuntime{Device::Auto};

size_t connection_threads(int max_queue) { return static_cast<size_t>(std::max(64, std::min(max_queue, 1024) + 16)); }

// The table's flags (serve/serve_config.h), then the ones it leaves to the command: the runtime
// group, the key files and the device list.
serve::ServeConfig config_from_flags(const Args& a) {
    a.require("model");
    serve::ServeConfig c;
    apply_settings_flags(a, serve::serve_fields(), &c);
    if (a.has("api-key-file")) c.api_key = read_api_key(a.get("api-key-file"));
    c.dtype = a.get("dtype", c.dtype);
    c.device = a.get("device", to_string(kServeRuntime.default_device));
    c.threads = a.get_threads();
    if (a.has("devices")) c.devices = split_devices(a.get("devices"));
    if (a.has("devices") && a.has("replicas")) throw UsageError("give --devices or --replicas, not both");
    if (a.has("task") && a.has("task-prefix")) throw UsageError("give --task NAME or --task-prefix TEXT, not both");
    c.task_prefix_given = a.has("task-prefix");  // --task-prefix "" turns the model's default prefix off
    if (a.has("basic-auth-file")) {
        c.basic_auth = read_api_key(a.get("basic-auth-file"));
        if (c.basic_auth.find(':') == std::string::npos) throw UsageError("--basic-auth-file must hold USER:PASSWORD");
    }
    if (!c.learn_dir.empty() && c.history.empty())
        throw UsageError("--learn-dir needs --history (the annotations are recorded there)");
    if (!serve::is_loopback_name(c.host) && c.api_key.empty())
        throw UsageError("refusing to listen on " + c.host +
                         " without --api-key-file: only loopback addresses may be served without a key");
    runtime_from_flags(c.device, c.dtype, 1);  // flags checked before anything starts
    return c;
}

}  // namespace

const CommandSpec kServeSpec = {
    "serve",
    "HTTP augmentation service with continuous batching and Prometheus metrics",
    {settings_flags(serve::serve_fields(), serve::ServeConfig{}, kServeRuntime.flags()),
     {"json", "",
      "stdout stays JSON lines: {\"listening\"}, then {\"ready\", \"health\"} once the model is loaded and "
      "{\"stopped\", \"drained\"} at exit"}}};

int run_serve(const Argv& argv) {
    Args args(argv, kServeSpec);
    const serve::ServeConfig config = config_from_flags(args);
    // Signals go to the waiting thread below only: every thread started from here inherits the mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    serve::Service service(config);
    serve::RequestLimits limits;
    limits.read_timeout_s = config.read_timeout_s;
    serve::GuardedServer server(limits);
    // One thread per connection, always more than the requests that may wait in the queue, so that
    // waiting requests and clients still sending (each cut at --read-timeout) leave threads free.
    server.new_task_queue = [&] { return new httplib::ThreadPool(connection_threads(config.max_queue)); };
    serve::RequestGuard guard(config);
    serve::install_routes(server, service, guard);
    const int port = config.port == 0 ? server.bind_to_any_port(config.host)
                                      : (server.bind_to_port(config.host, config.port) ? config.port : -1);
    if (port < 0) throw Error(ErrorCode::InvalidArgument, "cannot listen on " + config.host + ":" + std::to_string(config.port));
    guard.set_port(port);
    server.widen_backlog(static_cast<int>(connection_threads(config.max_queue)));
    print_json({{"listening", config.host + ":" + std::to_string(port)}});
    std::thread listener([&] { server.listen_after_bind(); });
    try {
        service.load();
    } catch (...) {
        server.stop();
        listener.join();
        throw;
    }
    std::cerr << "t5studio serve: ready on " << config.host << ":" << port << " (" << service.health().dump() << ")\n";
    const bool json = args.has("json");  // {"listening"} is printed either way; --json adds the later states
    if (json) print_json({{"ready", config.host + ":" + std::to_string(port)}, {"health", service.health()}});
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    std::cerr << "t5studio serve: " << (signal_number == SIGTERM ? "SIGTERM" : "SIGINT") << ", draining (up to "
              << config.drain_timeout_s << " s)\n";
    const bool drained = service.drain();
    server.stop();
    listener.join();
    std::cerr << "t5studio serve: " << (drained ? "drained" : "drain timeout: unfinished requests were cancelled")
              << ", exiting\n";
    if (json) print_json({{"stopped", signal_number == SIGTERM ? "SIGTERM" : "SIGINT"}, {"drained", drained}});
    return 0;
}

}  // namespace t5s::cli
