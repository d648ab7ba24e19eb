#pragma once
// What a recipe's own step models cost in memory before any of them loads: a recipe keeps every
// step model resident beside the loaded one, so the estimate counts each (t5s/recipe.h). Torch-free.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "t5s/recipe.h"

namespace t5s {

// One model the recipe loads beside the command's: a step's model folder, or the command's model
// again with a step's adapter (a separate copy, since the adapter is merged into its weights).
struct RecipeModelLoad {
    std::filesystem::path model;
    std::filesystem::path adapter;  // empty: none
    int64_t bytes = 0;              // estimated from config.json as `models` estimates (0: unknown)
};

// The model `step` loads beside the command's (bytes 0: not estimated): its own folder, else
// `loaded_model_dir` again, with its adapter; none for a step with neither (it runs on the command's
// model). Two steps with the same (model, adapter) share one load.
std::optional<RecipeModelLoad> step_model_load(const RecipeStep& step, const std::filesystem::path& loaded_model_dir);

// Each distinct (model, adapter) the recipe loads, in step order; steps with neither run on the
// command's model and cost nothing here. `loaded_model_dir` is the command's model folder.
std::vector<RecipeModelLoad> recipe_model_loads(const Recipe& recipe, const std::filesystem::path& loaded_model_dir,
                                                int bytes_per_weight);

// Throws Error(OutOfMemory), one line naming the recipe file and each model with its estimate, when
// the loads together exceed `available_bytes` (memory free now on the device they load to; the
// command's model is already in it). Skipped when `available_bytes` <= 0 (unknown).
void check_recipe_memory(const Recipe& recipe, const std::vector<RecipeModelLoad>& loads, int64_t available_bytes,
                         const std::string& device);

}  // namespace t5s

namespace t5s {

class Model;

// The check every front end makes before a recipe's step models load beside `loaded`: each at the
// loaded model's bytes per weight, against the memory free now where `loaded` runs (its CUDA
// device's, else MemAvailable). Engine-side (t5s_engine); throws as check_recipe_memory.
void check_recipe_fits(const Recipe& recipe, const Model& loaded);

}  // namespace t5s
