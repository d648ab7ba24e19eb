#include "app_window.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#define GLFW_INCLUDE_NONE
#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <imgui_internal.h>

#include "controller.h"
#include "font_manager.h"
#include "panels/panels.h"
#include "settings.h"
#include "t5s/engine_thread.h"
#include "t5s/install_paths.h"
#include "test_driver.h"

namespace t5s::ui {

namespace {

class App {
public:
    explicit App(const AppOptions& o) : opts_(o) {}
    int run();

private:
    bool open_window();  // GLFW + OpenGL 3.3 + ImGui; false: said why
    void start_engine(const std::filesystem::path& history, bool have_settings, const std::string& warning);
    bool load_test_script(const std::filesystem::path& history);  // false: said why
    void close_window();
    void frame();
    void apply_events();
    void handle_keys();
    void draw_menu_bar();
    void update_fonts();
    void on_drop(int count, const char** paths);
    void save_settings();

    AppOptions opts_;
    GLFWwindow* window_ = nullptr;
    std::unique_ptr<EngineThread> engine_;
    std::unique_ptr<Controller> ctl_;
    std::unique_ptr<FontManager> fonts_;
    std::unique_ptr<TestDriver> driver_;
    AppSettings settings_;
    std::filesystem::path config_dir_;
    float applied_scale_ = 0.0f;
    float menu_height_ = 20.0f;
    ImGuiStyle base_style_;
    std::vector<std::string> drops_;
    double last_save_ = 0.0;
    int atlas_rebuilds_ = 0;
    double atlas_ms_max_ = 0.0;
    std::string last_saved_json_;
};

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The Models window's data: the shipped catalogue (read once, like the settings) and the app's
// own models folder (listed beside the Hugging Face cache).
void init_models_window(UiState& st) {
    st.models.models_folder = (data_dir() / "models").string();
    const std::filesystem::path path = asset_file("model_catalogue.json");
    std::ifstream in(path);
    if (!in) {
        st.models.catalogue_error = "model_catalogue.json not found: type a repository above";
        return;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    st.models.catalogue = parse_catalogue(ss.str(), &st.models.catalogue_error);
}

bool App::open_window() {
    glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "glfw error %d: %s\n", code, text); });
    if (!glfwInit()) {
        std::cerr << "t5studio: cannot open a window (no display?). Use a subcommand for headless work.\n";
        return false;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    window_ = glfwCreateWindow(opts_.width, opts_.height, "T5 Studio", nullptr, nullptr);
    if (!window_) {
        std::cerr << "t5studio: cannot create an OpenGL 3.3 window\n";
        glfwTerminate();
        return false;
    }
    glfwMakeContextCurrent(window_);
    glfwSwapInterval(opts_.test_script.empty() ? 1 : 0);
    glfwSetWindowUserPointer(window_, this);
    glfwSetDropCallback(
        window_, [](GLFWwindow* w, int n, const char** p) { static_cast<App*>(glfwGetWindowUserPointer(w))->on_drop(n, p); });

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // layout lives in settings.json (written off the frame loop)
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
    if (!settings_.imgui_ini.empty()) ImGui::LoadIniSettingsFromMemory(settings_.imgui_ini.c_str(), settings_.imgui_ini.size());
    ImGui::StyleColorsDark();
    base_style_ = ImGui::GetStyle();
    ImGui_ImplGlfw_InitForOpenGL(window_, true);
    ImGui_ImplOpenGL3_Init("#version 330");
    return true;
}

void App::start_engine(const std::filesystem::path& history, bool have_settings, const std::string& warning) {
    EngineConfig ec;
    ec.history_db = history;
    engine_ = std::make_unique<EngineThread>(std::move(ec));
    fonts_ = std::make_unique<FontManager>(FontManager::find_cjk_font());
    ctl_ = std::make_unique<Controller>([this](Command c) { return engine_->submit(std::move(c)); },
                                        [this](std::string_view t) { fonts_->note(t); });
    auto& st = ctl_->state();
    if (have_settings) restore_settings(settings_, st);
    init_models_window(st);
    ctl_->workspace().list_recipes(asset_file("recipes"));  // the shipped recipes, for the workspace's picker
    st.learn.root = (data_dir() / "learning").string();     // one versions folder per base model below it
    if (!warning.empty()) ctl_->log(true, warning);
    if (!fonts_->has_cjk_font()) ctl_->log(true, "no CJK font found (install fonts-noto-cjk): CJK text shows as boxes");
    if (opts_.scale > 0) st.dpi_scale = opts_.scale;
    st.exp.path = st.exp.path.empty() ? (std::filesystem::current_path() / "t5studio-export.jsonl").string() : st.exp.path;
    // No --model: the last model used, else the bundled demo model, so the app opens ready to use.
    std::string model = opts_.model;
    if (model.empty() && st.model.recent.empty()) model = demo_model_dir().string();  // "" when absent
    if (model.empty() && !st.model.recent.empty() && opts_.test_script.empty()) model = st.model.recent.front();
    if (!model.empty() && !opts_.adapter.empty() && model == opts_.model) {
        ctl_->model().load_model(model, opts_.adapter);
    } else if (!model.empty()) {
        st.model.path_input = model;
        ctl_->load_model();
    } else {
        ctl_->models().open_models(st.model.recent.empty() ? 1 : 0);  // first run, no demo model: get one
    }
}

bool App::load_test_script(const std::filesystem::path& history) {
    std::ifstream in(opts_.test_script);
    if (!in) {
        std::cerr << "t5studio: cannot read " << opts_.test_script << "\n";
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        driver_ = std::make_unique<TestDriver>(parse_script(ss.str()), opts_.screenshot_dir, history.string());
        driver_->set_fonts_settled([this] { return !fonts_->async_building() && !fonts_->needs_rebuild(); });
    } catch (const std::exception& e) {
        std::cerr << "t5studio: " << e.what() << "\n";
        return false;
    }
    return true;
}

void App::close_window() {
    engine_.reset();  // joins the lanes before the window goes
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window_);
    glfwTerminate();
}

