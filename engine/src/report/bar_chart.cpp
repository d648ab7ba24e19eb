#include "report/bar_chart.h"

#include <algorithm>
#include <cmath>

namespace t5s::report {

std::vector<int> bar_heights(const std::vector<int64_t>& counts, int plot_height) {
    const int64_t largest = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
    std::vector<int> heights;
    heights.reserve(counts.size());
    for (int64_t c : counts) {
        if (c <= 0 || largest <= 0) {
            heights.push_back(0);
            continue;
        }
        const double h = std::round(static_cast<double>(c) / static_cast<double>(largest) * plot_height);
        heights.push_back(std::max(1, static_cast<int>(h)));
    }
    return heights;
}

RgbImage draw_bar_chart(const std::vector<int64_t>& counts, BarChartLayout layout) {
    const int bars = std::max<int>(1, static_cast<int>(counts.size()));
    layout.width = std::max(layout.width, layout.left + layout.right + 3 * bars);
    RgbImage image(layout.width, layout.height);
    const int plot_w = layout.width - layout.left - layout.right;
    const int plot_h = layout.height - layout.top - layout.bottom;
    const int base_y = layout.top + plot_h;  // first row under the plot area: the x axis
    const std::vector<int> heights = bar_heights(counts, plot_h);
    auto slot_x = [&](int i) { return layout.left + static_cast<int>(static_cast<int64_t>(plot_w) * i / bars); };
    for (size_t i = 0; i < heights.size(); ++i) {
        const int x0 = slot_x(static_cast<int>(i)), x1 = slot_x(static_cast<int>(i) + 1) - 1;  // 1 pixel gap
        image.fill_rect(x0, base_y - heights[i], x1, base_y, kBarColor);
    }
    image.fill_rect(layout.left - 1, base_y, layout.left + plot_w, base_y + 1, kAxisColor);  // x axis
    image.fill_rect(layout.left - 1, layout.top, layout.left, base_y + 1, kAxisColor);       // y axis
    for (int i = 0; i <= bars; ++i) image.fill_rect(slot_x(i), base_y + 1, slot_x(i) + 1, base_y + 6, kAxisColor);
    for (int q = 0; q <= 4; ++q) {
        const int y = base_y - plot_h * q / 4;
        image.fill_rect(layout.left - 6, y, layout.left - 1, y + 1, kAxisColor);
    }
    return image;
}

}  // namespace t5s::report
