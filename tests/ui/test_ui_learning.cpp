// The learning loop's view-model logic without GL (the app's side): the versions folder
// per base model, the status line, and the controller against a fake engine: the switch starts a
// round after `every` accepted/edited candidates (rejections do not count, one round at a time),
// "learn now", the round's and the listing's events, the adapter switch the engine makes after an
// adopted round, "use this one", and the settings that persist.
#include <catch2/catch.hpp>

#include "controller.h"
#include "recording_controller.h"
#include "settings.h"

using namespace t5s;
using namespace t5s::ui;

namespace {

struct Fake : test::RecordingController {
    UiState& s = c.state();
};

AdapterVersionEntry version(int64_t v, int64_t pairs, double before, double after, const std::string& at) {
    AdapterVersionEntry e;
    e.version = v;
    e.pairs_total = pairs;
    e.loss_before = before;
    e.loss_after = after;
    e.created_at = at;
    return e;
}

}  // namespace

TEST_CASE("learning: versions folder per base, time texts", "[ui][learning]") {
    const std::string a = learning_dir_for("/data/learning", "/models/demo-model");
    CHECK(a.rfind("/data/learning/demo-model-", 0) == 0);
    CHECK(a == learning_dir_for("/data/learning", "/models/demo-model"));  // stable
    CHECK(a != learning_dir_for("/data/learning", "/other/demo-model"));   // same name, other base
    CHECK(learning_dir_for("/r", "/x/a b:c/").find("a_b_c-") != std::string::npos);
    CHECK(ago_text(3) == "just now");
    CHECK(ago_text(42) == "42 s ago");
    CHECK(ago_text(185) == "3 min ago");
    CHECK(ago_text(2 * 3600 + 5) == "2 h ago");
    CHECK(ago_text(5 * 86400.0) == "5 d ago");
    CHECK(parse_iso_utc_ms("1970-01-01T00:01:00Z") == 60000);
    CHECK(parse_iso_utc_ms("2026-12-02T06:39:21Z") == int64_t(1796193561) * 1000);
    CHECK(parse_iso_utc_ms("yesterday") == 0);
}

TEST_CASE("learning: the status line", "[ui][learning]") {
    LearningVm l;
    l.round.every = 50;
    l.new_pairs = 7;
    CHECK(learning_status_line(l, 0) == "base model · 7/50 new pairs");
    l.versions = {version(3, 150, 2.6, 2.31, "2026-12-02T06:00:00Z"), version(4, 212, 2.31, 2.05, "2026-12-02T06:36:00Z")};
    l.current = 4;
    const int64_t now = parse_iso_utc_ms("2026-12-02T06:39:30Z");
    CHECK(learning_status_line(l, now) == "adapter v4 · 212 pairs · held-out loss 2.31 → 2.05 · 3 min ago");
    l.current = 3;
    CHECK(learning_status_line(l, now) == "adapter v3 · 150 pairs · held-out loss 2.60 → 2.31 · 39 min ago");
    l.round_job = 9;
    l.step = 12, l.total_steps = 40;
    CHECK(learning_status_line(l, now) == "learning… step 12/40");
}