int App::run() {
    // Settings (read once, before the first frame).
    config_dir_ = opts_.config_dir.empty() ? config_dir() : std::filesystem::path(opts_.config_dir);
    std::string warning;
    bool have_settings = false;
    {
        std::ifstream in(config_dir_ / "settings.json");
        if (in) {
            std::stringstream ss;
            ss << in.rdbuf();
            settings_ = settings_from_json(ss.str(), &warning);
            have_settings = warning.empty();
        }
    }
    std::filesystem::path history = opts_.history_db;
    if (history.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(data_dir(), ec);
        history = data_dir() / "history.db";
    }

    if (!open_window()) return 1;
    start_engine(history, have_settings, warning);
    if (!opts_.test_script.empty() && !load_test_script(history)) return 2;
    while (!glfwWindowShouldClose(window_)) {
        frame();
        if (driver_ && driver_->finished()) break;
    }
    int rc = 0;
    if (driver_) {
        driver_->report();
        std::printf("font atlas: %d builds, %zu extra glyphs, slowest swap on the UI thread %.1f ms\n", atlas_rebuilds_,
                    fonts_->glyph_count(), atlas_ms_max_);
        rc = driver_->exit_code();
    }
    save_settings();
    close_window();
    return rc;
}

void App::save_settings() {
    capture_settings(ctl_->state(), settings_);
    size_t n = 0;
    const char* ini = ImGui::SaveIniSettingsToMemory(&n);
    settings_.imgui_ini.assign(ini, n);
    const std::string json = settings_to_json(settings_);
    if (json == last_saved_json_) return;
    last_saved_json_ = json;
    // At exit the engine is going away: write here, after the frame loop.
    std::error_code ec;
    std::filesystem::create_directories(config_dir_, ec);
    const auto path = config_dir_ / "settings.json";
    const auto tmp = path.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary);
        out << json;
        if (!out) return;
    }
    std::filesystem::rename(tmp, path, ec);
}

void App::on_drop(int count, const char** paths) {
    for (int i = 0; i < count; ++i) drops_.emplace_back(paths[i]);
}

void App::apply_events() {
    for (auto& e : engine_->drain_events()) ctl_->apply(e);
    auto& st = ctl_->state();
    if (!engine_->alive() && !st.engine_dead) ctl_->set_engine_dead(true, engine_->death_message());
    // Dropped paths: data files go to the batch panel, anything else is taken as a model folder.
    for (const auto& p : drops_) {
        if (is_rows_file(p)) {
            st.batch.path = p;
            ctl_->load_dataset();
        } else {
            st.model.path_input = p;
            ctl_->load_model();
        }
        ctl_->note_text(p);
    }
    drops_.clear();
}

