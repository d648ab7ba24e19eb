#include "serve/http_routes.h"

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>

#include "serve/guarded_server.h"
#include "serve/labelstudio.h"
#include "serve/peer_watch.h"
#include "serve/recipe_request.h"
#include "serve/request_guard.h"
#include "serve/request_json.h"
#include "serve/service.h"
#include "t5s/error.h"
#include "t5s/history_store.h"

namespace t5s::serve {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);

void send_json(httplib::Response& res, int status, const nlohmann::json& j) {
    res.status = status;
    res.set_content(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) { send_json(res, status, {{"error", message}}); }

void send_busy(httplib::Response& res, const std::string& message) {
    res.set_header("Retry-After", "1");
    send_error(res, 503, message);
}

int status_of(const JobError& e) {
    if (e.code == ErrorCode::Cancelled) return e.message.find("timed out") != std::string::npos ? 504 : 503;
    if (e.code == ErrorCode::InvalidArgument || e.code == ErrorCode::Unsupported) return 400;
    if (e.code == ErrorCode::OutOfMemory) return 503;
    return 500;
}

// What the scheduler thread hands to the HTTP thread of one request.
struct Channel {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::string> events;  // SSE frames
    std::optional<RequestOutcome> outcome;
};

std::string sse(const std::string& event, const nlohmann::json& data) {
    return "event: " + event + "\ndata: " + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

const std::map<std::string, std::string> kAllowed = {{"/augment", "POST"},
                                                     {"/v1/settings", "GET, PUT"},
                                                     {"/health", "GET"},
                                                     {"/ready", "GET"},
                                                     {"/metrics", "GET"},
                                                     // Label Studio's ML backend (serve/labelstudio.cpp)
                                                     {"/", "GET"},
                                                     {"/setup", "POST"},
                                                     {"/predict", "POST"},
                                                     {"/webhook", "POST"},
                                                     {"/train", "POST"}};

void send_refusal(httplib::Response& res, const Refusal& r) {
    for (const auto& [name, value] : r.headers) res.set_header(name, value);
    res.set_header("Connection", "close");
    send_error(res, r.status, r.message);
    // Its body (if any) stays unread: the connection closes rather than read it as the next request.
    GuardedServer::close_after_response();
}

// A browser's preflight before a cross-origin request: the Origin was allowed (check_caller).
void send_preflight(const httplib::Request& req, httplib::Response& res, const std::string& methods) {
    res.status = 204;
    res.set_header("Access-Control-Allow-Origin", req.get_header_value("Origin"));
    res.set_header("Access-Control-Allow-Methods", methods);
    res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
    res.set_header("Access-Control-Max-Age", "600");
    res.set_header("Vary", "Origin");
}

// A Content-Length over `limit`; a malformed one is httplib's to refuse.
bool declares_more_than(const httplib::Request& req, size_t limit) {
    const std::string v = req.get_header_value("Content-Length");
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) return false;
    return v.size() > 18 || std::stoull(v) > limit;
}

// Before routing, with the headers only: the endpoint and method, then the guard, then a declared
// body size over the limit (a chunked one is counted as it is read: guarded_server.h).
httplib::Server::HandlerResponse screen(const httplib::Request& req, httplib::Response& res, const RequestGuard& guard,
                                        const GuardedServer& server) {
    using HR = httplib::Server::HandlerResponse;
    auto it = kAllowed.find(req.path);
    if (it == kAllowed.end()) {
        send_refusal(res, {404, "no such endpoint: " + req.path, {}});
        return HR::Handled;
    }
    const bool preflight = req.method == "OPTIONS" && req.has_header("Origin");
    if (!preflight && it->second.find(req.method) == std::string::npos) {
        send_refusal(
            res,
            {405, req.method + " is not allowed on " + req.path + " (allowed: " + it->second + ")", {{"Allow", it->second}}});
        return HR::Handled;
    }
    if (auto refusal = preflight ? guard.check_caller(req) : guard.check(req)) {
        send_refusal(res, *refusal);
        return HR::Handled;
    }
    if (preflight) {
        send_preflight(req, res, it->second);
        return HR::Handled;
    }
    if (declares_more_than(req, server.limits().body_bytes)) {
        send_refusal(res, {413, server.trip_message(RequestTrip::BodyBytes), {}});
        return HR::Handled;
    }
    if (req.has_header("Origin")) {  // allowed: the page may read the answer
        res.set_header("Access-Control-Allow-Origin", req.get_header_value("Origin"));
        res.set_header("Vary", "Origin");
    }
    return HR::Unhandled;
}

void augment_stream(httplib::Response& res, Service& svc, Scheduler& scheduler, std::shared_ptr<Job> job,
                    std::shared_ptr<Channel> ch, std::shared_ptr<PeerWatch> peer) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream; charset=utf-8",
        [&scheduler, job, ch, peer](size_t, httplib::DataSink& sink) {
            std::unique_lock<std::mutex> lock(ch->mutex);
            ch->cv.wait_for(lock, kPoll, [&] { return !ch->events.empty() || ch->outcome.has_value(); });
            std::deque<std::string> events;
            events.swap(ch->events);
            const bool done = ch->outcome.has_value() && ch->events.empty();
            lock.unlock();
            for (const auto& e : events) {
                if (!sink.write(e.data(), e.size())) {
                    scheduler.cancel(job->id());
                    return false;
                }
            }
            if (done) {
                sink.done();
                return true;
            }
            if (peer->closed()) {
                scheduler.cancel(job->id());
                return false;
            }
            return true;
        },
        [&scheduler, job](bool success) {
            if (!success) scheduler.cancel(job->id());
        });
    (void)svc;
}