TEST_CASE("learning: the switch starts a round after N accepted/edited candidates", "[ui][learning]") {
    Fake f;
    f.s.learn.root = "/data/learning";
    f.s.learn.round.every = 3;
    f.s.learn.round.max_steps = 7;
    f.s.learn.round.lr = 4e-3;
    f.s.ws.task_prefix = "paraphrase: ";
    f.load("/models/demo");
    // Loading lists the model's versions folder.
    REQUIRE(std::holds_alternative<ListAdapterVersions>(f.sent.back()));
    const std::string dir = learning_dir_for("/data/learning", "/models/demo");
    CHECK(std::get<ListAdapterVersions>(f.sent.back()).adapter_dir == dir);
    CHECK(f.s.learn.adapter_dir == dir);

    // Off: decisions are counted, no round.
    for (int i = 0; i < 3; ++i) f.c.apply(DecisionRecorded{100 + JobId(i), 1, 0, EventKind::Accept});
    CHECK(f.count<LearnNow>() == 0);
    CHECK(f.s.learn.new_pairs == 3);
    // On: enough pairs wait, so a round starts at once, with the model, the prefix and the steps.
    f.c.learning().set_enabled(true);
    REQUIRE(f.count<LearnNow>() == 1);
    const auto& cmd = std::get<LearnNow>(f.sent.back());
    CHECK(cmd.model_dir == "/models/demo");
    CHECK(cmd.adapter_dir == dir);
    CHECK(cmd.task_prefix == "paraphrase: ");
    CHECK(cmd.round.max_steps == 7);
    CHECK(cmd.round.lr == 4e-3);
    const JobId round = f.s.learn.round_job;
    CHECK(round != 0);
    CHECK(f.s.learn.new_pairs == 0);
    // Rejections do not count; while a round runs no second one starts.
    f.c.apply(DecisionRecorded{200, 1, 0, EventKind::Reject});
    CHECK(f.s.learn.new_pairs == 0);
    for (int i = 0; i < 4; ++i) f.c.apply(DecisionRecorded{300 + JobId(i), 1, 0, i % 2 ? EventKind::Edit : EventKind::Accept});
    CHECK(f.count<LearnNow>() == 1);
    CHECK(f.s.learn.new_pairs == 4);
    TrainingEvent step;
    step.kind = TrainingEvent::Kind::Step, step.step = 2, step.total_steps = 7;
    f.c.apply(TrainingUpdate{round, step});
    CHECK(learning_status_line(f.s.learn, 0) == "learning… step 2/7");

    // The round ends: adopted as v1; the engine switches the adapter itself and lists the versions.
    LearningRoundDone done;
    done.job = round;
    done.result.status = "adopted", done.result.version = 1, done.result.round = 1;
    done.result.loss_before = 2.31, done.result.loss_after = 2.05, done.result.pairs_new = 3;
    done.train_losses = {3.0, 2.5};
    f.c.apply(done);
    REQUIRE(f.s.learn.last);
    CHECK(f.s.learn.last_curve.size() == 2);
    bool logged = false;
    for (const auto& line : f.s.log)
        logged =
            logged || line.text.find("round 1 adopted: held-out loss 2.31 → 2.05, 3 new pairs, 0 s (v1)") != std::string::npos;
    CHECK(logged);
    f.c.apply(AdapterSet{999, dir + "/v0001", 1234});  // no owner: the engine's own switch
    CHECK(f.s.model.active_adapter == dir + "/v0001");
    AdapterVersionsListed listed;
    listed.job = round;
    listed.adapter_dir = dir;
    listed.current = 1;
    listed.versions = {version(1, 3, 2.31, 2.05, "2026-12-02T06:36:00Z")};
    f.c.apply(listed);
    CHECK(f.s.learn.current == 1);
    REQUIRE(f.s.learn.versions.size() == 1);
    // A listing of another folder (an earlier model's) is ignored.
    listed.adapter_dir = "/elsewhere";
    listed.current = 5;
    f.c.apply(listed);
    CHECK(f.s.learn.current == 1);
    // The 4 pairs that arrived during the round start the next one as soon as it ended.
    CHECK(f.count<LearnNow>() == 2);
    CHECK(f.s.learn.round_job != round);
    CHECK(f.s.learn.round_job != 0);
}

