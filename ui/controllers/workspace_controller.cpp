#include "controllers/workspace_controller.h"

#include "t5s/source_text.h"

namespace t5s::ui {

namespace {

std::string reason_summary_of(const std::vector<DroppedCandidate>& dropped) {
    ReasonCounts counts;
    count_reasons(dropped, &counts);
    return reason_summary(counts);
}

}  // namespace

GenerationOptions WorkspaceController::effective_options() const {
    GenerationOptions o = s.ws.options;
    if (s.ws.random_seed) o.seed = -1;
    if (!o.do_sample && o.num_return_sequences > o.num_beams) o.num_beams = o.num_return_sequences;
    if (!s.model.embedder) {
        o.min_similarity.reset();
        o.max_similarity.reset();
        if (o.rank == RankBy::Similarity) o.rank = RankBy::Auto;
    }
    return o;
}

void WorkspaceController::set_rank(RankBy rank) {
    auto& ws = s.ws;
    ws.options.rank = rank;
    ws.list.sort(display_rank_key(rank, ws.list));
    settings_changed();
}

void WorkspaceController::generate() {
    auto& ws = s.ws;
    if (ws.generating()) return;
    if (is_empty_text(ws.source)) {  // the rule and words of generate --text, serve and file rows
        ws.error = empty_text_message("the source text");
        return;
    }
    if (!s.model.info) {
        ws.error = "no model loaded: open one in the Model panel (Ctrl+O)";
        return;
    }
    sync_spans();
    if (!ws.protect_error.empty()) {
        ws.error = ws.protect_error;
        return;
    }
    check_recipe();
    if (!ws.recipe.error.empty()) {
        ws.error = ws.recipe.error;  // the one line the engine would give, before anything runs
        return;
    }
    ctx.note(ws.source);
    Generate g;
    g.recipe = recipe_source();
    ws.recipe.step = ws.recipe.total = 0;
    g.texts = {ws.source};
    if (!ws.marked_spans.empty()) g.spans = {ws.marked_spans};
    g.options = effective_options();
    g.task_prefix = ws.task_prefix;
    ws.error.clear();
    ws.editing = false;
    ws.step = 0;
    ws.tokens = 0;
    ws.job = submit(std::move(g));
    if (ws.job) s.job_kind[ws.job] = "generating";
}

void WorkspaceController::cancel_generation() {
    if (s.ws.job) ctx.send(Cancel{s.ws.job});
}

void WorkspaceController::settings_changed() {
    if (s.ws.generating() || s.batch.phase == BatchPhase::Running) ctx.send(UpdateSettings{effective_options()});
}

void WorkspaceController::record(const std::optional<DecisionOut>& d) {
    auto& ws = s.ws;
    if (!d) return;
    ws.decided[ws.list.generation_id()] = ws.list.accepted_pairs();
    if (ws.list.generation_id() == 0) return;  // not in the history (no database)
    RecordDecision r{ws.list.generation_id(), d->index, d->kind, d->text};
    if (submit(std::move(r))) ++ws.pending_decisions;
}

void WorkspaceController::accept() {
    if (s.ws.editing) return commit_edit();
    record(s.ws.list.accept(s.ws.list.selected()));
}
void WorkspaceController::reject() { record(s.ws.list.reject(s.ws.list.selected())); }
void WorkspaceController::undo() {
    s.ws.editing = false;
    record(s.ws.list.undo());
}
void WorkspaceController::redo() { record(s.ws.list.redo()); }

void WorkspaceController::begin_edit() {
    auto& ws = s.ws;
    if (ws.list.empty()) return;
    ws.editing = true;
    ws.edit_buffer = ws.list.items()[size_t(ws.list.selected())].final_text();
    ws.focus_edit = true;
}

void WorkspaceController::commit_edit() {
    auto& ws = s.ws;
    if (!ws.editing) return;
    ws.editing = false;
    ctx.note(ws.edit_buffer);
    record(ws.list.edit(ws.list.selected(), ws.edit_buffer));
}

void WorkspaceController::cancel_edit() { s.ws.editing = false; }

void WorkspaceController::accept_and_next() {
    accept();
    auto& ws = s.ws;
    if (!ws.queue.empty() && ws.queue_pos + 1 < int(ws.queue.size())) goto_row(ws.queue_pos + 1);
    else ws.focus_source = true;
}

void WorkspaceController::goto_row(int row) {
    auto& ws = s.ws;
    if (ws.queue.empty() || row < 0 || row >= int(ws.queue.size()) || ws.generating()) return;
    if (ws.editing) commit_edit();
    if (ws.queue_pos >= 0 && !ws.list.empty()) ws.row_lists[ws.queue_pos] = ws.list;
    ws.queue_spans.resize(ws.queue.size());
    if (ws.queue_pos >= 0 && ws.source == ws.queue[size_t(ws.queue_pos)]) {
        sync_spans();
        ws.queue_spans[size_t(ws.queue_pos)] = ws.marked_spans;  // marks made on the row stay with it
    }
    ws.queue_pos = row;
    ws.source = ws.queue[size_t(row)];
    ws.marked_spans = ws.queue_spans[size_t(row)];
    ws.marked_source = ws.source;
    ws.select_begin = ws.select_end = 0;  // a selection of the previous row's text
    if (auto it = ws.row_lists.find(row); it != ws.row_lists.end()) {
        ws.list = it->second;  // as it was left: candidates, decisions, undo stack
        ws.list.sort(display_rank_key(ws.options.rank, ws.list));
        ws.error.clear();
        return;
    }
    ws.list.clear();
    generate();
}

void WorkspaceController::review(const std::vector<std::string>& rows, const std::vector<std::vector<Span>>& spans,
                                 const std::vector<std::string>& labels) {
    auto& ws = s.ws;
    ws.row_lists.clear();  // a new queue
    if (rows.empty()) return;
    ws.queue = rows;
    ws.queue_spans = spans;
    ws.queue_labels = labels;
    ws.queue_pos = -1;
    goto_row(0);
}

void WorkspaceController::apply(const Event& event) {
    auto& ws = s.ws;
    if (auto* e = std::get_if<GenerationStep>(&event)) {
        if (e->job != ws.job) return;
        ws.step = e->step;
        ws.tokens = e->tokens;
    } else if (auto* p = std::get_if<Progress>(&event)) {
        if (p->job != ws.job) return;
        ws.recipe.step = p->done;  // a recipe's step starting: "step k of n"
        ws.recipe.total = p->total;
    } else if (auto* w = std::get_if<FileWritten>(&event)) {
        if (w->job != ws.recipe.save_job) return;
        ws.recipe.save_job = 0;
        ws.recipe.path = ws.recipe.path_input = w->path.string();
        ws.recipe.saved_text = ws.recipe.text;  // what was sent (the editor is read-only while saving)
        remember_recipe(ws.recipe.path);
        ws.recipe.checked.reset();  // relative folders now resolve against the new file's folder
        check_recipe();
        ctx.log(false, "recipe saved: " + ws.recipe.path);
    } else if (auto* d = std::get_if<GenerationDone>(&event)) {
        if (d->job != ws.job) return;
        ws.job = 0;
        ws.timings = d->timings;
        ws.used = d->options;
        if (d->results.empty()) return;
        const auto& first = d->results[0];
        for (const auto& c : first.candidates) {
            ctx.note(c.text);
            for (const auto& leg : c.route) ctx.note(leg.text);  // a recipe's pivot texts show on hover
        }
        for (const auto& c : first.dropped) ctx.note(c.candidate.text);
        ws.list.reset(first.input, d->history_ids.empty() ? 0 : d->history_ids[0], first.candidates, first.diversity,
                      first.dropped);
        ws.list.set_source_spans(first.spans);
        ws.list.sort(display_rank_key(ws.options.rank, ws.list));
        ws.list.select(0);  // the best shown
        if (first.candidates.empty())
            ws.error = first.dropped.empty() ? "no candidates"
                                             : "no candidates: all " + std::to_string(first.dropped.size()) +
                                                   " dropped by the filters (" + reason_summary_of(first.dropped) + ")";
        s.history.stale = true;
    } else if (std::holds_alternative<DecisionRecorded>(event)) {
        if (ws.pending_decisions > 0) --ws.pending_decisions;
        s.history.stale = true;
    }
}

void WorkspaceController::failed(const JobFailed& e) {
    const std::string msg = ctx.log_failure(e);
    auto& ws = s.ws;
    if (e.job == ws.recipe.save_job) {
        ws.recipe.save_job = 0;
        ws.recipe.error = msg;
    } else if (e.job == ws.job) {
        ws.job = 0;
        ws.error = e.code == ErrorCode::Cancelled ? "cancelled" : msg;
    } else if (ws.pending_decisions > 0) {
        --ws.pending_decisions;  // a decision failed: the history says why (logged)
    }
}

void WorkspaceController::engine_died() {
    s.ws.job = 0;
    s.ws.recipe.save_job = 0;
}

}  // namespace t5s::ui
