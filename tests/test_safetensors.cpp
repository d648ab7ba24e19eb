// The safetensors reader on valid files (with/without __metadata__, F32/F16/BF16) and on every
// kind of damage: each gives t5s::Error naming the file, never a crash (also run under ASan+UBSan).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "t5s/error.h"
#include "t5s/safetensors.h"
#include "test_support.h"

using namespace t5s;
using t5s::test::TempDir;
namespace fs = std::filesystem;

namespace {

const TempDir& scratch() {
    static TempDir dir("safetensors");
    return dir;
}

fs::path tmp(const std::string& name) { return scratch() / name; }

void write_raw(const fs::path& p, const std::string& header, const std::string& data, bool claim = false,
               uint64_t claimed_len = 0) {
    std::ofstream out(p, std::ios::binary);
    uint64_t n = claim ? claimed_len : header.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xFF));
    out << header << data;
}

std::string error_of(const fs::path& p, ErrorCode* code = nullptr) {
    try {
        SafetensorsFile::open(p);
    } catch (const Error& e) {
        if (code) *code = e.code();
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("safetensors round trip: write, mmap, read back", "[safetensors]") {
    const float f32[6] = {1, -2, 3.5f, 0, 1e-3f, 7};
    const uint16_t bf16[2] = {0x3F80, 0xC000};  // 1.0, -2.0
    const uint16_t f16[3] = {0x3C00, 0x4000, 0xBC00};
    const auto p = tmp("ok.safetensors");
    write_safetensors(p,
                      {{"a.weight", DType::F32, {2, 3}, f32, sizeof f32},
                       {"b", DType::BF16, {2}, bf16, sizeof bf16},
                       {"c", DType::F16, {3, 1}, f16, sizeof f16}},
                      {{"format", "pt"}});
    auto f = SafetensorsFile::open(p);
    REQUIRE(f->tensors().size() == 3);
    CHECK(f->metadata().at("format") == "pt");
    const TensorView* a = f->find("a.weight");
    REQUIRE(a);
    CHECK(a->dtype == DType::F32);
    CHECK(a->shape == std::vector<int64_t>{2, 3});
    CHECK(std::memcmp(a->data, f32, sizeof f32) == 0);
    CHECK(f->find("b")->dtype == DType::BF16);
    CHECK(f->find("c")->numel() == 3);
    CHECK(f->find("missing") == nullptr);
    // No temp file left behind by the atomic write.
    for (const auto& e : fs::directory_iterator(p.parent_path())) CHECK(e.path().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("safetensors without __metadata__ and with an empty tensor", "[safetensors]") {
    const auto p = tmp("nometa.safetensors");
    write_raw(p, R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
              std::string(4, '\0'));
    auto f = SafetensorsFile::open(p);
    CHECK(f->metadata().empty());
    CHECK(f->find("e")->numel() == 0);
}

TEST_CASE("damaged safetensors files give one clear error each", "[safetensors][errors]") {
    ErrorCode code;
    const auto missing = tmp("does_not_exist.safetensors");
    CHECK(error_of(missing, &code).find("does_not_exist.safetensors: file not found") != std::string::npos);
    CHECK(code == ErrorCode::FileNotFound);

    const auto tiny = tmp("tiny.safetensors");
    std::ofstream(tiny, std::ios::binary) << "abc";
    CHECK(error_of(tiny, &code).find("truncated safetensors file") != std::string::npos);
    CHECK(code == ErrorCode::CorruptFile);

    const auto beyond = tmp("beyond.safetensors");
    write_raw(beyond, "{}", "", true, 1000000);
    CHECK(error_of(beyond).find("header length 1000000 goes beyond the end of the file") != std::string::npos);

    const auto huge = tmp("huge.safetensors");
    write_raw(huge, "{}", "", true, UINT64_MAX - 1);  // must not overflow
    CHECK(error_of(huge).find("is over the 100 MB limit") != std::string::npos);

    const auto badjson = tmp("badjson.safetensors");
    write_raw(badjson, R"({"x": {"dtype": )", "");
    CHECK(error_of(badjson).find("bad JSON header") != std::string::npos);

    const auto notobj = tmp("notobj.safetensors");
    write_raw(notobj, "[1,2,3]", "");
    CHECK(error_of(notobj).find("bad JSON header") != std::string::npos);

    const auto dtype = tmp("dtype.safetensors");
    write_raw(dtype, R"({"x":{"dtype":"F8_E9","shape":[1],"data_offsets":[0,1]}})", "z");
    CHECK(error_of(dtype).find("tensor 'x' has unknown dtype 'F8_E9'") != std::string::npos);

    const auto truncated = tmp("truncated.safetensors");
    write_raw(truncated, R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(10, '\0'));
    CHECK(error_of(truncated).find("truncated: tensor 'x' ends at data byte 16 but the file holds 10 data bytes") !=
          std::string::npos);

    const auto shape = tmp("shape.safetensors");
    write_raw(shape, R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", std::string(16, '\0'));
    CHECK(error_of(shape).find("tensor 'x' has 16 bytes but its shape and dtype need 12") != std::string::npos);

    const auto reversed = tmp("reversed.safetensors");
    write_raw(reversed, R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", std::string(8, '\0'));
    CHECK(error_of(reversed).find("begin > end") != std::string::npos);

    const auto negative = tmp("negative.safetensors");
    write_raw(negative, R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", std::string(4, '\0'));
    CHECK(error_of(negative).find("non-integer or negative dimension") != std::string::npos);

    const auto overflow = tmp("overflow.safetensors");
    write_raw(overflow, R"({"x":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", std::string(8, '\0'));
    CHECK(error_of(overflow).find("too large") != std::string::npos);

    const auto malformed = tmp("malformed.safetensors");
    write_raw(malformed, R"({"x":{"dtype":"F32","shape":[1]}})", std::string(4, '\0'));
    CHECK(error_of(malformed).find("malformed header entry") != std::string::npos);

    CHECK(error_of(fs::temp_directory_path()).find("not a regular file") != std::string::npos);
}

TEST_CASE("safetensors: the same verdict as the reference implementation on every case file", "[safetensors][errors]") {
    // tests/data/safetensors_cases: files made and judged by the `safetensors` package
    // (tests/fuzz/safetensors_cases.py; ctest safetensors_reference re-judges them with it).
    const fs::path dir = t5s::test::data_dir() / "safetensors_cases";
    const auto manifest = t5s::test::load_json(dir / "manifest.json");
    REQUIRE(manifest.size() >= 40);
    int rejected = 0;
    for (auto it = manifest.begin(); it != manifest.end(); ++it) {
        const fs::path file = dir / it.key();
        ErrorCode code = ErrorCode::Internal;
        const std::string error = error_of(file, &code);
        INFO(it.key() << ": " << error);
        // A well-formed file with a dtype T5 Studio cannot hold is Unsupported, not corrupt.
        const bool we_reject = !error.empty() && code != ErrorCode::Unsupported;
        CHECK(we_reject == (it.value() == "reject"));
        if (we_reject) {
            CHECK(error.find(file.string() + ": ") == 0);  // names the file
            CHECK(error.find('\n') == std::string::npos);  // one line
            ++rejected;
        }
    }
    CHECK(rejected >= 30);
}

TEST_CASE("safetensors: a header length off by one never shifts the tensors", "[safetensors][errors]") {
    // The reproducer: every tensor read one byte off gave NaN output and exit 0.
    const float one = 1.0f;
    const auto p = tmp("shift.safetensors");
    write_safetensors(p, {{"x", DType::F32, {1}, &one, sizeof one}}, {});
    std::string bytes;
    {
        std::ifstream in(p, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    bytes[0] = static_cast<char>(bytes[0] - 1);  // the header now "ends" one byte early
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
    CHECK_FALSE(error_of(p).empty());
}
