#include "line_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>

namespace t5s::ui {

void RingSeries::push(double x, double y) {
    if (data_.size() < capacity_) {
        data_.emplace_back(x, y);
    } else {
        data_[offset_] = {x, y};
        offset_ = (offset_ + 1) % capacity_;
    }
}

std::string format_value(double v, Unit unit) {
    char buf[64];
    switch (unit) {
        case Unit::Bytes: {
            const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
            int u = 0;
            while (std::fabs(v) >= 1024.0 && u < 4) v /= 1024.0, ++u;
            std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
            break;
        }
        case Unit::PerSecond: std::snprintf(buf, sizeof buf, "%.1f /s", v); break;
        case Unit::Count: std::snprintf(buf, sizeof buf, "%.0f", v); break;
        case Unit::Plain: std::snprintf(buf, sizeof buf, "%.3g", v); break;
    }
    return buf;
}

void draw_sparkline(const char* id, const std::vector<double>& ys, float width, float height, unsigned color) {
    ImGui::PushID(id);
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("sparkline", ImVec2(width, height));
    if (ys.size() >= 2) {
        const auto [lo, hi] = std::minmax_element(ys.begin(), ys.end());
        const double span = std::max(*hi - *lo, 1e-9);
        const size_t n = ys.size(), stride = std::max<size_t>(1, n / size_t(std::max(1.0f, width)));
        std::vector<ImVec2> pts;
        for (size_t i = 0; i < n; i += stride) {
            const size_t k = std::min(i, n - 1);
            pts.emplace_back(p0.x + width * float(k) / float(n - 1), p0.y + 1.0f + (height - 2.0f) * float((*hi - ys[k]) / span));
        }
        if (pts.back().x < p0.x + width - 0.5f)
            pts.emplace_back(p0.x + width, p0.y + 1.0f + (height - 2.0f) * float((*hi - ys.back()) / span));
        ImGui::GetWindowDrawList()->AddPolyline(pts.data(), int(pts.size()), color, 0, 1.5f);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%zu steps: %.3f at the first, %.3f lowest, %.3f at the last", n, ys.front(), *lo, ys.back());
    }
    ImGui::PopID();
}

namespace {

// The plot area on screen and the data window it shows.
struct ChartFrame {
    ImVec2 a, b;  // plot area corners (top-left, bottom-right)
    double x_min, x_max, y_max;
    ImVec2 to_screen(double x, double y) const {
        const float fx = float((x - x_min) / (x_max - x_min));
        const float fy = float(y / y_max);
        return ImVec2(a.x + fx * (b.x - a.x), b.y - fy * (b.y - a.y));
    }
};

double chart_y_max(const std::vector<ChartLine>& lines, Unit unit, double x_min) {
    double y_max = 0.0;
    for (const auto& l : lines)
        for (size_t i = 0; i < l.series->size(); ++i)
            if (l.series->x(i) >= x_min) y_max = std::max(y_max, l.series->y(i));
    if (unit == Unit::Count) return std::ceil(std::max(y_max, 4.0) / 4.0) * 4.0;  // integer ticks
    return (y_max <= 0.0 ? 1.0 : y_max) * 1.1;
}

// 4 horizontal grid lines with value labels at the left; x ticks every window/4.
void draw_axes(ImDrawList* dl, const ChartFrame& f, float label_x, Unit unit, XAxis x_axis) {
    for (int g = 0; g <= 4; ++g) {
        const ImVec2 s = f.to_screen(f.x_min, f.y_max * g / 4.0);
        dl->AddLine(ImVec2(f.a.x, s.y), ImVec2(f.b.x, s.y), IM_COL32(60, 60, 70, 255));
        const std::string label = format_value(f.y_max * g / 4.0, unit);
        dl->AddText(ImVec2(label_x, s.y - ImGui::GetTextLineHeight() * 0.5f), IM_COL32(170, 170, 180, 255), label.c_str());
    }
    for (int g = 0; g <= 4; ++g) {
        const double x = f.x_min + (f.x_max - f.x_min) * g / 4.0;
        const ImVec2 s = f.to_screen(x, 0);
        char buf[32];
        if (x_axis == XAxis::SecondsAgo) std::snprintf(buf, sizeof buf, "-%.0fs", f.x_max - x);
        else std::snprintf(buf, sizeof buf, "%.0f", std::max(0.0, x));
        dl->AddText(ImVec2(std::min(s.x, f.b.x - ImGui::CalcTextSize(buf).x), f.b.y + 1.0f), IM_COL32(170, 170, 180, 255), buf);
    }
}

// The lines, decimated to about one point per pixel column; dots where a series is short.
void draw_series(ImDrawList* dl, const ChartFrame& f, const std::vector<ChartLine>& lines) {
    dl->PushClipRect(f.a, f.b, true);
    const float px = std::max(1.0f, f.b.x - f.a.x);
    for (const auto& l : lines) {
        const RingSeries& s = *l.series;
        float last_x = -1e9f;
        std::vector<ImVec2> pts;
        for (size_t i = 0; i < s.size(); ++i) {
            if (s.x(i) < f.x_min) continue;
            const ImVec2 q = f.to_screen(s.x(i), s.y(i));
            if (q.x - last_x < 1.0f && i + 1 < s.size()) continue;
            last_x = q.x;
            pts.push_back(q);
            if (pts.size() > size_t(px) * 2) break;
        }
        if (pts.size() >= 2) dl->AddPolyline(pts.data(), int(pts.size()), l.color, 0, 1.5f);
        if (s.size() <= 64)
            for (const auto& q : pts) dl->AddCircleFilled(q, 2.5f, l.color);
    }
    dl->PopClipRect();
}

void draw_legend(ImDrawList* dl, const ChartFrame& f, const std::vector<ChartLine>& lines, Unit unit) {
    float lx = f.a.x + 6.0f;
    for (const auto& l : lines) {
        const std::string text = std::string(l.label) + " " + format_value(l.series->last_y(), unit);
        dl->AddRectFilled(ImVec2(lx, f.a.y + 6), ImVec2(lx + 8, f.a.y + 14), l.color);
        dl->AddText(ImVec2(lx + 11, f.a.y + 2), IM_COL32(220, 220, 225, 255), text.c_str());
        lx += ImGui::CalcTextSize(text.c_str()).x + 24.0f;
    }
}

// A vertical line under the mouse and a tooltip with each series' value at the nearest sample.
void draw_hover(ImDrawList* dl, const ChartFrame& f, const std::vector<ChartLine>& lines, Unit unit, XAxis x_axis) {
    const float mx = ImGui::GetIO().MousePos.x;
    if (mx < f.a.x || mx > f.b.x) return;
    const double x = f.x_min + (mx - f.a.x) / (f.b.x - f.a.x) * (f.x_max - f.x_min);
    dl->AddLine(ImVec2(mx, f.a.y), ImVec2(mx, f.b.y), IM_COL32(200, 200, 200, 120));
    ImGui::BeginTooltip();
    if (x_axis == XAxis::SecondsAgo) ImGui::Text("t = -%.1f s", f.x_max - x);
    else ImGui::Text("x = %.0f", x);
    for (const auto& l : lines) {
        const RingSeries& s = *l.series;
        if (s.size() == 0) continue;
        double best = 1e18, val = 0;
        for (size_t i = 0; i < s.size(); ++i)
            if (std::fabs(s.x(i) - x) < best) best = std::fabs(s.x(i) - x), val = s.y(i);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(l.color), "%s: %s", l.label, format_value(val, unit).c_str());
    }
    ImGui::EndTooltip();
}

}  // namespace

