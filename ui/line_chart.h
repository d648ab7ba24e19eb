#pragma once
// A small live line chart over ImDrawList: ring-buffered series, axes with units, hover values.
// ImPlot's ScrollingBuffer idea without ImPlot (Debian has none).
#include <string>
#include <vector>

namespace t5s::ui {

// Fixed-capacity (x, y) ring buffer; the oldest point is overwritten.
class RingSeries {
public:
    explicit RingSeries(size_t capacity = 1200) : capacity_(capacity) {}
    void push(double x, double y);
    size_t size() const { return data_.size(); }
    // i = 0 is the oldest point.
    double x(size_t i) const { return data_[(offset_ + i) % data_.size()].first; }
    double y(size_t i) const { return data_[(offset_ + i) % data_.size()].second; }
    double last_y() const { return data_.empty() ? 0.0 : y(size() - 1); }
    void clear() {
        data_.clear();
        offset_ = 0;
    }

private:
    size_t capacity_;
    size_t offset_ = 0;
    std::vector<std::pair<double, double>> data_;
};

struct ChartLine {
    const RingSeries* series = nullptr;
    const char* label = "";
    unsigned color = 0xFFFFFFFF;  // ImU32 (ABGR)
};

enum class Unit { Bytes, PerSecond, Count, Plain };
std::string format_value(double v, Unit unit);  // "1.5 GiB", "123 tok/s", "4", "0.123" (Plain: 3 digits)

// x labels: seconds before now ("-5s", live charts) or the x value itself ("120", e.g. steps).
enum class XAxis { SecondsAgo, Absolute };

// Draws the lines over the last `window_s` seconds ending at `now_s`; y from 0 to the visible max.
// Sparse series (<= 64 points, e.g. eval losses) also get a dot per point, so one point shows.
void draw_line_chart(const char* id, const std::vector<ChartLine>& lines, Unit unit, double now_s, double window_s, float height,
                     XAxis x_axis = XAxis::SecondsAgo);

// A curve without axes in a `size` box (e.g. a table cell), y scaled to the values' own min..max so
// its shape shows; hovering it shows the first, lowest and last values.
void draw_sparkline(const char* id, const std::vector<double>& ys, float width, float height, unsigned color);

}  // namespace t5s::ui
