// Entry point of the desktop app, called by app/main.cpp when built with the GUI.
#include <iostream>

#include "app_window.h"

int t5s_run_gui(int argc, char** argv) {
    t5s::ui::AppOptions options;
    std::string error;
    if (!t5s::ui::parse_app_options(argc, argv, options, &error)) {
        std::cerr << "t5studio: " << error << "\n"
                  << "usage: t5studio [--model DIR] [--history DB] [--config-dir DIR] [--scale S] [--size WxH]\n"
                  << "                [--test-script FILE --screenshot-dir DIR]\n";
        return 2;
    }
    return t5s::ui::run_app(options);
}