void App::update_fonts() {
    auto& st = ctl_->state();
    fonts_->set_size(std::round(17.0f * st.dpi_scale));
    if (applied_scale_ != st.dpi_scale) {
        ImGui::GetStyle() = base_style_;
        ImGui::GetStyle().ScaleAllSizes(st.dpi_scale);
        applied_scale_ = st.dpi_scale;
    }
    ImGuiIO& io = ImGui::GetIO();
    if (atlas_rebuilds_ == 0) {
        // The first atlas is needed before the first frame.
        fonts_->build_atlas(io.Fonts);
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
        ++atlas_rebuilds_;
        return;
    }
    // Later atlases are built on a worker; here (between frames) only the swap and the upload.
    if (ImFontAtlas* built = fonts_->take_built_atlas()) {
        const double t0 = now_s();
        ImFontAtlas* old = io.Fonts;
        io.Fonts = built;
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
        IM_DELETE(old);
        ++atlas_rebuilds_;
        atlas_ms_max_ = std::max(atlas_ms_max_, (now_s() - t0) * 1000.0);
    }
    if (fonts_->needs_rebuild()) fonts_->start_async_build();
}

void App::handle_keys() {
    const ImGuiIO& io = ImGui::GetIO();
    auto& st = ctl_->state();
    const bool typing = io.WantTextInput;
    for (const auto& b : ctl_->keymap().bindings()) {
        if (!ImGui::IsKeyPressed(b.chord.key, false)) continue;
        if (io.KeyCtrl != b.chord.ctrl || io.KeyShift != b.chord.shift || io.KeyAlt != b.chord.alt) continue;
        auto action = ctl_->keymap().match(b.chord, typing);
        if (!action) continue;
        // While typing, text-editing chords belong to the text field.
        if (typing && (*action == Action::Undo || *action == Action::Redo)) continue;
        if (st.ws.editing && (*action == Action::Generate || *action == Action::AcceptAndNext)) continue;
        if (*action == Action::RestartEngine) {
            if (st.engine_dead) {
                engine_->restart();
                ctl_->set_engine_dead(false, "");
                if (!st.model.path_input.empty()) ctl_->load_model();
            }
            continue;
        }
        // Leaving a text field so that the annotator keys work on the candidates next.
        if (typing && (*action == Action::Generate || *action == Action::ReviewQueue)) ImGui::ClearActiveID();
        ctl_->perform(*action);
    }
}

