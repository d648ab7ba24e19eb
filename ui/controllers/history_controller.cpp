#include "controllers/history_controller.h"

namespace t5s::ui {

void HistoryController::refresh_history() {
    auto& h = s.history;
    if (h.job) {
        h.stale = true;
        return;
    }
    QueryHistory q;
    q.query.filter.text = h.search;
    q.query.filter.accepted_only = h.accepted_only;
    q.query.after_id = h.page_starts.back();
    q.query.limit = h.page_size;
    h.stale = false;
    h.job = submit(std::move(q));
}

void HistoryController::history_next_page() {
    auto& h = s.history;
    if (!h.page.has_more) return;
    h.page_starts.push_back(h.page.next_after_id);
    refresh_history();
}

void HistoryController::history_prev_page() {
    auto& h = s.history;
    if (h.page_starts.size() <= 1) return;
    h.page_starts.pop_back();
    refresh_history();
}

void HistoryController::history_search_changed() {
    s.history.page_starts = {0};
    s.history.selected = -1;
    ctx.note(s.history.search);
    refresh_history();
}

void HistoryController::send_to_input(int index) {
    auto& h = s.history;
    if (index < 0 || index >= int(h.page.generations.size())) return;
    s.ws.source = h.page.generations[size_t(index)].input;
    s.ws.queue.clear();
    s.ws.queue_pos = -1;
    s.ws.focus_source = true;
}

void HistoryController::delete_history(int index) {
    auto& h = s.history;
    if (index < 0 || index >= int(h.page.generations.size())) return;
    ctx.send(DeleteHistory{{h.page.generations[size_t(index)].id}});  // answered by HistoryDeleted
}

void HistoryController::apply(const Event& event) {
    auto& h = s.history;
    if (auto* e = std::get_if<HistoryLoaded>(&event)) {
        if (e->job != h.job) return;
        h.job = 0;
        h.page = e->page;
        h.total = e->total;
        h.error.clear();
        if (h.selected >= int(e->page.generations.size())) h.selected = -1;
        for (const auto& g : e->page.generations) {
            ctx.note(g.input);
            for (const auto& c : g.candidates) ctx.note(c.final_text);
            for (const auto& d : g.dropped) ctx.note(d.candidate.text);
        }
    } else if (auto* d = std::get_if<HistoryDeleted>(&event)) {
        ctx.log(false, "history: deleted " + std::to_string(d->count));
        h.stale = true;
    }
}

void HistoryController::failed(const JobFailed& e) {
    const std::string msg = ctx.log_failure(e);
    if (e.job == s.history.job) {
        s.history.job = 0;
        s.history.error = msg;
    }
}

void HistoryController::engine_died() { s.history.job = 0; }

}  // namespace t5s::ui
