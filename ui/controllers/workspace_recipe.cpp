// The workspace's recipe: the shipped recipes, a file opened or saved, the editor's text checked as
// it is typed with the parser the engine uses (t5s/recipe.h is torch-free), and the RecipeSource a
// generation sends. The files are a few KiB (a recipe is at most kMaxRecipeBytes): read on the UI
// thread like settings.json; writes go through the engine's io lane.
#include <algorithm>
#include <fstream>
#include <system_error>

#include "controllers/workspace_controller.h"
#include "t5s/error.h"
#include "t5s/recipe.h"

namespace t5s::ui {

namespace {

std::filesystem::path base_dir_of(const std::string& path) {
    const std::filesystem::path p(path);
    return p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
}

// "steps: pivot > back; candidates: back"
void remember(std::vector<std::string>* recent, const std::string& path) {
    constexpr size_t kRecent = 8;
    recent->erase(std::remove(recent->begin(), recent->end(), path), recent->end());
    recent->insert(recent->begin(), path);
    if (recent->size() > kRecent) recent->resize(kRecent);
}

std::string steps_line(const Recipe& r) {
    std::string steps, candidates;
    for (const RecipeStep& st : r.steps) steps += (steps.empty() ? "" : " > ") + st.name;
    for (const std::string& c : r.candidates) candidates += (candidates.empty() ? "" : ", ") + c;
    return "steps: " + steps + "; candidates: " + candidates;
}

}  // namespace

void WorkspaceController::list_recipes(const std::filesystem::path& folder) {
    auto& shipped = s.ws.recipe.shipped;
    shipped.clear();
    std::error_code ec;
    if (folder.empty()) return;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
        if (entry.path().extension() == ".json") shipped.push_back(entry.path().string());
    std::sort(shipped.begin(), shipped.end());
}

void WorkspaceController::choose_recipe(const std::string& path) {
    RecipeVm& r = s.ws.recipe;
    r.path = path;
    r.path_input = path;
    r.text.clear();
    r.saved_text.clear();
    r.checked.reset();
    if (path.empty()) return check_recipe();
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        r.error = "recipe " + path + ": cannot be read (no such file?)";
        r.checked = r.text;
        return;
    }
    std::string text(size_t(kMaxRecipeBytes) + 1, '\0');
    in.read(text.data(), std::streamsize(text.size()));
    text.resize(size_t(in.gcount()));
    r.text = r.saved_text = text;
    ctx.note(r.text);  // its characters -> font atlas
    if (std::find(r.shipped.begin(), r.shipped.end(), path) == r.shipped.end()) remember_recipe(path);
    check_recipe();
}

void WorkspaceController::check_recipe() {
    RecipeVm& r = s.ws.recipe;
    if (r.checked && *r.checked == r.text) return;
    r.checked = r.text;
    r.error.clear();
    r.steps.clear();
    if (!r.active()) return;
    const std::string name = r.path.empty() ? "(untitled)" : r.path;
    if (int64_t(r.text.size()) > kMaxRecipeBytes) {
        r.error = "recipe " + name + ": larger than " + std::to_string(kMaxRecipeBytes / 1024) + " KiB (a recipe is a few steps)";
        return;
    }
    try {
        r.steps = steps_line(parse_recipe(r.text, name, base_dir_of(r.path)));
    } catch (const std::exception& e) {
        r.error = e.what();
    }
}

void WorkspaceController::save_recipe_as(const std::string& path) {
    RecipeVm& r = s.ws.recipe;
    if (path.empty()) {
        r.error = "Save as: type the file's path";
        return;
    }
    r.save_as = path;
    r.save_job = submit(WriteTextFile{path, r.text});
}

void WorkspaceController::remember_recipe(const std::string& path) { remember(&s.ws.recipe.recent, path); }

std::optional<RecipeSource> WorkspaceController::recipe_source() const {
    const RecipeVm& r = s.ws.recipe;
    if (!r.active()) return std::nullopt;
    return RecipeSource{r.text, r.path.empty() ? std::filesystem::path("(untitled)") : std::filesystem::path(r.path),
                        base_dir_of(r.path)};
}

}  // namespace t5s::ui
