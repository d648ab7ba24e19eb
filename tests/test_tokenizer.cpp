// Tokenizer ids/tokens/decoding identical to transformers' slow T5Tokenizer (legacy=True) on the
// genuine T5 spiece.model (38 strings: English, CJK, sentinels, whitespace, full-width, </s> in text).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "t5s/error.h"
#include "t5s/tokenizer.h"

using namespace t5s;

namespace {
nlohmann::json golden(const std::string& name) {
    std::ifstream in(std::string(T5S_TEST_DATA) + "/goldens/" + name + ".json");
    return nlohmann::json::parse(in);
}
}  // namespace

TEST_CASE("T5 tokenizer matches transformers T5Tokenizer on the genuine spiece.model", "[tokenizer]") {
    const auto g = golden("tokenizer_t5");
    Tokenizer tok = Tokenizer::load(std::string(T5S_TEST_DATA) + "/t5-spiece/spiece.model");
    CHECK(tok.sp_size() == g["sp_size"].get<int>());
    CHECK(tok.vocab_size() == g["len_tokenizer"].get<int>());
    CHECK(tok.encode("<extra_id_0>", false) == std::vector<int>{g["extra_id_0"].get<int>()});
    CHECK(tok.encode("<extra_id_99>", false) == std::vector<int>{g["extra_id_99"].get<int>()});
    REQUIRE(g["cases"].size() >= 20);
    for (const auto& c : g["cases"]) {
        const std::string text = c["text"];
        INFO("text: " << text);
        const auto ids = tok.encode(text);
        CHECK(ids == c["ids"].get<std::vector<int>>());
        CHECK(tok.tokens(text) == c["tokens"].get<std::vector<std::string>>());
        CHECK(tok.decode(ids, true) == c["decoded_skip"].get<std::string>());
        CHECK(tok.decode(ids, false) == c["decoded_keep"].get<std::string>());
    }
    for (const auto& c : g["decode_cases"]) {
        const auto ids = c["ids"].get<std::vector<int>>();
        CHECK(tok.decode(ids, true) == c["decoded_skip"].get<std::string>());
        CHECK(tok.decode(ids, false) == c["decoded_keep"].get<std::string>());
    }
}

TEST_CASE("byte-fallback tokenizer (tiny test vocabulary) matches transformers", "[tokenizer]") {
    const auto g = golden("tokenizer_tiny");
    Tokenizer tok = Tokenizer::load(std::string(T5S_TEST_DATA) + "/models/tiny-spm/spiece.model");
    CHECK(tok.byte_fallback());
    for (const auto& c : g["cases"]) {
        const std::string text = c["text"];
        INFO("text: " << text);
        const auto ids = tok.encode(text);
        CHECK(ids == c["ids"].get<std::vector<int>>());
        CHECK(tok.decode(ids, true) == c["decoded_skip"].get<std::string>());
        CHECK(tok.decode(ids, false) == c["decoded_keep"].get<std::string>());
    }
}

TEST_CASE("tokenizer rejects bad input with a clear message", "[tokenizer][errors]") {
    Tokenizer tok = Tokenizer::load(std::string(T5S_TEST_DATA) + "/t5-spiece/spiece.model");
    try {
        tok.encode(std::string("ok \xC3\x28 bad"));
        FAIL("invalid UTF-8 accepted");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
        CHECK(std::string(e.what()).find("invalid UTF-8 at byte 3") != std::string::npos);
    }
    CHECK_THROWS_AS(tok.encode(std::string("\xED\xA0\x80")), Error);  // UTF-16 surrogate
    CHECK_THROWS_AS(tok.encode(std::string("\xC0\xAF")), Error);      // overlong
    CHECK_THROWS_AS(tok.encode(std::string("\xF0\x9F\x98")), Error);  // truncated sequence
    try {
        Tokenizer::load("/nonexistent/spiece.model");
        FAIL("missing file accepted");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::FileNotFound);
        CHECK(std::string(e.what()).find("/nonexistent/spiece.model") != std::string::npos);
    }
    const std::string junk = std::string(T5S_TEST_DATA) + "/goldens/tokenizer_t5.json";  // not a model
    try {
        Tokenizer::load(junk);
        FAIL("corrupt model accepted");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::CorruptFile);
        CHECK(std::string(e.what()).find("tokenizer_t5.json") != std::string::npos);
    }
}
