// Data loading (JSONL / CSV / TSV, field names, bad rows with file:line, skip vs fail), the data
// report, and the seeded batch order.
#include "trainer/trainer_test_support.h"

#include "t5s/error.h"
#include "t5s/tokenizer.h"
#include "t5s/trainer.h"
#include "trainer/core.h"
#include "trainer/data_internal.h"

using namespace t5s;
using namespace t5s::test;

namespace {

std::string error_of(const std::string& file, const DataOptions& o) {
    try {
        load_pairs(file, o);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("JSONL: default, recognised and configured field names", "[trainer][data]") {
    TempDir dir("data_jsonl");
    write_text(dir / "a.jsonl",
               "{\"source\": \"s1\", \"target\": \"t1\"}\n\n{\"source\": \"s2\", \"target\": \"t2\", \"x\": 1}\n");
    write_text(dir / "b.jsonl", "{\"input\": \"i1\", \"output\": \"o1\"}\n");
    write_text(dir / "c.jsonl", "{\"text\": \"x1\", \"target\": \"y1\"}\n");
    write_text(dir / "d.jsonl", "{\"q\": \"質問\", \"a\": \"答え\"}\n");
    DataOptions o;
    PairSet a = load_pairs((dir / "a.jsonl").string(), o);
    REQUIRE(a.pairs.size() == 2);
    CHECK(a.pairs[1].source == "s2");
    CHECK(a.pairs[1].target == "t2");
    CHECK(a.pairs[1].origin == (dir / "a.jsonl").string() + ":3");
    CHECK(load_pairs((dir / "b.jsonl").string(), o).pairs.at(0).target == "o1");
    CHECK(load_pairs((dir / "c.jsonl").string(), o).pairs.at(0).source == "x1");
    o.source_field = "q";
    o.target_field = "a";
    o.source_prefix = "paraphrase: ";
    PairSet d = load_pairs((dir / "d.jsonl").string(), o);
    CHECK(d.pairs.at(0).source == "paraphrase: 質問");
    CHECK(d.pairs.at(0).target == "答え");
}

TEST_CASE("the column rule: the nine pair layouts of tests/data/columns give the same pairs", "[trainer][data]") {
    const PairSet want = load_pairs((data_dir() / "columns" / "text.jsonl").string(), {});
    REQUIRE(want.pairs.size() == 3);
    for (const char* name :
         {"sentence.jsonl", "input.jsonl", "jsts.jsonl", "Text.csv", "sentence.csv", "source.tsv", "src.tsv", "headerless.tsv"}) {
        INFO(name);
        DataOptions o;
        o.no_header = std::string(name) == "headerless.tsv";
        const PairSet got = load_pairs((data_dir() / "columns" / name).string(), o);
        REQUIRE(got.pairs.size() == want.pairs.size());
        for (size_t i = 0; i < got.pairs.size(); ++i) {
            CHECK(got.pairs[i].source == want.pairs[i].source);
            CHECK(got.pairs[i].target == want.pairs[i].target);
        }
    }
}

TEST_CASE("CSV and TSV with a header; quoted fields", "[trainer][data]") {
    TempDir dir("data_csv");
    write_text(dir / "a.csv", "id,source,target\n1,\"Hello, world\",\"He said \"\"hi\"\"\"\n2,\"multi\nline\",ok\r\n");
    write_text(dir / "a.tsv", "input\toutput\nこんにちは\thello\n你好\thi\n");
    PairSet c = load_pairs((dir / "a.csv").string(), {});
    REQUIRE(c.pairs.size() == 2);
    CHECK(c.pairs[0].source == "Hello, world");
    CHECK(c.pairs[0].target == "He said \"hi\"");
    CHECK(c.pairs[1].source == "multi\nline");
    CHECK(c.pairs[1].target == "ok");
    PairSet t = load_pairs((dir / "a.tsv").string(), {});
    REQUIRE(t.pairs.size() == 2);
    CHECK(t.pairs[1].source == "你好");
    CHECK(t.pairs[1].origin == (dir / "a.tsv").string() + ":3");
}

TEST_CASE("bad rows: file:line in the message, skipped or fatal per policy", "[trainer][data]") {
    TempDir dir("data_bad");
    const std::string f = (dir / "bad.jsonl").string();
    write_text(f, std::string("{\"source\": \"ok\", \"target\": \"fine\"}\n") +      // 1
                      "{\"source\": \"broken\", \"target\": \n" +                    // 2 malformed
                      "{\"source\": \"no target\"}\n" +                              // 3 missing column
                      "{\"source\": \"empty\", \"target\": \"  \"}\n" +              // 4 empty target
                      "{\"source\": \"bad \xff\xfe bytes\", \"target\": \"x\"}\n" +  // 5 invalid UTF-8
                      "{\"source\": \"ok2\", \"target\": \"fine2\"}\n");             // 6
    DataOptions o;
    o.on_bad_row = BadRowPolicy::Skip;
    PairSet s = load_pairs(f, o);
    REQUIRE(s.pairs.size() == 2);
    CHECK(s.pairs[1].origin == f + ":6");
    REQUIRE(s.bad_rows.size() == 4);
    CHECK(s.bad_rows[0].where == f + ":2");
    CHECK(s.bad_rows[0].reason.find("malformed JSON") != std::string::npos);
    CHECK(s.bad_rows[1].where == f + ":3");
    CHECK(s.bad_rows[1].reason.find("missing target") != std::string::npos);
    CHECK(s.bad_rows[2].where == f + ":4");
    CHECK(s.bad_rows[2].reason == "empty target");
    CHECK(s.bad_rows[3].where == f + ":5");
    CHECK(s.bad_rows[3].reason.find("invalid UTF-8") != std::string::npos);
    o.on_bad_row = BadRowPolicy::Fail;
    const std::string e = error_of(f, o);
    CHECK(e.find(f + ":2: malformed JSON") == 0);
    CHECK(e.find('\n') == std::string::npos);

    write_text(dir / "bad.csv", "source,target\na,b\nonly-one-column\nc,\n");
    PairSet c = load_pairs((dir / "bad.csv").string(), {});
    CHECK(c.pairs.size() == 1);
    REQUIRE(c.bad_rows.size() == 2);
    CHECK(c.bad_rows[0].where == (dir / "bad.csv").string() + ":3");
    CHECK(c.bad_rows[0].reason.find("missing column") == 0);
    CHECK(c.bad_rows[1].reason == "empty target");
    write_text(dir / "nohdr.csv", "a,b\nc,d\n");
    CHECK(error_of((dir / "nohdr.csv").string(), {}).find(":1: header has no source column") != std::string::npos);
    CHECK(error_of((dir / "missing.jsonl").string(), {}).find("not found") != std::string::npos);
    write_text(dir / "x.parquet", "");
    CHECK(error_of((dir / "x.parquet").string(), {}).find("unknown data format") != std::string::npos);
    write_text(dir / "allbad.jsonl", "nope\n");
    CHECK(error_of((dir / "allbad.jsonl").string(), {}).find("no usable pairs") != std::string::npos);
    write_text(dir / "nofields.jsonl", "{\"a\": \"x\", \"b\": \"y\"}\n");  // no row has source/target
    CHECK(error_of((dir / "nofields.jsonl").string(), {}).find("no usable pairs (first bad row") != std::string::npos);
}

TEST_CASE("a stray quote after a quoted field is a bad row; a quote inside an unquoted field is text", "[trainer][data]") {
    TempDir dir("data_quote");
    const std::string f = (dir / "stray.csv").string();
    write_text(f, "source,target\n\"ab\"c,d\nsaid \"hi\" twice,ok\n");
    PairSet s = load_pairs(f, {});
    REQUIRE(s.pairs.size() == 1);
    CHECK(s.pairs[0].source == "said \"hi\" twice");  // as Python's csv reads it
    REQUIRE(s.bad_rows.size() == 1);
    CHECK(s.bad_rows[0].where == f + ":2");
    CHECK(s.bad_rows[0].reason.find("stray quote") == 0);
    DataOptions fail;
    fail.on_bad_row = BadRowPolicy::Fail;
    CHECK(error_of(f, fail).find(f + ":2: stray quote") == 0);
}

TEST_CASE("data report: lengths, truncation, <unk> rate warning, duplicates", "[trainer][data]") {
    // The genuine English T5 vocabulary meets Japanese: high <unk> rate, warned.
    Tokenizer tok = Tokenizer::load(data_dir() / "t5-spiece" / "spiece.model");
    std::vector<TextPair> pairs = {{"translate: 今日は暑いです", "It is hot today.", "f:1"},
                                   {"translate: 今日は暑いです", "It is hot today.", "f:2"},
                                   {"a b c d e f g h i j k l m n o p", "same", "f:3"},
                                   {"same", "same", "f:4"}};
    std::vector<TokenizedPair> tp;
    for (const auto& p : pairs) tp.push_back(tokenize_pair(tok, p.source, p.target, 8, 8));
    CHECK(tp[2].source.size() == 8);
    CHECK(tp[2].source.back() == tok.eos_id());
    CHECK(tp[2].full_source_len > 8);
    DataReport r = make_data_report(tp, pairs, 1, tok.unk_id(), 8, 8);
    CHECK(r.pairs == 4);
    CHECK(r.bad_rows == 1);
    CHECK(r.duplicates == 1);
    CHECK(r.identical_pairs == 1);
    CHECK(r.truncated_sources >= 1);
    CHECK(r.truncated_targets == 0);
    CHECK(r.source_unk_rate > 0.05);
    CHECK(r.target_unk_rate == 0.0);
    REQUIRE_FALSE(r.warnings.empty());
    CHECK(r.warnings[0].find("source <unk> rate") == 0);
    int64_t counted = 0;
    for (auto c : r.source_lengths.counts) counted += c;
    CHECK(counted == 4);
    CHECK(r.to_text().find("4 pairs") != std::string::npos);
}

TEST_CASE("batch order is seeded, deterministic, complete and length-grouped", "[trainer][data]") {
    std::vector<TokenizedPair> data(103);
    for (size_t i = 0; i < data.size(); ++i) data[i].source.assign(1 + (i * 37) % 50, 5), data[i].target.assign(1 + i % 7, 5);
    auto a = make_epoch_batches(data, 8, true, 42, 0);
    auto b = make_epoch_batches(data, 8, true, 42, 0);
    auto c = make_epoch_batches(data, 8, true, 42, 1);
    auto d = make_epoch_batches(data, 8, true, 43, 0);
    CHECK(a == b);
    CHECK(a != c);
    CHECK(a != d);
    std::vector<int64_t> all;
    for (auto& batch : a) all.insert(all.end(), batch.begin(), batch.end());
    std::sort(all.begin(), all.end());
    REQUIRE(all.size() == data.size());
    for (size_t i = 0; i < all.size(); ++i) CHECK(all[i] == static_cast<int64_t>(i));
    // Grouping: the mean spread of lengths within a batch is far below that of random batches.
    auto spread = [&](const std::vector<std::vector<int64_t>>& bs) {
        double s = 0;
        for (auto& batch : bs) {
            size_t lo = SIZE_MAX, hi = 0;
            for (auto i : batch)
                lo = std::min(lo, data[i].source.size() + data[i].target.size()),
                hi = std::max(hi, data[i].source.size() + data[i].target.size());
            s += static_cast<double>(hi - lo);
        }
        return s / bs.size();
    };
    CHECK(spread(a) < 0.5 * spread(make_epoch_batches(data, 8, false, 42, 0)));
}

TEST_CASE("options validation and parsing", "[trainer][options]") {
    TrainingOptions o;
    CHECK_THROWS_WITH(validate_training_options(o), Catch::Contains("exactly one of --model"));
    o.model_dir = "m";
    o.data_file = "d.jsonl";
    o.out_dir = "out";
    CHECK_NOTHROW(validate_training_options(o));
    o.batch_size = 0;
    CHECK_THROWS_WITH(validate_training_options(o), Catch::Contains("--batch-size"));
    o.batch_size = 4;
    o.device = TrainDevice::Cpu;
    o.precision = TrainPrecision::Fp16;
    CHECK_THROWS_WITH(validate_training_options(o), Catch::Contains("fp16 needs CUDA"));
    CHECK(parse_enum<OptimizerKind>("adafactor") == OptimizerKind::Adafactor);
    CHECK(parse_enum<ScheduleKind>("cosine") == ScheduleKind::Cosine);
    CHECK_THROWS_AS(parse_enum<ScheduleKind>("step"), Error);
    CHECK_THROWS_AS(parse_enum<BadRowPolicy>("ignore"), Error);
}
