#pragma once
// Bar charts (histograms, candidates per source) drawn into an RgbImage: bars of one colour on a
// white ground, axes with tick marks, no text (the card's tables carry the numbers).
#include <cstdint>
#include <vector>

#include "t5s/png_image.h"

namespace t5s::report {

inline constexpr Rgb kBarColor{0x4c, 0x72, 0xb0};  // used by nothing else in the chart, so bars can be found
inline constexpr Rgb kAxisColor{0x20, 0x20, 0x20};

struct BarChartLayout {
    int width = 640, height = 360;                     // the picture; wider when bars would be under 3 pixels apart
    int left = 40, right = 16, top = 16, bottom = 32;  // margins around the plot area
};

// Each bar's height in pixels for a plot area `plot_height` high: proportional to its count, the
// largest count filling the area; a non-zero count is at least 1 pixel, a zero count 0.
std::vector<int> bar_heights(const std::vector<int64_t>& counts, int plot_height);

// Equal slots left to right, one per count, bars 1 pixel apart; the x axis under the plot area
// with a tick at every slot edge, the y axis left of it with ticks at 0, 1/4, ... of the largest count.
RgbImage draw_bar_chart(const std::vector<int64_t>& counts, BarChartLayout layout = {});

}  // namespace t5s::report
