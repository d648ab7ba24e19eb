#include "png_writer.h"

#include <algorithm>
#include <vector>

#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>

#include "t5s/atomic_file.h"
#include "t5s/error.h"
#include "t5s/png_image.h"

namespace t5s::ui {

bool save_framebuffer_png(const std::string& path, int fb_width, int fb_height, int x, int y, int w, int h, std::string* error) {
    x = std::clamp(x, 0, fb_width);
    y = std::clamp(y, 0, fb_height);
    w = std::clamp(w, 0, fb_width - x);
    h = std::clamp(h, 0, fb_height - y);
    if (w <= 0 || h <= 0) {
        if (error) *error = "empty screenshot rectangle";
        return false;
    }
    std::vector<unsigned char> pixels(size_t(w) * size_t(h) * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(x, fb_height - y - h, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    // GL rows go bottom-up; PNG rows top-down.
    std::vector<unsigned char> flipped(pixels.size());
    const size_t row = size_t(w) * 4;
    for (int r = 0; r < h; ++r) std::copy_n(pixels.data() + size_t(h - 1 - r) * row, row, flipped.data() + size_t(r) * row);
    for (size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;
    try {
        t5s::write_file_atomic(path, t5s::encode_png(flipped.data(), w, h, 4));
    } catch (const t5s::Error& e) {
        if (error) *error = path + ": cannot write PNG: " + e.what();
        return false;
    }
    return true;
}

}  // namespace t5s::ui