TEST_CASE("learning: learn now, use this one, failures", "[ui][learning]") {
    Fake f;
    f.s.learn.root = "/data/learning";
    CHECK_FALSE(f.c.learning().learn_now());  // no model yet
    CHECK(f.s.learn.error.find("open a model") != std::string::npos);
    CHECK(f.count<LearnNow>() == 0);
    f.load("/models/demo");
    AdapterVersionsListed first;  // the listing made on load
    first.job = f.s.learn.list_job;
    first.adapter_dir = f.s.learn.adapter_dir;
    f.c.apply(first);
    CHECK(f.s.learn.list_job == 0);
    REQUIRE(f.c.learning().learn_now());
    const JobId round = f.s.learn.round_job;
    CHECK_FALSE(f.c.learning().learn_now());  // one at a time
    CHECK(f.count<LearnNow>() == 1);
    f.c.learning().cancel_round();
    REQUIRE(std::holds_alternative<Cancel>(f.sent.back()));
    CHECK(std::get<Cancel>(f.sent.back()).job == round);
    f.c.apply(JobFailed{round, ErrorCode::Cancelled, "learning round cancelled"});
    CHECK(f.s.learn.round_job == 0);
    CHECK(f.s.learn.error == "learning round cancelled");

    f.c.learning().use_version(2);
    REQUIRE(std::holds_alternative<UseAdapterVersion>(f.sent.back()));
    CHECK(std::get<UseAdapterVersion>(f.sent.back()).version == 2);
    CHECK(std::get<UseAdapterVersion>(f.sent.back()).adapter_dir == f.s.learn.adapter_dir);
    const JobId use = f.s.learn.use_job;
    f.c.learning().use_version(1);  // while one is in flight: ignored
    CHECK(f.count<UseAdapterVersion>() == 1);
    f.c.apply(AdapterSet{use, f.s.learn.adapter_dir + "/v0002", 10});
    CHECK(f.s.learn.use_job == 0);
    CHECK(f.s.model.active_adapter == f.s.learn.adapter_dir + "/v0002");
    // The listing that follows comes after the job's AdapterSet (its owner already released).
    AdapterVersionsListed listed;
    listed.job = use;
    listed.adapter_dir = f.s.learn.adapter_dir;
    listed.current = 2;
    f.c.apply(listed);
    CHECK(f.s.learn.current == 2);
    f.c.perform(Action::OpenLearning);
    CHECK(f.s.learn.open);
    CHECK(std::holds_alternative<ListAdapterVersions>(f.sent.back()));
}

TEST_CASE("learning: the switch, N, the steps and the learning rate persist in settings.json", "[ui][learning]") {
    UiState st;
    st.learn.enabled = true;
    st.learn.round.every = 25;
    st.learn.round.max_steps = 12;
    st.learn.round.lr = 3e-3;
    std::string warning;
    UiState back = test::after_restart(st, &warning);
    CHECK(warning.empty());
    CHECK(back.learn.enabled);
    CHECK(back.learn.round.every == 25);
    CHECK(back.learn.round.max_steps == 12);
    CHECK(back.learn.round.lr == Approx(3e-3));
    const AppSettings old = settings_from_json(R"({"per_row": 3})", &warning);  // before the loop existed
    CHECK_FALSE(old.learn_enabled);
    CHECK(old.learn.every == 50);
    CHECK(old.learn.lr == LearningOptions{}.lr);
    // Before the learning rate was saved: the engine's default; out of range: clamped.
    const AppSettings no_lr = settings_from_json(R"({"learn": {"enabled": true, "every": 9, "max_steps": 5}})", &warning);
    CHECK(no_lr.learn.max_steps == 5);
    CHECK(no_lr.learn.lr == LearningOptions{}.lr);
    // The app's ranges are the learning table's widget ranges.
    CHECK(settings_from_json(R"({"learn": {"lr": 50}})", &warning).learn.lr == 1.0);
    CHECK(settings_from_json(R"({"learn": {"every": 0, "max_steps": 1000000}})", &warning).learn.every == 1);
    CHECK(settings_from_json(R"({"learn": {"max_steps": 1000000}})", &warning).learn.max_steps == 100000);
    CHECK(clamp_learning_option("lr", 1e-9) == Approx(1e-6));
}

TEST_CASE("learning: with the switch on, a reopened model continues with the folder's current version", "[ui][learning]") {
    Fake f;
    f.s.learn.root = "/data/learning";
    f.s.learn.enabled = true;
    f.load("/models/demo");
    AdapterVersionsListed listed;
    listed.job = f.s.learn.list_job;
    listed.adapter_dir = f.s.learn.adapter_dir;
    listed.current = 2;
    listed.versions = {version(1, 3, 2.5, 2.4, ""), version(2, 9, 2.4, 2.3, "")};
    f.c.apply(listed);
    REQUIRE(std::holds_alternative<UseAdapterVersion>(f.sent.back()));
    CHECK(std::get<UseAdapterVersion>(f.sent.back()).version == 2);
    // Only once per load; and not with the switch off.
    f.c.apply(listed);
    CHECK(f.count<UseAdapterVersion>() == 1);
    Fake off;
    off.s.learn.root = "/data/learning";
    off.load("/models/demo");
    listed.job = off.s.learn.list_job;
    off.c.apply(listed);
    CHECK(off.count<UseAdapterVersion>() == 0);
    CHECK(off.s.learn.current == 2);
}