// The recipe's results as a plain request's outcome: usage counts the request's texts as the
// served model reads them and the candidates' ids, as for /augment without a recipe.
RequestOutcome recipe_outcome(const RecipeOutcome& r, const Model& model) {
    RequestOutcome o;
    o.results = r.results;
    o.options = r.options;
    o.total_s = r.total_s;
    for (const auto& result : r.results) {
        o.input_tokens += static_cast<int64_t>(model.tokenizer().encode(r.options.task_prefix + result.input).size());
        for (const auto& c : result.candidates) o.output_tokens += static_cast<int64_t>(c.ids.size());
        if (!result.candidates.empty()) o.first_candidate_s = r.total_s;
    }
    return o;
}

// /augment with "recipe": run on this thread (its steps go through the replica's scheduler), then
// answered at once; a streamed one gets every candidate as an event once the recipe's candidates
// are judged, then "done" (an error before that is a plain error answer, nothing being sent yet).
void augment_recipe(const httplib::Request& req, httplib::Response& res, Service& svc, Replica& replica, AugmentRequest a) {
    RequestRecipe recipe;
    try {
        recipe = svc.recipes().resolve(a.recipe);
    } catch (const Error& e) {
        return send_error(res, 400, e.what());
    }
    const std::shared_ptr<void> running = svc.begin_recipe();
    if (!running) return send_busy(res, "the server is shutting down");
    std::unique_ptr<PeerWatch> peer;  // found once the answer takes longer than one poll
    const auto gone = [&] {
        if (!peer) peer = std::make_unique<PeerWatch>(req.remote_addr, req.remote_port, req.local_port);
        return peer->closed();
    };
    RecipeOutcome r;
    try {
        r = run_recipe_request(svc, replica, *recipe.recipe, a.request, gone);
    } catch (const Error& e) {
        svc.record_recipe(recipe, {}, {}, 0, false);
        return send_error(res, status_of(JobError{e.code(), e.what()}), e.what());
    }
    svc.record_recipe(recipe, r.results, r.options, r.total_s, true);
    const RequestOutcome o = recipe_outcome(r, *replica.model);
    const nlohmann::json answer = outcome_json(o, svc.model_name(), replica.index, a.keep_dropped);
    if (!a.stream) return send_json(res, 200, answer);
    std::string events;
    for (size_t i = 0; i < o.results.size(); ++i)
        for (const Candidate& c : o.results[i].candidates) events += sse("candidate", candidate_json(i, o.results[i].input, c));
    events += sse("done", answer);
    res.set_header("Cache-Control", "no-cache");
    res.status = 200;
    res.set_content(events, "text/event-stream; charset=utf-8");
}

void augment(const httplib::Request& req, httplib::Response& res, Service& svc) {
    if (svc.draining()) return send_busy(res, "the server is shutting down");
    Replica* replica = svc.pick();
    if (!replica) return send_busy(res, "the model is still loading");
    AugmentRequest a;
    try {
        a = parse_augment(req.body);
    } catch (const Error& e) {
        return send_error(res, 400, e.what());
    }
    if (!a.recipe.is_null()) return augment_recipe(req, res, svc, *replica, std::move(a));
    auto ch = std::make_shared<Channel>();
    const std::vector<std::string> texts = a.request.texts;
    const bool stream = a.stream, keep_dropped = a.keep_dropped;
    const std::string model = svc.model_name();
    const int index = replica->index;
    RequestEvents events;
    if (stream) {
        events.on_candidate = [ch, texts](size_t i, const Candidate& c) {
            std::lock_guard<std::mutex> lock(ch->mutex);
            ch->events.push_back(sse("candidate", candidate_json(i, texts[i], c)));
            ch->cv.notify_all();
        };
    }
    events.on_done = [ch, &svc, replica, stream, keep_dropped, model, index](const RequestOutcome& o) {
        svc.record(*replica, o);
        std::lock_guard<std::mutex> lock(ch->mutex);
        if (stream) {
            ch->events.push_back(o.error ? sse("error", {{"error", o.error->message}, {"status", status_of(*o.error)}})
                                         : sse("done", outcome_json(o, model, index, keep_dropped)));
        }
        ch->outcome = o;
        ch->cv.notify_all();
    };
    std::shared_ptr<Job> job;
    try {
        job = svc.submit(*replica, std::move(a.request), std::move(events));  // waits while an adapter swap runs
    } catch (const Error& e) {
        return send_error(res, e.code() == ErrorCode::OutOfMemory ? 413 : 400, e.what());
    }
    if (!job) return send_busy(res, svc.draining() ? "the server is shutting down" : "the queue is full");
    if (stream) {
        auto peer = std::make_shared<PeerWatch>(req.remote_addr, req.remote_port, req.local_port);
        return augment_stream(res, svc, *replica->scheduler, job, ch, peer);
    }
    std::unique_lock<std::mutex> lock(ch->mutex);
    bool cancelled = false;
    std::unique_ptr<PeerWatch> peer;  // found once the answer takes longer than one poll
    while (!ch->cv.wait_for(lock, kPoll, [&] { return ch->outcome.has_value(); })) {
        if (!peer) peer = std::make_unique<PeerWatch>(req.remote_addr, req.remote_port, req.local_port);
        if (!cancelled && peer->closed()) {
            cancelled = true;  // its rows leave the batch at the next step
            replica->scheduler->cancel(job->id());
        }
    }
    const RequestOutcome& o = *ch->outcome;
    if (o.error) return send_error(res, status_of(*o.error), o.error->message);
    send_json(res, 200, outcome_json(o, model, index, keep_dropped));
}

