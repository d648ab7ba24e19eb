#include "t5s/png_image.h"

#include <algorithm>

#include "t5s/atomic_file.h"
#include "t5s/error.h"

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace t5s {

namespace {

constexpr int kMaxSide = 1 << 14;  // far beyond any plot or screen; keeps width * height * 4 in an int

void append_bytes(void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}

}  // namespace

RgbImage::RgbImage(int width, int height, Rgb background)
    : width_(std::max(width, 0)), height_(std::max(height, 0)), pixels_(size_t(width_) * size_t(height_) * 3) {
    fill_rect(0, 0, width_, height_, background);
}

Rgb RgbImage::at(int x, int y) const {
    const size_t i = (size_t(y) * size_t(width_) + size_t(x)) * 3;
    return {pixels_.at(i), pixels_.at(i + 1), pixels_.at(i + 2)};
}

void RgbImage::set(int x, int y, Rgb color) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
    const size_t i = (size_t(y) * size_t(width_) + size_t(x)) * 3;
    pixels_[i] = color.r;
    pixels_[i + 1] = color.g;
    pixels_[i + 2] = color.b;
}

void RgbImage::fill_rect(int x0, int y0, int x1, int y1, Rgb color) {
    x0 = std::clamp(x0, 0, width_), x1 = std::clamp(x1, 0, width_);
    y0 = std::clamp(y0, 0, height_), y1 = std::clamp(y1, 0, height_);
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) set(x, y, color);
}

std::string encode_png(const uint8_t* pixels, int width, int height, int channels) {
    if (width <= 0 || height <= 0 || width > kMaxSide || height > kMaxSide || (channels != 3 && channels != 4))
        throw Error(ErrorCode::InvalidArgument, "PNG: cannot encode a " + std::to_string(width) + "x" + std::to_string(height) +
                                                    " picture with " + std::to_string(channels) + " channels");
    std::string out;
    if (!stbi_write_png_to_func(append_bytes, &out, width, height, channels, pixels, width * channels))
        throw Error(ErrorCode::Internal, "PNG: encoding failed");
    return out;
}

void write_png_file(const std::filesystem::path& path, const RgbImage& image) { write_file_atomic(path, encode_png(image)); }

}  // namespace t5s
