// HistoryStore on :memory: and on files: recording, decisions / undo / redo, search (Latin + CJK),
// keyset paging, filters, delete.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include "t5s/error.h"
#include "t5s/history_store.h"
#include "test_util.h"

using namespace t5s;
using namespace t5s::test;

namespace {

std::vector<std::string> states(HistoryStore& store, GenerationId id) {
    std::vector<std::string> out;
    const auto g = store.get(id);  // keep the optional alive across the loop
    for (const auto& c : g->candidates) out.push_back(to_string(c.state));
    return out;
}

int64_t raw_count(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
    int64_t v = -1;
    if (st && sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

}  // namespace

TEST_CASE("generation options round-trip through JSON", "[history]") {
    GenerationOptions o;
    o.max_new_tokens = 33;
    o.num_beams = 4;
    o.temperature = 0.7f;
    o.top_p = 0.9f;
    o.do_sample = true;
    o.seed = 1234567890123;
    o.distinct = true;
    const std::string json = generation_options_to_json(o);
    CHECK(json.find("\"max_new_tokens\":33") != std::string::npos);
    const GenerationOptions back = generation_options_from_json(json);
    CHECK(back.max_new_tokens == 33);
    CHECK(back.num_beams == 4);
    CHECK(back.temperature == Approx(0.7f));
    CHECK(back.top_p == Approx(0.9f));
    CHECK(back.do_sample);
    CHECK(back.seed == 1234567890123);
    CHECK(back.distinct);
    CHECK(back.no_copy == false);
    // Missing fields keep defaults, unknown ones are ignored; garbage is an InvalidArgument.
    CHECK(generation_options_from_json(R"({"top_k":5,"future_knob":1})").top_k == 5);
    CHECK(generation_options_from_json("{}").max_new_tokens == GenerationOptions{}.max_new_tokens);
    try {
        generation_options_from_json("not json");
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
    }
}

TEST_CASE("record and read back every field", "[history]") {
    HistoryStore store(":memory:");
    CHECK(store.schema_version() == HistoryStore::kSchemaVersion);
    const GenerationId id = store.record(sample_record("The cat sat.", {"A cat was sitting.", "The cat sat down."}));
    CHECK(id > 0);
    auto g = store.get(id);
    REQUIRE(g);
    CHECK(g->input == "The cat sat.");
    CHECK(g->created_at_ms == 1714564800000);
    CHECK(g->seed == 42);
    CHECK(g->model_path == "models/tiny");
    CHECK(g->model_hash == "sha256:models/tiny");
    CHECK(g->precision == "fp32");
    CHECK(g->device == "cpu");
    CHECK(g->total_ms == Approx(12.5));
    CHECK(g->timings_json == R"({"encode_ms":2.5,"decode_ms":10})");
    CHECK(g->origin == "ui");
    CHECK(generation_options_from_json(g->settings_json).seed == 42);
    REQUIRE(g->candidates.size() == 2);
    CHECK(g->candidates[0].index == 0);
    CHECK(g->candidates[0].text == "A cat was sitting.");
    CHECK(g->candidates[0].score == Approx(-0.5));
    CHECK(g->candidates[1].score == Approx(-1.25));
    CHECK(g->candidates[1].state == CandidateState::None);
    CHECK(g->candidates[1].final_text == "The cat sat down.");
    CHECK(store.input_text(id).value() == "The cat sat.");
    CHECK_FALSE(store.get(id + 100));
    CHECK_FALSE(store.input_text(id + 100));

    // created_at 0 = the store's clock.
    HistoryStoreOptions opts;
    opts.clock_ms = [] { return int64_t{777}; };
    HistoryStore clocked(":memory:", opts);
    auto r = sample_record("x", {"y"});
    r.created_at_ms = 0;
    CHECK(clocked.get(clocked.record(r))->created_at_ms == 777);
}

TEST_CASE("a record names its LoRA adapter (in the settings JSON; none for older records)", "[history][lora]") {
    HistoryStore store(":memory:");
    auto with = sample_record("The cat sat.", {"A cat sat."});
    with.adapter = "/runs/lora/final";
    const GenerationId a = store.record(with);
    const GenerationId none = store.record(sample_record("x", {"y"}));
    CHECK(store.get(a)->adapter == "/runs/lora/final");
    CHECK(store.get(none)->adapter.empty());
    // The settings still read back as generation options (the extra key is ignored).
    CHECK(generation_options_from_json(store.get(a)->settings_json).seed == 42);
    HistoryQuery q;
    q.limit = 10;
    const auto page = store.list(q);
    REQUIRE(page.generations.size() == 2);
    CHECK(page.generations[0].adapter + page.generations[1].adapter == "/runs/lora/final");
    CHECK(adapter_of_settings_json("not json").empty());
    CHECK(settings_json_with_adapter("{\"seed\":1}", "") == "{\"seed\":1}");  // no adapter: unchanged
}

TEST_CASE("protected spans travel in the settings JSON; records without them read as none", "[history]") {
    HistoryStore store(":memory:");
    GenerationResult result;
    result.input = "Pay $5 to {name}";
    result.spans = {{4, 6, "number"}, {10, 16, "placeholder"}};
    Candidate c;
    c.text = "{name} gets $5";
    c.spans = {{0, 6, "placeholder"}, {12, 14, "number"}};
    result.candidates = {c};
    GenerationRecord rec = generation_record_of(result);
    rec.settings_json = settings_json_with_spans(generation_options_to_json({}), result);
    const GenerationId id = store.record(rec);
    const GenerationId old = store.record(sample_record("old", {"a"}));
    const RecordSpans back = spans_of_settings_json(store.get(id)->settings_json);
    CHECK(back.input == result.spans);
    REQUIRE(back.candidates.size() == 1);
    CHECK(back.candidates[0] == c.spans);
    CHECK(generation_options_from_json(store.get(id)->settings_json).max_new_tokens == GenerationOptions{}.max_new_tokens);
    const RecordSpans none = spans_of_settings_json(store.get(old)->settings_json);
    CHECK(none.input.empty());
    CHECK(none.candidates.empty());
    CHECK(settings_json_with_spans("{\"seed\":1}", GenerationResult{}) == "{\"seed\":1}");  // no spans: unchanged
}

TEST_CASE("decisions are events; state, undo and redo derive from them", "[history]") {
    int64_t t = 1000;
    HistoryStoreOptions opts;
    opts.clock_ms = [&t] { return t += 10; };
    HistoryStore store(":memory:", opts);
    const GenerationId id = store.record(sample_record("src", {"a", "b", "c"}));

    const int64_t e1 = store.accept(id, 0);
    store.reject(id, 1);
    const int64_t e3 = store.edit(id, 2, "c edited");
    CHECK(states(store, id) == std::vector<std::string>{"accepted", "rejected", "edited"});
    CHECK(store.get(id)->candidates[2].final_text == "c edited");
    CHECK(store.get(id)->candidates[2].text == "c");

    // Undo revokes the latest decision (the edit), then the reject.
    const int64_t u1 = store.undo(id);
    CHECK(u1 > e3);
    CHECK(states(store, id) == std::vector<std::string>{"accepted", "rejected", "none"});
    CHECK(store.get(id)->candidates[2].final_text == "c");
    store.undo(id);
    CHECK(states(store, id) == std::vector<std::string>{"accepted", "none", "none"});
    // Redo restores the reject; a new decision then clears the redo stack.
    CHECK(store.redo(id) > 0);
    CHECK(states(store, id) == std::vector<std::string>{"accepted", "rejected", "none"});
    store.reject(id, 0);
    CHECK(store.redo(id) == 0);
    CHECK(states(store, id) == std::vector<std::string>{"rejected", "rejected", "none"});
    store.undo(id);  // back to accepted for 0
    CHECK(states(store, id) == std::vector<std::string>{"accepted", "rejected", "none"});

    // Edit after reject = accepted with the edited text; reject after an edit = rejected.
    store.edit(id, 1, "b2");
    CHECK(states(store, id)[1] == "edited");
    store.reject(id, 1);
    CHECK(states(store, id)[1] == "rejected");
    store.accept(id, 1);  // the edit is still in effect below the reject
    CHECK(states(store, id)[1] == "edited");
    CHECK(store.get(id)->candidates[1].final_text == "b2");

    // Undo everything; a further undo does nothing and writes nothing.
    while (store.undo(id) != 0) {
    }
    CHECK(states(store, id) == std::vector<std::string>{"none", "none", "none"});
    const size_t n_events = store.events(id).size();
    CHECK(store.undo(id) == 0);
    CHECK(store.events(id).size() == n_events);

    // The log keeps every event with its time, kind, text and undo target.
    const auto ev = store.events(id);
    REQUIRE(ev.size() >= 4);
    CHECK(ev[0].id == e1);
    CHECK(ev[0].kind == EventKind::Accept);
    CHECK(ev[0].candidate_index == 0);
    CHECK(ev[2].kind == EventKind::Edit);
    CHECK(ev[2].text == "c edited");
    CHECK(ev[3].kind == EventKind::Undo);
    CHECK(ev[3].target_event_id == e3);
    CHECK(ev[3].candidate_index == 2);
    for (size_t i = 1; i < ev.size(); ++i) CHECK(ev[i].created_at_ms > ev[i - 1].created_at_ms);

    // Bad ids / indexes are InvalidArgument and write nothing.
    CHECK_THROWS_AS(store.accept(id, 3), Error);
    CHECK_THROWS_AS(store.accept(id, -1), Error);
    CHECK_THROWS_AS(store.reject(id + 1, 0), Error);
    try {
        store.undo(id + 1);
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
    }
    CHECK(store.events(id).size() == n_events);
}

TEST_CASE("derived state survives reopening a file and matches a second connection", "[history]") {
    TempDir dir;
    const std::string path = dir.file("h.sqlite");
    GenerationId id = 0;
    {
        HistoryStore store(path);
        id = store.record(sample_record("源文本", {"候选一", "候选二"}));
        store.edit(id, 1, "編集済み");
        store.accept(id, 0);
        HistoryStore other(path);  // one connection per thread: a second one sees committed rows
        CHECK(other.get(id)->candidates[1].final_text == "編集済み");
    }
    HistoryStore again(path);
    auto g = again.get(id);
    CHECK(g->candidates[0].state == CandidateState::Accepted);
    CHECK(g->candidates[1].state == CandidateState::Edited);
    CHECK(g->candidates[1].final_text == "編集済み");
    CHECK(again.undo(id) > 0);
    CHECK(again.get(id)->candidates[0].state == CandidateState::None);
    CHECK(raw_count(path, "SELECT count(*) FROM events") == 3);
    CHECK(again.integrity_check() == "ok");
}

TEST_CASE("search: Latin case-insensitive, CJK substrings, candidate and edited text, literal wildcards", "[history]") {
    HistoryStore store(":memory:");
    const auto a = store.record(sample_record("The quick brown fox", {"A fast brown fox"}));
    const auto b = store.record(sample_record("今天天气很好", {"今日は天気がいい", "天气不错"}));
    const auto c = store.record(sample_record("東京タワーに行きました", {"東京タワーへ行った"}));
    const auto d = store.record(sample_record("100% sure_thing", {"certain"}));
    store.edit(d, 0, "absolutely certain 🙂");

    auto ids = [&store](const std::string& q) {
        HistoryQuery query;
        query.filter.text = q;
        std::vector<GenerationId> out;
        for (const auto& g : store.list(query).generations) out.push_back(g.id);
        return out;
    };
    CHECK(ids("QUICK") == std::vector<GenerationId>{a});
    CHECK(ids("fast") == std::vector<GenerationId>{a});    // candidate text
    CHECK(ids("天气") == std::vector<GenerationId>{b});    // Chinese, input and candidate
    CHECK(ids("天気") == std::vector<GenerationId>{b});    // Japanese, candidate only
    CHECK(ids("タワー") == std::vector<GenerationId>{c});  // katakana in the middle of a word
    CHECK(ids("行") == std::vector<GenerationId>{c});
    CHECK(ids("absolutely") == std::vector<GenerationId>{d});  // edited text
    CHECK(ids("🙂") == std::vector<GenerationId>{d});
    CHECK(ids("100%") == std::vector<GenerationId>{d});  // % is literal
    CHECK(ids("0% s").size() == 1);
    CHECK(ids("e_t").size() == 1);  // _ is literal ("sure_thing")
    CHECK(ids("e_x").empty());
    CHECK(ids("%").size() == 1);
    CHECK(ids("not there").empty());
    CHECK(ids("").size() == 4);
    HistoryFilter f;
    f.text = "天";
    CHECK(store.count(f) == 1);
}

TEST_CASE("keyset paging walks every generation once, newest first", "[history]") {
    HistoryStore store(":memory:");
    std::vector<GenerationId> all;
    for (int i = 0; i < 25; ++i) all.push_back(store.record(sample_record("row " + std::to_string(i), {"x"})));
    std::vector<GenerationId> seen;
    HistoryQuery q;
    q.limit = 10;
    std::vector<size_t> sizes;
    for (;;) {
        auto page = store.list(q);
        sizes.push_back(page.generations.size());
        for (auto& g : page.generations) seen.push_back(g.id);
        if (!page.has_more) {
            CHECK(page.next_after_id == 0);
            break;
        }
        CHECK(page.next_after_id == page.generations.back().id);
        q.after_id = page.next_after_id;
    }
    CHECK(sizes == std::vector<size_t>{10, 10, 5});
    std::vector<GenerationId> expected(all.rbegin(), all.rend());
    CHECK(seen == expected);

    // Deleting rows between pages neither repeats nor skips the rest (keyset, not OFFSET).
    HistoryQuery q2;
    q2.limit = 5;
    auto p1 = store.list(q2);
    store.remove(p1.generations[2].id);
    store.remove(all[10]);
    q2.after_id = p1.next_after_id;
    auto p2 = store.list(q2);
    CHECK(p2.generations.front().id == p1.generations.back().id - 1);
    for (auto& g : p2.generations) CHECK(g.id != all[10]);

    // Exactly `limit` rows left: has_more is false.
    HistoryQuery q3;
    q3.limit = 23;  // 25 - 2 deleted
    CHECK_FALSE(store.list(q3).has_more);
    q3.limit = 22;
    CHECK(store.list(q3).has_more);
    q3.with_candidates = false;
    CHECK(store.list(q3).generations[0].candidates.empty());
    q3.limit = 0;
    CHECK_THROWS_AS(store.list(q3), Error);
}

TEST_CASE("filters: accepted only, model, date range, origin; combined with search", "[history]") {
    HistoryStore store(":memory:");
    const int64_t day = 86400000;
    const int64_t t0 = 1714564800000;
    auto r1 = sample_record("alpha one", {"a1", "a2"}, t0, "models/a");
    auto r2 = sample_record("alpha two", {"b1"}, t0 + day, "models/b");
    auto r3 = sample_record("beta three", {"c1"}, t0 + 2 * day, "models/a");
    r3.origin = "batch:data.tsv#3";
    const auto ids = store.record_many({r1, r2, r3});
    REQUIRE(ids.size() == 3);
    store.accept(ids[0], 1);
    store.edit(ids[2], 0, "c1 edited");
    store.reject(ids[1], 0);

    auto list = [&store](HistoryFilter f) {
        HistoryQuery q;
        q.filter = f;
        std::vector<GenerationId> out;
        for (auto& g : store.list(q).generations) out.push_back(g.id);
        CHECK(store.count(f) == static_cast<int64_t>(out.size()));
        return out;
    };
    HistoryFilter f;
    f.accepted_only = true;
    CHECK(list(f) == std::vector<GenerationId>{ids[2], ids[0]});
    f = {};
    f.model = "models/a";
    CHECK(list(f) == std::vector<GenerationId>{ids[2], ids[0]});
    f.model = "sha256:models/b";  // by content hash
    CHECK(list(f) == std::vector<GenerationId>{ids[1]});
    f = {};
    f.from_ms = t0 + day;
    CHECK(list(f) == std::vector<GenerationId>{ids[2], ids[1]});
    f.to_ms = t0 + 2 * day;  // exclusive
    CHECK(list(f) == std::vector<GenerationId>{ids[1]});
    f = {};
    f.origin_prefix = "batch:";
    CHECK(list(f) == std::vector<GenerationId>{ids[2]});
    CHECK(store.find_by_origin("batch:data.tsv#3").value() == ids[2]);
    CHECK_FALSE(store.find_by_origin("batch:data.tsv#4"));
    f = {};
    f.text = "alpha";
    f.accepted_only = true;
    CHECK(list(f) == std::vector<GenerationId>{ids[0]});
    f.model = "models/b";
    CHECK(list(f).empty());
    CHECK(store.count() == 3);
}

TEST_CASE("delete cascades to candidates and events", "[history]") {
    TempDir dir;
    const std::string path = dir.file("h.sqlite");
    GenerationId keep = 0, gone = 0;
    {
        HistoryStore store(path);
        keep = store.record(sample_record("keep", {"k1", "k2"}));
        gone = store.record(sample_record("gone", {"g1", "g2", "g3"}));
        store.accept(gone, 0);
        store.edit(gone, 1, "x");
        store.accept(keep, 1);
        CHECK(store.remove(gone));
        CHECK_FALSE(store.remove(gone));
        CHECK_FALSE(store.get(gone));
        CHECK(store.events(gone).empty());
        CHECK(store.get(keep)->candidates.size() == 2);
        // Ids are never reused after a delete.
        const GenerationId next = store.record(sample_record("next", {"n"}));
        CHECK(next > gone);
    }
    CHECK(raw_count(path, "SELECT count(*) FROM candidates") == 3);  // keep's 2 + next's 1
    CHECK(raw_count(path, ("SELECT count(*) FROM events WHERE generation_id = " + std::to_string(gone)).c_str()) == 0);
    CHECK(raw_count(path, "SELECT count(*) FROM events") == 1);
}

TEST_CASE("opening: missing directory and create_if_missing=false are FileNotFound", "[history]") {
    TempDir dir;
    try {
        HistoryStore store(dir.file("no/such/dir/h.sqlite"));
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::FileNotFound);
        CHECK(std::string(e.what()).find("no/such/dir") != std::string::npos);
    }
    HistoryStoreOptions opts;
    opts.create_if_missing = false;
    try {
        HistoryStore store(dir.file("absent.sqlite"), opts);
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::FileNotFound);
        CHECK(std::string(e.what()).find("absent.sqlite") != std::string::npos);
    }
    CHECK_FALSE(t5s::test::file_exists(dir.file("absent.sqlite")));
}
