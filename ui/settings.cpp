#include "settings.h"

#include <nlohmann/json.hpp>

#include "t5s/history_store.h"
#include "t5s/install_paths.h"
#include "t5s/training_fields.h"
#include "ui_state.h"

namespace t5s::ui {

std::filesystem::path config_dir() { return user_config_dir(); }

double clamp_learning_option(const char* json, double value) {
    const LearningField* f = find_settings_field(learning_fields(), json);
    if (!f || f->ui_min >= f->ui_max) return value;
    return std::clamp(value, static_cast<double>(f->ui_min), static_cast<double>(f->ui_max));
}
std::filesystem::path data_dir() { return user_data_dir(); }

namespace {

// A combo selection stored by name; files written before names held the combo's index, whose
// order `by_index` keeps. Anything else reads as the first choice.
template <class E>
E stored_choice(const nlohmann::json& j, const char* key, std::initializer_list<E> by_index) {
    const auto it = j.find(key);
    if (it == j.end()) return *by_index.begin();
    if (it->is_string()) return try_parse_enum<E>(it->get<std::string>()).value_or(*by_index.begin());
    if (it->is_number_integer()) {
        const int64_t i = it->get<int64_t>();
        if (i >= 0 && i < static_cast<int64_t>(by_index.size())) return *(by_index.begin() + i);
    }
    return *by_index.begin();
}

}  // namespace

std::string settings_to_json(const AppSettings& s) {
    nlohmann::json j;
    j["version"] = 1;
    j["dpi_scale"] = s.dpi_scale;
    j["recent_models"] = s.recent_models;
    j["task_prefix"] = s.task_prefix;
    j["last_model"] = s.last_model;
    j["recent_embedders"] = s.recent_embedders;
    j["last_embedder"] = s.last_embedder;
    j["adapters"] = s.adapters;
    j["device"] = to_string(s.device);
    j["precision"] = to_string(s.precision);
    j["generation"] = nlohmann::json::parse(generation_options_to_json(s.options));
    j["random_seed"] = s.random_seed;
    j["export_path"] = s.export_path;
    j["batch_path"] = s.batch_path;
    j["per_row"] = s.per_row;
    j["pending_downloads"] = s.pending_downloads;
    j["recent_recipes"] = s.recent_recipes;
    j["learn"] = {{"enabled", s.learn_enabled}, {"every", s.learn.every}, {"max_steps", s.learn.max_steps}, {"lr", s.learn.lr}};
    j["imgui_ini"] = s.imgui_ini;
    return j.dump(2);
}

AppSettings settings_from_json(const std::string& text, std::string* warning) {
    AppSettings s;
    try {
        const auto j = nlohmann::json::parse(text);
        s.dpi_scale = std::clamp(j.value("dpi_scale", 1.0f), 0.5f, 3.0f);
        s.recent_models = j.value("recent_models", std::vector<std::string>{});
        s.task_prefix = j.value("task_prefix", std::map<std::string, std::string>{});
        s.last_model = j.value("last_model", std::string());
        s.recent_embedders = j.value("recent_embedders", std::vector<std::string>{});
        s.last_embedder = j.value("last_embedder", std::string());
        s.adapters = j.value("adapters", std::map<std::string, std::vector<std::string>>{});
        s.device = stored_choice(j, "device", {Device::Auto, Device::Cpu, Device::Cuda});
        s.precision = stored_choice(j, "precision", {Precision::Fp32, Precision::Bf16, Precision::Fp16, Precision::Int8});
        if (j.contains("generation")) s.options = generation_options_from_json(j["generation"].dump());
        s.random_seed = j.value("random_seed", true);
        s.export_path = j.value("export_path", std::string());
        s.batch_path = j.value("batch_path", std::string());
        s.per_row = std::clamp(j.value("per_row", 3), 1, 64);
        s.pending_downloads = j.value("pending_downloads", std::vector<std::string>{});
        s.recent_recipes = j.value("recent_recipes", std::vector<std::string>{});
        if (const auto l = j.find("learn"); l != j.end() && l->is_object()) {
            s.learn_enabled = l->value("enabled", false);
            s.learn.every = static_cast<int64_t>(clamp_learning_option("min_new_pairs", l->value("every", s.learn.every)));
            s.learn.max_steps =
                static_cast<int64_t>(clamp_learning_option("max_steps", l->value("max_steps", s.learn.max_steps)));
            s.learn.lr = clamp_learning_option("lr", l->value("lr", s.learn.lr));
        }
        s.imgui_ini = j.value("imgui_ini", std::string());
    } catch (const std::exception& e) {
        if (warning) *warning = std::string("settings ignored (") + e.what() + ")";
        return AppSettings{};
    }
    return s;
}

void capture_settings(const UiState& st, AppSettings& s) {
    s.dpi_scale = st.dpi_scale;
    s.recent_models = st.model.recent;
    s.task_prefix = st.model.task_prefix;
    if (st.model.info) s.task_prefix[st.model.info->dir.string()] = st.ws.task_prefix;
    s.last_model = st.model.info ? st.model.info->dir.string() : st.model.path_input;
    s.recent_embedders = st.model.recent_embedders;
    s.last_embedder = st.model.embedder ? st.model.embedder->dir.string() : st.model.embedder_input;
    s.adapters = st.model.adapters;
    s.device = st.model.device;
    s.precision = st.model.precision;
    s.options = st.ws.options;
    s.random_seed = st.ws.random_seed;
    s.export_path = st.exp.path;
    s.batch_path = st.batch.path;
    s.per_row = st.batch.per_row;
    s.learn_enabled = st.learn.enabled;
    s.learn = st.learn.round;
    s.recent_recipes = st.ws.recipe.recent;
    s.pending_downloads.clear();
    for (const auto& d : st.models.downloads)
        if (d.phase != DownloadPhase::Done) s.pending_downloads.push_back(d.repo + "@" + d.revision);
}

void restore_settings(const AppSettings& s, UiState& st) {
    st.dpi_scale = s.dpi_scale;
    st.model.recent = s.recent_models;
    st.model.task_prefix = s.task_prefix;
    st.model.path_input = s.last_model;
    st.model.recent_embedders = s.recent_embedders;
    st.model.embedder_input = s.last_embedder;
    st.model.adapters = s.adapters;
    st.model.device = s.device;
    st.model.precision = s.precision;
    st.ws.options = s.options;
    st.ws.random_seed = s.random_seed;
    st.exp.path = s.export_path;
    st.batch.path = s.batch_path;
    st.batch.per_row = s.per_row;
    st.learn.enabled = s.learn_enabled;
    st.learn.round = s.learn;
    st.ws.recipe.recent = s.recent_recipes;  // listed in the picker; none is chosen at start (None)
    st.models.downloads.clear();
    for (const std::string& ref : s.pending_downloads) {  // shown as interrupted: Resume continues the .incomplete file
        const auto at = ref.rfind('@');
        DownloadVm d;
        d.repo = ref.substr(0, at);
        d.revision = at == std::string::npos ? "main" : ref.substr(at + 1);
        d.phase = DownloadPhase::Interrupted;
        d.error = "interrupted when the app closed; Resume continues from the partial file";
        if (!d.repo.empty()) st.models.downloads.push_back(std::move(d));
    }
}

}  // namespace t5s::ui
