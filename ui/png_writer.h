#pragma once
// Screenshots: read the GL back buffer (or a rectangle of it) and write a PNG.
#include <string>

namespace t5s::ui {

// x, y, w, h in framebuffer pixels with y from the top. Returns false (and a message) on failure.
bool save_framebuffer_png(const std::string& path, int fb_width, int fb_height, int x, int y, int w, int h, std::string* error);

}  // namespace t5s::ui
