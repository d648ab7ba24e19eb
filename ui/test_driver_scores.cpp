// The test driver's quality-score ops (see test_script.h): options and sort set the way the
// workspace's controls set them, and checks that recompute from the candidates' numbers what the
// panels show (order, bar colours, kept / dropped).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "score_view.h"
#include "t5s/history_store.h"
#include "t5s/score_names.h"
#include "test_driver.h"

namespace t5s::ui {

namespace {

double seconds_now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::optional<double> score_named(const CandidateVm& c, const std::string& name) {
    std::optional<double> found;
    for_each_score(c.scores, [&](const char* score, const std::optional<double>& value) {
        if (name == score) found = value;
    });
    return found;
}

// The score a ranking key sorts by (none for None: the generation's order).
std::optional<double> score_ranked_by(const CandidateVm& c, RankBy key) {
    return key == RankBy::None ? std::nullopt : score_named(c, to_string(key));
}

struct Bound {
    const char* field;  // GenerationOptions field
    const char* score;  // the score it bounds
    bool is_min;
};
constexpr Bound kBounds[] = {{"min_similarity", "similarity", true},
                             {"max_similarity", "similarity", false},
                             {"min_change", "change", true},
                             {"max_change", "change", false},
                             {"min_back_score", "back_score", true}};

std::optional<double>& bound_value(GenerationOptions& o, const std::string& field) {
    if (field == "min_similarity") return o.min_similarity;
    if (field == "max_similarity") return o.max_similarity;
    if (field == "min_change") return o.min_change;
    if (field == "max_change") return o.max_change;
    return o.min_back_score;
}

// The bounds of `o` this candidate violates, by field name (the test's own reading of the numbers).
std::vector<std::string> violated(const CandidateVm& c, GenerationOptions o) {
    std::vector<std::string> out;
    for (const Bound& b : kBounds) {
        const auto bound = bound_value(o, b.field);
        const auto v = score_named(c, b.score);
        if (bound && v && (b.is_min ? *v < *bound : *v > *bound)) out.push_back(b.field);
    }
    return out;
}

}  // namespace

bool TestDriver::score_step(const ScriptStep& st, Controller& ctl) {
    auto& s = ctl.state();
    if (st.op == "option") {
        step_option(st, ctl);
    } else if (st.op == "sort") {
        if (const std::optional<RankBy> rank = try_parse_enum<RankBy>(st.arg)) {
            ctl.workspace().set_rank(*rank);
            next();
        } else {
            fail("sort: unknown rank '" + st.arg + "' (expected " + enum_names_text<RankBy>() + ")");
        }
    } else if (st.op == "expect_scores") {
        step_expect_scores(ctl);
    } else if (st.op == "expect_order") {
        step_expect_order(ctl);
    } else if (st.op == "split_threshold") {
        step_split_threshold(st, ctl);
    } else if (st.op == "expect_window") {
        step_expect_window(ctl);
    } else if (st.op == "expect_filtered") {
        step_expect_filtered(ctl);
    } else if (st.op == "run_batch") {
        ctl.start_batch();
        if (s.batch.phase == BatchPhase::Running) next();
        else fail("run_batch: not started: " + s.batch.error);
    } else if (st.op == "expect_batch_counts") {
        step_expect_batch_counts(ctl);
    } else if (st.op == "history_dropped") {
        step_history_dropped(ctl);
    } else {
        return false;
    }
    return true;
}

void TestDriver::step_option(const ScriptStep& st, Controller& ctl) {
    auto& ws = ctl.state().ws;
    try {
        nlohmann::json merged = nlohmann::json::parse(generation_options_to_json(ws.options));
        merged.merge_patch(nlohmann::json::parse(st.arg));
        GenerationOptions o = generation_options_from_json(merged.dump());
        validate_generation_options(o);
        ws.options = o;
    } catch (const std::exception& e) {
        return fail(std::string("option: ") + e.what());
    }
    ctl.settings_changed();
    next();
}

void TestDriver::step_expect_scores(Controller& ctl) {
    const auto& s = ctl.state();
    const auto& items = s.ws.list.items();
    if (items.empty()) return fail("no candidates shown");
    const bool embedder = s.model.embedder.has_value();
    for (const auto& c : items) {
        const std::string who = "candidate '" + c.text + "': ";
        if (!c.scores.back_score || !c.scores.change || !c.scores.fluency)
            return fail(who + "back_score, change or fluency missing");
        if (c.scores.similarity.has_value() != embedder)
            return fail(who +
                        (embedder ? "no similarity with an embedding model loaded" : "a similarity without an embedding model"));
        if (*c.scores.change < 0 || *c.scores.change > 1 || *c.scores.back_score > 0 || *c.scores.fluency > 0)
            return fail(who + "a score out of its range");
        if (c.scores.similarity && std::fabs(*c.scores.similarity) > 1.0 + 1e-6) return fail(who + "similarity outside [-1, 1]");
    }
    if (items.size() >= 2 && !s.ws.list.diversity())
        return fail("no diversity for " + std::to_string(items.size()) + " candidates");
    std::cout << "scores: " << items.size() << " candidates scored" << (embedder ? " (with similarity)" : "") << ", diversity "
              << s.ws.list.diversity().value_or(-1) << "\n";
    next();
}

void TestDriver::step_expect_order(Controller& ctl) {
    const auto& s = ctl.state();
    const auto& items = s.ws.list.items();
    const RankBy key = display_rank_key(s.ws.options.rank, s.ws.list);
    const std::string rank = to_string(s.ws.options.rank);
    std::set<int> indices;
    std::string shown;
    for (size_t p = 0; p < items.size(); ++p) {
        indices.insert(items[p].index);
        const auto v = score_ranked_by(items[p], key);
        shown += " #" + std::to_string(items[p].index) + (v ? "=" + std::to_string(*v) : "");
        if (p == 0) continue;
        const auto prev = score_ranked_by(items[p - 1], key);
        const bool in_order = key == RankBy::None ? items[p - 1].index < items[p].index : (!v || (prev && *prev >= *v));
        if (!in_order) return fail("sort " + rank + ": not in order:" + shown);
    }
    if (indices.size() != items.size() ||
        (!items.empty() && (*indices.begin() != 0 || *indices.rbegin() != int(items.size()) - 1)))
        return fail("the shown candidates are not the generation's candidates:" + shown);
    std::cout << "order (" << rank << "):" << shown << "\n";
    next();
}

void TestDriver::step_split_threshold(const ScriptStep& st, Controller& ctl) {
    auto& ws = ctl.state().ws;
    const Bound* bound = nullptr;
    for (const Bound& b : kBounds)
        if (st.arg == b.field) bound = &b;
    if (!bound) return fail("split_threshold: unknown threshold '" + st.arg + "'");
    std::set<double> values;
    for (const auto& c : ws.list.items())
        if (const auto v = score_named(c, bound->score)) values.insert(*v);
    if (values.size() < 2) return fail("split_threshold: fewer than 2 distinct " + std::string(bound->score) + " values shown");
    auto mid = values.begin();
    std::advance(mid, (values.size() - 1) / 2);
    const double split = (*mid + *std::next(mid)) / 2.0;
    bound_value(ws.options, bound->field) = split;
    ctl.settings_changed();  // as the slider does: hot-swapped, and the bars recoloured this frame
    std::cout << "threshold " << bound->field << " = " << split << "\n";
    next();
}

void TestDriver::step_expect_window(Controller& ctl) {
    const auto& ws = ctl.state().ws;
    const GenerationOptions o = ctl.effective_options();
    int inside = 0, outside = 0;
    for (const auto& c : ws.list.items()) {
        const bool out = !violated(c, o).empty();
        (out ? outside : inside) += 1;
        if (out == outside_reason(c, o).empty())
            return fail("candidate '" + c.text + "': outside mark disagrees with its numbers");
        const auto tone_ok = [&](const ScoreBar& bar, const char* score) {
            bool bar_out = false;
            for (const auto& f : violated(c, o))
                for (const Bound& b : kBounds)
                    if (f == b.field && std::string(b.score) == score) bar_out = true;
            return bar.tone == BarTone::Absent || (bar.tone == BarTone::Outside) == bar_out;
        };
        if (!tone_ok(similarity_bar(c, o), "similarity") || !tone_ok(change_bar(c, o), "change"))
            return fail("candidate '" + c.text + "': bar colour disagrees with its numbers");
    }
    if (inside == 0 || outside == 0)
        return fail("expected candidates both inside and outside the thresholds, got " + std::to_string(inside) + " inside, " +
                    std::to_string(outside) + " outside");
    std::cout << "window: " << inside << " inside, " << outside << " outside the thresholds\n";
    next();
}

void TestDriver::step_expect_filtered(Controller& ctl) {
    const auto& ws = ctl.state().ws;
    GenerationOptions now = ctl.effective_options();
    GenerationOptions used = ws.used;
    for (const Bound& b : kBounds)
        if (bound_value(used, b.field) != bound_value(now, b.field))
            return fail(std::string("the last generation did not run with the current ") + b.field);
    for (const auto& c : ws.list.items())
        if (!violated(c, used).empty()) return fail("kept candidate '" + c.text + "' violates " + violated(c, used)[0]);
    int by_threshold = 0;
    for (const auto& d : ws.list.dropped()) {
        const auto v = violated(candidate_vm(d.candidate), used);
        const bool threshold_reason = is_score_bound(d.reason.kind);
        if (threshold_reason && v.empty())
            return fail("dropped '" + d.candidate.text + "' (" + to_string(d.reason) + ") is inside the thresholds");
        by_threshold += threshold_reason;
    }
    if (by_threshold == 0) return fail("no candidate was dropped by a threshold");
    std::cout << "filtered: " << ws.list.size() << " kept, " << ws.list.dropped().size() << " dropped (" << by_threshold
              << " by a threshold)\n";
    next();
}

void TestDriver::step_expect_batch_counts(Controller& ctl) {
    const auto& s = ctl.state();
    const auto& b = s.batch;
    if (b.phase != BatchPhase::Done) return fail("the batch has not finished: " + b.error);
    const int64_t dropped = total(b.dropped), generated = int64_t(b.rows.size()) * b.per_row;
    // Without sampling each row decodes exactly per_row candidates once: every one is kept or dropped.
    if (!s.ws.options.do_sample && b.kept + dropped != generated)
        return fail("kept " + std::to_string(b.kept) + " + dropped " + std::to_string(dropped) +
                    " != " + std::to_string(generated) + " candidates decoded");
    if (b.kept <= 0 || dropped <= 0) return fail("expected candidates kept and dropped: " + kept_dropped_line(b));
    std::cout << "batch: " << kept_dropped_line(b) << "\n";
    next();
}

void TestDriver::step_history_dropped(Controller& ctl) {
    auto& h = ctl.state().history;
    if (phase_ == 0) {
        deadline_ = seconds_now() + 30.0;
        phase_ = 1;
        h.show_dropped = true;
        h.search.clear();
        h.page_starts = {0};
        h.stale = true;
    }
    if (!h.stale && h.job == 0) {
        for (size_t i = 0; i < h.page.generations.size(); ++i) {
            const auto& g = h.page.generations[i];
            bool scored = !g.dropped.empty();
            for (const auto& d : g.dropped) scored = scored && d.candidate.scores.change.has_value();
            if (!scored) continue;
            h.selected = int(i);  // expanded: its candidates, then the dropped ones
            std::cout << "history: generation " << g.id << " lists " << g.dropped.size()
                      << " dropped, first: " << to_string(g.dropped[0].reason) << "\n";
            return next();
        }
    }
    if (seconds_now() > deadline_)
        fail("the history lists no dropped candidates with reasons and scores for the newest generation");
}

}  // namespace t5s::ui
