// tokenizer.json (the `tokenizers` format): ids identical to the `tokenizers` library for T5,
// BERT WordPiece and XLM-R, on the fixtures and patched variants made by
// tests/make_tokenizer_json_goldens.py; the slow file and tokenizer.json give the same ids where
// transformers' own slow and fast tokenizers agree; unsupported types are one line naming them.
#include <catch2/catch.hpp>
#include <fstream>

#include "t5s/embed_tokenizer.h"
#include "t5s/error.h"
#include "t5s/tokenizer.h"
#include "test_support.h"

using nlohmann::json;
using t5s::EmbedTokenizer;
using t5s::Tokenizer;
namespace fs = std::filesystem;

namespace {

fs::path fixtures() { return t5s::test::data_dir() / "tokenizer_json"; }
const json& goldens() {
    static const json j = t5s::test::load_json(fixtures() / "goldens.json");
    return j;
}
std::vector<std::string> sentences() { return goldens()["sentences"].get<std::vector<std::string>>(); }

void write_file(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

// The family's saved tokenizer.json with a variant's JSON patch applied, in a folder of its own
// (with tokenizer_config.json beside it, as save_pretrained leaves it).
void write_variant(const std::string& family, const json& patch, const fs::path& dir) {
    const json base = t5s::test::load_json(fixtures() / family / "tokenizer.json");
    write_file(dir / "tokenizer.json", base.patch(patch).dump());
    fs::copy_file(fixtures() / family / "tokenizer_config.json", dir / "tokenizer_config.json");
}

std::vector<std::vector<int>> t5_ids(const Tokenizer& tok) {
    std::vector<std::vector<int>> out;
    for (const std::string& s : sentences()) out.push_back(tok.encode(s));
    return out;
}
std::vector<std::vector<int>> embed_ids(const EmbedTokenizer& tok) {
    std::vector<std::vector<int>> out;
    for (const std::string& s : sentences()) out.push_back(tok.encode(s, EmbedTokenizer::kNoTruncation));
    return out;
}

void check_same(const std::vector<std::vector<int>>& got, const json& want) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("text " << i << ": " << sentences()[i]);
        CHECK(got[i] == want[i].get<std::vector<int>>());
    }
}

// Rows where transformers' slow tokenizer agrees with the fast one on the variant: there the
// slow file and tokenizer.json must give us the same ids too. Returns how many were compared.
size_t check_slow_equals_json(const std::vector<std::vector<int>>& slow_file, const std::vector<std::vector<int>>& json_file,
                              const json& family, const std::string& variant) {
    size_t compared = 0;
    for (size_t i = 0; i < slow_file.size(); ++i) {
        if (family["slow"][i] != family["variants"][variant]["ids"][i]) continue;
        INFO("text " << i << ": " << sentences()[i]);
        CHECK(slow_file[i] == json_file[i]);
        ++compared;
    }
    return compared;
}

}  // namespace

TEST_CASE("T5 tokenizer.json gives the ids of the tokenizers library", "[tokenizer_json]") {
    for (const std::string family : {"t5", "demo"}) {
        for (const auto& [variant, g] : goldens()["families"][family]["variants"].items()) {
            INFO(family << "/" << variant);
            t5s::test::TempDir dir("tokjson_" + family + "_" + variant);
            write_variant(family, g["patch"], dir.path());
            const Tokenizer tok = Tokenizer::load_folder(dir.path());
            CHECK(tok.path() == dir / "tokenizer.json");
            check_same(t5_ids(tok), g["ids"]);
        }
    }
}

TEST_CASE("T5 tokenizer.json: sentinels, vocabulary and byte fallback as with spiece.model", "[tokenizer_json]") {
    t5s::test::TempDir dir("tokjson_t5_layout");
    write_variant("t5", goldens()["families"]["t5"]["variants"]["hub"]["patch"], dir.path());
    const Tokenizer from_json = Tokenizer::load_folder(dir.path());
    const Tokenizer slow = Tokenizer::load(t5s::test::data_dir() / "t5-spiece" / "spiece.model");
    CHECK(from_json.sp_size() == 32000);
    CHECK(from_json.vocab_size() == slow.vocab_size());
    CHECK(from_json.encode("<extra_id_0>", false) == std::vector<int>{32099});
    CHECK(from_json.id_to_token(32000) == "<extra_id_99>");
    CHECK_FALSE(from_json.byte_fallback());

    t5s::test::TempDir bytes("tokjson_demo_bytes");
    write_variant("demo", goldens()["families"]["demo"]["variants"]["byte_fallback"]["patch"], bytes.path());
    CHECK(Tokenizer::load_folder(bytes.path()).byte_fallback());
}

