// Protected spans through the engine thread (the app's door): labelled files read by
// LoadDataset — the batch panel's path, the one input reader under BadRowPolicy::Skip — in JSONL
// (spans / entities / label per row), CSV, TSV and a Label Studio export, bad rows skipped with the
// reader's "file:line: reason"; Generate and BatchAugment with spans given per text on a tiny real checkpoint (a random
// model that never emits sentinels, so they are forced) — every candidate keeps every span at the
// offsets it reports, and the history records the spans as the CLI does; a protect setting sent
// with UpdateSettings reaches a running batch's next row batch.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "engine_fixtures.h"
#include "t5s/engine_thread.h"
#include "t5s/history_store.h"
#include "t5s/span_preview.h"

using namespace t5s;
namespace fs = std::filesystem;

namespace {

struct Waiter : test::EventLog {
    using EventLog::EventLog;
    // Reads events until `match` accepts one of them (a JobFailed for `job` fails the test).
    template <class Match>
    void scan(JobId job, double seconds, Match match) {
        const auto at = find([&](const Event& e) { return test::of_job<JobFailed>(e, job) || match(e); }, seconds);
        if (!at) FAIL("timed out waiting for job " << job);
        if (auto* f = test::of_job<JobFailed>(all[*at], job)) FAIL("job " << job << " failed: " << f->message);
    }
    // The event of type T for `job`.
    template <class T>
    T wait(JobId job, double seconds = 120) {
        T found{};
        scan(job, seconds, [&](const Event& e) {
            auto* t = std::get_if<T>(&e);
            if (t && t->job == job) found = *t;
            return t && t->job == job;
        });
        return found;
    }
    // Whichever of A and B comes first for `job`: true for A.
    template <class A, class B>
    bool first_of(JobId job, double seconds = 120) {
        bool a_first = false;
        scan(job, seconds, [&](const Event& e) {
            if (auto* a = std::get_if<A>(&e); a && a->job == job) return a_first = true;
            auto* b = std::get_if<B>(&e);
            return b && b->job == job;
        });
        return a_first;
    }
};

fs::path fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("t5s_spans_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::string slice(const std::string& text, const Span& s) {
    const size_t a = byte_of_code_point(text, s.start), b = byte_of_code_point(text, s.end);
    return text.substr(a, b - a);
}

// Every candidate has each input span once, at offsets that hold the input span's text.
void check_kept(const GenerationResult& r, const std::vector<Span>& given) {
    for (const Span& g : given) CHECK(std::find(r.spans.begin(), r.spans.end(), g) != r.spans.end());
    REQUIRE_FALSE(r.candidates.empty());
    for (const auto& c : r.candidates) {
        REQUIRE(c.spans.size() == r.spans.size());
        for (size_t k = 0; k < r.spans.size(); ++k) {
            bool found = false;
            for (const Span& cs : c.spans)
                found = found || (cs.label == r.spans[k].label && slice(c.text, cs) == slice(r.input, r.spans[k]));
            CHECK(found);
        }
    }
}

}  // namespace

