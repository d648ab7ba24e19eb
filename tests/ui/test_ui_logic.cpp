// View-model logic without GL: candidate list states, undo/redo, diff (CJK + Latin), keymap,
// the controller's annotator loop against a fake engine, script parsing.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <thread>

#include <set>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "candidate_list.h"
#include "controller.h"
#include "keymap.h"
#include "recording_controller.h"
#include "test_script.h"
#include "text_diff.h"
#include "time_text.h"

using namespace t5s;
using namespace t5s::ui;

namespace {
std::string render(const std::vector<DiffSegment>& d) {
    std::string s;
    for (const auto& x : d) s += (x.op == DiffOp::Equal ? "=" : x.op == DiffOp::Insert ? "+" : "-") + x.text + "|";
    return s;
}
std::string apply_diff(const std::vector<DiffSegment>& d, bool target) {
    std::string s;
    for (const auto& x : d)
        if (x.op == DiffOp::Equal || (target ? x.op == DiffOp::Insert : x.op == DiffOp::Delete)) s += x.text;
    return s;
}
std::vector<Candidate> cands(std::initializer_list<const char*> texts) {
    std::vector<Candidate> out;
    double score = -1.0;
    for (auto* t : texts) out.push_back(Candidate{t, {}, score -= 0.5});
    return out;
}
}  // namespace

TEST_CASE("diff: Latin words", "[ui][diff]") {
    auto d = diff_chars("the cat sat", "the hat sat");
    CHECK(render(d) == "=the |-c|+h|=at sat|");
    CHECK(changed_code_points(d) == 2);
    CHECK(diff_chars("same", "same").size() == 1);
    CHECK(render(diff_chars("", "new")) == "+new|");
    CHECK(render(diff_chars("old", "")) == "-old|");
}

TEST_CASE("diff: CJK is diffed on code points, never on bytes", "[ui][diff]") {
    // 今日は良い天気です -> 今日はいい天気だ
    const std::string a = "今日は良い天気です", b = "今日はいい天気だ";
    auto d = diff_chars(a, b);
    CHECK(apply_diff(d, false) == a);
    CHECK(apply_diff(d, true) == b);
    for (const auto& seg : d) {
        // Every segment is whole code points: valid UTF-8 boundaries.
        CHECK((static_cast<unsigned char>(seg.text[0]) & 0xC0) != 0x80);
    }
    CHECK(changed_code_points(d) == 5);  // -良 +い, -です +だ  (い is shared)
    auto zh = diff_chars("我喜欢猫", "我很喜欢狗");
    CHECK(render(zh) == "=我|+很|=喜欢|-猫|+狗|");
    CHECK(split_code_points("a日b").size() == 3);
    CHECK(split_code_points("\xff\xfe").size() == 2);  // invalid bytes are single pieces
}

TEST_CASE("diff: mixed scripts round-trip and long inputs fall back", "[ui][diff]") {
    const std::string a = "T5 は paraphrase のモデル", b = "T5 is a パラフレーズ model";
    auto d = diff_chars(a, b);
    CHECK(apply_diff(d, false) == a);
    CHECK(apply_diff(d, true) == b);
    std::string la(3000, 'a'), lb(3000, 'b');
    auto big = diff_chars(la, lb, 1000);
    CHECK(big.size() == 2);
    CHECK(apply_diff(big, true) == lb);
}

TEST_CASE("candidate list: states and decisions", "[ui][candidates]") {
    CandidateList l;
    l.reset("source", 7, cands({"one", "two", "three"}));
    REQUIRE(l.size() == 3);
    CHECK(l.items()[0].state == CandidateState::None);
    auto d = l.accept(0);
    REQUIRE(d);
    CHECK(d->kind == EventKind::Accept);
    CHECK(l.items()[0].state == CandidateState::Accepted);
    CHECK_FALSE(l.accept(0));  // no-op: nothing to record
    d = l.reject(1);
    CHECK(d->kind == EventKind::Reject);
    d = l.edit(2, "three!");
    CHECK(d->kind == EventKind::Edit);
    CHECK(d->text == "three!");
    CHECK(l.items()[2].final_text() == "three!");
    CHECK(apply_diff(l.items()[2].diff, true) == "three!");
    auto pairs = l.accepted_pairs();
    REQUIRE(pairs.size() == 2);
    CHECK(pairs[0] == std::make_pair(std::string("source"), std::string("one")));
    CHECK(pairs[1].second == "three!");
    CHECK(l.edit(1, "two")->kind == EventKind::Accept);  // edit back to the original = accept
    CHECK_FALSE(l.accept(9));
}

