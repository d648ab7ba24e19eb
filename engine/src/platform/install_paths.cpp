#include "t5s/install_paths.h"

#include <cstdlib>
#include <system_error>

namespace t5s {

namespace fs = std::filesystem;

namespace {

fs::path xdg_dir(const char* variable, const char* fallback_under_home) {
    // The XDG spec: a relative value is invalid and must be ignored.
    if (const char* v = std::getenv(variable); v && *v == '/') return fs::path(v) / "t5studio";
    const char* home = std::getenv("HOME");
    return fs::path(home && *home ? home : ".") / fallback_under_home / "t5studio";
}

bool is_dir(const fs::path& p) {
    std::error_code ec;
    return !p.empty() && fs::is_directory(p, ec);
}

}  // namespace

fs::path executable_dir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : exe.parent_path();
}

fs::path installed_lib_dir() {
    const fs::path bin = executable_dir();
    if (bin.empty() || bin.filename() != "bin") return {};
    const fs::path lib = bin.parent_path() / "lib" / "t5studio";
    return is_dir(lib) ? lib : fs::path();
}

fs::path demo_model_dir() {
    std::error_code ec;
    if (const fs::path lib = installed_lib_dir(); !lib.empty()) {
        const fs::path installed = lib.parent_path().parent_path() / "share" / "t5studio" / "demo-model";
        // An installed app never reaches into a source tree, even one that happens to exist here.
        return fs::exists(installed / "config.json", ec) ? installed : fs::path();
    }
#ifdef T5S_SOURCE_DEMO_MODEL_DIR
    const fs::path source = T5S_SOURCE_DEMO_MODEL_DIR;
    if (fs::exists(source / "config.json", ec)) return source;
#endif
    return {};
}

fs::path asset_file(const std::string& name) {
    std::error_code ec;
    if (const fs::path lib = installed_lib_dir(); !lib.empty()) {
        const fs::path installed = lib.parent_path().parent_path() / "share" / "t5studio" / name;
        return fs::exists(installed, ec) ? installed : fs::path();
    }
#ifdef T5S_SOURCE_DEMO_MODEL_DIR
    const fs::path source = fs::path(T5S_SOURCE_DEMO_MODEL_DIR).parent_path() / name;  // assets/NAME
    if (fs::exists(source, ec)) return source;
#endif
    return {};
}

fs::path user_config_dir() { return xdg_dir("XDG_CONFIG_HOME", ".config"); }
fs::path user_data_dir() { return xdg_dir("XDG_DATA_HOME", ".local/share"); }

}  // namespace t5s
