// "spans", else "entities" (t5s/span_json.h spans_field): the one rule for where a row's or a
// request's spans are, read the same by the input files (JSON lines, CSV with a JSON cell) and by
// serve's request parser. Each case of the table goes through all three; they must agree.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/request_json.h"
#include "t5s/error.h"
#include "t5s/input_reader.h"
#include "t5s/span_json.h"
#include "test_support.h"

using namespace t5s;
using nlohmann::json;

namespace {

const std::string kText = "Send 3 kg now";  // 13 code points

// What a reader made of a row: its spans, or the field its error names ("" when it read the row).
struct Outcome {
    std::vector<Span> spans;
    std::string refused_field;
};

// The field a message opens with: '"spans": ...' (files) or "'spans': ..." (serve).
std::string field_opening(const std::string& message) {
    if (message.empty() || (message[0] != '"' && message[0] != '\'')) return "(no field: " + message + ")";
    const size_t close = message.find(message[0], 1);
    return close == std::string::npos ? message : message.substr(1, close - 1);
}

Outcome read_file(const std::filesystem::path& path) {
    Outcome out;
    InputReader reader(path.string(), {}, BadRowPolicy::Skip,
                       [&](const BadRow& bad) { out.refused_field = field_opening(bad.reason); });
    InputRecord record;
    while (reader.next(&record)) out.spans = record.spans;
    return out;
}

// The fields as one JSON line {"text", fields...}.
Outcome from_jsonl(const json& fields, const test::TempDir& dir) {
    json row = fields;
    row["text"] = kText;
    const auto path = dir.path() / "rows.jsonl";
    std::ofstream(path, std::ios::binary) << row.dump() << "\n";
    return read_file(path);
}

// The fields as CSV columns, each cell the field's JSON (a null is the cell "null").
Outcome from_csv(const json& fields, const test::TempDir& dir) {
    std::string header = "text", cells = kText;
    for (const auto& [key, value] : fields.items()) {
        std::string cell = value.dump();
        std::string quoted = "\"";
        for (char c : cell) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
        header += "," + key, cells += "," + quoted + "\"";
    }
    const auto path = dir.path() / "rows.csv";
    std::ofstream(path, std::ios::binary) << header << "\n" << cells << "\n";
    return read_file(path);
}

// The fields in a POST /augment body with "text".
Outcome from_request(const json& fields) {
    json body = fields;
    body["text"] = kText;
    Outcome out;
    try {
        const std::vector<std::vector<Span>> spans = serve::parse_augment(body.dump()).request.spans;
        if (!spans.empty()) out.spans = spans.at(0);
    } catch (const Error& e) {
        out.refused_field = field_opening(e.what());
    }
    return out;
}

}  // namespace

TEST_CASE("spans, else entities: one rule for input files and serve requests", "[input][spans]") {
    const json send = json::array({json::array({0, 4, "VERB"})}), kg = json::array({json::array({5, 9, "QTY"})});
    struct Case {
        const char* what;
        json fields;
        std::vector<Span> spans;    // read
        std::string refused_field;  // or refused, naming this field
    };
    const std::vector<Case> cases = {
        {"only spans", {{"spans", send}}, {{0, 4, "VERB"}}, ""},
        {"only entities", {{"entities", kg}}, {{5, 9, "QTY"}}, ""},
        {"spans null, entities set: null is not given", {{"spans", nullptr}, {"entities", kg}}, {{5, 9, "QTY"}}, ""},
        {"both set: spans is read", {{"spans", send}, {"entities", kg}}, {{0, 4, "VERB"}}, ""},
        {"spans an empty list, entities set: no spans, as given", {{"spans", json::array()}, {"entities", kg}}, {}, ""},
        {"both null", {{"spans", nullptr}, {"entities", nullptr}}, {}, ""},
        {"neither", json::object(), {}, ""},
        {"spans a string", {{"spans", "0-4"}}, {}, "spans"},
        {"spans a number, entities set: refused, not passed over", {{"spans", 5}, {"entities", kg}}, {}, "spans"},
        {"spans null, entities an object", {{"spans", nullptr}, {"entities", {{"start", 0}}}}, {}, "entities"},
        {"entities with a text offset", {{"entities", json::array({json::array({0, "4", "VERB"})})}}, {}, "entities"},
    };
    for (const Case& c : cases) {
        INFO(c.what << ": " << c.fields.dump());
        test::TempDir dir("spans_field");
        const Outcome jsonl = from_jsonl(c.fields, dir), csv = from_csv(c.fields, dir), request = from_request(c.fields);
        CHECK(jsonl.refused_field == c.refused_field);
        CHECK(jsonl.spans == c.spans);
        CHECK(csv.refused_field == c.refused_field);
        CHECK(csv.spans == c.spans);
        CHECK(request.refused_field == c.refused_field);
        CHECK(request.spans == c.spans);
    }
}

TEST_CASE("spans, else entities: a request with \"texts\" takes its per-text lists by the same rule", "[input][spans]") {
    const json body = {{"texts", {"a 1", "b 2"}}, {"spans", nullptr}, {"entities", {{{2, 3, "N"}}, json::array()}}};
    const std::vector<std::vector<Span>> spans = serve::parse_augment(body.dump()).request.spans;
    REQUIRE(spans.size() == 2);
    CHECK(spans[0] == std::vector<Span>{{2, 3, "N"}});
    CHECK(spans[1].empty());
}

TEST_CASE("spans_field: the field found and its name; a row that is no object has none", "[input][spans]") {
    const char* name = nullptr;
    const json row = {{"spans", nullptr}, {"entities", json::array()}};
    REQUIRE(spans_field(row, &name) == &row["entities"]);
    CHECK(std::string(name) == "entities");
    CHECK(spans_field(json::array({1, 2})) == nullptr);
    CHECK(is_span_field("entities"));
    CHECK_FALSE(is_span_field("Spans"));
}
