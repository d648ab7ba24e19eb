// The one input reader (t5s/input_reader.h): every format read and written back to an equal file,
// code-point offsets on CJK / combining characters / emoji (Label Studio included), the one rule
// for blank lines, CRLF, BOM, invalid UTF-8 and malformed rows in every format, format detection.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "span_test_support.h"
#include "t5s/error.h"
#include "t5s/input_reader.h"
#include "test_support.h"

using namespace t5s;
using t5s::test::code_point_slice;
using t5s::test::TempDir;

namespace {

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Read {
    std::vector<InputRecord> rows;
    std::vector<BadRow> bad;
};

Read read_rows(const std::filesystem::path& p, InputFields fields = {}) {
    Read r;
    InputReader reader(p.string(), fields, BadRowPolicy::Skip, [&](const BadRow& b) { r.bad.push_back(b); });
    InputRecord rec;
    while (reader.next(&rec)) r.rows.push_back(rec);
    return r;
}

std::string fail_message(const std::filesystem::path& p) {
    try {
        InputReader reader(p.string(), {}, BadRowPolicy::Fail);
        InputRecord rec;
        while (reader.next(&rec)) {
        }
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

// Rows written by OutputWriter in `format`, as the file's text.
std::string written(InputFormat format, const std::vector<InputRecord>& rows) {
    OutputWriter w(format, /*with_source=*/false);
    std::string out = w.begin();
    for (const auto& r : rows) out += w.row({r.texts.at(0), r.spans, r.label_json, "", false});
    return out + w.end();
}

// Labelled rows with CJK, combining characters and emoji before and inside the spans.
std::vector<InputRecord> labelled_rows() {
    auto row = [](std::string text, std::vector<Span> spans, std::string label) {
        InputRecord r;
        r.texts = {std::move(text)};
        r.spans = std::move(spans);
        r.label_json = std::move(label);
        return r;
    };
    return {
        row("Anna flew to Zürich, then to 東京.", {{0, 4, "PER"}, {13, 19, "LOC"}, {29, 31, "LOC"}}, "\"travel\""),
        row("😀 e\u0301clair from Café 🇯🇵 \"quoted\", tab\there", {{2, 9, "FOOD"}, {15, 19, "ORG"}, {20, 22, "FLAG"}}, "\"food\""),
        row("日本語の文で、田中さんが3個買った。", {{7, 9, "PER"}}, ""),
        row("no spans, a label that is a number", {}, "4.5"),
        row("line one\nline two, with \"quotes\"", {{0, 4, "X"}}, "\"multi\""),
    };
}

void check_same_rows(const std::vector<InputRecord>& got, const std::vector<InputRecord>& want) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i].texts.at(0) == want[i].texts.at(0));
        CHECK(got[i].spans == want[i].spans);
        CHECK(got[i].label_json == want[i].label_json);
    }
}

}  // namespace

TEST_CASE("each format reads labelled rows and writes them back to an equal file", "[input]") {
    TempDir dir("input_roundtrip");
    const auto rows = labelled_rows();
    for (InputFormat f : {InputFormat::Jsonl, InputFormat::Csv, InputFormat::Tsv, InputFormat::LabelStudio}) {
        const std::string ext = f == InputFormat::LabelStudio ? ".json" : std::string(".") + to_string(f);
        const auto first = dir / ("first" + ext), second = dir / ("second" + ext);
        write(first, written(f, rows));
        CHECK(input_format_of(first.string()) == f);
        Read r = read_rows(first);
        CHECK(r.bad.empty());
        INFO(to_string(f));
        // The CSV/TSV label column is text: a number label comes back as the string "4.5".
        auto want = rows;
        if (f == InputFormat::Csv || f == InputFormat::Tsv || f == InputFormat::LabelStudio) want[3].label_json = "\"4.5\"";
        check_same_rows(r.rows, want);
        write(second, written(f, r.rows));
        CHECK(read(second) == read(first));
        for (const auto& row : r.rows)  // every span's text is where its offsets say (code points)
            for (const auto& s : row.spans) CHECK_FALSE(code_point_slice(row.texts[0], s.start, s.end).empty());
    }
}

