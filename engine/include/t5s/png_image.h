#pragma once
// An RGB picture in memory and its PNG encoding: the one PNG writer of the project (the app's
// screenshots and the plots of dataset cards and run reports). Torch-free.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace t5s {

struct Rgb {
    uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
};

// Rows top-down, 3 bytes a pixel, no padding.
class RgbImage {
public:
    RgbImage(int width, int height, Rgb background = {255, 255, 255});

    int width() const { return width_; }
    int height() const { return height_; }
    Rgb at(int x, int y) const;
    void set(int x, int y, Rgb color);                          // ignored outside the picture, so shapes may be clipped
    void fill_rect(int x0, int y0, int x1, int y1, Rgb color);  // [x0, x1) x [y0, y1), clipped
    const std::vector<uint8_t>& pixels() const { return pixels_; }

private:
    int width_, height_;
    std::vector<uint8_t> pixels_;
};

// PNG bytes of `pixels` (rows top-down, `channels` 3 = RGB or 4 = RGBA, stride = width * channels).
// Throws t5s::Error(InvalidArgument) for an empty or oversized picture.
std::string encode_png(const uint8_t* pixels, int width, int height, int channels);
inline std::string encode_png(const RgbImage& image) {
    return encode_png(image.pixels().data(), image.width(), image.height(), 3);
}

// Writes the PNG atomically (t5s/atomic_file.h), replacing an existing file.
void write_png_file(const std::filesystem::path& path, const RgbImage& image);

}  // namespace t5s
