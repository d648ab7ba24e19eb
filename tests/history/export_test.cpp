// Export: byte-exact JSONL / CSV / TSV on a small history, accepted-only, dedupe, originals,
// progress and cancel, atomic no-overwrite, missing directory, and a "full disk" (RLIMIT_FSIZE).
#include <sys/resource.h>
#include <sys/wait.h>
#include <catch2/catch.hpp>
#include <csignal>

#include <nlohmann/json.hpp>
#include <sstream>

#include "input/delimited_text.h"
#include "t5s/error.h"
#include "t5s/history_store.h"
#include "test_util.h"

using namespace t5s;
using namespace t5s::test;

namespace {

constexpr int64_t kT0 = 1714564800000;  // 2024-05-01T12:00:00.000Z

// gen 1: quotes, comma, newline, tab, backslash; gen 2: CJK, an edit with quotes; gen 3: duplicate
// candidates (and a target equal to another generation's pair).
void fill(HistoryStore& store) {
    const auto g1 =
        store.record(sample_record("He said \"hi\", then left", {"Line one\nline two", "tab\there", "back\\slash"}, kT0, "m"));
    const auto g2 = store.record(sample_record("中文，输入", {"日本語のテキスト", "plain"}, kT0 + 1000, "m"));
    const auto g3 = store.record(sample_record("dup src", {"same", "same", "other"}, kT0 + 2000, "m"));
    store.accept(g1, 0);
    store.reject(g1, 1);
    store.edit(g2, 0, "編集した \"テキスト\"");
    store.accept(g2, 1);
    store.accept(g3, 0);
    store.accept(g3, 1);
}

// A candidate with its protected spans.
Candidate spanned(const std::string& text, std::vector<Span> spans) {
    Candidate c;
    c.text = text;
    c.spans = std::move(spans);
    return c;
}

GenerationResult spanned_result(const std::string& input, std::vector<Span> spans, std::vector<Candidate> candidates) {
    GenerationResult result;
    result.input = input;
    result.spans = std::move(spans);
    result.candidates = std::move(candidates);
    return result;
}

// The record of `result` with its spans in the settings, as generate stores it.
GenerationRecord spanned_record(const GenerationResult& result) {
    std::vector<std::string> texts;
    for (const Candidate& c : result.candidates) texts.push_back(c.text);
    GenerationRecord rec = sample_record(result.input, texts, kT0, "m");
    rec.settings_json = settings_json_with_spans("{}", result);
    return rec;
}

std::string export_string(HistoryStore& store, const TempDir& dir, const std::string& name, ExportOptions opts,
                          ExportResult* result = nullptr) {
    const ExportResult r = store.export_to(dir.file(name), opts);
    if (result) *result = r;
    CHECK(r.bytes_written == static_cast<int64_t>(read_file(dir.file(name)).size()));
    return read_file(dir.file(name));
}

}  // namespace

TEST_CASE("CSV export is RFC 4180, byte for byte", "[history][export]") {
    TempDir dir;
    HistoryStore store(":memory:");
    fill(store);
    ExportOptions o;
    o.format = ExportFormat::Csv;
    ExportResult r;
    const std::string csv = export_string(store, dir, "all.csv", o, &r);
    const std::string expected =
        "source,target,kind,state,score,rank,generation_id,model,model_hash,created_at\r\n"
        "\"He said \"\"hi\"\", then left\",\"Line one\nline "
        "two\",candidate,accepted,-0.5,0,1,m,sha256:m,2024-05-01T12:00:00.000Z\r\n"
        "\"He said \"\"hi\"\", then left\",tab\there,candidate,rejected,-1.25,1,1,m,sha256:m,2024-05-01T12:00:00.000Z\r\n"
        "\"He said \"\"hi\"\", then left\",back\\slash,candidate,none,-2.0,2,1,m,sha256:m,2024-05-01T12:00:00.000Z\r\n"
        "中文，输入,\"編集した \"\"テキスト\"\"\",candidate,edited,-0.5,0,2,m,sha256:m,2024-05-01T12:00:01.000Z\r\n"
        "中文，输入,plain,candidate,accepted,-1.25,1,2,m,sha256:m,2024-05-01T12:00:01.000Z\r\n"
        "dup src,same,candidate,accepted,-0.5,0,3,m,sha256:m,2024-05-01T12:00:02.000Z\r\n"
        "dup src,same,candidate,accepted,-1.25,1,3,m,sha256:m,2024-05-01T12:00:02.000Z\r\n"
        "dup src,other,candidate,none,-2.0,2,3,m,sha256:m,2024-05-01T12:00:02.000Z\r\n";
    CHECK(csv == expected);
    CHECK(r.rows_written == 8);
    CHECK(r.generations == 3);
    CHECK(r.duplicates_skipped == 0);
}

