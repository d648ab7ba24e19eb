// The model store without a network: SHA-256 against hashlib, repository ids, the cache layout and
// --model resolution, which files a pull fetches, and the architecture gate (t5s/hub.h, hub_plan.h).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "hub/hub_paths.h"
#include "hub/hub_plan.h"
#include "hub/sha256.h"
#include "t5s/hub.h"
#include "t5s/hub_pull.h"

namespace fs = std::filesystem;
using namespace t5s::hub;

namespace {

std::string sha_of(const std::string& s) {
    Sha256 h;
    h.update(s.data(), s.size());
    return h.hex_digest();
}

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("t5s_hub_" + std::to_string(::getpid()));
    TempDir() {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
};

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("hub: SHA-256 equals hashlib's, whatever the chunking", "[hub]") {
    // hashlib.sha256(...).hexdigest() of the same bytes.
    CHECK(sha_of("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha_of("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    std::string big(1000003, '\0');
    for (size_t i = 0; i < big.size(); ++i) big[i] = char(i * 7 % 251);  // bytes(i*7%251 for i in range(1000003))
    const std::string want = "6e0aa3a3e4afdd717e6af8d151be7c532fce9607f2086e89d0136acffec3f3ae";
    CHECK(sha_of(big) == want);
    for (size_t chunk : {1, 63, 64, 65, 4097}) {
        Sha256 h;
        for (size_t at = 0; at < big.size(); at += chunk) h.update(big.data() + at, std::min(chunk, big.size() - at));
        CHECK(h.hex_digest() == want);
    }
    TempDir tmp;  // sha256_file: OpenSSL's where built with it, else the same class
    std::ofstream(tmp.path / "big", std::ios::binary) << big;
    CHECK(sha256_file(tmp.path / "big") == want);
}

TEST_CASE("hub: repository ids and revisions", "[hub]") {
    auto r = parse_repo_ref("google/flan-t5-small");
    REQUIRE(r);
    CHECK(r->repo == "google/flan-t5-small");
    CHECK(r->revision == "main");
    r = parse_repo_ref("sonoisa/t5-base-japanese@v1.0");
    REQUIRE(r);
    CHECK(r->repo == "sonoisa/t5-base-japanese");
    CHECK(r->revision == "v1.0");
    CHECK(parse_repo_ref("t5-small"));
    for (const char* bad : {"", "/x", "a/", "a/b/c", "../x", "a/..", "a b/c", "a/b@", "a/b@../x", "a--b/c"}) {
        INFO(bad);
        CHECK_FALSE(parse_repo_ref(bad));
    }
    CHECK(repo_folder("/c", "google/flan-t5-small") == fs::path("/c/models--google--flan-t5-small"));
    CHECK(display_name("/c/models--google--flan-t5-small/snapshots/0123") == "google/flan-t5-small");
    CHECK(display_name("/m/my-model/") == "my-model");
}

TEST_CASE("hub: --model resolves a folder first, then ORG/NAME[@REV] in the cache, else says how to pull it", "[hub]") {
    TempDir tmp;
    const fs::path cache = tmp.path / "hub";
    const std::string commit = "0123456789abcdef0123456789abcdef01234567";
    const fs::path repo = repo_folder(cache, "org/tiny");
    write(repo / "snapshots" / commit / "config.json", "{\"model_type\": \"t5\"}");
    write(repo / "refs" / "main", commit);
    ::setenv("HF_HUB_CACHE", cache.c_str(), 1);
    CHECK(cache_dir() == cache);
    CHECK(resolve_model("org/tiny") == repo / "snapshots" / commit);
    CHECK(resolve_model("org/tiny@" + commit) == repo / "snapshots" / commit);
    CHECK_THROWS_WITH(resolve_model("org/tiny@v2"), Catch::Contains("t5studio pull org/tiny@v2"));
    CHECK_THROWS_WITH(resolve_model("org/absent"), Catch::Contains("not in the Hugging Face cache"));
    CHECK(resolve_model("/no/such/folder") == fs::path("/no/such/folder"));  // the loader says "not found"
    CHECK(resolve_model("absent") == fs::path("absent"));
    // An existing folder of that name wins over the repository id.
    const fs::path cwd = fs::current_path();
    fs::current_path(tmp.path);
    write(tmp.path / "org" / "tiny" / "config.json", "{}");
    CHECK(resolve_model("org/tiny") == fs::path("org/tiny"));
    fs::current_path(cwd);
    ::unsetenv("HF_HUB_CACHE");
    ::setenv("HF_HOME", (tmp.path / "home").c_str(), 1);
    CHECK(cache_dir() == tmp.path / "home" / "hub");
    ::unsetenv("HF_HOME");
}

TEST_CASE("hub: a pull fetches configs, tokenizer and one weight format, nothing else", "[hub]") {
    const std::vector<std::string> t5 = {"config.json",    "model.safetensors",  "pytorch_model.bin",
                                         "tf_model.h5",    "flax_model.msgpack", "onnx/encoder_model.onnx",
                                         "spiece.model",   "tokenizer.json",     "generation_config.json",
                                         ".gitattributes", "README.md"};
    auto files = select_files(t5, "");
    CHECK(files == std::vector<std::string>{"config.json", "spiece.model", "tokenizer.json", "generation_config.json",
                                            "README.md", "model.safetensors"});
    files = select_files({"config.json", "pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin",
                          "pytorch_model.bin.index.json", "spiece.model"},
                         "");
    CHECK(files.size() == 5);
    const std::vector<std::string> st = {"config.json",
                                         "modules.json",
                                         "model.safetensors",
                                         "pytorch_model.bin",
                                         "vocab.txt",
                                         "1_Pooling/config.json",
                                         "2_Dense/config.json",
                                         "2_Dense/model.safetensors",
                                         "2_Dense/pytorch_model.bin",
                                         "onnx/model.onnx",
                                         "openvino/openvino_model.bin"};
    files = select_files(st, R"([{"path": ""}, {"path": "1_Pooling"}, {"path": "2_Dense"}, {"path": "3_Normalize"}])");
    CHECK(files == std::vector<std::string>{"config.json", "modules.json", "vocab.txt", "1_Pooling/config.json",
                                            "2_Dense/config.json", "2_Dense/model.safetensors", "model.safetensors"});
}

TEST_CASE("hub: names from a server stay inside the cache and print escaped", "[hub]") {
    for (const char* ok : {"config.json", "1_Pooling/config.json", "a.b/c..d", "\xc3\xa9t\xc3\xa9.json"})
        CHECK(unsafe_path_reason(ok).empty());
    const std::vector<std::string> bad = {"",
                                          "/etc/passwd",
                                          "../x",
                                          "a/../../x",
                                          "a/./b",
                                          "a//b",
                                          "a/",
                                          ".",
                                          "a\\b",
                                          "a\x1b[31m",
                                          std::string("a\0b", 3),
                                          std::string(1025, 'a'),
                                          std::string(256, 'a') + "/b"};
    for (const std::string& name : bad) CHECK_FALSE(unsafe_path_reason(name).empty());
    const std::string modules = R"([{"path": "/tmp/out"}, {"path": "../../up"}, {"path": "ok"}])";
    CHECK(select_files({"config.json", "/tmp/out/config.json", "../../up/config.json", "ok/config.json", "model.safetensors"},
                       modules) == std::vector<std::string>{"config.json", "ok/config.json", "model.safetensors"});
    CHECK_THROWS_AS(check_module_paths("o/n", modules), PullError);
    CHECK(is_commit_hash(std::string(40, 'a')));
    CHECK_FALSE(is_commit_hash("../../../../../../../../../../../../../x"));
    CHECK_FALSE(is_blob_name(".."));
    CHECK_FALSE(is_blob_name("a/b"));
    CHECK(shown("a\x1b[31m\n\xff\\", 200) == "a\\x1b[31m\\x0a\\xff\\x5c");
    CHECK(shown(std::string(300, 'x'), 200) == std::string(200, 'x') + "...");
}

TEST_CASE("hub: architectures T5 Studio cannot run are refused with one line", "[hub]") {
    CHECK(check_architecture("o/n", R"({"model_type": "mt5"})", false).kind == "generation");
    CHECK(check_architecture("o/n", R"({"model_type": "xlm-roberta"})", true).kind == "encoder");
    try {
        check_architecture("meta/llama", R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"]})", false);
        FAIL("accepted llama");
    } catch (const PullError& e) {
        CHECK(e.failure() == PullFailure::Unsupported);
        CHECK(std::string(e.what()).find("LlamaForCausalLM") != std::string::npos);
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
    CHECK_THROWS_AS(check_architecture("o/n", R"({"model_type": "bert"})", false), PullError);
}

TEST_CASE("hub: memory fit labels", "[hub]") {
    CHECK(fit_label(6, 10) == "fits");
    CHECK(fit_label(7, 10) == "tight");
    CHECK(fit_label(11, 10) == "too big");
    CHECK(fit_label(1, 0) == "unknown");
    CHECK(estimated_run_bytes(1000000000, 2) == 2400000000);
}

TEST_CASE("hub: an adapter folder names its base: a folder, else ORG/NAME in the cache", "[hub][adapter]") {
    TempDir tmp;
    const fs::path cache = tmp.path / "hub";
    const std::string commit = "0123456789abcdef0123456789abcdef01234567";
    write(repo_folder(cache, "org/base") / "snapshots" / commit / "config.json", "{\"model_type\": \"t5\"}");
    write(repo_folder(cache, "org/base") / "refs" / "main", commit);
    ::setenv("HF_HUB_CACHE", cache.c_str(), 1);
    write(tmp.path / "base" / "config.json", "{\"model_type\": \"t5\"}");
    write(tmp.path / "by-path" / "adapter_config.json",
          "{\"base_model_name_or_path\": \"" + (tmp.path / "base").string() + "\"}");
    write(tmp.path / "by-name" / "adapter_config.json", "{\"base_model_name_or_path\": \"org/base\"}");
    write(tmp.path / "lost" / "adapter_config.json", "{\"base_model_name_or_path\": \"org/absent\"}");
    write(tmp.path / "broken" / "adapter_config.json", "[1");
    CHECK(adapter_base(tmp.path / "by-path")->dir == tmp.path / "base");
    CHECK(adapter_base(tmp.path / "by-name")->dir == repo_folder(cache, "org/base") / "snapshots" / commit);
    CHECK_FALSE(adapter_base(tmp.path / "lost")->dir);
    CHECK(adapter_base(tmp.path / "lost")->name == "org/absent");
    CHECK_FALSE(adapter_base(tmp.path / "base"));  // a model, not an adapter
    CHECK_THROWS_WITH(adapter_base(tmp.path / "broken"), Catch::Contains("adapter_config.json: not a JSON object"));
    ::unsetenv("HF_HUB_CACHE");
}

TEST_CASE("hub: models in --dir folders: a few levels down, by full path, labelled, adapters with their base", "[hub][models]") {
    TempDir tmp;
    const std::string t5 =
        R"({"model_type": "t5", "d_model": 8, "d_kv": 2, "d_ff": 8, "num_layers": 1, "num_heads": 2, "vocab_size": 10})";
    write(tmp.path / "cache" / "x", "");
    write(tmp.path / "A" / "p" / "runs" / "r1" / "final" / "config.json", t5);          // 4 levels down
    write(tmp.path / "A" / "p" / "runs" / "r1" / "final" / "sub" / "config.json", t5);  // a model's modules: not searched
    write(tmp.path / "A" / "a" / "b" / "c" / "d" / "deep" / "config.json", t5);         // 5 levels: too deep
    write(tmp.path / "A" / ".tmp-x" / "config.json", t5);                               // being written
    write(tmp.path / "B" / "lora" / "adapter_config.json",
          "{\"base_model_name_or_path\": \"" + (tmp.path / "A" / "p" / "runs" / "r1" / "final").string() + "\"}");
    const auto rows = list_models(tmp.path / "cache", {tmp.path / "A", tmp.path / "B"}, /*adapters=*/true);
    REQUIRE(rows.size() == 2);
    const auto& model = rows[0].kind == "adapter" ? rows[1] : rows[0];
    const auto& adapter = rows[0].kind == "adapter" ? rows[0] : rows[1];
    CHECK(model.name == (tmp.path / "A" / "p" / "runs" / "r1" / "final").string());
    CHECK(model.found_in == (tmp.path / "A").string());
    CHECK(adapter.found_in == (tmp.path / "B").string());
    CHECK(adapter.base_dir == tmp.path / "A" / "p" / "runs" / "r1" / "final");
    CHECK(adapter.parameters == model.parameters);                     // running it takes its base
    CHECK(list_models(tmp.path / "cache", {tmp.path / "B"}).empty());  // adapters only when asked (the app's list)
}