TEST_CASE("the written formats are the documented ones", "[input]") {
    const auto rows = labelled_rows();
    const std::vector<InputRecord> one(rows.begin(), rows.begin() + 1);
    CHECK(written(InputFormat::Jsonl, one) ==
          "{\"text\":\"Anna flew to Zürich, then to "
          "東京.\",\"spans\":[[0,4,\"PER\"],[13,19,\"LOC\"],[29,31,\"LOC\"]],\"label\":\"travel\"}\n");
    CHECK(written(InputFormat::Csv, one) ==
          "text,label,spans\r\n\"Anna flew to Zürich, then to "
          "東京.\",travel,\"[[0,4,\"\"PER\"\"],[13,19,\"\"LOC\"\"],[29,31,\"\"LOC\"\"]]\"\r\n");
    const nlohmann::json ls = nlohmann::json::parse(written(InputFormat::LabelStudio, one));
    const auto& result = ls.at(0).at("predictions").at(0).at("result");
    CHECK(ls.at(0)["data"]["text"] == "Anna flew to Zürich, then to 東京.");
    CHECK(result.at(1)["value"]["text"] == "Zürich");
    CHECK(result.at(1)["value"]["start"] == 13);
    CHECK(result.at(2)["value"]["text"] == "東京");
    CHECK(result.at(3)["type"] == "choices");
    CHECK(result.at(3)["value"]["choices"] == nlohmann::json::array({"travel"}));
}

TEST_CASE("TSV round-trips fields with tabs, quotes, line breaks and a leading quote (RFC 4180 quoting)", "[input]") {
    TempDir dir("input_tsv");
    std::vector<InputRecord> rows(4);
    rows[0].texts = {"\"starts with a quote"};
    rows[1].texts = {"tab\tinside"};
    rows[2].texts = {"cr\rand lf\nand crlf\r\nend"};
    rows[3].texts = {"back\\slash \\t not a tab"};
    write(dir / "a.tsv", written(InputFormat::Tsv, rows));
    Read r = read_rows(dir / "a.tsv");
    CHECK(r.bad.empty());
    check_same_rows(r.rows, rows);
}

TEST_CASE("Label Studio: annotations, else predictions; choices are the label; offsets are code points", "[input]") {
    TempDir dir("input_ls");
    // "😀 🇯🇵 Zürich": the emoji is 1 code point (2 UTF-16 units), the flag 2 code points (4 units).
    const std::string tasks = R"([
 {"id": 7, "data": {"text": "😀 🇯🇵 Zürich is big"},
  "annotations": [{"was_cancelled": true, "result": [{"type": "choices", "value": {"choices": ["no"]}}]},
                  {"result": [{"from_name": "ner", "to_name": "t", "type": "labels", "value": {"start": 5, "end": 11, "text": "Zürich", "labels": ["LOC"]}},
                              {"from_name": "c", "to_name": "t", "type": "choices", "value": {"choices": ["city"]}}]}],
  "predictions": [{"result": [{"type": "choices", "value": {"choices": ["ignored"]}}]}]},
 {"data": {"sentence": "only one string field, e\u0301 é"},
  "predictions": [{"result": [{"type": "labels", "value": {"start": 23, "end": 25, "labels": ["E"]}}]}]},
 {"data": {"text": "😀 Zürich"}, "annotations": [{"result": [{"type": "labels", "value": {"start": 3, "end": 9, "text": "Zürich", "labels": ["LOC"]}}]}]},
 {"data": {"n": 1}},
 {"data": {"text": "two choices"}, "annotations": [{"result": [{"type": "choices", "value": {"choices": ["a", "b"]}}]}]}
])";
    write(dir / "export.json", tasks);
    CHECK(input_format_of((dir / "export.json").string()) == InputFormat::LabelStudio);
    Read r = read_rows(dir / "export.json");
    REQUIRE(r.rows.size() == 3);
    CHECK(r.rows[0].where == (dir / "export.json").string() + ": task 1");
    CHECK(r.rows[0].spans == std::vector<Span>{{5, 11, "LOC"}});
    CHECK(code_point_slice(r.rows[0].texts[0], 5, 11) == "Zürich");
    CHECK(r.rows[0].label_json == "\"city\"");
    CHECK(r.rows[1].texts[0] == "only one string field, e\u0301 é");
    CHECK(r.rows[1].spans == std::vector<Span>{{23, 25, "E"}});
    CHECK(r.rows[2].label_json == "[\"a\",\"b\"]");
    // Task 3 has UTF-16 offsets (3, 9 would be right for code points 2, 8): its text check names it.
    REQUIRE(r.bad.size() == 2);
    CHECK(r.bad[0].where == (dir / "export.json").string() + ": task 3");
    CHECK(r.bad[0].reason.find("says 'Zürich' but the text there (code points) is 'ürich'") != std::string::npos);
    CHECK(r.bad[1].where == (dir / "export.json").string() + ": task 4");
    CHECK(r.bad[1].reason.find("missing text field") == 0);
}