TEST_CASE("candidate list: undo / redo mirror the decisions", "[ui][candidates]") {
    CandidateList l;
    l.reset("src", 1, cands({"a", "b"}));
    l.accept(0);
    l.edit(1, "B");
    auto u = l.undo();
    REQUIRE(u);
    CHECK(u->kind == EventKind::Undo);
    CHECK(u->index == 1);
    CHECK(l.items()[1].state == CandidateState::None);
    CHECK(l.selected() == 1);
    l.undo();
    CHECK(l.items()[0].state == CandidateState::None);
    CHECK_FALSE(l.undo());
    auto r = l.redo();
    CHECK(r->kind == EventKind::Redo);
    CHECK(l.items()[0].state == CandidateState::Accepted);
    l.redo();
    CHECK(l.items()[1].state == CandidateState::Edited);
    CHECK(l.items()[1].edited == "B");
    CHECK_FALSE(l.redo());
    l.undo();
    l.reject(0);  // a new decision clears the redo stack
    CHECK_FALSE(l.can_redo());
    CHECK(l.items()[0].state == CandidateState::Rejected);
    l.undo();
    CHECK(l.items()[0].state == CandidateState::Accepted);
}

TEST_CASE("keymap: every action bound once, no clashing chords, typing-safe", "[ui][keymap]") {
    Keymap k;
    std::set<int> actions;
    for (const auto& b : k.bindings()) {
        CHECK(actions.insert(int(b.action)).second);
        CHECK(std::string(b.description).size() > 3);
        for (const auto& o : k.bindings())
            if (&o != &b) CHECK_FALSE(o.chord == b.chord);
    }
    CHECK(actions.size() == size_t(Action::ProtectSelection) + 1);  // the last action
    CHECK(k.label(Action::Generate) == "Ctrl+Enter");
    CHECK(k.label(Action::AcceptAndNext) == "Shift+Enter");
    CHECK(k.label(Action::ToggleHelp) == "F1");
    CHECK(k.tooltip(Action::Accept) == "Accept the selected candidate  [A]");
    const KeyChord a{GLFW_KEY_A};
    CHECK(k.match(a, false) == Action::Accept);
    CHECK_FALSE(k.match(a, true));  // typing "a" in a text field is not an accept
    CHECK(k.match(KeyChord{GLFW_KEY_ENTER, true}, true) == Action::Generate);
    CHECK(k.match(KeyChord{GLFW_KEY_F1}, true) == Action::ToggleHelp);
    CHECK_FALSE(k.match(KeyChord{GLFW_KEY_Q}, false));
}

TEST_CASE("script: parse ops and chords", "[ui][script]") {
    auto steps = parse_script("# c\nframes 3\nkey ctrl+shift+e\ntype 今日は\nscreenshot ws Workspace\n");
    REQUIRE(steps.size() == 4);
    CHECK(steps[1].op == "key");
    auto c = parse_chord("ctrl+shift+e");
    REQUIRE(c);
    CHECK(c->ctrl);
    CHECK(c->shift);
    CHECK(c->key == GLFW_KEY_E);
    CHECK(parse_chord("f1")->key == GLFW_KEY_F1);
    CHECK_FALSE(parse_chord("hyper+q"));
    CHECK_THROWS(parse_script("bogus 1"));
    auto fs = frame_stats({1, 2, 3, 4, 100});
    CHECK(fs.p50 == 3);
    CHECK(fs.max == 100);
}

// An empty source used to get its own wording here ("the source text is empty"): now the one rule
// and words of generate --text, serve and file rows, and no command is sent.
TEST_CASE_METHOD(test::RecordingController, "controller: an empty source is refused in the words every front end uses",
                 "[ui][controller]") {
    auto& s = c.state();
    for (const char* source : {"", " \t\r\n "}) {
        s.ws.source = source;
        s.ws.error.clear();
        c.perform(Action::Generate);
        CHECK(sent.empty());
        CHECK(s.ws.error == "the source text: empty text");
    }
}

