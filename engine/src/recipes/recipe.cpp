// Reading and checking an augmentation recipe (t5s/recipe.h). Every refusal is one line that
// names the file and the step or key, so a user can fix the file without reading code.
#include "t5s/recipe.h"

#include <algorithm>
#include <set>
#include <system_error>

#include "base/file_io.h"
#include "base/json_text.h"
#include "t5s/error.h"
#include "t5s/generation_fields.h"
#include "t5s/seed.h"

namespace t5s {
namespace {

using json = nlohmann::json;

// The keys of a step that are the recipe's own; every other key must be a generation field.
const std::set<std::string> kStepKeys = {"name", "from", "model", "adapter", "prefix"};
// Per request, not per leg: spans are masked once from the source and kept through every leg.
const std::set<std::string> kRequestOnlyFields = {"protect", "protect_regex"};

[[noreturn]] void refuse(const std::string& where, const std::string& what) {
    throw Error(ErrorCode::InvalidArgument, "recipe " + where + ": " + what);
}

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

std::string string_value(const json& j, const std::string& where, const std::string& key) {
    if (!j.is_string()) refuse(where, in_quotes(key) + " must be a string");
    return j.get<std::string>();
}

// An existing folder named by the step (relative to the recipe's folder).
std::filesystem::path existing_folder(const json& j, const std::string& where, const std::string& key,
                                      const std::filesystem::path& base_dir) {
    const std::string text = string_value(j, where, key);
    if (text.empty()) refuse(where, in_quotes(key) + " is empty (null means the loaded one)");
    std::filesystem::path path(text);
    if (path.is_relative()) path = base_dir / path;
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) refuse(where, in_quotes(key) + " folder " + path.string() + " does not exist");
    return path;
}

// The generation fields a step sets, read through the field table (types and ranges checked).
void read_settings(const json& step, const std::string& where, RecipeStep* out) {
    json fields = json::object();
    for (const auto& [key, value] : step.items()) {
        if (kStepKeys.count(key)) continue;
        if (!find_generation_field(key))
            refuse(where, "unknown setting " + in_quotes(key) +
                              " (a generation setting's JSON name, or name, from, model, adapter, prefix)");
        if (kRequestOnlyFields.count(key))
            refuse(where,
                   in_quotes(key) + " is the request's (spans are masked once from the source and kept through every step)");
        if (key == "task_prefix") refuse(where, "give the step's prefix as \"prefix\"");
        if (value.is_null()) continue;  // null: the request's value
        fields[key] = value;
        out->named.push_back(key);
    }
    try {
        out->settings = generation_options_from_json(fields.dump());
    } catch (const Error& e) {
        refuse(where, e.what());
    }
    const std::string range = field_range_error(out->settings);
    if (!range.empty()) refuse(where, range);
}

RecipeStep read_step(const json& j, size_t index, const std::string& file, const std::filesystem::path& base_dir) {
    std::string where = file + ": steps[" + std::to_string(index) + "]";
    if (!j.is_object()) refuse(where, "a step must be a JSON object");
    RecipeStep step;
    const auto name = j.find("name");
    if (name == j.end()) refuse(where, "a step needs a \"name\"");
    step.name = string_value(*name, where, "name");
    if (step.name.empty() || step.name == kRecipeSource) refuse(where, "a step's name must be non-empty and not \"source\"");
    where = file + ": step " + in_quotes(step.name);
    if (const auto from = j.find("from"); from != j.end() && !from->is_null()) step.from = string_value(*from, where, "from");
    if (const auto m = j.find("model"); m != j.end() && !m->is_null()) step.model = existing_folder(*m, where, "model", base_dir);
    if (const auto a = j.find("adapter"); a != j.end() && !a->is_null())
        step.adapter = existing_folder(*a, where, "adapter", base_dir);
    if (const auto p = j.find("prefix"); p != j.end() && !p->is_null()) step.prefix = string_value(*p, where, "prefix");
    read_settings(j, where, &step);
    return step;
}

// Names unique; each `from` the source or an earlier step (so no cycle can form).
void check_order(const Recipe& r) {
    std::set<std::string> earlier;
    for (const auto& s : r.steps) {
        const std::string where = r.file + ": step " + in_quotes(s.name);
        if (earlier.count(s.name)) refuse(where, "the name is used by an earlier step too");
        if (s.from == s.name) refuse(where, "'from' names the step itself (a cycle)");
        if (s.from != kRecipeSource && !earlier.count(s.from)) {
            const bool later = std::any_of(r.steps.begin(), r.steps.end(), [&](const RecipeStep& o) { return o.name == s.from; });
            refuse(where, "'from' " + in_quotes(s.from) +
                              (later ? " is a later step (steps run in order: a step reads the source or an earlier step)"
                                     : " is neither \"source\" nor an earlier step"));
        }
        earlier.insert(s.name);
    }
}

void check_candidates(const Recipe& r) {
    std::set<std::string> seen;
    for (const auto& name : r.candidates) {
        const std::string where = r.file + ": candidates";
        const RecipeStep* step = r.step(name);
        if (!step) refuse(where, in_quotes(name) + " is no step of the recipe");
        if (!seen.insert(name).second) refuse(where, in_quotes(name) + " is named twice");
        for (const auto& field : step->named) {
            const auto& judging = recipe_judging_fields();
            if (std::find(judging.begin(), judging.end(), field) != judging.end())
                refuse(r.file + ": step " + in_quotes(name),
                       in_quotes(field) +
                           " judges candidates, and a candidate step's are judged against the source "
                           "with the request's settings: set it there");
        }
    }
}

}  // namespace

