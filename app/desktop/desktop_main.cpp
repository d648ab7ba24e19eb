// The desktop app's entry point (app/main.cpp calls it when there is no subcommand): its flags
// through the CLI's machinery, then the window. Every refusal is one line and exit code 2, before
// any window opens.
#include <iostream>
#include <string>
#include <vector>

#include "app_window.h"
#include "desktop/desktop_flags.h"
#include "t5s/error.h"

int t5s_run_gui(int argc, char** argv) {
    using namespace t5s;
    ui::AppOptions options;
    try {
        options = desktop::desktop_options(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const cli::HelpRequested& h) {
        std::cout << h.what();
        return 0;
    } catch (const cli::UsageError& e) {
        std::cerr << "t5studio: " << e.what() << "\n"
                  << "usage: t5studio [--model DIR] [--history DB] [--config-dir DIR] [--scale S] [--size WxH]\n"
                  << "                [--test-script FILE --screenshot-dir DIR]\n";
        return 2;
    } catch (const Error& e) {  // a model that is not there, a broken adapter_config.json
        std::cerr << "t5studio: " << e.what() << "\n";
        return 2;
    }
    return ui::run_app(options);
}