TEST_CASE("controller: the annotator loop produces the right commands", "[ui][controller]") {
    std::vector<Command> sent;
    JobId next = 1;
    std::set<unsigned> seen;
    Controller c(
        [&](Command cmd) {
            sent.push_back(std::move(cmd));
            return next++;
        },
        [&](std::string_view) { seen.insert(1); });
    auto& s = c.state();
    // Generating without a model: a message, no command.
    s.ws.source = "今日は良い天気です";
    c.perform(Action::Generate);
    CHECK(sent.empty());
    CHECK_FALSE(s.ws.error.empty());
    // Load a model.
    s.model.path_input = "/m";
    c.load_model();
    REQUIRE(std::holds_alternative<LoadModel>(sent.back()));
    ModelInfo info;
    info.dir = "/m";
    c.apply(ModelLoaded{s.model.load_job, info, 1.0});
    CHECK(s.model.info);
    CHECK(s.model.recent.front() == "/m");
    // Generate.
    c.perform(Action::Generate);
    REQUIRE(std::holds_alternative<Generate>(sent.back()));
    const JobId gen = s.ws.job;
    CHECK(std::get<Generate>(sent.back()).task_prefix == "paraphrase: ");
    CHECK(std::get<Generate>(sent.back()).options.seed == -1);  // random seed by default
    // A slider moved mid-generation -> UpdateSettings.
    s.ws.options.temperature = 0.5f;
    c.settings_changed();
    REQUIRE(std::holds_alternative<UpdateSettings>(sent.back()));
    CHECK(std::get<UpdateSettings>(sent.back()).options.temperature == 0.5f);
    c.apply(GenerationStep{gen, 3, 1, 3});
    CHECK(s.ws.step == 3);
    GenerationDone done;
    done.job = gen;
    done.results = {GenerationResult{"今日は良い天気です", cands({"今日はいい天気です", "今日は晴れです"})}};
    done.history_ids = {42};
    c.apply(done);
    CHECK_FALSE(s.ws.generating());
    REQUIRE(s.ws.list.size() == 2);
    CHECK(!seen.empty());  // texts were noted for the font atlas
    // Keys: down, accept, edit + commit, undo.
    c.perform(Action::SelectNext);
    c.perform(Action::Accept);
    auto* rd = std::get_if<RecordDecision>(&sent.back());
    REQUIRE(rd);
    CHECK(rd->generation_id == 42);
    CHECK(rd->candidate_index == 1);
    CHECK(rd->kind == EventKind::Accept);
    c.perform(Action::SelectPrev);
    c.perform(Action::Edit);
    CHECK(s.ws.editing);
    s.ws.edit_buffer = "今日は本当にいい天気です";
    c.commit_edit();
    CHECK(std::get<RecordDecision>(sent.back()).kind == EventKind::Edit);
    CHECK(s.ws.decided[42].size() == 2);
    c.perform(Action::Undo);
    CHECK(std::get<RecordDecision>(sent.back()).kind == EventKind::Undo);
    CHECK(s.ws.decided[42].size() == 1);
    // A failure shows its message where it belongs; OOM suggests a smaller batch.
    c.perform(Action::Generate);
    c.apply(JobFailed{s.ws.job, ErrorCode::OutOfMemory, "CUDA out of memory"});
    CHECK(s.ws.error.find("smaller batch") != std::string::npos);
    CHECK_FALSE(s.ws.generating());
    // A dead engine disables actions.
    c.apply(EngineDied{"boom"});
    CHECK(s.engine_dead);
    const size_t before = sent.size();
    c.perform(Action::Generate);
    CHECK(sent.size() == before);
}

