#include "controllers/monitor_controller.h"

namespace t5s::ui {

void MonitorController::apply(const Event& event) {
    const auto* e = std::get_if<TelemetrySample>(&event);
    if (!e) return;
    auto& m = s.monitor;
    m.rss.push(e->t_s, double(e->rss_bytes));
    m.tokens_per_s.push(e->t_s, e->tokens_per_s);
    m.queue.push(e->t_s, e->queue_length);
    if (e->cuda.available) {
        m.cuda_allocated.push(e->t_s, double(e->cuda.allocated_bytes));
        m.cuda_reserved.push(e->t_s, double(e->cuda.reserved_bytes));
        m.cuda_peak.push(e->t_s, double(e->cuda.peak_bytes));
        m.device_used.push(e->t_s, double(e->cuda.device_used_bytes));
    }
    m.last = *e;
}

}  // namespace t5s::ui
