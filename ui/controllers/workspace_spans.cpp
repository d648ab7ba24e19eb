// The workspace's protected spans: marks made on a selection of the source (Ctrl+P) or
// brought by a labelled review row, kept in step with edits of the source; the detectors and the
// regex of Generation settings, hot-swapped like the other settings; the preview of what the next
// generation protects, from t5s::protected_spans (the engine's own plan, so what is shown is what
// is sent).
#include "controllers/workspace_controller.h"
#include "t5s/error.h"

namespace t5s::ui {

namespace {

std::string preview_key(const WorkspaceVm& ws) {
    std::string key = ws.source + '\x1f' + ws.options.protect + '\x1f' + ws.options.protect_regex;
    for (const auto& m : ws.marked_spans) key += '\x1f' + std::to_string(m.start) + ':' + std::to_string(m.end) + ':' + m.label;
    return key;
}

}  // namespace

void WorkspaceController::sync_spans() {
    auto& ws = s.ws;
    if (ws.marked_source != ws.source) {
        ws.marked_spans = carry_spans(ws.marked_source, ws.marked_spans, ws.source);
        ws.marked_source = ws.source;
    }
    std::string key = preview_key(ws);
    if (key == ws.preview_key) return;
    ws.preview_key = std::move(key);
    ws.preview.clear();
    ws.protect_error.clear();
    try {
        ws.preview = protected_spans(ws.source, ws.marked_spans, ws.options.protect, ws.options.protect_regex);
    } catch (const std::exception& e) {
        ws.protect_error = e.what();
    }
}

void WorkspaceController::protect_selection() {
    auto& ws = s.ws;
    sync_spans();
    const auto span = selection_span(ws.source, ws.select_begin, ws.select_end, ws.mark_label.empty() ? "ENTITY" : ws.mark_label);
    if (!span) {
        ws.error = "select the words to protect in the source first (then Ctrl+P)";
        return;
    }
    ws.marked_spans = add_span(ws.marked_spans, *span);
    ws.error.clear();
    sync_spans();
}

void WorkspaceController::remove_mark(size_t index) {
    auto& ws = s.ws;
    sync_spans();
    if (index >= ws.marked_spans.size()) return;
    ws.marked_spans.erase(ws.marked_spans.begin() + long(index));
    sync_spans();
}

void WorkspaceController::set_detector(const std::string& detector, bool on) {
    s.ws.options.protect = with_detector(s.ws.options.protect, detector, on);
    protect_changed();
}

// Like every setting, the protection reaches a running batch (its next row batch) through
// UpdateSettings and the next generation through its options; a bad regex is shown, not sent.
void WorkspaceController::protect_changed() {
    sync_spans();
    if (s.ws.protect_error.empty()) settings_changed();
}

}  // namespace t5s::ui