TEST_CASE_METHOD(test::RecordingController, "controller: review queue, accept-and-next, batch and export commands",
                 "[ui][controller]") {
    auto& s = c.state();
    s.model.info = ModelInfo{};
    s.batch.path = "/rows.txt";
    c.load_dataset();
    c.apply(DatasetLoaded{s.batch.dataset_job, "/rows.txt", {}, "", {"r1", "r2"}, {}});
    CHECK(s.batch.phase == BatchPhase::Ready);
    c.perform(Action::ReviewQueue);
    CHECK(s.ws.queue_pos == 0);
    CHECK(std::get<Generate>(sent.back()).texts[0] == "r1");
    GenerationDone d;
    d.job = s.ws.job;
    d.results = {GenerationResult{"r1", cands({"x1"})}};
    d.history_ids = {5};
    c.apply(d);
    c.perform(Action::AcceptAndNext);
    CHECK(std::get<Generate>(sent.back()).texts[0] == "r2");
    CHECK(s.ws.queue_pos == 1);
    CHECK(s.ws.decided[5].size() == 1);
    // Row 2 generates; going back to row 1 shows it as it was left (no new generation), and its
    // undo still works there; row 2 comes back the same way.
    GenerationDone d2;
    d2.job = s.ws.job;
    d2.results = {GenerationResult{"r2", cands({"y1", "y2"})}};
    d2.history_ids = {6};
    c.apply(d2);
    c.perform(Action::Reject);
    const size_t before_back = sent.size();
    c.perform(Action::PrevRow);
    CHECK(s.ws.queue_pos == 0);
    CHECK(s.ws.source == "r1");
    CHECK(sent.size() == before_back);  // nothing regenerated
    CHECK(s.ws.list.generation_id() == 5);
    CHECK(s.ws.list.accepted_pairs().size() == 1);
    c.perform(Action::Undo);
    CHECK(std::get<RecordDecision>(sent.back()).kind == EventKind::Undo);
    CHECK(std::get<RecordDecision>(sent.back()).generation_id == 5);
    CHECK(s.ws.list.accepted_pairs().empty());
    c.perform(Action::NextRow);
    CHECK(s.ws.source == "r2");
    CHECK(s.ws.list.generation_id() == 6);
    CHECK(s.ws.list.size() == 2);
    CHECK_FALSE(std::holds_alternative<Generate>(sent.back()));
    c.perform(Action::PrevRow);
    CHECK(s.ws.list.accepted_pairs().empty());  // row 1 keeps the undo
    // Batch run, pause, resume.
    s.batch.per_row = 2;
    c.start_batch();
    auto& b = std::get<BatchAugment>(sent.back());
    CHECK(b.options.num_return_sequences == 2);
    CHECK(b.rows.size() == 2);
    c.apply(Progress{s.batch.job, 1, 2, 0.5, 2.0});
    CHECK(s.batch.done == 1);
    c.pause_batch();
    CHECK(std::holds_alternative<PauseJob>(sent.back()));
    c.apply(JobPaused{s.batch.job, 1, 2});
    CHECK(s.batch.phase == BatchPhase::Paused);
    c.resume_batch();
    CHECK(std::holds_alternative<ResumeJob>(sent.back()));
    c.apply(JobFinished{s.batch.job, "batch", "2 of 2"});
    CHECK(s.batch.phase == BatchPhase::Done);
    // Export: FileExists asks before overwriting.
    s.exp.path = "/out.jsonl";
    c.start_export(false);
    CHECK_FALSE(std::get<ExportHistory>(sent.back()).options.overwrite);
    c.apply(FileExists{s.exp.job, "/out.jsonl"});
    CHECK(s.exp.confirm_overwrite);
    c.start_export(true);
    CHECK(std::get<ExportHistory>(sent.back()).options.overwrite);
    // History paging is keyset.
    c.refresh_history();
    HistoryPage page;
    page.has_more = true;
    page.next_after_id = 77;
    c.apply(HistoryLoaded{s.history.job, {}, page, 100});
    c.history_next_page();
    CHECK(std::get<QueryHistory>(sent.back()).query.after_id == 77);
    // Telemetry lands in the ring buffers; CUDA lines stay empty on CPU.
    TelemetrySample t;
    t.t_s = 1;
    t.rss_bytes = 1000;
    c.apply(t);
    CHECK(s.monitor.rss.size() == 1);
    CHECK(s.monitor.cuda_allocated.size() == 0);
}

TEST_CASE_METHOD(test::RecordingController,
                 "batch panel: the input reader's files are rows, skipped rows shown with their reasons", "[ui][controller]") {
    // Dropped on the window: every format the input reader reads goes to the batch panel (any case).
    for (const char* p :
         {"/d/rows.txt", "/d/rows.jsonl", "/d/rows.ndjson", "/d/rows.CSV", "/d/rows.tsv", "/d/rows.tab", "/d/export.json"})
        CHECK(is_rows_file(p));
    for (const char* p : {"/models/t5-small", "/d/model.safetensors", "/d/spiece.model", "/d/rows"}) CHECK_FALSE(is_rows_file(p));
    auto& s = c.state();
    s.batch.path = "/d/export.json";
    c.load_dataset();
    REQUIRE(std::holds_alternative<LoadDataset>(sent.back()));
    CHECK(std::get<LoadDataset>(sent.back()).path == "/d/export.json");
    const std::vector<std::string> skipped = {"/d/export.json: task 3: missing text field (looked for \"text\")",
                                              "/d/export.json: task 5: no \"data\" object"};
    c.apply(DatasetLoaded{s.batch.dataset_job, "/d/export.json", {"text"}, "text", {"r1", "r2"}, skipped});
    CHECK(s.batch.phase == BatchPhase::Ready);
    CHECK(s.batch.warnings == skipped);  // the panel's "2 skipped" and its tooltip list them
    CHECK(s.log.back().error);
    CHECK(s.log.back().text == "/d/export.json: 2 rows, 2 skipped (first: " + skipped[0] + ")");
}