TEST_CASE("TSV export quotes tab, quote, newline and CR fields (RFC 4180 with tabs), byte for byte", "[history][export]") {
    TempDir dir;
    HistoryStore store(":memory:");
    fill(store);
    store.record(sample_record("cr\rhere", {"x"}, kT0 + 3000, "m"));
    ExportOptions o;
    o.format = ExportFormat::Tsv;
    o.filter.accepted_only = true;
    o.dedupe = true;
    ExportResult r;
    const std::string tsv = export_string(store, dir, "acc.tsv", o, &r);
    const std::string expected =
        "source\ttarget\tkind\tstate\tscore\trank\tgeneration_id\tmodel\tmodel_hash\tcreated_at\n"
        "\"He said \"\"hi\"\", then left\"\t\"Line one\nline "
        "two\"\tcandidate\taccepted\t-0.5\t0\t1\tm\tsha256:m\t2024-05-01T12:00:00.000Z\n"
        "中文，输入\t\"編集した \"\"テキスト\"\"\"\tcandidate\tedited\t-0.5\t0\t2\tm\tsha256:m\t2024-05-01T12:00:01.000Z\n"
        "中文，输入\tplain\tcandidate\taccepted\t-1.25\t1\t2\tm\tsha256:m\t2024-05-01T12:00:01.000Z\n"
        "dup src\tsame\tcandidate\taccepted\t-0.5\t0\t3\tm\tsha256:m\t2024-05-01T12:00:02.000Z\n";
    CHECK(tsv == expected);
    CHECK(r.rows_written == 4);
    CHECK(r.duplicates_skipped == 1);
}

TEST_CASE("TSV and CSV exports read back through the dataset reader field for field", "[history][export]") {
    TempDir dir;
    HistoryStore store(":memory:");
    fill(store);
    store.record(sample_record("\"starts with a quote", {"cr\rhere", "back\\slash \\t stays"}, kT0 + 3000, "m"));
    for (const ExportFormat format : {ExportFormat::Tsv, ExportFormat::Csv}) {
        ExportOptions o;
        o.format = format;
        const std::string text = export_string(store, dir, format == ExportFormat::Tsv ? "all.tsv" : "all.csv", o);
        std::istringstream in(text);
        int64_t line_no = 0;
        DelimitedRecord rec;
        std::vector<std::pair<std::string, std::string>> pairs;
        REQUIRE(read_delimited_record(in, format == ExportFormat::Tsv ? '\t' : ',', &line_no, &rec));  // header
        while (read_delimited_record(in, format == ExportFormat::Tsv ? '\t' : ',', &line_no, &rec)) {
            REQUIRE(rec.fields.size() == 10);
            CHECK_FALSE(rec.unterminated_quote);
            pairs.emplace_back(rec.fields[0], rec.fields[1]);
        }
        const std::vector<std::pair<std::string, std::string>> want = {{"He said \"hi\", then left", "Line one\nline two"},
                                                                       {"He said \"hi\", then left", "tab\there"},
                                                                       {"He said \"hi\", then left", "back\\slash"},
                                                                       {"中文，输入", "編集した \"テキスト\""},
                                                                       {"中文，输入", "plain"},
                                                                       {"dup src", "same"},
                                                                       {"dup src", "same"},
                                                                       {"dup src", "other"},
                                                                       {"\"starts with a quote", "cr\rhere"},
                                                                       {"\"starts with a quote", "back\\slash \\t stays"}};
        CHECK(pairs == want);
    }
}

