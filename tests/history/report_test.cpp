// Score statistics, bar charts, the PNG encoder, and the hf-dataset folder (data file, card,
// plots) written from a small history.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#include "report/bar_chart.h"
#include "t5s/error.h"
#include "t5s/hf_dataset.h"
#include "t5s/png_image.h"
#include "t5s/score_report.h"
#include "test_util.h"

using namespace t5s;
using namespace t5s::test;

namespace {

// Decodes PNG bytes with stb_image (an independent decoder); channels 3.
RgbImage decode(const std::string& png) {
    int w = 0, h = 0, n = 0;
    unsigned char* data =
        stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()), int(png.size()), &w, &h, &n, 3);
    REQUIRE(data);
    RgbImage image(w, h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const unsigned char* p = data + (size_t(y) * w + x) * 3;
            image.set(x, y, {p[0], p[1], p[2]});
        }
    stbi_image_free(data);
    return image;
}

// Heights of the bar-coloured runs, left to right (each run's tallest column).
std::vector<int> bars_in(const RgbImage& image) {
    std::vector<int> bars;
    bool in_bar = false;
    for (int x = 0; x < image.width(); ++x) {
        int column = 0;
        for (int y = 0; y < image.height(); ++y) column += image.at(x, y) == report::kBarColor;
        if (column > 0 && !in_bar) bars.push_back(0);
        if (column > 0) bars.back() = std::max(bars.back(), column);
        in_bar = column > 0;
    }
    return bars;
}

}  // namespace

TEST_CASE("summarize_scores: count, missing, mean, quartiles and numpy's histogram bins") {
    const ScoreSummary s = summarize_scores("x", {1.0, std::nullopt, 5.0, 2.0, 4.0, 3.0}, 4);
    CHECK(s.count == 5);
    CHECK(s.missing == 1);
    CHECK(s.mean == Approx(3.0));
    CHECK(s.min == 1.0);
    CHECK(s.max == 5.0);
    CHECK(s.q1 == Approx(2.0));
    CHECK(s.median == Approx(3.0));
    CHECK(s.q3 == Approx(4.0));
    CHECK(s.bin_edges == std::vector<double>{1.0, 2.0, 3.0, 4.0, 5.0});
    CHECK(s.bin_counts == std::vector<int64_t>{1, 1, 1, 2});  // an edge opens its bin; the last bin holds max
    const ScoreSummary q = summarize_scores("q", {0.0, 10.0}, 2);
    CHECK(q.q1 == Approx(2.5));  // linear interpolation
    CHECK(q.q3 == Approx(7.5));
    const ScoreSummary same = summarize_scores("same", {2.0, 2.0, 2.0}, 2);
    CHECK(same.bin_edges == std::vector<double>{1.5, 2.0, 2.5});
    CHECK(same.bin_counts == std::vector<int64_t>{0, 3});
    const ScoreSummary none = summarize_scores("none", {std::nullopt}, 10);
    CHECK(none.count == 0);
    CHECK(none.missing == 1);
    CHECK(none.bin_counts.empty());
}

TEST_CASE("bar charts: bar heights proportional to the counts, drawn as measured") {
    CHECK(report::bar_heights({0, 5, 10, 1}, 300) == std::vector<int>{0, 150, 300, 30});
    CHECK(report::bar_heights({1, 1000}, 300) == std::vector<int>{1, 300});  // a non-zero count stays visible
    CHECK(report::bar_heights({0, 0}, 300) == std::vector<int>{0, 0});
    const std::vector<int64_t> counts = {3, 0, 7, 1, 12};
    const report::BarChartLayout layout;
    const RgbImage chart = report::draw_bar_chart(counts, layout);
    CHECK(chart.width() == layout.width);
    CHECK(chart.height() == layout.height);
    std::vector<int> expected;
    for (int h : report::bar_heights(counts, layout.height - layout.top - layout.bottom))
        if (h > 0) expected.push_back(h);
    CHECK(bars_in(chart) == expected);
    const RgbImage many = report::draw_bar_chart(std::vector<int64_t>(400, 1));  // wider so bars stay apart
    CHECK(many.width() >= 3 * 400);
    CHECK(bars_in(many).size() == 400);
}

TEST_CASE("encode_png: a valid PNG that decodes to the same pixels") {
    RgbImage image(5, 3, {10, 20, 30});
    image.set(4, 2, {255, 0, 128});
    image.fill_rect(0, 0, 2, 1, {1, 2, 3});
    const std::string png = encode_png(image);
    REQUIRE(png.size() > 33);
    CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
    const RgbImage back = decode(png);
    CHECK(back.width() == 5);
    CHECK(back.height() == 3);
    CHECK(back.pixels() == image.pixels());
    CHECK_THROWS_AS(encode_png(RgbImage(0, 4)), Error);
}