TEST_CASE_METHOD(test::RecordingController, "controller: training presets, commands and TrainingUpdate events",
                 "[ui][controller][training]") {
    auto& s = c.state();
    auto& t = s.train;
    ModelInfo info;
    info.dir = "/models/t5-small";
    s.model.info = info;
    c.open_training();
    CHECK(t.open);
    CHECK(t.model_dir == "/models/t5-small");
    CHECK(t.out_dir == "/models/t5-small-finetuned");
    // Presets fill the hyperparameters.
    c.apply_training_preset(int(TrainPreset::Thorough));
    CHECK(t.options.steps == 0);
    CHECK(t.options.epochs == 10);
    CHECK(t.options.schedule == ScheduleKind::Cosine);
    CHECK(t.options.patience > 0);
    c.apply_training_preset(int(TrainPreset::Quick));
    CHECK(t.options.steps == 200);
    // No data file: no command, an error.
    c.start_training();
    CHECK(sent.empty());
    CHECK_FALSE(t.error.empty());
    t.data_file = "/data/pairs.jsonl";
    t.options.batch_size = 4;
    c.start_training();
    REQUIRE(sent.size() == 1);
    const auto& cmd = std::get<StartTraining>(sent.back());
    CHECK(cmd.options.model_dir == "/models/t5-small");
    CHECK(cmd.options.data_file == "/data/pairs.jsonl");
    CHECK(cmd.options.out_dir == "/models/t5-small-finetuned");
    CHECK(cmd.options.batch_size == 4);
    CHECK(cmd.options.steps == 200);
    CHECK(t.phase == TrainPhase::Running);
    const JobId job = t.job;
    REQUIRE(job != 0);

    TrainingEvent plan;
    plan.kind = TrainingEvent::Kind::Plan;
    plan.message = "about 1.2 GiB of 15 GiB";
    c.apply(TrainingUpdate{job, plan});
    CHECK(t.estimate == plan.message);
    for (int i = 1; i <= 5; ++i) {
        TrainingEvent e;
        e.kind = TrainingEvent::Kind::Step;
        e.step = i;
        e.total_steps = 200;
        e.epoch = i / 100.0;
        e.loss = 5.0 - 0.5 * i;
        e.lr = 1e-3;
        e.tokens_per_s = 1000;
        e.elapsed_s = i * 0.5;
        e.eta_s = 100 - i;
        e.memory_bytes = 1 << 20;
        c.apply(TrainingUpdate{job, e});
    }
    // Another job's updates are ignored.
    TrainingEvent other;
    other.kind = TrainingEvent::Kind::Step;
    other.loss = 99;
    c.apply(TrainingUpdate{job + 100, other});
    REQUIRE(t.train_loss.size() == 5);
    CHECK(t.train_loss.x(0) == Approx(0.5));
    CHECK(t.train_loss.last_y() == Approx(2.5));
    CHECK(t.loss == Approx(2.5));
    CHECK(t.step == 5);
    CHECK(t.total_steps == 200);
    CHECK(t.lr == Approx(1e-3));
    CHECK(t.tokens_per_s == Approx(1000));
    CHECK(t.memory_bytes == (1 << 20));
    TrainingEvent ev;
    ev.kind = TrainingEvent::Kind::Eval;
    ev.step = 5;
    ev.total_steps = 200;
    ev.eval_loss = 3.0;
    ev.best_eval_loss = 3.0;
    ev.elapsed_s = 2.6;
    ev.samples = {SampleGeneration{"src", "ref", "pred"}};
    c.apply(TrainingUpdate{job, ev});
    CHECK(t.eval_loss.size() == 1);
    CHECK(t.eval == Approx(3.0));
    CHECK(t.best_eval == Approx(3.0));
    REQUIRE(t.samples.size() == 1);
    CHECK(t.samples[0].prediction == "pred");
    // Pause / resume / stop go through the engine's job commands.
    c.pause_training();
    CHECK(std::get<PauseJob>(sent.back()).job == job);
    c.apply(JobPaused{job, 5, 200});
    CHECK(t.phase == TrainPhase::Paused);
    c.resume_training();
    CHECK(std::get<ResumeJob>(sent.back()).job == job);
    CHECK(t.phase == TrainPhase::Running);
    c.stop_training();
    CHECK(std::get<Cancel>(sent.back()).job == job);
    TrainingEvent fin;
    fin.kind = TrainingEvent::Kind::Finished;
    fin.stop_reason = StopReason::Stopped;
    fin.message = "/models/t5-small-finetuned/final";
    c.apply(TrainingUpdate{job, fin});
    c.apply(JobFinished{job, "train", "stopped after 5 steps: /models/t5-small-finetuned/final"});
    CHECK(t.phase == TrainPhase::Done);
    CHECK(t.job == 0);
    CHECK(t.final_dir == "/models/t5-small-finetuned/final");
    // "Use this model" loads the final folder.
    c.use_trained_model();
    CHECK(std::get<LoadModel>(sent.back()).dir == "/models/t5-small-finetuned/final");
    // A new run clears the curves; a failure is shown.
    c.start_training();
    CHECK(t.train_loss.size() == 0);
    c.apply(JobFailed{t.job, ErrorCode::FileNotFound, "pairs.jsonl: no such file"});
    CHECK(t.phase == TrainPhase::Failed);
    CHECK(t.error.find("pairs.jsonl") != std::string::npos);
    CHECK(format_value(0.1234, Unit::Plain) == "0.123");
}