TEST_CASE("JSONL export carries protected spans: the source's and each candidate's at its own offsets", "[history][export]") {
    TempDir dir;
    HistoryStore store(":memory:");
    const Candidate a = spanned("{name} gets $5", {{0, 6, "placeholder"}, {12, 14, "number"}});
    const Candidate b = spanned("$5 for {name}", {{0, 2, "number"}, {7, 13, "placeholder"}});
    const GenerationResult result = spanned_result("Pay $5 to {name}", {{4, 6, "number"}, {10, 16, "placeholder"}}, {a, b});
    const GenerationId g = store.record(spanned_record(result));
    store.accept(g, 0);
    store.accept(g, 1);
    store.record(sample_record("no spans", {"none"}, kT0 + 1000, "m"));
    ExportOptions o;
    o.format = ExportFormat::Jsonl;
    o.include_originals = true;
    ExportResult r;
    std::vector<nlohmann::json> rows = jsonl_rows_of(export_string(store, dir, "spans.jsonl", o, &r));
    REQUIRE(rows.size() == 5);
    const nlohmann::json source_spans = nlohmann::json::parse(R"([[4, 6, "number"], [10, 16, "placeholder"]])");
    CHECK(rows[0]["kind"] == "original");
    CHECK(rows[0]["source_spans"] == source_spans);
    CHECK(rows[0]["target_spans"] == source_spans);
    CHECK(rows[1]["target"] == a.text);
    CHECK(rows[1]["source_spans"] == source_spans);
    CHECK(rows[1]["target_spans"] == nlohmann::json::parse(R"([[0, 6, "placeholder"], [12, 14, "number"]])"));
    CHECK(rows[2]["target_spans"] == nlohmann::json::parse(R"([[0, 2, "number"], [7, 13, "placeholder"]])"));
    CHECK_FALSE(rows[3].contains("source_spans"));  // a generation without spans: as before
    CHECK_FALSE(rows[4].contains("target_spans"));
}

TEST_CASE("labelled rows: the row label is kept and exported (JSONL, CSV --with-labels, Label Studio)",
          "[history][export][labels]") {
    TempDir dir;
    HistoryStore store(":memory:");
    const Candidate a = spanned("Zürich: 😀 Anna", {{0, 6, "LOC"}, {10, 14, "PER"}});
    const Candidate b = spanned("Anna, Zürich", {{0, 4, "PER"}, {6, 12, "LOC"}});
    const GenerationResult result = spanned_result("😀 Anna in Zürich", {{2, 6, "PER"}, {10, 16, "LOC"}}, {a, b});
    GenerationRecord rec = spanned_record(result);
    rec.label_json = "\"travel\"";
    const GenerationId g = store.record(rec);
    CHECK(store.get(g)->label_json == "\"travel\"");
    store.accept(g, 0);
    store.record(sample_record("no label", {"none"}, kT0 + 1000, "m"));
    CHECK(store.get(g + 1)->label_json.empty());

    ExportOptions o;
    o.format = ExportFormat::Jsonl;
    std::vector<nlohmann::json> rows = jsonl_rows_of(export_string(store, dir, "l.jsonl", o));
    REQUIRE(rows.size() == 3);
    CHECK(rows[0]["label"] == "travel");
    CHECK_FALSE(rows[2].contains("label"));

    o.format = ExportFormat::Csv;
    o.with_labels = true;
    const std::string csv = export_string(store, dir, "l.csv", o);
    CHECK(csv.rfind(
              "source,target,kind,state,score,rank,generation_id,model,model_hash,created_at,label,source_spans,target_spans\r\n",
              0) == 0);
    CHECK(csv.find(",travel,\"[[2,6,\"\"PER\"\"],[10,16,\"\"LOC\"\"]]\",\"[[0,6,\"\"LOC\"\"],[10,14,\"\"PER\"\"]]\"\r\n") !=
          std::string::npos);

    o.format = ExportFormat::LabelStudio;
    const nlohmann::json tasks = nlohmann::json::parse(export_string(store, dir, "l.json", o));
    REQUIRE(tasks.size() == 3);
    CHECK(tasks[0]["data"]["text"] == a.text);
    CHECK(tasks[0]["data"]["source"] == result.input);
    REQUIRE(tasks[0].contains("annotations"));  // accepted
    const auto& res = tasks[0]["annotations"][0]["result"];
    CHECK(res[0]["value"]["text"] == "Zürich");
    CHECK(res[1]["value"]["start"] == 10);
    CHECK(res[1]["value"]["text"] == "Anna");
    CHECK(res[2]["value"]["choices"] == nlohmann::json::array({"travel"}));
    CHECK(tasks[1].contains("predictions"));
    CHECK(tasks[2]["predictions"][0]["result"].empty());
}

