#pragma once
// Records `t5studio generate --history PATH` runs into the SQLite history; a no-op without
// --history.
#include <memory>
#include <string>
#include <vector>

#include "t5s/model.h"

namespace t5s::cli {

class GenerateRecorder {
public:
    GenerateRecorder(const std::string& history_path, const Model& model);
    ~GenerateRecorder();
    // labels: each result's input row label as JSON text ("" = none; may be empty = none for all).
    void record(const std::vector<GenerationResult>& results, const GenerationOptions& options, double elapsed_ms,
                const std::vector<std::string>& labels = {});
    // `generate --recipe`: every generation recorded after this names the recipe (recipe_record_json).
    void set_recipe(std::string recipe_json);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace t5s::cli