TEST_CASE_METHOD(test::RecordingController, "controller: history as training data, past runs, continuing a cut-off run",
                 "[ui][controller][training]") {
    auto& t = c.state().train;
    t.model_dir = "/models/m";
    t.out_dir = "/runs/new";
    // The history's accepted pairs are enough data on their own.
    t.data_from_history = true;
    c.start_training();
    REQUIRE(sent.size() == 1);
    CHECK(std::get<StartTraining>(sent.back()).data_from_history);
    CHECK(std::get<StartTraining>(sent.back()).history_run_id == 0);
    const JobId live = t.job;
    c.apply(TrainingRunRecorded{live, 7});
    CHECK(t.run_id == 7);
    CHECK(t.runs_stale);

    // Past runs arrive from the io lane: ours (live, running), one cut off, one completed.
    c.refresh_training_runs();
    const JobId q = std::get_if<QueryTrainingRuns>(&sent.back()) ? t.runs_job : 0;
    REQUIRE(q != 0);
    TrainingOptions old_opts;
    old_opts.model_dir = "/models/m";
    old_opts.data_file = "/data/old.jsonl";
    old_opts.out_dir = "/runs/old";
    old_opts.steps = 300;
    old_opts.batch_size = 6;
    StoredTrainingRun live_run, cut, done;
    live_run.id = 7;
    live_run.status = "running";
    cut.id = 5;
    cut.status = "running";
    cut.options_json = training_options_to_json(old_opts);
    cut.points = {{10, 1.0, 2.5}, {20, 2.0, 2.0, 2.2}};
    done.id = 3;
    done.status = "completed";
    done.final_dir = "/runs/older/final";
    c.apply(TrainingRunsLoaded{q, {live_run, cut, done}});
    REQUIRE(t.runs.size() == 3);
    CHECK_FALSE(c.run_interrupted(t.runs[0]));  // the live one
    CHECK(c.run_interrupted(t.runs[1]));        // running, but nobody runs it: cut off
    CHECK_FALSE(c.run_interrupted(t.runs[2]));
    // While a run is live nothing else starts.
    const size_t before = sent.size();
    c.continue_training_run(5);
    CHECK(sent.size() == before);
    c.apply(JobFinished{live, "train", "completed after 200 steps: /runs/new/final"});
    CHECK(t.runs_stale);
    CHECK(c.run_interrupted(t.runs[0]));  // still "running" in this stale list until refreshed

    // Continue the cut-off run: its own settings, resume from its checkpoints, the same record.
    c.continue_training_run(5);
    REQUIRE(sent.size() == before + 1);
    const auto& cont = std::get<StartTraining>(sent.back());
    CHECK(cont.history_run_id == 5);
    CHECK(cont.options.resume);
    CHECK(cont.options.out_dir == "/runs/old");
    CHECK(cont.options.data_file == "/data/old.jsonl");
    CHECK(cont.options.steps == 300);
    CHECK(cont.options.batch_size == 6);
    CHECK_FALSE(cont.data_from_history);
    CHECK(t.out_dir == "/runs/old");  // the panel shows what runs
    CHECK(t.run_id == 5);
    CHECK(t.phase == TrainPhase::Running);
    c.apply(JobFinished{t.job, "train", "completed"});
    // Use a past run's model; forget a record.
    c.use_run_model(3);
    CHECK(std::get<LoadModel>(sent.back()).dir == "/runs/older/final");
    c.delete_training_run(3);
    CHECK(std::get<DeleteTrainingRun>(sent.back()).run_id == 3);
    CHECK(t.runs.size() == 2);
    // A record with unreadable settings can't be continued: a message, no command.
    t.runs[0].options_json = "{not json";
    const size_t n = sent.size();
    c.continue_training_run(t.runs[0].id);
    CHECK(sent.size() == n);
    CHECK(t.error.find("settings") != std::string::npos);
}

