// Model folders as people have them: a T5 folder with only tokenizer.json (saved by a fast
// tokenizer) loads and gives the same greedy output as with spiece.model; integer buffers known by
// name are skipped, any other non-float tensor is refused with one line naming it and the file.
#include <torch/csrc/jit/serialization/pickle.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>

#include "t5s/error.h"
#include "t5s/model.h"
#include "t5s/tokenizer.h"
#include "test_support.h"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path demo_model() { return fs::path(T5S_TEST_DATA).parent_path().parent_path() / "assets" / "demo-model"; }

std::unique_ptr<t5s::Model> load_cpu(const fs::path& dir) {
    return t5s::Model::load(dir, t5s::RuntimeOptions{t5s::Device::Cpu, t5s::Precision::Fp32, 2});
}

std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Appends an int64 tensor `name` ([1, count], 0..count-1) to a safetensors file.
void add_int64_tensor(const fs::path& file, const std::string& name, int64_t count) {
    const std::string bytes = read_bytes(file);
    uint64_t header_len = 0;
    std::memcpy(&header_len, bytes.data(), 8);
    json header = json::parse(bytes.substr(8, header_len));
    std::string data = bytes.substr(8 + header_len);
    const size_t begin = data.size();
    for (int64_t i = 0; i < count; ++i) data.append(reinterpret_cast<const char*>(&i), 8);
    header[name] = {{"dtype", "I64"}, {"shape", {1, count}}, {"data_offsets", {begin, data.size()}}};
    std::string text = header.dump();
    while (text.size() % 8) text += ' ';
    const uint64_t len = text.size();
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&len), 8);
    out << text << data;
}

// Adds an int64 tensor `name` to a torch.save state dict (pytorch_model.bin or one of its shards).
void add_int64_tensor_bin(const fs::path& file, const std::string& name) {
    const std::string bytes = read_bytes(file);
    c10::IValue value = torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
    auto dict = value.toGenericDict();
    dict.insert(name, at::arange(4, at::kLong));
    const std::vector<char> out = torch::jit::pickle_save(c10::IValue(dict));
    std::ofstream(file, std::ios::binary | std::ios::trunc).write(out.data(), static_cast<std::streamsize>(out.size()));
}

std::string load_error(const fs::path& dir) {
    try {
        load_cpu(dir);
    } catch (const t5s::Error& e) {
        CHECK(e.code() == t5s::ErrorCode::Unsupported);
        return e.what();
    }
    FAIL("loading " << dir << " did not fail");
    return "";
}

}  // namespace

TEST_CASE("a T5 folder with only tokenizer.json generates as with spiece.model", "[model_folders]") {
    t5s::test::TempDir dir("tokjson_model");
    for (const char* f : {"config.json", "generation_config.json", "model.safetensors"}) fs::copy_file(demo_model() / f, dir / f);
    // The demo model's tokenizer.json as T5TokenizerFast saves it, with the Metaspace prefix the
    // slow tokenizer has (tests/make_tokenizer_json_goldens.py, variant "always").
    const fs::path fixtures = t5s::test::data_dir() / "tokenizer_json";
    const json goldens = t5s::test::load_json(fixtures / "goldens.json");
    const json& demo = goldens["families"]["demo"];
    std::ofstream(dir / "tokenizer.json")
        << t5s::test::load_json(fixtures / "demo" / "tokenizer.json").patch(demo["variants"]["always"]["patch"]).dump();

    const auto slow = load_cpu(demo_model());
    const auto fast = load_cpu(dir.path());
    CHECK(fast->info().tokenizer_vocab == slow->info().tokenizer_vocab);
    t5s::GenerationOptions greedy;
    greedy.max_new_tokens = 24;
    size_t compared = 0;
    const auto sentences = goldens["sentences"].get<std::vector<std::string>>();
    for (size_t i = 0; i < sentences.size(); ++i) {
        if (demo["slow"][i] != demo["variants"]["always"]["ids"][i] || sentences[i].empty()) continue;
        INFO(sentences[i]);
        REQUIRE(fast->tokenizer().encode(sentences[i]) == slow->tokenizer().encode(sentences[i]));
        const auto a = slow->generate({"paraphrase: " + sentences[i]}, greedy)[0].candidates[0];
        const auto b = fast->generate({"paraphrase: " + sentences[i]}, greedy)[0].candidates[0];
        CHECK(b.ids == a.ids);
        CHECK(b.text == a.text);
        ++compared;
    }
    CHECK(compared >= 10);
}

TEST_CASE("integer buffers known by name are skipped, any other is refused naming it", "[model_folders]") {
    const fs::path src = t5s::test::model_dir("t5v10-tied-relu");
    t5s::test::TempDir dir("int_tensors");
    fs::copy(src, dir.path(), fs::copy_options::recursive);
    const fs::path weights = dir / "model.safetensors";
    add_int64_tensor(weights, "encoder.embed_tokens.position_ids", 16);
    add_int64_tensor(weights, "decoder.block.0.layer.0.SelfAttention.num_batches_tracked", 1);
    t5s::GenerationOptions greedy;
    greedy.max_new_tokens = 8;
    const auto plain = load_cpu(src)->generate({"Tom is a good boy."}, greedy)[0].candidates[0];
    CHECK(load_cpu(dir.path())->generate({"Tom is a good boy."}, greedy)[0].candidates[0].ids == plain.ids);

    add_int64_tensor(weights, "encoder.block.0.step_counter", 4);
    const std::string msg = load_error(dir.path());
    CHECK(msg.find("encoder.block.0.step_counter") != std::string::npos);
    CHECK(msg.find(weights.string()) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
}

TEST_CASE("sharded pytorch_model.bin: known integer buffers skipped, others refused naming them", "[model_folders]") {
    const fs::path src = t5s::test::model_dir("sharded-bin");
    t5s::test::TempDir dir("int_tensors_bin");
    fs::copy(src, dir.path(), fs::copy_options::recursive);
    const fs::path shard = dir / "pytorch_model-00002-of-00004.bin";
    add_int64_tensor_bin(shard, "encoder.embed_tokens.position_ids");
    t5s::GenerationOptions greedy;
    greedy.max_new_tokens = 8;
    const auto plain = load_cpu(src)->generate({"Tom is a good boy."}, greedy)[0].candidates[0];
    CHECK(load_cpu(dir.path())->generate({"Tom is a good boy."}, greedy)[0].candidates[0].ids == plain.ids);
    add_int64_tensor_bin(shard, "decoder.final_layer_norm.step");
    const std::string msg = load_error(dir.path());
    CHECK(msg.find("decoder.final_layer_norm.step") != std::string::npos);
    CHECK(msg.find(shard.string()) != std::string::npos);
    CHECK(msg.find("Long") != std::string::npos);
}
