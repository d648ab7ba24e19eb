// check_recipe_fits (t5s/recipe_memory.h): the loaded model says how wide a weight is and where the
// step models will go; the device says what is free there.
#include <algorithm>
#include <cmath>

#include "t5s/device.h"
#include "t5s/model.h"
#include "t5s/process_memory.h"
#include "t5s/recipe_memory.h"

namespace t5s {

void check_recipe_fits(const Recipe& recipe, const Model& loaded) {
    const ModelInfo& info = loaded.info();
    const double width =
        info.parameter_count > 0 ? static_cast<double>(info.weight_bytes) / static_cast<double>(info.parameter_count) : 4.0;
    const int bytes_per_weight = std::clamp(static_cast<int>(std::lround(width)), 1, 4);
    const std::vector<RecipeModelLoad> loads = recipe_model_loads(recipe, info.dir, bytes_per_weight);
    if (loads.empty()) return;
    int64_t available = host_available_bytes();
    if (info.device.rfind("cuda", 0) == 0) {
        const CudaMemory cuda = query_device_memory().cuda;
        available = cuda.available ? cuda.device_total_bytes - cuda.device_used_bytes : 0;
    }
    check_recipe_memory(recipe, loads, available, info.device);
}

}  // namespace t5s