TEST_CASE("training options round-trip through JSON", "[ui][training]") {
    TrainingOptions o;
    o.model_dir = "/m";
    o.extra_data_files = {"a.jsonl", "b.csv"};
    o.optimizer = OptimizerKind::Adafactor;
    o.schedule = ScheduleKind::Cosine;
    o.precision = TrainPrecision::Bf16;
    o.device = TrainDevice::Cpu;
    o.data.source_field = "input";
    o.data.on_bad_row = BadRowPolicy::Fail;
    o.data.source_prefix = "paraphrase: ";
    o.gradient_checkpointing = true;
    o.seed = 1234567890123ULL;
    o.lr = 3e-4;
    const TrainingOptions r = training_options_from_json(training_options_to_json(o));
    CHECK(r.model_dir == "/m");
    CHECK(r.extra_data_files == o.extra_data_files);
    CHECK(r.optimizer == OptimizerKind::Adafactor);
    CHECK(r.schedule == ScheduleKind::Cosine);
    CHECK(r.precision == TrainPrecision::Bf16);
    CHECK(r.device == TrainDevice::Cpu);
    CHECK(r.data.source_field == "input");
    CHECK(r.data.on_bad_row == BadRowPolicy::Fail);
    CHECK(r.data.source_prefix == "paraphrase: ");
    CHECK(r.gradient_checkpointing);
    CHECK(r.seed == 1234567890123ULL);
    CHECK(r.lr == 3e-4);
    CHECK(training_options_from_json("{}").batch_size == TrainingOptions{}.batch_size);
    CHECK_THROWS_AS(training_options_from_json("[1]"), Error);
    CHECK_THROWS_AS(training_options_from_json(R"({"batch_size":"x"})"), Error);
    CHECK_THROWS_AS(training_options_from_json(R"({"optimizer":"sgd"})"), Error);
}

TEST_CASE("ring series keeps the newest points", "[ui][chart]") {
    RingSeries r(3);
    for (int i = 0; i < 5; ++i) r.push(i, i * 10);
    REQUIRE(r.size() == 3);
    CHECK(r.x(0) == 2);
    CHECK(r.last_y() == 40);
    CHECK(format_value(1536, Unit::Bytes) == "1.5 KiB");
}

TEST_CASE("times shown in the local time zone, in the panel's format", "[ui][time]") {
    const char* kept = std::getenv("TZ");
    const std::string old_tz = kept ? kept : "";
    setenv("TZ", "UTC", 1);
    tzset();
    CHECK(local_time_text(0, "%Y-%m-%d %H:%M") == "1970-01-01 00:00");
    CHECK(local_time_text(1700000000999, "%m-%d %H:%M") == "11-14 22:13");  // milliseconds dropped
    setenv("TZ", "EET-2", 1);                                               // POSIX: two hours east of UTC
    tzset();
    CHECK(local_time_text(0, "%Y-%m-%d %H:%M") == "1970-01-01 02:00");
    if (kept) setenv("TZ", old_tz.c_str(), 1);
    else unsetenv("TZ");
    tzset();
}

#include <imgui.h>

#include "font_manager.h"
#include "skip.h"

