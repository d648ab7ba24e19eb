// t5s::Embedder against sentence-transformers goldens (tests/make_embedder_goldens.py): token ids,
// embeddings within 1e-4, padded batches equal to rows alone, other precisions, bad folders.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "skip.h"
#include "t5s/embedder.h"
#include "t5s/engine_thread.h"
#include "t5s/error.h"
#include "t5s/safetensors.h"
#include "t5s/sts.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using t5s::test::TempDir;

namespace {

const fs::path kDir = fs::path(T5S_TEST_DATA) / "embedder";

const json& goldens() {
    static const json j = json::parse(std::ifstream(kDir / "goldens.json"));
    return j;
}

std::vector<std::string> sentences() { return goldens()["sentences"].get<std::vector<std::string>>(); }

t5s::RuntimeOptions cpu(t5s::Precision p = t5s::Precision::Fp32) {
    t5s::RuntimeOptions o;
    o.device = t5s::Device::Cpu;
    o.precision = p;
    o.threads = 2;
    return o;
}

double max_abs_diff(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        REQUIRE(a[i].size() == b[i].size());
        for (size_t j = 0; j < a[i].size(); ++j) worst = std::max(worst, std::fabs(double(a[i][j]) - b[i][j]));
    }
    return worst;
}

// Copy of a fixture folder to break in one place.
struct BrokenCopy {
    TempDir tmp{"embedder"};
    fs::path dir;
    explicit BrokenCopy(const std::string& model) : dir(tmp / model) { fs::copy(kDir / model, dir, fs::copy_options::recursive); }
    void edit_json(const fs::path& rel, const std::function<void(json&)>& change) const {
        json j = json::parse(std::ifstream(dir / rel));
        change(j);
        std::ofstream(dir / rel) << j.dump(1);
    }
};

std::string load_error(const fs::path& dir, t5s::ErrorCode expected) {
    try {
        t5s::Embedder::load(dir, cpu());
    } catch (const t5s::Error& e) {
        CHECK(e.code() == expected);
        const std::string msg = e.what();
        CHECK(msg.find('\n') == std::string::npos);
        return msg;
    }
    FAIL("loading " << dir << " did not fail");
    return "";
}

}  // namespace

TEST_CASE("embedder matches sentence-transformers on every fixture shape", "[embedder]") {
    const auto texts = sentences();
    for (const auto& [name, g] : goldens()["models"].items()) {
        INFO(name);
        auto e = t5s::Embedder::load(kDir / name, cpu());
        const auto want_ids = g["ids"].get<std::vector<std::vector<int>>>();
        CHECK(e->token_ids(texts) == want_ids);
        const auto want = g["embeddings"].get<std::vector<std::vector<float>>>();
        CHECK(e->info().dim == static_cast<int>(want[0].size()));
        CHECK(e->info().max_seq_length == goldens()["max_seq_length"].get<int>());
        t5s::EmbedOptions opt;
        opt.batch_size = 4;
        const auto got = e->embed(texts, opt);
        CHECK(max_abs_diff(got, want) < 1e-4);
        // Each row alone (no padding) equals the padded batch.
        opt.batch_size = 1;
        CHECK(max_abs_diff(e->embed(texts, opt), got) < 1e-5);
    }
}

TEST_CASE("a sentence-transformers folder as the Hub ships it loads (tokenizer.json, int64 position_ids)", "[embedder]") {
    // bert_wordpiece_hub is one of the goldens above; here: it has the Hub's shape, and it is read so.
    const fs::path dir = kDir / "bert_wordpiece_hub";
    REQUIRE_FALSE(fs::exists(dir / "vocab.txt"));
    const auto weights = t5s::SafetensorsFile::open(dir / "model.safetensors");
    const t5s::TensorView* positions = weights->find("embeddings.position_ids");
    REQUIRE(positions != nullptr);
    CHECK(positions->dtype == t5s::DType::I64);
    const auto e = t5s::Embedder::load(dir, cpu());
    const auto& files = e->info().files;
    CHECK(std::find(files.begin(), files.end(), (dir / "tokenizer.json").string()) != files.end());
    CHECK(e->info().tokenizer == "wordpiece");
}

TEST_CASE("embedder info describes the pipeline", "[embedder]") {
    auto labse = t5s::Embedder::load(kDir / "bert_wordpiece_cls_dense_norm", cpu());
    CHECK(labse->info().architecture == "bert");
    CHECK(labse->info().tokenizer == "wordpiece");
    CHECK(labse->info().pooling == "cls");
    CHECK(labse->info().dense_layers == 1);
    CHECK(labse->info().normalize);
    auto xlmr = t5s::Embedder::load(kDir / "xlmr_mean_norm", cpu());
    CHECK(xlmr->info().architecture == "xlm-roberta");
    CHECK(xlmr->info().tokenizer == "sentencepiece-xlmr");
    CHECK(xlmr->info().pooling == "mean");
    const auto v = xlmr->embed({"山の上", "山の上", ""});
    CHECK(t5s::cosine_similarity(v[0], v[1]) == Approx(1.0).margin(1e-6));
    double norm = 0;
    for (float x : v[2]) norm += double(x) * x;
    CHECK(norm == Approx(1.0).margin(1e-5));
    CHECK(xlmr->embed({}).empty());
}

