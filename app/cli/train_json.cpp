// train --json's lines (cli/train_json.h).
#include "cli/train_json.h"

#include "t5s/training_step_json.h"

namespace t5s::cli {

nlohmann::json training_event_json(const TrainingEvent& e) {
    using K = TrainingEvent::Kind;
    switch (e.kind) {
        case K::Step: {
            nlohmann::json line = training_step_json(e);  // the measurements the run's train_log.jsonl holds too
            line["event"] = "step";
            line["total_steps"] = e.total_steps;
            line["eta_s"] = e.eta_s;
            return line;
        }
        case K::Eval: {
            nlohmann::json samples = nlohmann::json::array();
            for (const auto& s : e.samples) samples.push_back({{"source", s.source}, {"prediction", s.prediction}});
            return {{"event", "eval"},
                    {"step", e.step},
                    {"eval_loss", e.eval_loss},
                    {"best_eval_loss", e.best_eval_loss},
                    {"samples", samples}};
        }
        case K::Checkpoint: return {{"event", "checkpoint"}, {"step", e.step}, {"path", e.message}};
        case K::Finished:
            return {{"event", "finished"},
                    {"step", e.step},
                    {"stop_reason", to_string(e.stop_reason)},
                    {"elapsed_s", e.elapsed_s},
                    {"peak_memory_bytes", e.peak_memory_bytes},
                    {"model", e.message}};
        case K::Report:
        case K::Plan:
        case K::Message: break;
    }
    return nullptr;
}

nlohmann::json training_result_json(const TrainingResult& r, const std::string& out_dir,
                                    const std::vector<std::string>& checkpoints) {
    return {{"event", "done"},
            {"out", out_dir},
            {"final_model", r.final_model_dir},
            {"best_checkpoint", r.best_checkpoint},
            {"checkpoints", checkpoints},
            {"steps", r.steps},
            {"final_loss", r.final_loss},
            {"best_eval_loss", r.best_eval_loss},
            {"stop_reason", to_string(r.stop_reason)},
            {"elapsed_s", r.elapsed_s},
            {"peak_memory_bytes", r.peak_memory_bytes}};
}

}  // namespace t5s::cli