TEST_CASE("export_hf_dataset: data file, card with the data's numbers, plots; a non-empty folder refused") {
    TempDir dir;
    HistoryStore store(":memory:");
    auto first = sample_record("Tom is a good boy.", {"Tom is nice.", "Tom is kind.", "Tom is good."});
    first.candidates[0].scores.change = 0.25;
    first.candidates[1].scores.change = 0.5;
    store.record(first);
    store.record(sample_record("I like cats.", {"I love cats."}, 1714564801000, "models/other"));
    const std::string out = dir.file("ds");
    ExportOptions options;
    const HfDatasetResult r = export_hf_dataset(store, out, options);
    CHECK(r.data.rows_written == 4);
    CHECK(r.files.front() == "data/train.jsonl");
    CHECK(r.files.back() == "README.md");
    for (const auto& f : r.files) CHECK(std::filesystem::exists(out + "/" + f));

    const std::string card = read_file(out + "/README.md");
    CHECK(card.rfind("---\n", 0) == 0);
    CHECK(card.find("    path: data/train.jsonl\n") != std::string::npos);
    CHECK(card.find("  - name: change\n    dtype: float64\n") != std::string::npos);
    CHECK(card.find("    num_examples: 4\n") != std::string::npos);
    CHECK(card.find("| candidate rows written | 4 |") != std::string::npos);
    CHECK(card.find("| change | 2 | 2 | 0.375 | 0.25 |") != std::string::npos);  // count, missing, mean, min
    CHECK(card.find("| models/tiny (sha256:models/tiny) | 1 |") != std::string::npos);
    CHECK(card.find("| 1 | 1 |\n| 2 | 0 |\n| 3 | 1 |") != std::string::npos);  // sources with 1, 2, 3 candidates
    CHECK(card.find("![change histogram](plots/change.png)") != std::string::npos);
    const RgbImage per_source = decode(read_file(out + "/plots/candidates_per_source.png"));
    CHECK(bars_in(per_source).size() == 2);  // k = 1 and k = 3

    try {
        export_hf_dataset(store, out, options);
        FAIL("a non-empty folder was accepted");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("is not empty") != std::string::npos);
    }
    options.overwrite = true;
    CHECK(export_hf_dataset(store, out, options).data.rows_written == 4);
    CHECK_THROWS_AS(export_hf_dataset(store, out + "/README.md", options), Error);  // a file, not a folder
}

TEST_CASE("provenance: models, settings without seed and spans, seeds, drop reasons") {
    HistoryStore store(":memory:");
    store.record(sample_record("a", {"b"}));
    auto other = sample_record("c", {"d"}, 1714564801000, "models/other");
    other.seed = 7;
    DroppedRecord copy;
    copy.candidate.text = "c";
    copy.reason.kind = DropReason::Copy;
    other.dropped = {copy, copy};
    store.record(other);
    const HistoryProvenance p = store.provenance({});
    CHECK(p.generations == 2);
    CHECK(p.candidates == 2);
    REQUIRE(p.models.size() == 2);
    CHECK(p.seeds == std::vector<int64_t>{7, 42});
    REQUIRE(p.settings.size() == 1);
    CHECK(p.settings[0].n == 2);
    CHECK(p.settings[0].value.find("\"seed\"") == std::string::npos);
    REQUIRE(p.dropped.size() == 1);
    CHECK(p.dropped[0].value == "copy");
    CHECK(p.dropped[0].n == 2);
    HistoryFilter only_other;
    only_other.model = "models/other";
    CHECK(store.provenance(only_other).generations == 1);
}

TEST_CASE("export_hf_dataset: a long model name is shortened in the card at a character boundary") {
    TempDir dir;
    HistoryStore store(":memory:");
    std::string model = "a";
    for (int i = 0; i < 50; ++i) model += "猫";  // 151 bytes: a cut at 120 bytes falls inside a character
    store.record(sample_record("x", {"y"}, 1714564800000, model));
    export_hf_dataset(store, dir.file("ds"), {});
    const std::string card = read_file(dir.file("ds/README.md"));
    const std::string shortened = "| a" + model.substr(1, 117) + "... |";  // 39 whole characters
    CHECK(card.find(shortened) != std::string::npos);
}

TEST_CASE("export_hf_dataset: recipe routes as a feature, the recipe named, candidates per route counted and plotted") {
    TempDir dir;
    HistoryStore store(":memory:");
    auto routed = sample_record("I like tea.", {"I love tea.", "I enjoy tea.", "Tea is good."});
    routed.candidates[0].route = {{"pivot", "我喜欢茶。"}, {"back", "I love tea."}};
    routed.candidates[1].route = {{"pivot", "我爱茶。"}, {"back", "I enjoy tea."}};
    routed.candidates[2].route = {{"paraphrase", "Tea is good."}};
    routed.recipe_json = R"({"file":"/r/bt.json","sha256":"feed"})";
    store.record(routed);
    store.record(sample_record("I like cats.", {"I love cats."}));
    const std::string out = dir.file("ds");
    export_hf_dataset(store, out, ExportOptions{});
    const std::string card = read_file(out + "/README.md");
    CHECK(
        card.find("  - name: route\n    list:\n    - name: step\n      dtype: string\n    - name: text\n      dtype: string\n") !=
        std::string::npos);
    CHECK(card.find("### Recipes") != std::string::npos);
    CHECK(card.find("| /r/bt.json (sha256:feed) | 1 |") != std::string::npos);
    CHECK(card.find("| pivot > back | 2 |") != std::string::npos);
    CHECK(card.find("| (no recipe) | 1 |") != std::string::npos);
    CHECK(card.find("| paraphrase | 1 |") != std::string::npos);
    const RgbImage per_route = decode(read_file(out + "/plots/candidates_per_route.png"));
    const std::vector<int> bars = bars_in(per_route);
    REQUIRE(bars.size() == 3);  // 2, 1, 1: the first bar twice the others' height
    CHECK(bars[0] == 2 * bars[1]);
    CHECK(bars[1] == bars[2]);
    std::istringstream data(read_file(out + "/data/train.jsonl"));
    std::string line;
    std::getline(data, line);
    CHECK(nlohmann::json::parse(line)["route"][1]["text"] == "I love tea.");
}