TEST_CASE("fonts: the atlas holds the characters shown, and survives odd text", "[ui][fonts][may_skip]") {
    const std::string path = FontManager::find_cjk_font();
    if (path.empty()) T5S_SKIP("no CJK font installed (fonts-noto-cjk or another font FontManager knows)");
    ImGui::CreateContext();
    FontManager fonts(path);
    REQUIRE(fonts.has_cjk_font());
    fonts.note("plain ascii");
    fonts.build_atlas(ImGui::GetIO().Fonts);
    CHECK(ImGui::GetIO().Fonts->Fonts[0]->IsLoaded());
    const size_t base = fonts.glyph_count();
    fonts.note("今日は良い天気 我喜欢猫");
    CHECK(fonts.needs_rebuild());
    fonts.build_atlas(ImGui::GetIO().Fonts);
    CHECK_FALSE(fonts.needs_rebuild());
    CHECK(fonts.glyph_count() > base);
    CHECK(ImGui::GetIO().Fonts->Fonts[0]->FindGlyphNoFallback(0x5929) != nullptr);  // 天
    fonts.note("今日");                                                             // already baked: no rebuild
    CHECK_FALSE(fonts.needs_rebuild());
    // What a random tiny model emits: control characters, U+FFFD, stray scripts.
    fonts.note("\xEF\xBF\xBDog~\x01nnb\x16\x03\xEF\xBF\xBD\x0EK~ \xD0\xB2 \xF0\x9F\x98\x80 \xC3");
    fonts.build_atlas(ImGui::GetIO().Fonts);
    CHECK(ImGui::GetIO().Fonts->Fonts[0]->IsLoaded());
    // An overlong NUL and a surrogate among CJK: the font still loads and keeps its glyphs.
    fonts.note("\xC0\x80 \xED\xA0\x80 雨");
    fonts.build_atlas(ImGui::GetIO().Fonts);
    REQUIRE(ImGui::GetIO().Fonts->Fonts[0]->IsLoaded());
    CHECK(ImGui::GetIO().Fonts->Fonts[0]->FindGlyphNoFallback(0x96E8) != nullptr);  // 雨
    CHECK(ImGui::GetIO().Fonts->Fonts[0]->FindGlyphNoFallback(0x5929) != nullptr);  // 天 still there

    // Later atlases build on a worker: the caller only swaps the finished one in.
    fonts.note("새로운 글자 와 漢字");
    CHECK(fonts.needs_rebuild());
    CHECK(fonts.start_async_build());
    CHECK(fonts.async_building());
    CHECK_FALSE(fonts.start_async_build());  // one at a time
    fonts.note("漢字");                      // in flight: not pending again
    CHECK_FALSE(fonts.needs_rebuild());
    CHECK_FALSE(fonts.is_baked(0xD55C));  // 한: not until the swap
    ImFontAtlas* built = nullptr;
    for (int i = 0; i < 500 && !built; ++i) {
        built = fonts.take_built_atlas();
        if (!built) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(built != nullptr);
    CHECK_FALSE(fonts.async_building());
    CHECK(built->Fonts[0]->FindGlyphNoFallback(0xAE00) != nullptr);  // 글
    CHECK(built->Fonts[0]->FindGlyphNoFallback(0x5929) != nullptr);  // 天 (kept from before)
    CHECK(fonts.is_baked(0xAE00));
    unsigned char* px = nullptr;
    int w = 0, h = 0;
    built->GetTexDataAsRGBA32(&px, &w, &h);  // already converted on the worker
    CHECK((px != nullptr && w > 0 && h > 0));
    ImFontAtlas* old = ImGui::GetIO().Fonts;
    ImGui::GetIO().Fonts = built;
    IM_DELETE(old);
    CHECK_FALSE(fonts.start_async_build());  // nothing new
    // A build still running when the manager goes away is joined and freed.
    {
        FontManager other(path);
        other.note("別の文字列");
        CHECK(other.start_async_build());
    }
    ImGui::DestroyContext();
}

TEST_CASE_METHOD(test::RecordingController, "controller: events go to the panel that submitted the job", "[ui][controller]") {
    auto& s = c.state();
    load();
    // Three panels with a job each.
    s.batch.rows = {"a", "b"};
    c.start_batch();
    const JobId batch = s.batch.job;
    s.exp.path = "/out.jsonl";
    c.start_export(false);
    const JobId exp = s.exp.job;
    c.refresh_history();
    const JobId hist = s.history.job;
    REQUIRE((batch && exp && hist));
    // Progress of the export moves the export, not the batch.
    c.apply(Progress{exp, 5, 10, 1.0, 5.0});
    CHECK(s.exp.done == 5);
    CHECK(s.batch.done == 0);
    c.apply(Progress{batch, 1, 2, 1.0, 1.0});
    CHECK(s.batch.done == 1);
    CHECK(s.exp.done == 5);
    // A failed history query shows in the history panel only.
    c.apply(JobFailed{hist, ErrorCode::CorruptFile, "history.db: malformed"});
    CHECK(s.history.job == 0);
    CHECK(s.history.error == "history.db: malformed");
    CHECK(s.batch.error.empty());
    CHECK(s.exp.error.empty());
    CHECK(s.batch.phase == BatchPhase::Running);
    // A job nobody submitted (an unknown id) changes no panel; its failure is only logged.
    const size_t log_before = s.log.size();
    c.apply(Progress{999, 7, 9, 1.0, 1.0});
    c.apply(JobFailed{999, ErrorCode::InvalidArgument, "no batch job 998 to pause"});
    CHECK(s.exp.done == 5);
    CHECK(s.batch.done == 1);
    CHECK(s.log.size() == log_before + 1);
    CHECK(s.log.back().text.find("no batch job 998") != std::string::npos);
    // After its last event a job id belongs to no one: a late duplicate is ignored.
    c.apply(ExportDone{exp, ExportResult{}});
    CHECK(s.exp.job == 0);
    REQUIRE(s.exp.result);
    s.exp.result.reset();
    c.apply(ExportDone{exp, ExportResult{}});
    CHECK_FALSE(s.exp.result);
}