void draw_line_chart(const char* id, const std::vector<ChartLine>& lines, Unit unit, double now_s, double window_s, float height,
                     XAxis x_axis) {
    ImGui::PushID(id);
    const float width = std::max(ImGui::GetContentRegionAvail().x, 50.0f);
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("chart", ImVec2(width, height));
    const bool hovered = ImGui::IsItemHovered();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float left = ImGui::CalcTextSize("0000.0 MiB").x + 6.0f;
    const float bottom = ImGui::GetTextLineHeight() + 2.0f;
    ChartFrame f{ImVec2(p0.x + left, p0.y + 2.0f), ImVec2(p0.x + width - 4.0f, p0.y + height - bottom), now_s - window_s, now_s,
                 0.0};
    f.y_max = chart_y_max(lines, unit, f.x_min);
    dl->AddRectFilled(f.a, f.b, IM_COL32(25, 27, 32, 255));
    dl->AddRect(f.a, f.b, IM_COL32(90, 90, 100, 255));
    draw_axes(dl, f, p0.x, unit, x_axis);
    draw_series(dl, f, lines);
    draw_legend(dl, f, lines, unit);
    if (hovered) draw_hover(dl, f, lines, unit, x_axis);
    ImGui::PopID();
}

}  // namespace t5s::ui
