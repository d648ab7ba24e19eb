// t5studio's own flags (the desktop app's): read by the CLI's flag machinery (app/common/args.h),
// so they take --name=value, name the nearest flag for an unknown one, resolve --model as the
// subcommands do (an adapter folder opens its base with it) and word range errors as they do.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "desktop/desktop_flags.h"
#include "t5s/error.h"
#include "t5s/settings_fields.h"
#include "test_support.h"

using namespace t5s;
using t5s::desktop::desktop_options;
using Argv = std::vector<std::string>;

namespace {

// The message desktop_options refuses `argv` with ("" when it accepts them).
std::string usage_error(const Argv& argv) {
    try {
        desktop_options(argv);
    } catch (const cli::UsageError& e) {
        return e.what();
    }
    return "";
}

// An adapter folder as PEFT writes it, naming `base` as its base model.
void write_adapter(const std::filesystem::path& dir, const std::string& base) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "adapter_config.json") << R"({"peft_type": "LORA", "base_model_name_or_path": ")" << base << "\"}";
}

}  // namespace

TEST_CASE("desktop flags: none given keeps the defaults", "[ui][desktop_flags]") {
    const ui::AppOptions o = desktop_options({});
    const ui::AppOptions defaults;
    CHECK(o.model.empty());
    CHECK(o.adapter.empty());
    CHECK(o.history_db.empty());
    CHECK(o.width == defaults.width);
    CHECK(o.height == defaults.height);
    CHECK(o.scale == defaults.scale);
}

TEST_CASE("desktop flags: --name value and --name=value both set the options", "[ui][desktop_flags]") {
    test::TempDir dir("desktop_flags");
    const std::string model = (dir / "model").string();
    std::filesystem::create_directories(model);
    const Argv spaced = {"--model", model,     "--history",     "h.db",  "--config-dir",     "cfg",  "--scale", "1.5",
                         "--size",  "800x600", "--test-script", "s.txt", "--screenshot-dir", "shots"};
    Argv joined;
    for (size_t i = 0; i < spaced.size(); i += 2) joined.push_back(spaced[i] + "=" + spaced[i + 1]);
    for (const Argv& argv : {spaced, joined}) {
        const ui::AppOptions o = desktop_options(argv);
        CHECK(o.model == model);
        CHECK(o.adapter.empty());  // a model folder, not an adapter
        CHECK(o.history_db == "h.db");
        CHECK(o.config_dir == "cfg");
        CHECK(o.scale == 1.5f);
        CHECK(o.width == 800);
        CHECK(o.height == 600);
        CHECK(o.test_script == "s.txt");
        CHECK(o.screenshot_dir == "shots");
    }
    CHECK(desktop_options({"--size", "320x240"}).width == 320);                               // the smallest window taken
    CHECK(desktop_options({"--history", "a.db", "--history", "b.db"}).history_db == "b.db");  // the last one counts
}

TEST_CASE("desktop flags: an unknown flag names the nearest one", "[ui][desktop_flags]") {
    CHECK(usage_error({"--scal", "2"}) == "unknown flag --scal; did you mean --scale?");
    CHECK(usage_error({"--screenshots-dir=x"}) == "unknown flag --screenshots-dir; did you mean --screenshot-dir?");
    CHECK(usage_error({"--frobnicate"}) == "unknown flag --frobnicate (t5studio --help lists the flags)");
    CHECK(usage_error({"--history", "h.db", "stray"}) == "unexpected argument 'stray'");
}

TEST_CASE("desktop flags: a flag without its value", "[ui][desktop_flags]") {
    CHECK(usage_error({"--history"}) == "--history needs a value");
    CHECK(usage_error({"--size", "800x600", "--model"}) == "--model needs a value");
    // A value may start with '-', as the subcommands' do: --config-dir takes "--scale" here.
    CHECK(desktop_options({"--config-dir", "--scale"}).config_dir == "--scale");
}

TEST_CASE("desktop flags: --scale in [0.5, 3], worded as every range", "[ui][desktop_flags]") {
    constexpr FieldRange kScales = from_to(0.5, 3);
    for (const std::string bad : {"0.49", "3.01", "0", "-1"}) {
        INFO(bad);
        CHECK(usage_error({"--scale", bad}) == range_message("--scale", kScales, bad));
    }
    CHECK(usage_error({"--scale", "4"}).find("[0.5, 3]") != std::string::npos);
    for (const std::string bad : {"nan", "inf", "abc", ""}) {
        INFO(bad);
        CHECK(usage_error({"--scale=" + bad}).rfind("--scale ", 0) == 0);  // refused, naming the flag
    }
    CHECK(desktop_options({"--scale", "0.5"}).scale == 0.5f);
    CHECK(desktop_options({"--scale", "3"}).scale == 3.0f);
}

TEST_CASE("desktop flags: --size wants WxH of at least 320x240", "[ui][desktop_flags]") {
    for (const std::string bad : {"1600", "1600x", "x1000", "axb", "1600x1000x2", "1600x1000px", "319x240", "320x239", "-5x-5"}) {
        INFO(bad);
        CHECK(usage_error({"--size", bad}) == "--size wants WxH, e.g. 1600x1000");
    }
}

TEST_CASE("desktop flags: --model ADAPTER opens its base with it", "[ui][desktop_flags]") {
    test::TempDir dir("desktop_adapter");
    const std::filesystem::path base = dir / "base";
    std::filesystem::create_directories(base);
    write_adapter(dir / "adapter", base.string());
    const ui::AppOptions o = desktop_options({"--model", (dir / "adapter").string()});
    CHECK(o.model == base.string());
    CHECK(o.adapter == (dir / "adapter").string());

    // A base that is nowhere: refused naming the adapter and its base (the app has no --adapter flag
    // to suggest).
    write_adapter(dir / "lost", "nobody/missing-base");
    try {
        desktop_options({"--model=" + (dir / "lost").string()});
        FAIL("an adapter whose base is missing was accepted");
    } catch (const Error& e) {
        const std::string what = e.what();
        CHECK(what.find((dir / "lost").string() + " is a LoRA adapter (base nobody/missing-base") != std::string::npos);
        CHECK(what.find("t5studio pull nobody/missing-base") != std::string::npos);
        CHECK(what.find("--adapter") == std::string::npos);
    }
}

TEST_CASE("desktop flags: --help lists every flag of the table", "[ui][desktop_flags]") {
    try {
        desktop_options({"--scale", "2", "--help"});
        FAIL("--help did not ask for help");
    } catch (const cli::HelpRequested& h) {
        const std::string help = h.what();
        CHECK(help.find("t5studio [OPTIONS]") != std::string::npos);
        for (const cli::Flag& f : desktop::desktop_spec().flags) {
            INFO(f.name);
            CHECK(help.find("--" + f.name + " " + f.value_name) != std::string::npos);
        }
    }
}
