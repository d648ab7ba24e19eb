// t5studio serve: the HTTP augmentation service (app/serve/) with continuous batching
// (t5s/scheduler.h). Binds first and prints {"listening":"HOST:PORT"} (--port 0 picks a free port),
// then loads the model(s) (/ready answers 503 until then). SIGTERM / SIGINT: stop accepting,
// finish running requests (up to --drain-timeout), flush the history, exit 0.
#include <httplib.h>
#include <signal.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/runtime_flags.h"
#include "cli/json_output.h"
#include "serve/http_routes.h"
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

serve::ServeConfig config_from_flags(const Args& a) {
    serve::ServeConfig c;
    c.model_dir = a.require("model");
    c.adapter = a.get("adapter");
    c.embedder = a.get("embedder");
    c.host = a.get("host", c.host);
    c.port = a.get_int("port", c.port, 0, 65535);
    if (a.has("api-key-file")) c.api_key = read_api_key(a.get("api-key-file"));
    c.max_batch = a.get_int("max-batch", c.max_batch, 1, 1 << 16);
    c.max_queue = a.get_int("max-queue", c.max_queue, 1, 1 << 20);
    c.dtype = a.get("dtype", c.dtype);
    c.device = a.get("device", to_string(kServeRuntime.default_device));
    c.threads = a.get_threads();
    c.replicas = a.get_int("replicas", 1, 1, 64);
    if (a.has("devices")) c.devices = split_devices(a.get("devices"));
    if (a.has("devices") && a.has("replicas")) throw UsageError("give --devices or --replicas, not both");
    c.history = a.get("history");
    c.drain_timeout_s = a.get_double("drain-timeout", c.drain_timeout_s);
    if (c.drain_timeout_s < 0) throw UsageError("--drain-timeout must be >= 0 seconds");
    c.learn_dir = a.get("learn-dir");
    c.learn_every = a.get_int64("learn-every", c.learn_every, 0, INT64_MAX);
    c.learn_max_steps = a.get_int64("learn-max-steps", c.learn_max_steps, 1, INT64_MAX);
    c.learn_max_time_s = a.get_double("learn-max-time", c.learn_max_time_s);
    c.task_prefix = a.get("task-prefix");
    if (a.has("basic-auth-file")) {
        c.basic_auth = read_api_key(a.get("basic-auth-file"));
        if (c.basic_auth.find(':') == std::string::npos) throw UsageError("--basic-auth-file must hold USER:PASSWORD");
    }
    if (!c.learn_dir.empty() && c.history.empty()) throw UsageError("--learn-dir needs --history (the annotations are recorded there)");
    if (!serve::is_loopback(c.host) && c.api_key.empty())
        throw UsageError("refusing to listen on " + c.host + " without --api-key-file: only loopback addresses may be served without a key");
    runtime_from_flags(c.device, c.dtype, 1);  // flags checked before anything starts
    return c;
}

}  // namespace

const CommandSpec kServeSpec = {"serve", "HTTP augmentation service with continuous batching and Prometheus metrics", {
    {"model", "DIR", "model folder", kModel},
    {"adapter", "DIR", "LoRA adapter folder (PEFT format) applied to the model"},
    {"embedder", "DIR", "sentence-embedding model (sentence-transformers folder): similarity score, filters and rank", kModel},
    {"host", "H", "address to listen on (default 127.0.0.1; others need --api-key-file)"},
    {"port", "P", "TCP port (default 8000; 0 = a free one, printed)"},
    {"api-key-file", "F", "file holding the Bearer key clients must send"},
    {"max-batch", "N", "rows (candidates, beams) per decoding step (default 64)"},
    {"max-queue", "N", "requests waiting before 503 (default 256)"},
    kServeRuntime.flags(),
    {"replicas", "N", "model replicas on the CPU, shortest queue first, sharing --threads (default 1)"},
    {"devices", "LIST", "one replica per device, e.g. cuda:0,cuda:1 (or cpu)"},
    {"history", "PATH", "record every served request in this history"},
    {"drain-timeout", "S", "on SIGTERM/SIGINT, seconds to finish requests (default 30)"},
    {"learn-dir", "DIR", "learning loop: adapter versions folder (needs --history); annotations train the next version"},
    {"learn-every", "N", "new annotated pairs per automatic learning round (default 50; 0 = only on request)"},
    {"learn-max-steps", "N", "optimizer steps of a learning round, at most (default 100)"},
    {"learn-max-time", "S", "seconds of training of a learning round, at most (default 300)"},
    {"task-prefix", "TEXT", "prefix the base model expects (e.g. \"paraphrase: \") for Label Studio predictions and learning"},
    {"basic-auth-file", "F", "file holding USER:PASSWORD that Label Studio sends (HTTP Basic) to the ML-backend endpoints"},
}};

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
    httplib::Server server;
    server.new_task_queue = [&] { return new httplib::ThreadPool(static_cast<size_t>(std::max(16, std::min(config.max_queue, 1024)))); };
    serve::install_routes(server, service);
    const int port = config.port == 0 ? server.bind_to_any_port(config.host) : (server.bind_to_port(config.host, config.port) ? config.port : -1);
    if (port < 0) throw Error(ErrorCode::InvalidArgument, "cannot listen on " + config.host + ":" + std::to_string(config.port));
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
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    std::cerr << "t5studio serve: " << (signal_number == SIGTERM ? "SIGTERM" : "SIGINT") << ", draining (up to "
              << config.drain_timeout_s << " s)\n";
    const bool drained = service.drain();
    server.stop();
    listener.join();
    std::cerr << "t5studio serve: " << (drained ? "drained" : "drain timeout: unfinished requests were cancelled") << ", exiting\n";
    return 0;
}

}  // namespace t5s::cli
