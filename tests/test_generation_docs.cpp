// docs/generation-controls.md's table of every control agrees with the field table: one row per
// option, naming its flag (and transformers' spelling where the flag has one) and when a running
// request takes a change. The page is written by hand; this keeps it from drifting.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "t5s/generation_fields.h"

using namespace t5s;

namespace {

std::string trim(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The rows of the table under "## Every control", by the JSON name in their third column.
std::map<std::string, std::vector<std::string>> control_rows(const std::string& page) {
    std::ifstream in(page);
    REQUIRE(in);
    std::map<std::string, std::vector<std::string>> rows;
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("## ", 0) == 0) inside = line == "## Every control";
        if (!inside || line.rfind("| `", 0) != 0 && line.rfind("| (", 0) != 0 && line.rfind("| —", 0) != 0) continue;
        std::vector<std::string> cells;
        std::stringstream ss(line.substr(1));
        for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(trim(cell));
        if (cells.size() < 4) continue;
        std::string json = cells[2];
        if (json.size() > 2 && json.front() == '`' && json.back() == '`') json = json.substr(1, json.size() - 2);
        CHECK(rows.emplace(json, cells).second);  // one row per option
    }
    return rows;
}

const char* live_words(Live live) {
    switch (live) {
        case Live::EveryStep: return "next token";
        case Live::NextRequest: return "next request";
        default: return "no";
    }
}

}  // namespace

TEST_CASE("docs: the generation controls page has a row for every option", "[options][docs]") {
    const auto rows = control_rows(T5S_SOURCE_ROOT "/docs/generation-controls.md");
    for (const auto& f : generation_fields()) {
        INFO("option " << f.json);
        const auto it = rows.find(f.json);
        REQUIRE(it != rows.end());
        const std::vector<std::string>& cells = it->second;
        if (*f.flag) CHECK(cells[1].find(std::string("`--") + f.flag + "`") != std::string::npos);
        if (*f.alias) CHECK(cells[1].find(std::string("`--") + f.alias + "`") != std::string::npos);
        CHECK(cells[3] == live_words(f.live));
    }
    for (const auto& [json, cells] : rows) {
        INFO("row " << json);
        CHECK(find_generation_field(json) != nullptr);  // no row for an option that is gone
    }
}