TEST_CASE("engine thread: a labelled JSONL file gives each row's spans and label", "[engine_thread][spans]") {
    const fs::path dir = fresh_dir("dataset");
    const fs::path file = dir / "ner.jsonl";
    std::ofstream(file)
        << R"({"text": "Anna flew to 東京 😀 today", "spans": [[0, 4, "PER"], [13, 15, "LOC"]], "label": "travel"})"
           "\n"
        << R"({"text": "no spans here", "label": 3})"
           "\n"
        << R"({"text": "Bob", "entities": [{"start_offset": 0, "end_offset": 3, "label": "PER"}]})"
           "\n"
        << R"({"text": "too short", "spans": [[0, 40, "X"]]})"
           "\n"
        << R"({"text": "overlap", "spans": [[0, 4, "A"], [2, 6, "B"]]})"
           "\n"
        << R"({"text": "abc", "spans": "nope"})"
           "\n"
        << R"({"text": "abc", "spans": [[-1, 2, "A"]]})"
           "\n"
        << R"({"text": "abc", "spans": [[0, 1, {"k": 1}]]})"
           "\n";
    EngineConfig config = test::quiet_config();
    EngineThread engine(config);
    Waiter w{engine};
    const auto loaded = w.wait<DatasetLoaded>(engine.submit(LoadDataset{file, ""}), 30);
    CHECK(loaded.column == "text");
    REQUIRE(loaded.rows.size() == 3);
    REQUIRE(loaded.spans.size() == 3);
    REQUIRE(loaded.labels.size() == 3);
    CHECK(loaded.spans[0] == std::vector<Span>{{0, 4, "PER"}, {13, 15, "LOC"}});  // code points: 東京 is 13..15
    CHECK(slice(loaded.rows[0], loaded.spans[0][1]) == "東京");
    CHECK(loaded.spans[1].empty());
    CHECK(loaded.spans[2] == std::vector<Span>{{0, 3, "PER"}});
    CHECK(loaded.labels == std::vector<std::string>{"travel", "3", ""});
    // The reader's words for each skipped row, with its line (the core's span rules: t5s/span_json.h).
    const std::string f = file.string();
    CHECK(loaded.warnings ==
          std::vector<std::string>{
              f + ":4: \"spans\": span [0, 40] is not inside the text (9 code points)",
              f + ":5: \"spans\": two spans overlap at code point 2",
              f + ":6: \"spans\": spans must be a list of [start, end, label]",
              f + ":7: \"spans\": span offsets must be integers >= 0 (code points)",
              f + ":8: \"spans\": a span label must be a string",  // an object label: refused as everywhere else
          });
    // An unlabelled file: no spans, no labels.
    std::ofstream(dir / "plain.jsonl") << R"({"text": "a"})"
                                          "\n";
    const auto plain = w.wait<DatasetLoaded>(engine.submit(LoadDataset{dir / "plain.jsonl", ""}), 30);
    CHECK(plain.rows.size() == 1);
    CHECK(plain.spans.empty());
    CHECK(plain.labels.empty());
    fs::remove_all(dir);
}

TEST_CASE("engine thread: labelled CSV and TSV files give each row's spans and label, bad rows by line",
          "[engine_thread][spans]") {
    const fs::path dir = fresh_dir("delimited");
    EngineConfig config = test::quiet_config();
    EngineThread engine(config);
    Waiter w{engine};
    const fs::path csv = dir / "ner.csv";
    std::ofstream(csv, std::ios::binary)
        << "id,Text,label,spans\r\n"
        << "1,\"Anna flew to 東京, then home\",travel,\"[[0,4,\"\"PER\"\"],[13,15,\"\"LOC\"\"]]\"\r\n"
        << "2,a plain row,,\r\n"
        << "3,too short,x,\"[[0,99,\"\"X\"\"]]\"\r\n"
        << "4,three,fields\r\n"
        << "5,\"last, good\",food,\r\n";
    const auto c = w.wait<DatasetLoaded>(engine.submit(LoadDataset{csv, ""}), 30);
    CHECK(c.columns == std::vector<std::string>{"id", "Text", "label", "spans"});
    CHECK(c.column == "Text");  // the text-looking column, any case
    CHECK(c.rows == std::vector<std::string>{"Anna flew to 東京, then home", "a plain row", "last, good"});
    REQUIRE(c.spans.size() == 3);
    CHECK(c.spans[0] == std::vector<Span>{{0, 4, "PER"}, {13, 15, "LOC"}});
    CHECK(slice(c.rows[0], c.spans[0][1]) == "東京");
    CHECK(c.spans[1].empty());
    CHECK(c.labels == std::vector<std::string>{"travel", "", "food"});
    CHECK(c.warnings ==
          std::vector<std::string>{csv.string() + ":4: \"spans\": span [0, 99] is not inside the text (9 code points)",
                                   csv.string() + ":5: missing column (3 fields, header has 4)"});

    const fs::path tsv = dir / "ner.tsv";
    std::ofstream(tsv, std::ios::binary) << "text\tlabel\tspans\n"
                                         << "😀 Bob waves\tgreeting\t[[2,5,\"PER\"]]\n"
                                         << "\n"
                                         << "\xff bad bytes\tx\t\n"
                                         << "no spans\t4.5\t\n";
    const auto t = w.wait<DatasetLoaded>(engine.submit(LoadDataset{tsv, ""}), 30);
    CHECK(t.column == "text");
    CHECK(t.rows == std::vector<std::string>{"😀 Bob waves", "no spans"});
    REQUIRE(t.spans.size() == 2);
    CHECK(t.spans[0] == std::vector<Span>{{2, 5, "PER"}});  // code points: the emoji is one
    CHECK(slice(t.rows[0], t.spans[0][0]) == "Bob");
    CHECK(t.labels == std::vector<std::string>{"greeting", "4.5"});
    REQUIRE(t.warnings.size() == 1);
    CHECK(t.warnings[0].rfind(tsv.string() + ":4: invalid UTF-8 in 'text'", 0) == 0);
    fs::remove_all(dir);
}

