// Monitor: process RSS timeline (and CUDA allocator / device lines when the engine reports them),
// tokens/s and queue length. Samples come from the engine's telemetry thread (~4 Hz).
#include <imgui.h>

#include "line_chart.h"
#include "panels.h"

namespace t5s::ui {

void draw_monitor_panel(PanelContext& ctx) {
    auto& s = ctx.ctl.state();
    auto& m = s.monitor;
    place_window(ctx, {0.0f, 0.50f, 0.25f, 0.50f});
    if (!ImGui::Begin(kMonitorPanel)) {
        ImGui::End();
        return;
    }
    const double now = m.last ? m.last->t_s : 0.0;
    ImGui::SetNextItemWidth(120);
    float window = float(m.window_s);
    if (ImGui::SliderFloat("window", &window, 10.0f, 600.0f, "%.0f s")) m.window_s = window;
    const float h = std::max(90.0f, (ImGui::GetContentRegionAvail().y - 3 * ImGui::GetTextLineHeightWithSpacing()) / 3.0f);
    ImGui::TextUnformatted("Memory");
    std::vector<ChartLine> mem = {{&m.rss, "RSS", IM_COL32(90, 170, 255, 255)}};
    const bool cuda = m.last && m.last->cuda.available;
    if (cuda) {
        mem.push_back({&m.cuda_allocated, "CUDA alloc", IM_COL32(120, 220, 120, 255)});
        mem.push_back({&m.cuda_reserved, "reserved", IM_COL32(240, 200, 80, 255)});
        mem.push_back({&m.cuda_peak, "peak", IM_COL32(240, 120, 80, 255)});
        mem.push_back({&m.device_used, "device used", IM_COL32(200, 120, 240, 255)});
    }
    draw_line_chart("mem", mem, Unit::Bytes, now, m.window_s, h);
    if (cuda) ImGui::Text("device total %s", human_bytes(double(m.last->cuda.device_total_bytes)).c_str());
    else ImGui::TextDisabled("CUDA: n/a (CPU)");
    ImGui::TextUnformatted("Throughput");
    draw_line_chart("tok", {{&m.tokens_per_s, "tokens/s", IM_COL32(120, 220, 200, 255)}}, Unit::PerSecond, now, m.window_s, h);
    ImGui::TextUnformatted("Queue");
    draw_line_chart("queue", {{&m.queue, "jobs", IM_COL32(230, 150, 200, 255)}}, Unit::Count, now, m.window_s, h * 0.7f);
    ImGui::End();
}

}  // namespace t5s::ui
