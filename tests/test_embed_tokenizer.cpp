// Embedding tokenizers: ids identical to transformers' slow BertTokenizer / XLMRobertaTokenizer on
// the fixtures made by tests/make_embed_goldens.py, padded batches, and one-line errors.
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>

#include "t5s/embed_tokenizer.h"
#include "t5s/error.h"
#include "test_support.h"

using t5s::EmbedTokenizer;
namespace fs = std::filesystem;

namespace {

fs::path embed_dir() { return t5s::test::data_dir() / "embed"; }
const nlohmann::json& goldens() {
    static const nlohmann::json j = t5s::test::load_json(embed_dir() / "goldens.json");
    return j;
}

// Every golden row of one encoding set: ids identical to the slow HF tokenizer.
void check_rows(const EmbedTokenizer& tok, const nlohmann::json& rows, int max_length) {
    REQUIRE(rows.size() >= 20);
    for (const auto& row : rows) {
        const std::string text = row["text"].get<std::string>();
        INFO("text: " << text << "  max_length " << max_length);
        CHECK(tok.encode(text, max_length) == row["ids"].get<std::vector<int>>());
    }
}

void check_batch(const EmbedTokenizer& tok, const nlohmann::json& b) {
    const t5s::EmbedBatch batch = tok.encode_batch(b["texts"].get<std::vector<std::string>>(), b["max_length"].get<int>());
    CHECK(batch.input_ids == b["input_ids"].get<std::vector<std::vector<int>>>());
    CHECK(batch.attention_mask == b["attention_mask"].get<std::vector<std::vector<int>>>());
    // A padded row equals the row encoded alone, up to its mask.
    for (size_t i = 0; i < batch.input_ids.size(); ++i) {
        std::vector<int> alone = tok.encode(b["texts"][i].get<std::string>(), b["max_length"].get<int>());
        std::vector<int> row(batch.input_ids[i].begin(), batch.input_ids[i].begin() + alone.size());
        CHECK(row == alone);
    }
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const t5s::Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("WordPiece ids equal BertTokenizer for every config", "[embed]") {
    const fs::path vocab = embed_dir() / "wordpiece" / "vocab.txt";
    for (const auto& [name, sets] : goldens()["wordpiece"].items()) {
        INFO("config " << name);
        auto tok = EmbedTokenizer::load_wordpiece(vocab, embed_dir() / "wordpiece" / (name + ".json"));
        CHECK(tok->kind() == EmbedTokenizer::Kind::WordPiece);
        check_rows(*tok, sets["full"], EmbedTokenizer::kNoTruncation);
        check_rows(*tok, sets["truncated"], goldens()["max_length"].get<int>());
        if (sets.contains("batch")) check_batch(*tok, sets["batch"]);
        if (sets.contains("model_max")) {  // max_length 0 = model_max_length from the config
            CHECK(tok->model_max_length() == 12);
            for (size_t i = 0; i < sets["model_max"].size(); ++i) {
                CHECK(tok->encode(sets["full"][i]["text"].get<std::string>()) == sets["model_max"][i].get<std::vector<int>>());
            }
        }
    }
}

TEST_CASE("XLM-R SentencePiece ids equal XLMRobertaTokenizer", "[embed]") {
    auto tok = EmbedTokenizer::load(embed_dir() / "xlmr");
    const auto& g = goldens()["xlmr"];
    CHECK(tok->kind() == EmbedTokenizer::Kind::XlmrSentencePiece);
    CHECK(tok->vocab_size() == g["vocab_size"].get<int>());
    CHECK(tok->token(g["mask_id"].get<int>()) == "<mask>");
    CHECK((tok->start_id() == 0 && tok->pad_id() == 1 && tok->end_id() == 2 && tok->unk_id() == 3));
    check_rows(*tok, g["full"], EmbedTokenizer::kNoTruncation);
    check_rows(*tok, g["truncated"], goldens()["max_length"].get<int>());
    check_batch(*tok, g["batch"]);
}

TEST_CASE("embedding tokenizers reject bad input with one line naming the file", "[embed]") {
    t5s::test::TempDir tmp("embedtok");
    auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(tmp / name) << text;
        return tmp / name;
    };
    const std::string missing = error_of([&] { EmbedTokenizer::load_wordpiece(tmp / "vocab.txt"); });
    CHECK(missing.find((tmp / "vocab.txt").string()) != std::string::npos);
    CHECK(error_of([&] { EmbedTokenizer::load_wordpiece(write("empty.txt", "")); }).find("empty.txt: empty vocabulary") !=
          std::string::npos);
    CHECK(error_of([&] {
              EmbedTokenizer::load_wordpiece(write("nounk.txt", "[CLS]\n[SEP]\n[PAD]\na\n"));
          }).find("nounk.txt: vocabulary has no [UNK] token") != std::string::npos);
    CHECK(error_of([&] {
              EmbedTokenizer::load_wordpiece(write("nocls.txt", "[UNK]\n[SEP]\n[PAD]\na\n"));
          }).find("nocls.txt: vocabulary has no [CLS] token") != std::string::npos);
    const fs::path vocab = embed_dir() / "wordpiece" / "vocab.txt";
    CHECK(error_of([&] {
              EmbedTokenizer::load_wordpiece(vocab, write("bad.json", "{\"do_lower_case\": \"yes\"}"));
          }).find("bad.json: bad tokenizer config") != std::string::npos);
    // A T5 spiece.model has <pad>=0, </s>=1, <unk>=2: the wrong layout for XLM-R ids.
    const fs::path t5_model = t5s::test::model_dir("t5v10-tied-relu") / "spiece.model";
    CHECK(error_of([&] {
              EmbedTokenizer::load_xlmr(t5_model);
          }).find("spiece.model: SentencePiece model does not have XLM-R's layout") != std::string::npos);
    CHECK(error_of([&] {
              EmbedTokenizer::load_xlmr(write("junk.model", "not a model"));
          }).find("junk.model: not a valid SentencePiece model") != std::string::npos);
    CHECK(error_of([&] { EmbedTokenizer::load(tmp.path()); }).find("no vocab.txt, sentencepiece.bpe.model or tokenizer.json") !=
          std::string::npos);
    auto tok = EmbedTokenizer::load_wordpiece(vocab);
    CHECK(error_of([&] { tok->encode("bad \xff utf8"); }).find("invalid UTF-8") != std::string::npos);
    CHECK(error_of([&] { tok->encode("x", 1); }) == "max_length must be >= 2, or 0 (the model's), or -1 (no truncation) (got 1)");
}