TEST_CASE("engine thread: a Label Studio export gives each task's spans and choice, bad tasks named", "[engine_thread][spans]") {
    const fs::path dir = fresh_dir("labelstudio");
    const fs::path file = dir / "export.json";
    std::ofstream(file) << R"([
 {"id": 1, "data": {"text": "Meet Anna in 東京"}, "annotations": [{"result": [
   {"from_name": "label", "to_name": "text", "type": "labels", "value": {"start": 5, "end": 9, "text": "Anna", "labels": ["PER"]}},
   {"from_name": "label", "to_name": "text", "type": "labels", "value": {"start": 13, "end": 15, "text": "東京", "labels": ["LOC"]}},
   {"from_name": "choice", "to_name": "text", "type": "choices", "value": {"choices": ["travel"]}}]}]},
 {"id": 2, "data": {"text": "not annotated yet"}},
 {"id": 3, "data": {"text": "utf16 offsets 😀 Bob"}, "predictions": [{"result": [
   {"from_name": "label", "to_name": "text", "type": "labels", "value": {"start": 17, "end": 20, "text": "Bob", "labels": ["PER"]}}]}]},
 {"id": 4, "data": {}}
])";
    EngineConfig config = test::quiet_config();
    EngineThread engine(config);
    Waiter w{engine};
    const auto loaded = w.wait<DatasetLoaded>(engine.submit(LoadDataset{file, ""}), 30);
    CHECK(loaded.columns == std::vector<std::string>{"text"});
    CHECK(loaded.rows == std::vector<std::string>{"Meet Anna in 東京", "not annotated yet"});
    REQUIRE(loaded.spans.size() == 2);
    CHECK(loaded.spans[0] == std::vector<Span>{{5, 9, "PER"}, {13, 15, "LOC"}});
    CHECK(slice(loaded.rows[0], loaded.spans[0][1]) == "東京");
    CHECK(loaded.spans[1].empty());
    CHECK(loaded.labels == std::vector<std::string>{"travel", ""});
    const std::string f = file.string();
    CHECK(loaded.warnings ==
          std::vector<std::string>{
              f + ": task 3: labels result [17, 20) says 'Bob' but the text there (code points) is 'ob'",  // UTF-16 offsets
              f + ": task 4: missing text field (looked for \"text\", any case; the row has none; name one with --text-field "
                  "NAME)"});
    fs::remove_all(dir);
}