void settings(const httplib::Request& req, httplib::Response& res, Service& svc) {
    if (req.method == "PUT") {
        try {
            svc.defaults()->set(apply_settings_update(svc.defaults()->get(), req.body));
        } catch (const Error& e) {
            return send_error(res, 400, e.what());
        }
    }
    send_json(res, 200, nlohmann::json::parse(generation_options_to_json(svc.defaults()->get())));
}

}  // namespace

bool constant_time_equal(const std::string& a, const std::string& b) {
    const size_t n = std::max(a.size(), b.size());
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (size_t i = 0; i < n; ++i) {
        const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
        const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
        diff |= static_cast<unsigned char>(x ^ y);
    }
    return diff == 0;
}

void install_routes(GuardedServer& server, Service& svc, const RequestGuard& guard) {
    server.set_payload_max_length(server.limits().body_bytes);
    server.set_pre_routing_handler(
        [&guard, &server](const httplib::Request& req, httplib::Response& res) { return screen(req, res, guard, server); });
    server.set_post_routing_handler([&svc](const httplib::Request& req, httplib::Response& res) {
        const std::string endpoint = kAllowed.count(req.path) ? req.path : "other";
        svc.metrics().add("t5studio_requests_total", {{"endpoint", endpoint}, {"code", std::to_string(res.status)}});
    });
    // Nothing a handler throws ends the server or reaches the client as a bare 500: an Error keeps
    // its status (400 for bad input, 413 for memory), anything else is a 500 naming it.
    server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr caught) {
        const CaughtError e = describe_exception(caught);
        send_error(res, e.code == ErrorCode::InvalidArgument ? 400 : e.code == ErrorCode::OutOfMemory ? 413 : 500, e.message);
    });
    // httplib's own refusals (a malformed request line, a Content-Length over the limit) and the
    // server's limits (a request cut short: 408, 413, 431) as one JSON line.
    server.set_error_handler([&server](const httplib::Request&, httplib::Response& res) {
        const RequestTrip trip = GuardedServer::current_trip();
        if (trip != RequestTrip::None) {
            res.set_header("Connection", "close");
            return send_error(res, server.trip_status(trip), server.trip_message(trip));
        }
        if (res.body.empty())
            send_error(res, res.status, res.status == 413 ? server.trip_message(RequestTrip::BodyBytes) : "request error");
    });
    server.Post("/augment", [&svc](const httplib::Request& req, httplib::Response& res) { augment(req, res, svc); });
    server.Get("/v1/settings", [&svc](const httplib::Request& req, httplib::Response& res) { settings(req, res, svc); });
    server.Put("/v1/settings", [&svc](const httplib::Request& req, httplib::Response& res) { settings(req, res, svc); });
    server.Get("/health", [&svc](const httplib::Request&, httplib::Response& res) { send_json(res, 200, svc.health()); });
    server.Get("/ready", [&svc](const httplib::Request&, httplib::Response& res) {
        if (svc.ready() && !svc.draining()) return send_json(res, 200, {{"ready", true}});
        res.set_header("Retry-After", "1");
        send_json(res, 503, {{"ready", false}, {"status", svc.draining() ? "draining" : "loading"}});
    });
    server.Get("/metrics", [&svc](const httplib::Request&, httplib::Response& res) {
        res.status = 200;
        res.set_content(svc.render_metrics(), "text/plain; version=0.0.4; charset=utf-8");
    });
    install_labelstudio_routes(server, svc);
}

}  // namespace t5s::serve