void App::draw_menu_bar() {
    auto& st = ctl_->state();
    if (!ImGui::BeginMainMenuBar()) return;
    menu_height_ = ImGui::GetWindowSize().y;
    const auto& keys = ctl_->keymap();
    if (ImGui::BeginMenu("File")) {
        if (ImGui::MenuItem("Open model...", keys.label(Action::OpenModel).c_str())) ctl_->perform(Action::OpenModel);
        if (ImGui::MenuItem("Models...", keys.label(Action::OpenModels).c_str())) ctl_->perform(Action::OpenModels);
        if (ImGui::MenuItem("Load rows...", keys.label(Action::OpenBatch).c_str())) ctl_->perform(Action::OpenBatch);
        if (ImGui::MenuItem("Export...", keys.label(Action::OpenExport).c_str())) ctl_->perform(Action::OpenExport);
        if (ImGui::MenuItem("Train a model...", keys.label(Action::OpenTraining).c_str())) ctl_->perform(Action::OpenTraining);
        ImGui::Separator();
        if (ImGui::MenuItem("Quit")) glfwSetWindowShouldClose(window_, 1);
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        if (ImGui::MenuItem("Reset layout", keys.label(Action::ResetLayout).c_str())) st.reset_layout = true;
        ImGui::SliderFloat("DPI scale", &st.dpi_scale, 0.5f, 3.0f, "%.1f");
        if (ImGui::MenuItem("Keys", "F1", st.show_help)) st.show_help = !st.show_help;
        if (ImGui::MenuItem("Training", nullptr, st.train.open)) {
            if (st.train.open) st.train.open = false;
            else ctl_->open_training();
        }
        if (ImGui::MenuItem("Learning", keys.label(Action::OpenLearning).c_str(), st.learn.open)) {
            if (st.learn.open) st.learn.open = false;
            else ctl_->perform(Action::OpenLearning);
        }
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Engine")) {
        if (ImGui::MenuItem("Restart engine thread", keys.label(Action::RestartEngine).c_str(), false, st.engine_dead)) {
            engine_->restart();
            ctl_->set_engine_dead(false, "");
            if (!st.model.path_input.empty()) ctl_->load_model();
        }
        ImGui::EndMenu();
    }
    if (st.engine_dead) {
        ImGui::TextColored(ImVec4(1, 0.35f, 0.35f, 1), "  engine stopped: %s", st.death_message.c_str());
        if (ImGui::SmallButton("Restart")) {
            engine_->restart();
            ctl_->set_engine_dead(false, "");
            if (!st.model.path_input.empty()) ctl_->load_model();
        }
    } else {
        std::string jobs;
        for (const auto& [id, kind] : st.job_kind) jobs += "  " + kind;
        ImGui::TextDisabled("  %s", jobs.empty() ? "ready" : jobs.c_str());
    }
    if (!st.log.empty()) {
        const auto& last = st.log.back();
        ImGui::SameLine(ImGui::GetWindowWidth() * 0.45f);
        if (last.error) ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", last.text.c_str());
        else ImGui::TextDisabled("%s", last.text.c_str());
        if (ImGui::IsItemHovered()) {
            ImGui::BeginTooltip();
            const size_t from = st.log.size() > 15 ? st.log.size() - 15 : 0;
            for (size_t i = from; i < st.log.size(); ++i) ImGui::TextUnformatted(st.log[i].text.c_str());
            ImGui::EndTooltip();
        }
    }
    ImGui::EndMainMenuBar();
}

void App::frame() {
    const double t0 = now_s();
    glfwPollEvents();
    apply_events();
    update_fonts();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGuiIO& io = ImGui::GetIO();
    if (driver_) driver_->before_new_frame(io, *ctl_);
    ImGui::NewFrame();
    handle_keys();
    draw_menu_bar();
    auto& st = ctl_->state();
    PanelContext ctx{*ctl_, st.reset_layout, io.DisplaySize.x, io.DisplaySize.y, menu_height_};
    if (st.engine_dead) ImGui::BeginDisabled();
    draw_model_panel(ctx);
    draw_workspace_panel(ctx);
    draw_batch_panel(ctx);
    draw_history_panel(ctx);
    draw_export_panel(ctx);
    draw_training_panel(ctx);  // a window over the workspace, opened from View > Training
    draw_learning_panel(ctx);  // View > Learning (Ctrl+L)
    if (st.engine_dead) ImGui::EndDisabled();
    draw_monitor_panel(ctx);
    draw_help_panel(ctx);
    draw_models_panel(ctx);  // File > Models... (Ctrl+M); last, so that it opens above the panels
    st.reset_layout = false;
    ImGui::Render();
    const double t_built = now_s();
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window_, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(0.08f, 0.08f, 0.10f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (driver_) driver_->after_render(fb_w, fb_h, io.DisplayFramebufferScale.x);
    glfwSwapBuffers(window_);
    if (driver_) driver_->record_frame((t_built - t0) * 1000.0, (now_s() - t0) * 1000.0, st);
    // Settings are also saved every 30 s when they changed (tiny JSON; the write is atomic).
    if (t0 - last_save_ > 30.0) {
        last_save_ = t0;
        if (!driver_) {
            capture_settings(st, settings_);
            size_t n = 0;
            const char* ini = ImGui::SaveIniSettingsToMemory(&n);
            settings_.imgui_ini.assign(ini, n);
            const std::string json = settings_to_json(settings_);
            if (json != last_saved_json_) {
                last_saved_json_ = json;
                engine_->submit(WriteTextFile{config_dir_ / "settings.json", json});  // io lane, not this thread
            }
        }
    }
}

}  // namespace

int run_app(const AppOptions& options) {
    App app(options);
    return app.run();
}

}  // namespace t5s::ui
