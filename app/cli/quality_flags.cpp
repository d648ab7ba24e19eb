#include "cli/quality_flags.h"

#include "t5s/error.h"

namespace t5s::cli {
namespace {

nlohmann::json optional_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

std::unique_ptr<Embedder> embedder_from_flags(const Args& args, const RuntimeOptions& runtime) {
    if (!args.has("embedder")) return nullptr;
    return Embedder::load(args.get("embedder"), runtime);
}

void add_candidate_scores(const Candidate& c, nlohmann::json* j) {
    (*j)["similarity"] = optional_number(c.similarity);
    (*j)["back_score"] = optional_number(c.back_score);
    (*j)["change"] = optional_number(c.change);
    (*j)["fluency"] = optional_number(c.fluency);
}

void add_result_scores(const GenerationResult& r, bool keep_dropped, nlohmann::json* j) {
    (*j)["diversity"] = optional_number(r.diversity);
    if (!keep_dropped) return;
    nlohmann::json dropped = nlohmann::json::array();
    for (const auto& d : r.dropped) {
        nlohmann::json c = {{"text", d.candidate.text}, {"score", d.candidate.score}, {"reason", to_string(d.reason)}};
        add_candidate_scores(d.candidate, &c);
        dropped.push_back(std::move(c));
    }
    (*j)["dropped"] = std::move(dropped);
}

}  // namespace t5s::cli
