// serve's configured and inline recipes (serve/serve_recipes.h).
#include "serve/serve_recipes.h"

#include <algorithm>
#include <cctype>

#include "common/args.h"
#include "t5s/error.h"
#include "t5s/history_store.h"

namespace t5s::serve {
namespace {

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

bool is_recipe_name(const std::string& name) {
    return !name.empty() && name.size() <= 128 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
}

// The inline recipe's steps may not point the server at folders: refused before it is parsed.
void refuse_paths(const nlohmann::json& recipe) {
    const auto steps = recipe.find("steps");
    if (steps == recipe.end() || !steps->is_array()) return;  // the parser names what is wrong
    for (size_t i = 0; i < steps->size(); ++i) {
        const nlohmann::json& step = (*steps)[i];
        if (!step.is_object()) continue;
        for (const char* key : {"model", "adapter"})
            if (step.contains(key))
                bad("'recipe.steps[" + std::to_string(i) + "]." + key +
                    "': an inline recipe may not name a model or adapter folder (its steps run on the served model; "
                    "configure such a recipe with serve --recipe NAME=FILE)");
    }
}

// How the history names an inline recipe: the recipe itself when small, its steps' names otherwise.
std::string inline_record(const nlohmann::json& recipe, size_t bytes, const Recipe& parsed) {
    constexpr size_t kRecordedBytes = 4 << 10;  // recorded with every generation of the request
    nlohmann::json record = {{"name", "inline"}};
    if (bytes <= kRecordedBytes) {
        record["recipe"] = recipe;
    } else {
        record["bytes"] = bytes;
        for (const auto& step : parsed.steps) record["steps"].push_back(step.name);
    }
    return record.dump();
}

}  // namespace

ServeRecipes::ServeRecipes(const ServeConfig& config) {
    for (const std::string& spec : config.recipes) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
            throw cli::UsageError("--recipe takes NAME=FILE (got '" + spec + "')");
        add(spec.substr(0, eq), spec.substr(eq + 1));
    }
    if (!config.recipes_dir.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_directory(config.recipes_dir, ec))
            throw Error(ErrorCode::FileNotFound, "--recipes " + config.recipes_dir + ": no such folder");
        std::vector<std::filesystem::path> files;
        for (const auto& entry : std::filesystem::directory_iterator(config.recipes_dir))
            if (entry.path().extension() == ".json") files.push_back(entry.path());
        std::sort(files.begin(), files.end());  // the same order (and the same first duplicate) every start
        for (const auto& f : files) add(f.stem().string(), f.string());
    }
    if (!config.labelstudio_recipe.empty() && !recipes_.count(config.labelstudio_recipe))
        throw cli::UsageError("--labelstudio-recipe " + config.labelstudio_recipe +
                              ": no recipe of that name (give it with --recipe " + config.labelstudio_recipe +
                              "=FILE or --recipes DIR)");
}

void ServeRecipes::add(const std::string& name, const std::string& file) {
    if (!is_recipe_name(name))
        throw cli::UsageError("recipe name '" + name + "' (" + file + "): use letters, digits, '-', '_' and '.' (at most 128)");
    if (recipes_.count(name))
        throw cli::UsageError("two recipes are named '" + name + "' (" + recipes_[name].recipe->file + " and " + file + ")");
    RequestRecipe r{std::make_shared<const Recipe>(load_recipe(file)), name, ""};
    nlohmann::json record = nlohmann::json::parse(recipe_record_json(file));
    record["name"] = name;
    r.record_json = record.dump();
    recipes_[name] = std::move(r);
}

void ServeRecipes::load_models(const Model& loaded, const RuntimeOptions& runtime) {
    models_ = std::make_unique<RecipeStepModels>(runtime);
    for (const auto& [name, r] : recipes_) models_->load_for(*r.recipe, loaded);
}

RequestRecipe ServeRecipes::find(const std::string& name) const {
    const auto it = recipes_.find(name);
    return it == recipes_.end() ? RequestRecipe{} : it->second;
}

std::vector<std::string> ServeRecipes::names() const {
    std::vector<std::string> out;
    for (const auto& [name, recipe] : recipes_) out.push_back(name);
    return out;
}

RequestRecipe ServeRecipes::resolve(const nlohmann::json& value) const {
    if (value.is_string()) {
        const std::string name = value.get<std::string>();
        if (RequestRecipe r = find(name); r.recipe) return r;
        std::string known;
        for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
        bad("'recipe': unknown recipe '" + name.substr(0, 128) + "' (" +
            (known.empty() ? "none is configured: serve --recipe NAME=FILE" : "configured: " + known) + ")");
    }
    if (!value.is_object()) bad("'recipe' must be the name of a configured recipe or a recipe object");
    refuse_paths(value);
    const std::string text = value.dump();
    if (static_cast<int64_t>(text.size()) > kMaxRecipeBytes)
        bad("'recipe' is " + std::to_string(text.size()) + " bytes; at most " + std::to_string(kMaxRecipeBytes) + " bytes");
    // No base folder: with model and adapter refused, the parser resolves no path.
    auto recipe = std::make_shared<const Recipe>(parse_recipe(text, "'recipe' (inline)", std::filesystem::path()));
    return {recipe, "inline", inline_record(value, text.size(), *recipe)};
}

}  // namespace t5s::serve