TEST_CASE("JSONL export: HF-style source/target, UTF-8 unescaped, originals, dedupe", "[history][export]") {
    TempDir dir;
    HistoryStore store(":memory:");
    fill(store);
    ExportOptions o;
    o.format = ExportFormat::Jsonl;
    o.filter.accepted_only = true;
    o.include_originals = true;
    o.dedupe = true;
    ExportResult r;
    const std::string jsonl = export_string(store, dir, "out.jsonl", o, &r);
    const std::string expected =
        R"({"source":"He said \"hi\", then left","target":"He said \"hi\", then left","kind":"original","state":null,"score":null,"rank":null,"generation_id":1,"model":"m","model_hash":"sha256:m","created_at":"2024-05-01T12:00:00.000Z"})"
        "\n"
        R"({"source":"He said \"hi\", then left","target":"Line one\nline two","kind":"candidate","state":"accepted","score":-0.5,"rank":0,"generation_id":1,"model":"m","model_hash":"sha256:m","created_at":"2024-05-01T12:00:00.000Z"})"
        "\n"
        R"({"source":"中文，输入","target":"中文，输入","kind":"original","state":null,"score":null,"rank":null,"generation_id":2,"model":"m","model_hash":"sha256:m","created_at":"2024-05-01T12:00:01.000Z"})"
        "\n"
        R"({"source":"中文，输入","target":"編集した \"テキスト\"","kind":"candidate","state":"edited","score":-0.5,"rank":0,"generation_id":2,"model":"m","model_hash":"sha256:m","created_at":"2024-05-01T12:00:01.000Z"})"
        "\n"
        R"({"source":"中文，输入","target":"plain","kind":"candidate","state":"accepted","score":-1.25,"rank":1,"generation_id":2,"model":"m","model_hash":"sha256:m","created_at":"2024-05-01T12:00:01.000Z"})"
        "\n"
        R"({"source":"dup src","target":"dup src","kind":"original","state":null,"score":null,"rank":null,"generation_id":3,"model":"m","model_hash":"sha256:m","created_at":"2024-05-01T12:00:02.000Z"})"
        "\n"
        R"({"source":"dup src","target":"same","kind":"candidate","state":"accepted","score":-0.5,"rank":0,"generation_id":3,"model":"m","model_hash":"sha256:m","created_at":"2024-05-01T12:00:02.000Z"})"
        "\n";
    CHECK(jsonl == expected);
    CHECK(r.rows_written == 7);
    CHECK(r.duplicates_skipped == 1);
    CHECK(r.generations == 3);

    // Without accepted-only, rejected and undecided candidates are there, marked by state.
    ExportOptions all;
    const std::string everything = export_string(store, dir, "all.jsonl", all);
    CHECK(std::count(everything.begin(), everything.end(), '\n') == 8);
    CHECK(everything.find(R"("target":"tab\there","kind":"candidate","state":"rejected")") != std::string::npos);
}

TEST_CASE("export filters by search text, and an empty selection still writes a valid file", "[history][export]") {
    TempDir dir;
    HistoryStore store(":memory:");
    fill(store);
    ExportOptions o;
    o.format = ExportFormat::Csv;
    o.filter.text = "中文";
    ExportResult r;
    const std::string csv = export_string(store, dir, "cjk.csv", o, &r);
    CHECK(r.rows_written == 2);
    CHECK(csv.find("plain") != std::string::npos);
    CHECK(csv.find("dup src") == std::string::npos);
    o.filter.text = "nothing matches";
    const std::string empty = export_string(store, dir, "empty.csv", o, &r);
    CHECK(r.rows_written == 0);
    CHECK(empty == "source,target,kind,state,score,rank,generation_id,model,model_hash,created_at\r\n");
    o.format = ExportFormat::Jsonl;
    CHECK(export_string(store, dir, "empty.jsonl", o).empty());
}

TEST_CASE("export never overwrites without overwrite=true and leaves no temp files", "[history][export]") {
    TempDir dir;
    HistoryStore store(":memory:");
    fill(store);
    const std::string path = dir.file("out.csv");
    write_file(path, "precious");
    ExportOptions o;
    o.format = ExportFormat::Csv;
    try {
        store.export_to(path, o);
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
        CHECK(std::string(e.what()).find(path) != std::string::npos);
        CHECK(std::string(e.what()).find("already exists") != std::string::npos);
    }
    CHECK(read_file(path) == "precious");
    CHECK(dir.entries() == std::vector<std::string>{"out.csv"});
    o.overwrite = true;
    const ExportResult r = store.export_to(path, o);
    CHECK(r.rows_written == 8);
    CHECK(read_file(path).rfind("source,target,", 0) == 0);
    CHECK(dir.entries() == std::vector<std::string>{"out.csv"});

    // A directory at the target, a missing directory and a file used as a directory: clear errors.
    ::mkdir(dir.file("adir").c_str(), 0755);
    CHECK_THROWS_WITH(store.export_to(dir.file("adir"), o), Catch::Contains("is a directory"));
    try {
        store.export_to(dir.file("missing/out.csv"), o);
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::FileNotFound);
        CHECK(std::string(e.what()).find(dir.file("missing/out.csv")) != std::string::npos);
    }
    CHECK_THROWS_AS(store.export_to(dir.file("out.csv/inner.csv"), o), Error);
    CHECK(dir.entries() == std::vector<std::string>{"adir", "out.csv"});
}

