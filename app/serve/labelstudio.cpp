// Label Studio's ML-backend protocol on `t5studio serve` (the shapes of label-studio-ml-backend's
// api.py and of label_studio/ml/api_connector.py): GET / and /health, POST /setup, /predict,
// /webhook, /train. Predictions for a labeling config with a <Text> input and a <TextArea> output:
// the candidates are the TextArea's texts. Same process, same scheduler as /augment. With
// --labelstudio-recipe NAME the texts run through that configured recipe (serve/recipe_request.h),
// and each TextArea result also lists its texts' routes under value.routes (one per text, in order).
#include "serve/labelstudio.h"

#include <httplib.h>

#include <chrono>
#include <cmath>
#include <future>

#include "common/json_output.h"
#include "serve/bounded_json.h"
#include "serve/learner.h"
#include "serve/recipe_request.h"
#include "serve/service.h"
#include "t5s/error.h"
#include "t5s/route_json.h"
#include "t5s/source_text.h"

namespace t5s::serve {
namespace {

using nlohmann::json;

void reply(httplib::Response& res, int status, const json& j) {
    res.status = status;
    res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", "application/json");
}

// /predict through the configured recipe: its steps on the replica's scheduler, judged with the
// prefix serve resolved (the recipe's steps set their own).
std::vector<GenerationResult> generate_with_recipe(Service& svc, Replica& replica, const ServeRequest& request) {
    const RequestRecipe recipe = svc.recipes().find(svc.config().labelstudio_recipe);  // checked at start
    const std::shared_ptr<void> running = svc.begin_recipe();
    if (!running) throw Error(ErrorCode::Cancelled, "the server is shutting down");
    try {
        RecipeOutcome r = run_recipe_request(svc, replica, *recipe.recipe, request, nullptr);
        svc.record_recipe(recipe, r.results, r.options, r.total_s, true);
        return std::move(r.results);
    } catch (const Error&) {
        svc.record_recipe(recipe, {}, {}, 0, false);
        throw;
    }
}

// The generation of one /predict: every task's text in one scheduler request (or one recipe run).
std::vector<GenerationResult> generate(Service& svc, const std::vector<std::string>& texts) {
    Replica* replica = svc.pick();
    if (!replica) throw Error(ErrorCode::Cancelled, "the model is still loading");
    ServeRequest request;
    request.texts = texts;
    request.options.task_prefix = svc.task_prefix();  // the one serve resolved, which the learner trains with
    request.named = {"task_prefix"};
    request.timeout_s = 300;
    if (!svc.config().labelstudio_recipe.empty()) return generate_with_recipe(svc, *replica, request);
    auto done = std::make_shared<std::promise<RequestOutcome>>();
    RequestEvents events;
    events.on_done = [done, &svc, replica](const RequestOutcome& o) {
        svc.record(*replica, o);
        done->set_value(o);
    };
    auto future = done->get_future();
    if (!svc.submit(*replica, std::move(request), std::move(events))) throw Error(ErrorCode::Cancelled, "the queue is full");
    const RequestOutcome o = future.get();
    if (o.error) throw Error(o.error->code, o.error->message);
    return o.results;
}

json prediction(const LabelConfig& c, const GenerationResult& r, const std::string& model_version) {
    json texts = json::array(), routes = json::array();
    for (const auto& cand : r.candidates) {
        texts.push_back(cand.text);
        routes.push_back(route_to_json(cand.route));
    }
    json score = nullptr;  // the first candidate's mean token probability
    if (!r.candidates.empty() && r.candidates[0].scores.fluency) score = std::exp(*r.candidates[0].scores.fluency);
    json result = json::array();
    if (!texts.empty())
        result.push_back(
            {{"from_name", c.output_name}, {"to_name", c.input_name}, {"type", "textarea"}, {"value", {{"text", texts}}}});
    // A recipe's candidates keep their routes where Label Studio keeps them: in the stored result.
    const bool routed = !r.candidates.empty() && !r.candidates[0].route.empty();
    if (routed) result[0]["value"]["routes"] = routes;
    return {{"result", result}, {"score", score}, {"model_version", model_version}};
}

void predict(const httplib::Request& req, httplib::Response& res, Service& svc) {
    const json body = parse_bounded_json(req.body, req.path + " body");
    if (!body.is_object() || !body.contains("tasks") || !body["tasks"].is_array())
        return reply(res, 400, {{"error", "/predict: expected {\"tasks\": [...], \"label_config\": \"<View>...\"}"}});
    const LabelConfig c = parse_label_config(body.value("label_config", ""), "label_config");
    std::vector<std::string> texts;
    for (const auto& task : body["tasks"]) {
        const json data = task.is_object() ? task.value("data", json::object()) : json::object();
        const auto it = data.find(c.input_field);
        if (it == data.end() || !it->is_string())
            throw Error(ErrorCode::InvalidArgument, "/predict: a task has no text field data." + c.input_field);
        // The rule and words of /augment, --text and file rows.
        require_source_text(it->get_ref<const std::string&>(),
                            "'tasks[" + std::to_string(texts.size()) + "].data." + c.input_field + "'");
        texts.push_back(it->get<std::string>());
    }
    const auto results = texts.empty() ? std::vector<GenerationResult>{} : generate(svc, texts);
    json out = json::array();
    const std::string mv = svc.model_version();
    for (const auto& r : results) out.push_back(prediction(c, r, mv));
    reply(res, 200, {{"results", out}, {"model_version", mv}});
}

// The TextArea texts of one annotation for one task, as pairs (source = the task's text).
int64_t add_annotation(Learner& learner, const LabelConfig& c, const json& task, const json& annotation) {
    const json data = task.value("data", json::object());
    const auto src = data.find(c.input_field);
    if (src == data.end() || !src->is_string() || !annotation.is_object()) return 0;
    int64_t n = 0;
    const std::string origin =
        "labelstudio:task/" + task.value("id", json(0)).dump() + "/annotation/" + annotation.value("id", json(0)).dump();
    for (const auto& item : annotation.value("result", json::array())) {
        if (!item.is_object() || item.value("from_name", "") != c.output_name) continue;
        const json text = item.value("value", json::object()).value("text", json::array());
        for (size_t i = 0; i < text.size(); ++i)
            if (text[i].is_string() && !text[i].get<std::string>().empty())
                learner.add_pair(src->get<std::string>(), text[i].get<std::string>(), origin + "/" + std::to_string(i)), ++n;
    }
    return n;
}

void webhook(const httplib::Request& req, httplib::Response& res, Service& svc) {
    const json body = parse_bounded_json(req.body, req.path + " body");
    const std::string action = body.is_object() ? body.value("action", "") : "";
    if (action != "ANNOTATION_CREATED" && action != "ANNOTATION_UPDATED" && action != "START_TRAINING")
        return reply(res, 200, {{"status", "Unknown event"}, {"action", action}});
    Learner* learner = svc.learner();
    if (!learner) return reply(res, 200, {{"status", "learning is off (start serve with --learn-dir and --history)"}});
    if (action == "START_TRAINING") return reply(res, 201, {{"job", learner->request_round()}});
    const json project = body.value("project", json::object());
    const LabelConfig c = parse_label_config(project.value("label_config", ""), "project.label_config");
    const int64_t n = add_annotation(*learner, c, body.value("task", json::object()), body.value("annotation", json::object()));
    reply(res, 201, {{"pairs", n}, {"learning", learner->status()}});
}

// Older Label Studio: {"annotations": [task with "annotations": [...]], "label_config": ...}.
void train(const httplib::Request& req, httplib::Response& res, Service& svc) {
    Learner* learner = svc.learner();
    if (!learner) return reply(res, 400, {{"error", "/train: learning is off (start serve with --learn-dir and --history)"}});
    const json body = parse_bounded_json(req.body, req.path + " body");
    int64_t n = 0;
    if (body.is_object() && body.contains("annotations") && body["annotations"].is_array()) {
        const LabelConfig c = parse_label_config(body.value("label_config", ""), "label_config");
        for (const auto& task : body["annotations"])
            for (const auto& a : task.value("annotations", json::array())) n += add_annotation(*learner, c, task, a);
    }
    reply(res, 201, {{"job", learner->request_round()}, {"pairs", n}});
}

template <class F>
auto guarded(Service& svc, F f) {
    return [&svc, f](const httplib::Request& req, httplib::Response& res) {
        try {
            f(req, res, svc);
        } catch (const Error& e) {
            reply(res,
                  e.code() == ErrorCode::Cancelled         ? 503
                  : e.code() == ErrorCode::InvalidArgument ? 400
                                                           : 500,
                  {{"error", e.what()}});
        } catch (const std::exception& e) {
            reply(res, 500, {{"error", e.what()}});
        }
    };
}

}  // namespace

void install_labelstudio_routes(httplib::Server& server, Service& svc) {
    server.Get("/", [&svc](const httplib::Request&, httplib::Response& res) {
        reply(res, 200, {{"status", "UP"}, {"model_class", "T5Studio"}, {"model_version", svc.model_version()}});
    });
    server.Post("/setup", guarded(svc, [](const httplib::Request& req, httplib::Response& res, Service& s) {
                    const json body = parse_bounded_json(req.body, req.path + " body");
                    if (body.is_object() && body.contains("schema") && body["schema"].is_string())
                        parse_label_config(body["schema"].get<std::string>(), "schema");
                    reply(res, 200, {{"model_version", s.model_version()}});
                }));
    server.Post("/predict", guarded(svc, predict));
    server.Post("/webhook", guarded(svc, webhook));
    server.Post("/train", guarded(svc, train));
}

}  // namespace t5s::serve
