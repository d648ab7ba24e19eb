// The model lane's recipe and its step models (engine_thread/kept_recipe.h).
#include "engine_thread/kept_recipe.h"

#include <fstream>
#include <system_error>

#include "t5s/error.h"

namespace t5s::detail {

namespace {

std::filesystem::path base_dir_of(const RecipeSource& source) {
    if (!source.base_dir.empty()) return source.base_dir;
    return source.file.has_parent_path() ? source.file.parent_path() : std::filesystem::path(".");
}

std::string name_of(const RecipeSource& source) { return source.file.empty() ? std::string("(untitled)") : source.file.string(); }

// What the kept recipe depends on: its text (or its file's identity on disk) and its folder.
std::string source_key(const RecipeSource& source) {
    std::string key = name_of(source) + '\n' + base_dir_of(source).string() + '\n';
    if (!source.json.empty()) return key + "json\n" + source.json;
    std::error_code ec;
    const auto size = std::filesystem::file_size(source.file, ec);
    const auto written = std::filesystem::last_write_time(source.file, ec);
    return key + "file\n" + std::to_string(ec ? -1 : int64_t(size)) + '\n' +
           std::to_string(ec ? 0 : int64_t(written.time_since_epoch().count()));
}

// The file's text, refused as load_recipe refuses it (missing, too large).
std::string read_bounded(const std::filesystem::path& file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
        throw Error(ErrorCode::FileNotFound, "recipe " + file.string() + ": no such file (or not a file)");
    std::ifstream in(file, std::ios::binary);
    std::string text(size_t(kMaxRecipeBytes) + 1, '\0');
    in.read(text.data(), std::streamsize(text.size()));
    text.resize(size_t(in.gcount()));
    return text;  // over the bound: refused by the caller's size check
}

}  // namespace

Recipe read_recipe_source(const RecipeSource& source) {
    if (source.json.empty() && source.file.empty())
        throw Error(ErrorCode::InvalidArgument, "recipe: neither its text nor its file was given");
    if (source.json.empty() && source.base_dir.empty())
        return load_recipe(source.file);  // at most kMaxRecipeBytes; base: its folder
    const std::string text = source.json.empty() ? read_bounded(source.file) : source.json;
    if (int64_t(text.size()) > kMaxRecipeBytes)
        throw Error(ErrorCode::InvalidArgument, "recipe " + name_of(source) + ": larger than " +
                                                    std::to_string(kMaxRecipeBytes / 1024) + " KiB (a recipe is a few steps)");
    return parse_recipe(text, name_of(source), base_dir_of(source));
}

const Recipe& KeptRecipe::prepare(const RecipeSource& source, const Model& loaded, const RuntimeOptions& runtime,
                                  const ModelFactory& factory) {
    const std::string key = source_key(source);
    if (recipe_ && key == source_key_ && loaded_ == &loaded) return *recipe_;
    clear();
    recipe_ = read_recipe_source(source);
    loaded_ = &loaded;
    try {
        models_.emplace(runtime, factory);
        models_->load_for(*recipe_, loaded);
    } catch (...) {
        clear();
        throw;
    }
    source_key_ = key;
    return *recipe_;
}

const Model& KeptRecipe::model_for(const RecipeStep& step) const {
    const Model* own = models_ ? models_->find(step) : nullptr;
    return own ? *own : *loaded_;
}

void KeptRecipe::clear() {
    models_.reset();
    recipe_.reset();
    loaded_ = nullptr;
    source_key_.clear();
}

}  // namespace t5s::detail
