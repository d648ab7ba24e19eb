// The column rule (t5s/input_reader.h): one list of names, in one order, in any case, for every front
// end. The ten files of tests/data/columns hold the same three rows in ten layouts; generate's reader,
// the batch panel's, train's pairs and sts read the same rows from each.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine_thread/dataset_reader.h"
#include "t5s/error.h"
#include "t5s/input_reader.h"
#include "t5s/sts.h"
#include "test_support.h"

using namespace t5s;
using t5s::test::TempDir;

namespace {

std::filesystem::path columns_dir() { return test::data_dir() / "columns"; }

struct Rows {
    std::vector<std::string> texts, targets;
};

Rows read(const std::filesystem::path& file, const InputFields& fields) {
    Rows r;
    InputReader reader(file.string(), fields, BadRowPolicy::Fail);
    InputRecord rec;
    while (reader.next(&rec)) {
        r.texts.push_back(rec.texts.at(0));
        if (rec.texts.size() > 1) r.targets.push_back(rec.texts[1]);
    }
    return r;
}

// The rows as written, parsed without the reader: the JSON lines keyed text/target.
Rows written_rows() {
    Rows r;
    std::ifstream in(columns_dir() / "text.jsonl");
    std::string line;
    while (std::getline(in, line)) {
        const auto j = nlohmann::json::parse(line);
        r.texts.push_back(j.at("text"));
        r.targets.push_back(j.at("target"));
    }
    return r;
}

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string error_of(const std::filesystem::path& file, const InputFields& fields) {
    try {
        read(file, fields);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

const std::vector<std::string> kPairFiles = {"text.jsonl",   "sentence.jsonl", "input.jsonl", "jsts.jsonl",    "Text.csv",
                                             "sentence.csv", "source.tsv",     "src.tsv",     "headerless.tsv"};

}  // namespace

TEST_CASE("generate's reader takes a CSV headed `sentence` (it looked for `text` only)", "[input][columns]") {
    const Rows r = read(columns_dir() / "sentence.csv", InputFields{});  // what `generate --input` asks for
    CHECK(r.texts == written_rows().texts);
}

TEST_CASE("the ten layouts give the same rows to generate, the batch panel, train and sts", "[input][columns]") {
    const Rows want = written_rows();
    REQUIRE(want.texts.size() == 3);
    std::vector<std::string> files = kPairFiles;
    files.push_back("plain.txt");
    for (const auto& name : files) {
        INFO(name);
        const bool headerless = name == "headerless.tsv";
        const auto file = columns_dir() / name;
        CHECK(read(file, text_fields({"", "", headerless})).texts == want.texts);  // generate --input
        CHECK(detail::read_dataset(file, "", headerless).rows == want.texts);      // the batch panel
        if (name == "plain.txt") continue;
        const Rows pairs = read(file, pair_fields({"", "", headerless}));  // train --data
        CHECK(pairs.texts == want.texts);
        CHECK(pairs.targets == want.targets);
    }
    const auto sts = read_sts_pairs(columns_dir() / "jsts.jsonl");
    REQUIRE(sts.size() == 3);
    for (size_t i = 0; i < sts.size(); ++i) {
        CHECK(sts[i].sentence1 == want.texts[i]);
        CHECK(sts[i].sentence2 == want.targets[i]);
    }
}

TEST_CASE("the rule: first name in its order, exact spelling before another case; a named field wins", "[input][columns]") {
    TempDir dir("columns_rule");
    write(dir / "both.csv", "sentence,TEXT,text,target\na,b,c,d\n");
    CHECK(read(dir / "both.csv", InputFields{}).texts ==
          std::vector<std::string>{"c"});  // text before sentence, exact before TEXT
    CHECK(read(dir / "both.csv", text_fields({"Sentence", "", false})).texts == std::vector<std::string>{"a"});
    write(dir / "both.jsonl", "{\"Sentence\": \"a\", \"Input\": \"b\", \"Paraphrase\": \"p\", \"sentence2\": \"s\"}\n");
    const Rows r = read(dir / "both.jsonl", pair_fields({}));
    CHECK(r.texts == std::vector<std::string>{"a"});
    CHECK(r.targets == std::vector<std::string>{"p"});
    CHECK(pick_column({"Src", "label"}, text_column_names()) == "Src");
    CHECK(pick_column({"id", "label"}, text_column_names()).empty());
}

TEST_CASE("nothing matches: the error lists the file's columns and the flag", "[input][columns]") {
    TempDir dir("columns_error");
    write(dir / "q.csv", "question,answer\nwhere?,here\n");
    const std::string e = error_of(dir / "q.csv", InputFields{});
    CHECK(e.find(":1: header has no text column (looked for \"text\"/\"sentence\"/\"sentence1\"/\"source\"/\"input\"/\"src\"") !=
          std::string::npos);
    CHECK(e.find("the header has \"question\"/\"answer\"; name one with --text-field NAME") != std::string::npos);
    CHECK(read(dir / "q.csv", text_fields({"Question", "", false})).texts == std::vector<std::string>{"where?"});
    const std::string t = error_of(dir / "q.csv", pair_fields({"question", "", false}));
    CHECK(t.find("header has no target column") != std::string::npos);
    CHECK(t.find("--target-field NAME") != std::string::npos);
    write(dir / "one.tsv", "only one column\n");
    CHECK(error_of(dir / "one.tsv", pair_fields({"", "", true})).find(":1: --no-header needs 2 columns, the first row has 1") !=
          std::string::npos);
    CHECK(read(dir / "one.tsv", text_fields({"", "", true})).texts == std::vector<std::string>{"only one column"});
}

TEST_CASE("the error stays one short line whatever the file's column names", "[input][columns]") {
    TempDir dir("columns_hostile");
    std::string header = "a\"\"\nb";  // a quoted name spanning two lines
    for (int i = 0; i < 500; ++i) header += "," + std::string(100, 'x') + std::to_string(i);
    write(dir / "h.csv", "\"" + header.substr(0, 5) + "\"" + header.substr(5) + "\nrow\n");
    const std::string e = error_of(dir / "h.csv", InputFields{});
    CHECK(e.find('\n') == std::string::npos);
    CHECK(e.size() < 1200);
    CHECK(e.find("and 489 more") != std::string::npos);
}