const RecipeStep* Recipe::step(const std::string& name) const {
    for (const auto& s : steps)
        if (s.name == name) return &s;
    return nullptr;
}

bool Recipe::is_candidate(const std::string& name) const {
    return std::find(candidates.begin(), candidates.end(), name) != candidates.end();
}

int64_t Recipe::fan_out(size_t index, const GenerationOptions& request) const {
    int64_t n = 1;
    for (const RecipeStep* s = &steps.at(index); s; s = s->from == kRecipeSource ? nullptr : step(s->from)) {
        const size_t at = static_cast<size_t>(s - steps.data());
        n *= std::max(1, step_options(*s, at, request).num_return_sequences);
        if (n > kMaxRecipeFanOut) return n;  // past the bound already: no overflow on long chains
    }
    return n;
}

const std::vector<std::string>& recipe_judging_fields() {
    static const std::vector<std::string> names = {
        "no_copy",    "distinct",       "rank",           "min_similarity", "max_similarity",   "min_change",
        "max_change", "min_back_score", "near_duplicate", "model_scores",   "drop_invalid_text"};
    return names;
}

Recipe parse_recipe(const std::string& json_text, const std::string& file, const std::filesystem::path& base_dir) {
    if (static_cast<int64_t>(json_text.size()) > kMaxRecipeBytes)
        refuse(file, "larger than " + std::to_string(kMaxRecipeBytes / 1024) + " KiB (a recipe is a few steps)");
    const json j = parse_json_text(json_text, "recipe " + file);
    if (!j.is_object()) refuse(file, "must be a JSON object with \"steps\" and \"candidates\"");
    for (const auto& [key, value] : j.items())
        if (key != "steps" && key != "candidates" && key != "description")
            refuse(file, "unknown key " + in_quotes(key) + " (steps, candidates, description)");
    Recipe r;
    r.file = file;
    const auto steps = j.find("steps");
    if (steps == j.end() || !steps->is_array() || steps->empty()) refuse(file, "\"steps\" must be a non-empty list of steps");
    if (steps->size() > kMaxRecipeSteps) refuse(file, "more than " + std::to_string(kMaxRecipeSteps) + " steps");
    for (size_t i = 0; i < steps->size(); ++i) r.steps.push_back(read_step((*steps)[i], i, file, base_dir));
    check_order(r);
    const auto candidates = j.find("candidates");
    if (candidates == j.end() || !candidates->is_array() || candidates->empty())
        refuse(file + ": candidates", "must be a non-empty list of step names");
    for (const auto& c : *candidates) r.candidates.push_back(string_value(c, file + ": candidates", "candidates"));
    check_candidates(r);
    return r;
}

Recipe load_recipe(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw Error(ErrorCode::FileNotFound, "recipe " + path.string() + ": no such file (or not a file)");
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && static_cast<int64_t>(size) > kMaxRecipeBytes)
        refuse(path.string(), "larger than " + std::to_string(kMaxRecipeBytes / 1024) + " KiB (a recipe is a few steps)");
    return parse_recipe(read_text(path), path.string(), path.parent_path());
}

GenerationOptions step_options(const RecipeStep& step, size_t index, const GenerationOptions& request) {
    GenerationOptions o = with_named_fields(request, step.settings, step.named);
    if (step.prefix) o.task_prefix = *step.prefix;
    const bool names_seed = std::find(step.named.begin(), step.named.end(), "seed") != step.named.end();
    if (o.do_sample && !names_seed) o.seed = derive_seed(resolve_seed(request.seed), static_cast<int64_t>(index) + 1);
    return o;
}

}  // namespace t5s
