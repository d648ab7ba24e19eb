#pragma once
// The window: GLFW + OpenGL 3 + Dear ImGui, the EngineThread, the controller and the panels.
// One frame: drain events -> apply -> (fonts) -> NewFrame -> keys -> panels -> render.
#include <memory>
#include <string>
#include <vector>

#include "app_options.h"

struct GLFWwindow;

namespace t5s::ui {

int run_app(const AppOptions& options);

}  // namespace t5s::ui