TEST_CASE("export reports progress and cancels cleanly", "[history][export]") {
    TempDir dir;
    HistoryStore store(":memory:");
    std::vector<GenerationRecord> batch;
    for (int i = 0; i < 1500; ++i) batch.push_back(sample_record("row " + std::to_string(i), {"a", "b"}));
    store.record_many(batch);

    std::vector<ExportProgress> seen;
    const ExportResult r = store.export_to(dir.file("p.jsonl"), {}, [&](const ExportProgress& p) { seen.push_back(p); });
    CHECK(r.rows_written == 3000);
    REQUIRE(seen.size() == 4);  // 1000, 2000, 3000 and the final call
    CHECK(seen[0].candidates_done == 1000);
    CHECK(seen[0].candidates_total == 3000);
    CHECK(seen.back().candidates_done == 3000);
    CHECK(seen.back().rows_written == 3000);

    std::atomic<bool> cancel{false};
    try {
        store.export_to(
            dir.file("c.jsonl"), {}, [&](const ExportProgress&) { cancel = true; }, &cancel);
        FAIL("expected Cancelled");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::Cancelled);
    }
    CHECK(dir.entries() == std::vector<std::string>{"p.jsonl"});
}

TEST_CASE("a full disk mid-export names the file, removes the temp file, keeps the old file", "[history][export]") {
    TempDir dir;
    const std::string path = dir.file("big.jsonl");
    write_file(path, "old content\n");
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // Child: a file size limit makes write() fail with EFBIG like a full disk fails with ENOSPC.
        int status = 10;
        try {
            HistoryStore store(":memory:");
            std::vector<GenerationRecord> batch;
            for (int i = 0; i < 2000; ++i) batch.push_back(sample_record("row " + std::to_string(i), {"candidate text"}));
            store.record_many(batch);
            std::signal(SIGXFSZ, SIG_IGN);
            rlimit lim{};
            lim.rlim_cur = lim.rlim_max = 64 * 1024;
            ::setrlimit(RLIMIT_FSIZE, &lim);
            ExportOptions o;
            o.overwrite = true;
            store.export_to(path, o);
            status = 11;  // should not succeed
        } catch (const Error& e) {
            const std::string m = e.what();
            status = (m.find(path) != std::string::npos && m.find("too large") != std::string::npos) ? 0 : 12;
        } catch (...) {
            status = 13;
        }
        ::_exit(status);
    }
    int wstatus = 0;
    REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
    REQUIRE(WIFEXITED(wstatus));
    CHECK(WEXITSTATUS(wstatus) == 0);
    CHECK(read_file(path) == "old content\n");
    CHECK(dir.entries() == std::vector<std::string>{"big.jsonl"});
}

TEST_CASE("export format names", "[history][export]") {
    CHECK(parse_enum<ExportFormat>("jsonl") == ExportFormat::Jsonl);
    CHECK(parse_enum<ExportFormat>("csv") == ExportFormat::Csv);
    CHECK(parse_enum<ExportFormat>("tsv") == ExportFormat::Tsv);
    CHECK(parse_enum<ExportFormat>("labelstudio") == ExportFormat::LabelStudio);
    CHECK(std::string(to_string(ExportFormat::Tsv)) == "tsv");
    CHECK(std::string(to_string(ExportFormat::LabelStudio)) == "labelstudio");
    CHECK(parse_enum<ExportFormat>("hf-dataset") == ExportFormat::HfDataset);
    CHECK(std::string(to_string(ExportFormat::HfDataset)) == "hf-dataset");
    CHECK_THROWS_WITH(parse_enum<ExportFormat>("xlsx"),
                      "unknown export format 'xlsx' (expected jsonl, csv, tsv, labelstudio or hf-dataset)");
}
