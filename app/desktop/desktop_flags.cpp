#include "desktop/desktop_flags.h"

#include <cstdio>

#include "t5s/settings_fields.h"

namespace t5s::desktop {
namespace {

using cli::kModel;

constexpr FieldRange kScales = from_to(0.5, 3);
constexpr int kMinWidth = 320, kMinHeight = 240;

cli::CommandSpec make_spec() {
    cli::CommandSpec spec{
        "",
        "open the desktop app",
        {
            {"model", "DIR", "open this model folder at start (a LoRA adapter folder opens its base with it)", kModel},
            {"history", "DB", "the history database (default: history.db in the data folder)"},
            {"config-dir", "DIR", "settings folder (default: $XDG_CONFIG_HOME/t5studio)"},
            {"scale", "S", "interface scale in [0.5, 3] (default: the saved setting)"},
            {"size", "WxH", "window size (default 1600x1000)"},
            {"test-script", "FILE", "run a UI test script (test mode)"},
            {"screenshot-dir", "DIR", "where the test script saves its screenshots"},
        }};
    spec.model_may_be_adapter = true;
    return spec;
}

// --size WxH: both numbers and nothing after them, at least kMinWidth x kMinHeight.
void read_size(const cli::Args& args, ui::AppOptions& o) {
    if (!args.has("size")) return;
    int width = 0, height = 0;
    char after = 0;
    const std::string text = args.get("size");
    if (std::sscanf(text.c_str(), "%dx%d%c", &width, &height, &after) != 2 || width < kMinWidth || height < kMinHeight)
        throw cli::UsageError("--size wants WxH, e.g. 1600x1000");
    o.width = width;
    o.height = height;
}

}  // namespace

const cli::CommandSpec& desktop_spec() {
    static const cli::CommandSpec spec = make_spec();
    return spec;
}

ui::AppOptions desktop_options(const std::vector<std::string>& argv) {
    const cli::Args args(argv, desktop_spec());
    ui::AppOptions o;
    o.model = args.get("model");      // a folder; Args resolved ORG/NAME[@REV] and split an adapter folder
    o.adapter = args.get("adapter");  // from its base
    o.history_db = args.get("history");
    o.config_dir = args.get("config-dir");
    o.test_script = args.get("test-script");
    o.screenshot_dir = args.get("screenshot-dir");
    if (args.has("scale")) {
        const double scale = args.get_double("scale", 0.0);
        if (!settings_in_range(kScales, scale)) throw cli::UsageError(range_message("--scale", kScales, args.get("scale")));
        o.scale = static_cast<float>(scale);
    }
    read_size(args, o);
    return o;
}

}  // namespace t5s::desktop
