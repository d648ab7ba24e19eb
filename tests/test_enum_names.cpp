// The name tables of t5s/enum_names.h: one printed name per value, aliases accepted when parsing,
// one error wording listing the accepted names, and the stored names that are contracts.
#include <catch2/catch.hpp>

#include <string>

#include "t5s/drop_reason.h"
#include "t5s/error.h"
#include "t5s/generation_options.h"
#include "t5s/history_store.h"
#include "t5s/input_reader.h"
#include "t5s/jobs.h"
#include "t5s/model.h"
#include "t5s/trainer.h"

using namespace t5s;

namespace {
std::string parse_error(const char* text) {
    try {
        parse_enum<Device>(text);
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("enum names: device and dtype parse one way, aliases included", "[enum_names][settings]") {
    CHECK(parse_enum<Device>("auto") == Device::Auto);
    CHECK(parse_enum<Device>("cpu") == Device::Cpu);
    CHECK(parse_enum<Device>("cuda") == Device::Cuda);
    CHECK(parse_enum<Device>("gpu") == Device::Cuda);  // an alias: accepted, never printed
    CHECK(std::string(to_string(Device::Cuda)) == "cuda");
    CHECK(enum_names<Device>() == std::vector<std::string>{"auto", "cpu", "cuda"});
    CHECK(parse_enum<Precision>("bfloat16") == Precision::Bf16);
    CHECK(std::string(to_string(Precision::Bf16)) == "bf16");
    CHECK(enum_names<Precision>() == std::vector<std::string>{"fp32", "bf16", "fp16", "int8"});
    CHECK(parse_error("tpu") == "unknown device 'tpu' (expected auto, cpu or cuda)");
    CHECK(parse_error("") == "unknown device '' (expected auto, cpu or cuda)");
    CHECK_THROWS_WITH(parse_enum<Precision>("fp8"), "unknown dtype 'fp8' (expected fp32, bf16, fp16 or int8)");
    CHECK_FALSE(try_parse_enum<Device>("CPU"));  // names are exact
}

TEST_CASE("enum names: every value prints, and parses back to itself", "[enum_names]") {
    auto round_trips = [](auto first, int count) {
        using E = decltype(first);
        for (int i = 0; i < count; ++i) {
            const E v = static_cast<E>(i);
            INFO(to_string(v));
            CHECK(std::string(to_string(v)) != "?");
            CHECK(parse_enum<E>(to_string(v)) == v);
            CHECK(enum_at<E>(enum_index(v)) == v);
        }
        CHECK(enum_names<E>().size() == static_cast<size_t>(count));
    };
    round_trips(Device::Auto, 3);
    round_trips(Precision::Fp32, 4);
    round_trips(ErrorCode::InvalidArgument, 7);
    round_trips(JobKind::LoadModel, 7);
    round_trips(JobState::Queued, 6);
    round_trips(CandidateState::None, 4);
    round_trips(EventKind::Accept, 5);
    round_trips(ExportFormat::Jsonl, 5);
    round_trips(InputFormat::Text, 5);
    round_trips(OptimizerKind::AdamW, 2);
    round_trips(ScheduleKind::Constant, 3);
    round_trips(BadRowPolicy::Skip, 2);
    round_trips(StopReason::Completed, 4);
    round_trips(RankBy::Auto, 5);
    round_trips(DropReason::Copy, 10);
}

TEST_CASE("enum names: rank takes the names it took as a string, nothing else", "[enum_names][options]") {
    // --rank, HTTP bodies, settings.json and the history's settings_json all carry these names.
    CHECK(enum_names<RankBy>() == std::vector<std::string>{"auto", "similarity", "back_score", "fluency", "none"});
    CHECK(parse_enum<RankBy>("back_score") == RankBy::BackScore);
    CHECK(std::string(to_string(RankBy::None)) == "none");
    CHECK(std::string(to_string(GenerationOptions{}.rank)) == "none");  // the default: decoding order
    CHECK_FALSE(try_parse_enum<RankBy>("backscore"));                   // no aliases were ever accepted
    CHECK_FALSE(try_parse_enum<RankBy>("length"));
    CHECK_THROWS_WITH(parse_enum<RankBy>("length"),
                      "unknown rank 'length' (expected auto, similarity, back_score, fluency or none)");
}

TEST_CASE("enum names: the stored and printed names stay as they were", "[enum_names]") {
    // The history stores these, the CLI prints them, the HTTP API answers with them.
    CHECK(std::string(to_string(StopReason::EarlyStopping)) == "early_stopping");
    CHECK(std::string(to_string(StopReason::TimeLimit)) == "time_limit");
    CHECK(std::string(to_string(JobKind::LoadModel)) == "load");
    CHECK(std::string(to_string(ErrorCode::OutOfMemory)) == "out_of_memory");
    CHECK(std::string(to_string(CandidateState::Edited)) == "edited");
    CHECK(std::string(to_string(EventKind::Redo)) == "redo");
    CHECK_THROWS_WITH(parse_enum<BadRowPolicy>("ignore"), "unknown --on-bad-row 'ignore' (expected skip or fail)");
}