TEST_CASE("embedder prefix is prepended before tokenizing", "[embedder]") {
    auto e = t5s::Embedder::load(kDir / "bert_xlmr_mean", cpu());
    t5s::EmbedOptions opt;
    opt.prefix = "query: ";
    CHECK(e->token_ids({"hello"}, opt) == e->token_ids({"query: hello"}));
    CHECK(max_abs_diff(e->embed({"hello"}, opt), e->embed({"query: hello"})) == 0);
}

TEST_CASE("embedder in bf16 and int8 stays close to fp32", "[embedder][precision]") {
    const auto texts = sentences();
    auto ref = t5s::Embedder::load(kDir / "xlmr_mean_norm", cpu())->embed(texts);
    for (auto p : {t5s::Precision::Bf16, t5s::Precision::Int8}) {
        INFO(t5s::to_string(p));
        auto e = t5s::Embedder::load(kDir / "xlmr_mean_norm", cpu(p));
        CHECK(e->info().precision == t5s::to_string(p));
        const auto got = e->embed(texts);
        for (size_t i = 0; i < texts.size(); ++i) CHECK(t5s::cosine_similarity(got[i], ref[i]) > 0.99);
    }
}

TEST_CASE("cosine similarity", "[embedder]") {
    CHECK(t5s::cosine_similarity({1, 0}, {0, 1}) == Approx(0.0));
    CHECK(t5s::cosine_similarity({1, 2}, {2, 4}) == Approx(1.0));
    CHECK(t5s::cosine_similarity({1, 2}, {-1, -2}) == Approx(-1.0));
    CHECK(t5s::cosine_similarity({0, 0}, {1, 2}) == 0.0);
    CHECK_THROWS_AS(t5s::cosine_similarity({1}, {1, 2}), t5s::Error);
}

TEST_CASE("bad embedder folders get one line naming the file", "[embedder][bad_input]") {
    SECTION("missing folder") { CHECK_THAT(load_error(kDir / "nope", t5s::ErrorCode::FileNotFound), Catch::Contains("nope")); }
    SECTION("missing modules.json") {
        BrokenCopy c("bert_xlmr_mean");
        fs::remove(c.dir / "modules.json");
        CHECK_THAT(load_error(c.dir, t5s::ErrorCode::FileNotFound), Catch::Contains("modules.json"));
    }
    SECTION("missing module folder") {
        BrokenCopy c("bert_wordpiece_cls_dense_norm");
        fs::remove_all(c.dir / "2_Dense");
        CHECK_THAT(load_error(c.dir, t5s::ErrorCode::FileNotFound), Catch::Contains("2_Dense"));
    }
    SECTION("unsupported pooling") {
        BrokenCopy c("xlmr_mean_norm");
        c.edit_json("1_Pooling/config.json", [](json& j) { j["pooling_mode"] = "weightedmean"; });
        CHECK_THAT(load_error(c.dir, t5s::ErrorCode::Unsupported),
                   Catch::StartsWith("unsupported: pooling weightedmean in") && Catch::Contains("1_Pooling/config.json"));
    }
    SECTION("unsupported classic pooling flags") {
        BrokenCopy c("bert_xlmr_mean");
        c.edit_json("1_Pooling/config.json", [](json& j) { j["pooling_mode_mean_sqrt_len_tokens"] = true; });
        CHECK_THAT(load_error(c.dir, t5s::ErrorCode::Unsupported), Catch::Contains("mean+mean_sqrt_len_tokens"));
    }
    SECTION("unsupported architecture") {
        BrokenCopy c("bert_xlmr_mean");
        c.edit_json("config.json", [](json& j) { j["model_type"] = "mpnet"; });
        CHECK_THAT(load_error(c.dir, t5s::ErrorCode::Unsupported),
                   Catch::StartsWith("unsupported: model_type 'mpnet'") && Catch::Contains("config.json"));
    }
    SECTION("unsupported Dense activation") {
        BrokenCopy c("bert_wordpiece_cls_dense_norm");
        c.edit_json("2_Dense/config.json", [](json& j) { j["activation_function"] = "torch.nn.modules.activation.ReLU"; });
        CHECK_THAT(load_error(c.dir, t5s::ErrorCode::Unsupported), Catch::Contains("2_Dense/config.json"));
    }
    SECTION("unsupported module") {
        BrokenCopy c("bert_wordpiece_max");
        c.edit_json("modules.json", [](json& j) { j[1]["type"] = "sentence_transformers.models.LSTM"; });
        CHECK_THAT(load_error(c.dir, t5s::ErrorCode::Unsupported), Catch::Contains("LSTM") && Catch::Contains("modules.json"));
    }
    SECTION("tokenizer larger than the model's vocabulary") {
        BrokenCopy c("bert_xlmr_mean");
        c.edit_json("config.json", [](json& j) { j["vocab_size"] = 100; });
        CHECK_THAT(load_error(c.dir, t5s::ErrorCode::CorruptFile),
                   Catch::Contains("sentencepiece.bpe.model") && Catch::Contains("do not match"));
    }
    SECTION("weights that do not fit config.json") {
        BrokenCopy c("bert_wordpiece_max");
        c.edit_json("config.json", [](json& j) { j["intermediate_size"] = 8; });
        CHECK_THAT(load_error(c.dir, t5s::ErrorCode::CorruptFile), Catch::Contains("model.safetensors"));
    }
    SECTION("no tokenizer files") {
        BrokenCopy c("bert_wordpiece_max");
        fs::remove(c.dir / "vocab.txt");
        CHECK_THAT(load_error(c.dir, t5s::ErrorCode::FileNotFound), Catch::Contains("vocab.txt"));
    }
}