TEST_CASE("spiece.model and tokenizer.json give the same ids where transformers' two tokenizers agree", "[tokenizer_json]") {
    const json& t5 = goldens()["families"]["t5"];
    t5s::test::TempDir dir("tokjson_both");
    write_variant("t5", t5["variants"]["hub"]["patch"], dir.path());
    const auto json_ids = t5_ids(Tokenizer::load_tokenizer_json(dir / "tokenizer.json"));
    fs::copy_file(t5s::test::data_dir() / "t5-spiece" / "spiece.model", dir / "spiece.model");
    const Tokenizer preferred = Tokenizer::load_folder(dir.path());
    CHECK(preferred.path() == dir / "spiece.model");  // both there: the slow file is used
    CHECK(check_slow_equals_json(t5_ids(preferred), json_ids, t5, "hub") >= 20);
    check_same(t5_ids(preferred), t5["slow"]);
}

TEST_CASE("BERT and XLM-R tokenizer.json give the ids of the tokenizers library", "[tokenizer_json]") {
    for (const std::string family : {"bert", "xlmr"}) {
        for (const auto& [variant, g] : goldens()["families"][family]["variants"].items()) {
            INFO(family << "/" << variant);
            t5s::test::TempDir dir("tokjson_" + family + "_" + variant);
            write_variant(family, g["patch"], dir.path());
            const auto tok = EmbedTokenizer::load(dir.path());
            check_same(embed_ids(*tok), g["ids"]);
        }
    }
    // Where the slow files are there too, they are used, and give the same ids where HF's agree.
    const fs::path embed = t5s::test::data_dir() / "embed";
    t5s::test::TempDir bert("tokjson_bert_both"), xlmr("tokjson_xlmr_both");
    write_variant("bert", json::array(), bert.path());
    write_variant("xlmr", json::array(), xlmr.path());
    const auto bert_json = embed_ids(*EmbedTokenizer::load(bert.path()));
    const auto xlmr_json = embed_ids(*EmbedTokenizer::load(xlmr.path()));
    fs::copy_file(embed / "wordpiece" / "vocab.txt", bert / "vocab.txt");
    fs::copy_file(embed / "xlmr" / "sentencepiece.bpe.model", xlmr / "sentencepiece.bpe.model");
    const json& fam = goldens()["families"];
    CHECK(check_slow_equals_json(embed_ids(*EmbedTokenizer::load(bert.path())), bert_json, fam["bert"], "saved") >= 20);
    CHECK(check_slow_equals_json(embed_ids(*EmbedTokenizer::load(xlmr.path())), xlmr_json, fam["xlmr"], "saved") >= 20);
}

TEST_CASE("tokenizer.json: an unsupported type is one line naming it and the file", "[tokenizer_json]") {
    const json base = t5s::test::load_json(fixtures() / "bert" / "tokenizer.json");
    const std::vector<std::pair<json, std::string>> cases = {
        {{{"op", "replace"}, {"path", "/model/type"}, {"value", "BPE"}}, "model type BPE"},
        {{{"op", "replace"}, {"path", "/normalizer"}, {"value", {{"type", "NFKC"}}}}, "normalizer type NFKC"},
        {{{"op", "replace"}, {"path", "/pre_tokenizer"}, {"value", {{"type", "ByteLevel"}}}}, "pre_tokenizer type ByteLevel"},
        {{{"op", "replace"}, {"path", "/decoder"}, {"value", {{"type", "ByteLevel"}}}}, "decoder type ByteLevel"},
    };
    for (const auto& [op, what] : cases) {
        t5s::test::TempDir dir("tokjson_bad");
        write_file(dir / "tokenizer.json", base.patch(json::array({op})).dump());
        INFO(what);
        try {
            EmbedTokenizer::load(dir.path());
            FAIL("accepted " << what);
        } catch (const t5s::Error& e) {
            const std::string msg = e.what();
            CHECK(e.code() == t5s::ErrorCode::Unsupported);
            CHECK(msg.find(what) != std::string::npos);
            CHECK(msg.find((dir / "tokenizer.json").string()) != std::string::npos);
            CHECK(msg.find('\n') == std::string::npos);
        }
    }
    // A WordPiece file is not a T5 tokenizer; a folder with neither file says so.
    t5s::test::TempDir dir("tokjson_wordpiece_t5");
    write_variant("bert", json::array(), dir.path());
    CHECK_THROWS_WITH(Tokenizer::load_folder(dir.path()), Catch::Contains("WordPiece") && Catch::Contains("tokenizer.json"));
    t5s::test::TempDir empty("tokjson_empty");
    CHECK_THROWS_WITH(Tokenizer::load_folder(empty.path()), Catch::Contains("no spiece.model or tokenizer.json"));
}
