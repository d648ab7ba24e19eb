// Loading real checkpoint layouts and rejecting broken ones with one clear message each.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "t5s/device.h"
#include "t5s/error.h"
#include "test_support.h"

using namespace t5s;
using namespace t5s::test;
namespace fs = std::filesystem;

namespace {

// Copies a test model into a scratch folder that is removed when the test case ends.
fs::path copy_model(const std::string& name, const std::string& tag) {
    static std::vector<std::unique_ptr<TempDir>> scratch;
    scratch.push_back(std::make_unique<TempDir>("load_" + tag));
    fs::path dst = scratch.back()->path() / name;
    fs::copy(model_dir(name), dst, fs::copy_options::recursive);
    return dst;
}

std::string load_error(const fs::path& dir, ErrorCode* code = nullptr) {
    try {
        Model::load(dir, RuntimeOptions{Device::Cpu, Precision::Fp32, 1});
    } catch (const Error& e) {
        if (code) *code = e.code();
        return e.what();
    }
    return "";
}

void rewrite_config(const fs::path& dir, const std::string& key, const nlohmann::json& value) {
    auto j = load_json(dir / "config.json");
    j[key] = value;
    std::ofstream(dir / "config.json") << j.dump();
}

}  // namespace

TEST_CASE("info reports files, parameters and dtypes", "[loading]") {
    auto m = Model::load(model_dir("flan-gated-gelu-bf16"), RuntimeOptions{Device::Cpu, Precision::Fp32, 1});
    CHECK(m->info().stored_dtype == "BF16");
    CHECK(m->info().files.size() == 3);
    CHECK(m->info().parameter_count > 0);
    CHECK(m->info().weight_bytes == m->info().parameter_count * 4);
    auto bin = Model::load(model_dir("sharded-bin"), RuntimeOptions{Device::Cpu, Precision::Fp32, 1});
    CHECK(bin->info().files.size() >= 4);  // config, index, shards, spiece
    auto bf16 = Model::load(model_dir("t5v10-tied-relu"), RuntimeOptions{Device::Cpu, Precision::Bf16, 1});
    CHECK(bf16->info().weight_bytes == bf16->info().parameter_count * 2);
    CHECK(bf16->info().precision == "bf16");
}

TEST_CASE("broken model folders give one clear error naming the file", "[loading][errors]") {
    ErrorCode code;
    CHECK(load_error("/nonexistent/model", &code).find("/nonexistent/model: model directory not found") != std::string::npos);
    CHECK(code == ErrorCode::FileNotFound);

    auto no_config = copy_model("t5v10-tied-relu", "nocfg");
    fs::remove(no_config / "config.json");
    CHECK(load_error(no_config, &code).find("config.json: cannot open") != std::string::npos);

    auto no_weights = copy_model("t5v10-tied-relu", "nowts");
    fs::remove(no_weights / "model.safetensors");
    CHECK(load_error(no_weights, &code).find("no weights") != std::string::npos);
    CHECK(code == ErrorCode::FileNotFound);

    auto bad_ffn = copy_model("t5v10-tied-relu", "ffn");
    rewrite_config(bad_ffn, "feed_forward_proj", "gated-swish-x");
    CHECK(load_error(bad_ffn, &code).find("feed_forward_proj 'gated-swish-x' is not valid") != std::string::npos);
    CHECK(code == ErrorCode::Unsupported);

    auto umt5 = copy_model("t5v10-tied-relu", "umt5");
    rewrite_config(umt5, "model_type", "umt5");
    CHECK(load_error(umt5, &code).find("model_type 'umt5' is not supported") != std::string::npos);

    auto shape = copy_model("t5v10-tied-relu", "shape");
    rewrite_config(shape, "d_ff", 65);
    CHECK(load_error(shape, &code).find("has shape [64,32] but config.json implies [65,32]") != std::string::npos);
    CHECK(code == ErrorCode::CorruptFile);

    auto missing = copy_model("flan-gated-gelu-bf16", "missing");
    rewrite_config(missing, "num_layers", 3);  // block 2 is not in the file
    CHECK(load_error(missing).find("missing tensor 'encoder.block.2.layer.0.SelfAttention.q.weight'") != std::string::npos);

    auto truncated = copy_model("t5v10-tied-relu", "trunc");
    fs::resize_file(truncated / "model.safetensors", fs::file_size(truncated / "model.safetensors") / 2);
    CHECK(load_error(truncated).find("model.safetensors: truncated: tensor") != std::string::npos);

    auto bad_bin = copy_model("unequal-depth-bin", "badbin");
    std::ofstream(bad_bin / "pytorch_model.bin", std::ios::trunc) << "this is not a torch zip file";
    CHECK(load_error(bad_bin, &code).find("pytorch_model.bin: not a readable torch.save state dict") != std::string::npos);
    CHECK(code == ErrorCode::CorruptFile);

    auto missing_shard = copy_model("sharded-safetensors", "shard");
    for (const auto& e : fs::directory_iterator(missing_shard)) {
        if (e.path().filename().string().rfind("model-00002", 0) == 0) fs::remove(e.path());
    }
    CHECK(load_error(missing_shard).find("file not found") != std::string::npos);

    auto bad_spm = copy_model("t5v10-tied-relu", "spm");
    std::ofstream(bad_spm / "spiece.model", std::ios::trunc) << "garbage";
    CHECK(load_error(bad_spm).find("spiece.model: not a valid SentencePiece model") != std::string::npos);
}

TEST_CASE("device memory and hardware-aware defaults are measured", "[device]") {
    const DeviceMemory m = query_device_memory();
    CHECK(m.process_rss > 0);
    const DeviceProfile p = recommend_profile(Device::Cpu);
    CHECK(p.device == Device::Cpu);
    CHECK(p.precision == Precision::Fp32);
    CHECK(p.free_bytes > 0);
    auto model = Model::load(model_dir("t5v10-tied-relu"), RuntimeOptions{Device::Cpu, Precision::Fp32, 1});
    const int batch = measure_max_batch(*model, 16, 8);
    CHECK(batch >= 1);
    CHECK(batch <= 1024);
}
