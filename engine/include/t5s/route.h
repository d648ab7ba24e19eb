#pragma once
// The way a recipe's candidate came (t5s/recipe.h): each step it passed and the text that step
// produced, spans restored. Empty for a candidate of a plain generation. Torch-free; stored in the
// history and exported as JSON [{"step": ..., "text": ...}, ...].
#include <string>
#include <vector>

namespace t5s {

struct RouteLeg {
    std::string step;
    std::string text;
};
using Route = std::vector<RouteLeg>;

// "pivot > back": the steps only, for a table cell or a plot label.
inline std::string route_steps(const Route& route) {
    std::string out;
    for (const auto& leg : route) out += (out.empty() ? "" : " > ") + leg.step;
    return out;
}

}  // namespace t5s