TEST_CASE("engine thread: spans given with Generate and BatchAugment are kept, forced and recorded",
          "[engine_thread][spans][model]") {
    const fs::path model = test::tiny_model_dir();
    REQUIRE(fs::exists(model / "config.json"));  // part of the repository
    const fs::path dir = fresh_dir("generate");
    EngineConfig config = test::quiet_config();
    config.history_db = dir / "history.db";
    EngineThread engine(config);
    Waiter w{engine};
    const RuntimeOptions ro = test::one_cpu_thread();
    w.wait<ModelLoaded>(engine.submit(LoadModel{model, ro}));

    Generate g;
    g.texts = {"Meet Anna in Zürich at 5 pm", "東京で会いましょう"};
    g.spans = {{{5, 9, "PER"}, {13, 19, "LOC"}}, {{0, 2, "LOC"}}};
    g.options.protect = "numbers";
    g.options.max_new_tokens = 12;
    g.options.num_beams = 2;
    g.options.num_return_sequences = 2;
    const auto done = w.wait<GenerationDone>(engine.submit(g));
    REQUIRE(done.results.size() == 2);
    check_kept(done.results[0], g.spans[0]);
    check_kept(done.results[1], g.spans[1]);
    CHECK(done.results[0].spans.size() == 3);  // the number detected besides the two given
    int forced = 0;
    for (const auto& r : done.results)
        for (const auto& c : r.candidates) forced += c.forced_spans;
    CHECK(forced > 0);  // the random model emits no sentinel on its own
    // The history keeps the spans as the CLI records them.
    REQUIRE(done.history_ids.size() == 2);
    HistoryStore history(config.history_db.string());
    const auto record = history.get(done.history_ids[0]);
    REQUIRE(record);
    const RecordSpans recorded = spans_of_settings_json(record->settings_json);
    CHECK(recorded.input == done.results[0].spans);
    REQUIRE(recorded.candidates.size() == done.results[0].candidates.size());
    CHECK(recorded.candidates[0] == done.results[0].candidates[0].spans);

    BatchAugment b;
    b.name = "ner";
    b.rows = {"Bob lives in Paris", "no spans", "Call {name} now"};
    b.spans = {{{0, 3, "PER"}, {13, 18, "LOC"}}, {}, {}};
    b.options.max_new_tokens = 10;
    b.options.protect = "placeholders";
    const JobId job = engine.submit(b);
    w.wait<JobFinished>(job);
    std::vector<BatchRowDone> rows;
    for (const auto& e : w.all)
        if (auto* r = std::get_if<BatchRowDone>(&e); r && r->job == job) rows.push_back(*r);
    REQUIRE(rows.size() == 3);
    for (const auto& r : rows) {
        if (r.row == 0) check_kept(r.result, b.spans[0]);
        if (r.row == 1) CHECK(r.result.spans.empty());
        if (r.row == 2) CHECK(r.result.spans == std::vector<Span>{{5, 11, "placeholder"}});
    }
    fs::remove_all(dir);
}

TEST_CASE("engine thread: protect sent with UpdateSettings reaches a running batch's next rows",
          "[engine_thread][spans][model]") {
    const fs::path model = test::tiny_model_dir();
    REQUIRE(fs::exists(model / "config.json"));
    EngineConfig config = test::quiet_config();
    EngineThread engine(config);
    Waiter w{engine};
    const RuntimeOptions ro = test::one_cpu_thread();
    w.wait<ModelLoaded>(engine.submit(LoadModel{model, ro}));
    BatchAugment b;
    b.name = "hot";
    b.rows = {"row one has 5 kg", "row two has 7 kg", "row three has 9 kg"};
    b.options.batch_size = 1;  // a row batch per row: pause and settings act between rows
    b.options.max_new_tokens = 6;
    // The pause acts between rows; on a loaded machine the lane can finish every row before it
    // arrives. Such a run shows nothing: run the batch again (under another name) until one pauses.
    JobId job = 0;
    for (int attempt = 0; attempt < 8 && job == 0; ++attempt) {
        b.name = "hot" + std::to_string(attempt);
        const JobId tried = engine.submit(b);
        engine.submit(PauseJob{tried});
        if (w.first_of<JobPaused, JobFinished>(tried)) job = tried;
    }
    REQUIRE(job != 0);
    JobPaused paused;
    for (const auto& e : w.all)
        if (auto* p = std::get_if<JobPaused>(&e); p && p->job == job) paused = *p;
    REQUIRE(paused.done < 3);
    GenerationOptions live = b.options;
    live.protect = "numbers";
    engine.submit(UpdateSettings{live});
    engine.submit(ResumeJob{job});
    w.wait<JobFinished>(job);
    int rows = 0;
    for (const auto& e : w.all) {
        auto* r = std::get_if<BatchRowDone>(&e);
        if (!r || r->job != job) continue;
        ++rows;
        const bool after_resume = r->row >= paused.done;
        CHECK(r->result.spans.size() == (after_resume ? 1u : 0u));  // "N kg" from the next row batch on
        if (after_resume) check_kept(r->result, {});
    }
    CHECK(rows == 3);
}