TEST_CASE("one rule for blank lines, CRLF, BOM, invalid UTF-8 and malformed rows, in every line format", "[input]") {
    TempDir dir("input_rule");
    // The same six rows in three formats: good, blank, invalid UTF-8, missing text, empty text, good.
    write(dir / "a.jsonl",
          "\xEF\xBB\xBF{\"text\": \"one\", \"label\": \"x\"}\r\n  \t \r\n{\"text\": \"bad \xff byte\"}\r\n{\"other\": 1}\n"
          "{\"text\": \" \"}\n{\"text\": \"six\"}");
    write(dir / "a.csv", "\xEF\xBB\xBFtext,label\r\none,x\r\n\r\nbad \xff byte,\r\n\r\n\" \",\r\nsix,\r\n");
    write(dir / "a.tsv", "\xEF\xBB\xBFtext\tlabel\none\tx\n   \nbad \xff byte\t\nonly-one-field\n \t\nsix\t\n");
    const std::string j = (dir / "a.jsonl").string(), c = (dir / "a.csv").string(), t = (dir / "a.tsv").string();
    const Read rj = read_rows(j), rc = read_rows(c), rt = read_rows(t);
    for (const Read* r : {&rj, &rc, &rt}) {
        REQUIRE(r->rows.size() == 2);
        CHECK(r->rows[0].texts[0] == "one");
        CHECK(r->rows[0].label_json == "\"x\"");
        CHECK(r->rows[1].texts[0] == "six");
        REQUIRE(r->bad.size() >= 2);
        CHECK(r->bad[0].reason == (r == &rj ? "invalid UTF-8 in 'line' at byte 14" : "invalid UTF-8 in 'text' at byte 4"));
    }
    CHECK(rj.bad[0].where == j + ":3");
    CHECK(rj.bad[1].where == j + ":4");
    CHECK(rj.bad[1].reason ==
          "missing text field (looked for \"text\"/\"sentence\"/\"sentence1\"/\"source\"/\"input\"/\"src\", any case; "
          "the row has \"other\"; name one with --text-field NAME)");
    write(dir / "n.jsonl", "{\"text\": 5}\n");
    CHECK(fail_message(dir / "n.jsonl") == (dir / "n.jsonl").string() + ":1: field \"text\" is not a string");
    CHECK(rj.bad[2].reason == "empty text");
    CHECK(rc.bad[0].where == c + ":4");
    CHECK(rc.bad[1].reason == "empty text");
    CHECK(rt.bad[1].reason == "missing column (1 fields, header has 2)");
    CHECK(fail_message(j) == j + ":3: invalid UTF-8 in 'line' at byte 14");
    CHECK(fail_message(c) == c + ":4: invalid UTF-8 in 'text' at byte 4");
    write(dir / "q.csv", "text\n\"ab\"c\n\"never closed\n");
    CHECK(fail_message((dir / "q.csv").string()) ==
          (dir / "q.csv").string() + ":2: stray quote: text after a quoted field's closing quote");
    write(dir / "sp.csv", "text,spans\nabc,\"[[1,9,\"\"X\"\"]]\"\n");
    CHECK(fail_message((dir / "sp.csv").string()) ==
          (dir / "sp.csv").string() + ":2: \"spans\": span [1, 9] is not inside the text (3 code points)");
}

