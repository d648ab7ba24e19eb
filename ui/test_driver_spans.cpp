// Test-script ops of protected spans: the protect settings through the calls the
// checkboxes and fields make, and checks of what the workspace and the batch panel hold — the
// source's marks and spans, every candidate keeping every span at the offsets it shows, a forced
// mark, the batch's per-row counts. Selecting and Ctrl+P go through real keys in the script.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "test_driver.h"

namespace t5s::ui {

namespace {

std::string slice(const std::string& text, const Span& s) {
    const size_t a = byte_of_code_point(text, s.start), b = byte_of_code_point(text, s.end);
    return text.substr(a, b - a);
}

size_t occurrences(const std::string& text, const std::string& piece) {
    size_t n = 0;
    for (size_t at = text.find(piece); !piece.empty() && at != std::string::npos; at = text.find(piece, at + 1)) ++n;
    return n;
}

// "" when candidate `c` shows every span of the source once, at offsets that hold the span's text.
std::string span_problem(const CandidateList& list, const CandidateVm& c) {
    const auto& source_spans = list.source_spans();
    if (c.spans.size() != source_spans.size())
        return "candidate '" + c.text + "' has " + std::to_string(c.spans.size()) + " spans, the source " +
               std::to_string(source_spans.size());
    for (const Span& s : source_spans) {
        const std::string piece = slice(list.source(), s);
        bool shown = false;
        for (const Span& cs : c.spans) shown = shown || (cs.label == s.label && slice(c.text, cs) == piece);
        if (!shown) return "candidate '" + c.text + "' shows no span '" + piece + "' (" + s.label + ")";
        if (occurrences(c.text, piece) < 1) return "candidate '" + c.text + "' lost '" + piece + "'";
    }
    return "";
}

}  // namespace

bool TestDriver::spans_step(const ScriptStep& st, Controller& ctl) {
    auto& s = ctl.state();
    auto& ws = s.ws;
    std::istringstream in(st.arg);
    if (st.op == "protect") {  // DETECTOR on|off: the checkbox
        std::string name, on;
        in >> name >> on;
        ctl.workspace().set_detector(name, on == "on");
    } else if (st.op == "protect_regex") {  // the regex field
        ws.options.protect_regex = st.arg;
        ctl.workspace().protect_changed();
    } else if (st.op == "mark_label") {
        ws.mark_label = st.arg;
    } else if (st.op == "expect_marks") {  // N [LABEL]
        size_t n = 0;
        std::string label;
        in >> n >> label;
        ctl.workspace().sync_spans();
        if (ws.marked_spans.size() != n)
            return fail("expected " + std::to_string(n) + " marks, have " + std::to_string(ws.marked_spans.size())), true;
        for (const Span& m : ws.marked_spans) {
            if (!label.empty() && m.label != label) return fail("mark '" + slice(ws.source, m) + "' has label " + m.label), true;
            std::cout << "mark: '" << slice(ws.source, m) << "' " << m.label << " [" << m.start << ", " << m.end << ")\n";
        }
    } else if (st.op == "expect_source_spans") {  // N: the source shows at least N protected spans
        ctl.workspace().sync_spans();
        if (!ws.protect_error.empty()) return fail("protect: " + ws.protect_error), true;
        if (ws.preview.size() < size_t(std::atoi(st.arg.c_str())))
            return fail("the source shows " + std::to_string(ws.preview.size()) + " protected spans"), true;
        for (const Span& p : ws.preview) std::cout << "source span: '" << slice(ws.source, p) << "' " << p.label << "\n";
    } else if (st.op == "expect_span_candidates") {  // every shown candidate keeps every span of the source
        if (ws.list.empty() || ws.list.source_spans().empty()) return fail("no candidates with protected spans shown"), true;
        for (const auto& c : ws.list.items())
            if (const std::string problem = span_problem(ws.list, c); !problem.empty()) return fail(problem), true;
        std::cout << "spans: " << ws.list.size() << " candidates keep all " << ws.list.source_spans().size() << " spans\n";
    } else if (st.op == "expect_forced") {  // at least one shown candidate was forced, and still keeps its spans
        int forced = 0;
        for (const auto& c : ws.list.items()) {
            if (c.forced_spans <= 0) continue;
            if (const std::string problem = span_problem(ws.list, c); !problem.empty()) return fail(problem), true;
            ++forced;
            std::cout << "forced " << c.forced_spans << ": " << c.text << "\n";
        }
        if (forced == 0) return fail("no shown candidate needed forcing"), true;
    } else if (st.op == "history_spans") {
        return step_history_spans(ctl), true;
    } else if (!batch_spans_step(st, ctl)) {
        return false;
    }
    next();
    return true;
}

// The History panel's first page, refreshed: selects the newest generation whose record has spans
// (the panel then highlights them); its candidates' spans hold the input spans' texts.
void TestDriver::step_history_spans(Controller& ctl) {
    auto& h = ctl.state().history;
    if (phase_ == 0) {
        deadline_ = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() + 30.0;
        phase_ = 1;
        h.search.clear();
        h.page_starts = {0};
        h.stale = true;
        return;
    }
    if (h.stale || h.job != 0) {
        if (std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() > deadline_)
            fail("the history page did not come");
        return;
    }
    for (size_t i = 0; i < h.page.generations.size(); ++i) {
        const auto& g = h.page.generations[i];
        const RecordSpans spans = spans_of_settings_json(g.settings_json);
        if (spans.input.empty()) continue;
        for (size_t k = 0; k < spans.candidates.size() && k < g.candidates.size(); ++k)
            if (spans.candidates[k].size() != spans.input.size())
                return fail("history: candidate " + std::to_string(k) + " of '" + g.input + "' has " +
                            std::to_string(spans.candidates[k].size()) + " spans, the input " +
                            std::to_string(spans.input.size()));
        h.selected = int(i);
        std::cout << "history: '" << g.input << "' recorded with " << spans.input.size() << " spans\n";
        return next();
    }
    fail("no generation on the history's first page has spans");
}

// The batch panel's labelled rows (N rows with spans from the file) and its per-row counts after a run.
bool TestDriver::batch_spans_step(const ScriptStep& st, Controller& ctl) {
    const auto& b = ctl.state().batch;
    if (st.op == "expect_batch_labels") {
        size_t with_spans = 0;
        for (const auto& r : b.row_spans) with_spans += !r.empty();
        if (with_spans < size_t(std::atoi(st.arg.c_str())))
            return fail("the batch panel has " + std::to_string(with_spans) + " rows with spans from the file"), true;
        std::cout << "batch: " << b.rows.size() << " rows, " << with_spans << " with spans from the file\n";
    } else if (st.op == "expect_batch_spans") {  // every row done, each with at least its file's spans protected
        if (b.phase != BatchPhase::Done || b.results.size() != b.rows.size()) return fail("the batch has not finished"), true;
        for (size_t i = 0; i < b.results.size(); ++i) {
            const size_t given = i < b.row_spans.size() ? b.row_spans[i].size() : 0;
            if (b.results[i].counts.spans < int(given))
                return fail("row " + std::to_string(i + 1) + ": " + std::to_string(b.results[i].counts.spans) +
                            " spans protected, the file gives " + std::to_string(given)),
                       true;
        }
        std::cout << "batch " << batch_spans_line(b) << "\n";
    } else {
        return false;
    }
    return true;
}

}  // namespace t5s::ui