TEST_CASE("sts correlations match scipy", "[embedder][sts]") {
    // scipy.stats.pearsonr / spearmanr on these series (ties in both).
    const std::vector<double> x{0.1, 0.5, 0.5, 0.9, 0.3, 0.7}, y{0, 2.4, 3.6, 5, 1, 2.4};
    CHECK(t5s::pearson_correlation(x, y) == Approx(0.9035107405512438).epsilon(1e-12));
    CHECK(t5s::spearman_correlation(x, y) == Approx(0.8676470588235294).epsilon(1e-12));
    CHECK_THROWS_AS(t5s::pearson_correlation({1}, {1}), t5s::Error);
}

TEST_CASE("sts pairs: bad lines are named", "[embedder][sts]") {
    TempDir tmp("sts");
    std::ofstream(tmp / "bad.jsonl") << R"({"sentence1": "a", "sentence2": "b", "label": 1})"
                                        "\n"
                                     << R"({"sentence1": "a", "label": 1})"
                                        "\n";
    try {
        t5s::read_sts_pairs(tmp / "bad.jsonl");
        FAIL("no error");
    } catch (const t5s::Error& e) {
        CHECK_THAT(e.what(), Catch::Contains("bad.jsonl:2") && Catch::Contains("sentence2"));
    }
}

// A smoke check of the whole path on real labelled data: the tiny random embedder's numbers
// mean nothing about quality (no real weights exist here), only that every pair is scored.
TEST_CASE("sts with an embedder on JSTS valid", "[embedder][sts][shared][may_skip]") {
    const fs::path data = fs::path(T5S_SHARED_DIR) / "data" / "jglue-jsts" / "valid.jsonl";
    if (!fs::exists(data)) T5S_SKIP("../shared/data/jglue-jsts/valid.jsonl not present");
    const auto pairs = t5s::read_sts_pairs(data);
    auto e = t5s::Embedder::load(kDir / "xlmr_mean_norm", cpu());
    const auto sims = t5s::embedder_similarities(*e, pairs);
    REQUIRE(sims.size() == pairs.size());
    const auto r = t5s::sts_correlation(pairs, sims);
    WARN("tiny random xlmr_mean_norm on " << r.pairs << " JSTS pairs: spearman " << r.spearman << ", pearson " << r.pearson);
    CHECK(std::isfinite(r.spearman));
    CHECK(std::fabs(r.pearson) <= 1.0);
}

namespace {

// Drains `engine` until an event of type T for `job` arrives (or a JobFailed for it); 60 s deadline.
template <class T>
std::optional<T> wait_event(t5s::EngineThread& engine, t5s::JobId job, std::string* failure) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        for (auto& e : engine.drain_events()) {
            if (auto* t = std::get_if<T>(&e); t && t->job == job) return *t;
            if (auto* f = std::get_if<t5s::JobFailed>(&e); f && f->job == job) {
                *failure = f->message;
                return std::nullopt;
            }
        }
        engine.wait_for_events(1.0);
    }
    *failure = "timed out";
    return std::nullopt;
}

}  // namespace

TEST_CASE("engine thread loads and unloads an embedder", "[embedder][engine_thread]") {
    t5s::EngineConfig config;
    config.telemetry_hz = 0;
    t5s::EngineThread engine(config);
    std::string failure;
    const auto loaded =
        wait_event<t5s::EmbedderLoaded>(engine, engine.submit(t5s::LoadEmbedder{kDir / "xlmr_mean_norm", cpu()}), &failure);
    REQUIRE(loaded);
    CHECK(loaded->info.dim == 32);
    CHECK(loaded->info.architecture == "xlm-roberta");
    CHECK(wait_event<t5s::EmbedderUnloaded>(engine, engine.submit(t5s::UnloadEmbedder{}), &failure));
    const auto bad = wait_event<t5s::EmbedderLoaded>(engine, engine.submit(t5s::LoadEmbedder{kDir / "missing", cpu()}), &failure);
    CHECK_FALSE(bad);
    CHECK_THAT(failure, Catch::Contains("missing"));
}