// A line is blank by the one empty-text rule (t5s/source_text.h): a line of whitespace with a CR
// that is not its line end (CR CR LF) is no text row in a text file, nor a bad row elsewhere.
TEST_CASE("a line holding only whitespace and a stray CR is blank in every line format", "[input]") {
    TempDir dir("input_blank_cr");
    write(dir / "a.txt", "one\n\r\r\n \r \nsix\n");
    write(dir / "a.jsonl", "{\"text\": \"one\"}\n\r\r\n \r \n{\"text\": \"six\"}\n");
    write(dir / "a.csv", "text\none\n\r\r\n \r \nsix\n");
    for (const char* name : {"a.txt", "a.jsonl", "a.csv"}) {
        INFO(name);
        const Read r = read_rows(dir / name);
        CHECK(r.bad.empty());
        REQUIRE(r.rows.size() == 2);
        CHECK(r.rows[1].texts[0] == "six");
    }
    CHECK(is_blank_line(" \t\r"));
    CHECK_FALSE(is_blank_line(" x "));
}

TEST_CASE("formats by extension and content; plain text is verbatim but for '{' lines", "[input]") {
    TempDir dir("input_detect");
    write(dir / "a.txt", "[ID-4411] is a line, not JSON\n{not json either}\n");
    write(dir / "b.txt", "{\"text\": \"json lines in a .txt\"}\n");
    write(dir / "c.json", "{\"text\": \"json lines in a .json\"}\n");
    write(dir / "d", "\xEF\xBB\xBF  [ not a task list\n");
    CHECK(input_format_of((dir / "a.txt").string()) == InputFormat::Text);
    CHECK(input_format_of((dir / "b.txt").string()) == InputFormat::Jsonl);
    CHECK(input_format_of((dir / "c.json").string()) == InputFormat::Jsonl);
    CHECK(input_format_of((dir / "d").string()) == InputFormat::Text);
    const Read a = read_rows(dir / "a.txt");
    REQUIRE(a.rows.size() == 1);
    CHECK(a.rows[0].texts[0] == "[ID-4411] is a line, not JSON");
    REQUIRE(a.bad.size() == 1);  // in a text file a line starting with '{' is a JSON row (generate's contract)
    CHECK(a.bad[0].reason == "malformed JSON line");
    CHECK(read_rows(dir / "d").rows.at(0).texts[0] == "  [ not a task list");
    CHECK(fail_message(dir / "missing.jsonl") == (dir / "missing.jsonl").string() + ": cannot open input file (not found)");
    CHECK_THROWS_WITH(parse_enum<InputFormat>("xml"), Catch::Contains("txt, jsonl, csv, tsv or labelstudio"));
}

TEST_CASE("pairs: two text fields with aliases; a numeric label; .txt is TSV", "[input]") {
    TempDir dir("input_pairs");
    InputFields pair;
    pair.texts = {{"source", "input"}, {"target", "output"}};
    write(dir / "p.txt", "input\toutput\na\tb\n");
    const Read r = read_rows(dir / "p.txt", pair);
    REQUIRE(r.rows.size() == 1);
    CHECK(r.rows[0].texts == std::vector<std::string>{"a", "b"});
    write(dir / "p.parquet", "");
    CHECK_THROWS_WITH(read_rows(dir / "p.parquet", pair), Catch::Contains("unknown data format '.parquet'"));
    InputFields sts;
    sts.texts = {{"sentence1"}, {"sentence2"}};
    sts.numeric_label = true;
    write(dir / "s.csv", "sentence1,sentence2,label\na,b,4.2\nc,d,high\n");
    const Read s = read_rows(dir / "s.csv", sts);
    REQUIRE(s.rows.size() == 1);
    CHECK(s.rows[0].label_json == "4.2");
    REQUIRE(s.bad.size() == 1);
    CHECK(s.bad[0].reason == "needs a numeric field \"label\"");
    write(dir / "nohdr.csv", "x,y\n1,2\n");
    CHECK_THROWS_WITH(
        read_rows(dir / "nohdr.csv", sts),
        Catch::Contains(":1: header has no source column (looked for \"sentence1\", any case; the header has \"x\"/\"y\";"));
}
