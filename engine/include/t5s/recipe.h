#pragma once
// Augmentation recipes: chained generation steps read from a small JSON file, such as
// back-translation (source -> pivot language -> back):
//
//   {"steps": [{"name": "pivot", "from": "source", "prefix": "translate English to Chinese: "},
//              {"name": "back", "from": "pivot", "prefix": "translate Chinese to English: ", "num_beams": 4}],
//    "candidates": ["back"]}
//
// A step takes its inputs from the source or from an earlier step (steps run in file order, so a
// recipe has no cycles), and has its own model and adapter (default: the loaded ones), prefix and
// generation settings (the field table's JSON names, t5s/generation_fields.h); `candidates` names
// the steps whose outputs are pooled as candidates. The runner is t5s/recipe_runner.h. Torch-free.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "t5s/generation_options.h"

namespace t5s {

// What a step's `from` names for the request's own texts.
inline constexpr const char* kRecipeSource = "source";
// Bounds on what a recipe file may ask for: its size, its steps, and the texts one source may fan
// out to at any step (the product of the outputs per input along its chain).
inline constexpr int64_t kMaxRecipeBytes = 256 * 1024;
inline constexpr size_t kMaxRecipeSteps = 16;
inline constexpr int64_t kMaxRecipeFanOut = 256;

struct RecipeStep {
    std::string name;                              // unique, not "source"
    std::string from = kRecipeSource;              // "source" or an earlier step's name
    std::filesystem::path model;                   // empty: the loaded model; else an existing folder
    std::optional<std::filesystem::path> adapter;  // nullopt: the loaded model's (a model of its own: none)
    std::optional<std::string> prefix;             // nullopt: the request's task prefix
    GenerationOptions settings;                    // the fields of `named`, as the file gives them
    std::vector<std::string> named;                // JSON names of the generation fields the step sets
};

struct Recipe {
    std::string file;                     // where it was read from (messages name it)
    std::vector<RecipeStep> steps;        // in run order
    std::vector<std::string> candidates;  // the steps whose outputs are candidates, each once

    const RecipeStep* step(const std::string& name) const;  // null if none has that name
    bool is_candidate(const std::string& name) const;
    // Outputs one source may reach at step `index`: the product of num_return_sequences along its
    // chain, each step's as `request` resolves it (step_options).
    int64_t fan_out(size_t index, const GenerationOptions& request) const;
};

// The generation settings that judge candidates (filters, ranking, dedup, no_copy): a candidate step
// may not set them, since its candidates are judged against the original source with the request's.
const std::vector<std::string>& recipe_judging_fields();

// Parses and checks a recipe. `file` names it in messages; model and adapter paths are relative to
// `base_dir` (the recipe's folder). Every problem is a t5s::Error of one line naming the file and
// the step or field: invalid JSON, an unknown key or setting (refused, never ignored), a bad value,
// a duplicate or missing name, a `from` that is not the source or an earlier step, a `candidates`
// name that is no step, a model or adapter folder that does not exist, more than kMaxRecipeSteps.
Recipe parse_recipe(const std::string& json_text, const std::string& file, const std::filesystem::path& base_dir);
// Reads `path` (at most kMaxRecipeBytes) and parses it.
Recipe load_recipe(const std::filesystem::path& path);

// The settings a step runs with: the request's, then the step's prefix and named fields. A
// sampling step that names no seed gets one derived from the request's (resolved) seed and its
// index, so that a seeded request is reproducible and the steps do not share one stream.
GenerationOptions step_options(const RecipeStep& step, size_t index, const GenerationOptions& request);

}  // namespace t5s
