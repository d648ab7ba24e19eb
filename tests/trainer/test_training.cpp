// Training behaviour: gradient checkpointing equals plain backprop (loss and grads, 1e-5, with and
// without dropout), its memory saving, bf16 autocast lowers the loss, memory planning.
#include "trainer/trainer_test_support.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>

#include <cstdio>

#include "t5s/trainer.h"
#include "trainer/core.h"
#include "trainer/memory.h"
#include "trainer/optim.h"

using namespace t5s;
using namespace t5s::test;

namespace {

Batch random_batch(int64_t B, int64_t S, int64_t T, int64_t vocab, uint64_t seed) {
    at::Generator gen = at::detail::createCPUGenerator(seed);
    std::vector<std::vector<int>> src, tgt;
    for (int64_t i = 0; i < B; ++i) {
        const int64_t s = S - (i % 3), t = T - (i % 2);  // ragged rows: padding and masks in play
        at::Tensor a = at::randint(3, vocab, {s}, gen, at::kLong), b = at::randint(3, vocab, {t}, gen, at::kLong);
        std::vector<int> ra(a.data_ptr<int64_t>(), a.data_ptr<int64_t>() + s),
            rb(b.data_ptr<int64_t>(), b.data_ptr<int64_t>() + t);
        ra.back() = 1, rb.back() = 1;
        src.push_back(ra), tgt.push_back(rb);
    }
    return make_batch_from_ids(src, tgt, at::kCPU);
}

struct LossAndGrads {
    double loss = 0;
    std::map<std::string, at::Tensor> grads;
};

LossAndGrads loss_and_grads(const std::string& model, bool checkpointing, double dropout, const Batch& b) {
    TrainableModel m = load_trainable(model_dir(model), at::kCPU);
    m.net->set_training(true, dropout);
    m.net->set_gradient_checkpointing(checkpointing);
    at::manual_seed(1234);  // same dropout masks in both runs
    at::Tensor loss = forward_loss(*m.net, b, TrainPrecision::Fp32);
    loss.backward();
    LossAndGrads r;
    r.loss = loss.item<double>();
    for (const auto& p : m.named) {
        INFO(p.name << (checkpointing ? " (checkpointed)" : ""));
        REQUIRE(p.tensor.grad().defined());
        r.grads[p.name] = p.tensor.grad().clone();
    }
    return r;
}

}  // namespace

TEST_CASE("gradient checkpointing gives the same loss and gradients", "[trainer][checkpointing]") {
    const Batch b = random_batch(3, 9, 7, 400, 7);
    for (const std::string model : {"t5v10-tied-relu", "flan-gated-gelu-bf16", "unequal-depth-bin"}) {
        for (double dropout : {0.0, 0.1}) {
            INFO(model << " dropout " << dropout);
            const LossAndGrads plain = loss_and_grads(model, false, dropout, b);
            const LossAndGrads ckpt = loss_and_grads(model, true, dropout, b);
            CHECK(std::abs(plain.loss - ckpt.loss) < 1e-5);
            double worst = 0;
            std::string worst_name;
            for (const auto& [name, g] : plain.grads) {
                const double d = (g - ckpt.grads.at(name)).abs().max().item<double>();
                if (d > worst) worst = d, worst_name = name;
            }
            INFO("worst grad diff " << worst << " at " << worst_name);
            CHECK(worst < 1e-5);
            CHECK(plain.grads.size() == ckpt.grads.size());
        }
    }
}

TEST_CASE("gradient checkpointing only engages when training with grad on", "[trainer][checkpointing]") {
    TrainableModel m = load_trainable(model_dir("t5v10-tied-relu"), at::kCPU);
    m.net->set_gradient_checkpointing(true);
    const Batch b = random_batch(2, 6, 5, 400, 3);
    m.net->set_training(false, 0.0);
    c10::NoGradGuard ng;
    const double inference = forward_loss(*m.net, b, TrainPrecision::Fp32).item<double>();
    m.net->set_gradient_checkpointing(false);
    CHECK(forward_loss(*m.net, b, TrainPrecision::Fp32).item<double>() == inference);
}

TEST_CASE("bf16 autocast training on the CPU lowers the loss", "[trainer][bf16]") {
    const auto g = golden("train_adamw");
    std::vector<std::vector<int>> src, tgt;
    for (const auto& r : g["batch"]["input_ids"]) {
        std::vector<int> row;
        for (const auto& v : r)
            if (v.get<int>() != 0) row.push_back(v.get<int>());
        src.push_back(row);
    }
    for (const auto& r : g["batch"]["labels"]) {
        std::vector<int> row;
        for (const auto& v : r)
            if (v.get<int>() != -100) row.push_back(v.get<int>());
        tgt.push_back(row);
    }
    const Batch b = make_batch_from_ids(src, tgt, at::kCPU);
    TrainableModel m = load_trainable(model_dir("flan-gated-gelu-bf16"), at::kCPU);
    m.net->set_training(true, 0.0);
    auto opt = make_adamw(m.named, {});
    std::vector<double> losses;
    for (int step = 0; step < 15; ++step) {
        at::Tensor loss = forward_loss(*m.net, b, TrainPrecision::Bf16);
        CHECK(loss.scalar_type() == at::kFloat);
        loss.backward();
        losses.push_back(loss.item<double>());
        CHECK(std::isfinite(losses.back()));
        opt->step(1e-3);
        for (auto& p : m.named) p.tensor.mutable_grad() = at::Tensor();
    }
    // Master weights stay fp32; the bf16 loss tracks the fp32 one loosely and must go down.
    CHECK(m.params.at("shared.weight").scalar_type() == at::kFloat);
    WARN("bf16 autocast: loss " << losses.front() << " -> " << losses.back());
    CHECK(losses.back() < losses.front() - 0.5);
    // The autocast loss is a bf16 approximation of the fp32 loss, not something else.
    m.net->set_training(false, 0.0);
    c10::NoGradGuard ng;
    const double fp32 = forward_loss(*m.net, b, TrainPrecision::Fp32).item<double>();
    const double bf16 = forward_loss(*m.net, b, TrainPrecision::Bf16).item<double>();
    CHECK(std::abs(fp32 - bf16) < 0.05 * std::abs(fp32) + 0.05);
}

TEST_CASE("memory plan: components, checkpointing saves activations, suggested batch", "[trainer][memory]") {
    const std::string cfg = R"({"d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_heads": 8, "vocab_size": 32128})";
    TrainingOptions o;
    o.batch_size = 16;
    o.max_source_len = 512;
    o.max_target_len = 128;
    MemoryEstimate e = estimate_training_memory(cfg, o, int64_t(64) << 30);
    CHECK(e.parameters == 60506624);  // t5-small
    CHECK(e.weight_bytes == e.parameters * 4);
    CHECK(e.optimizer_bytes == e.parameters * 8);  // AdamW: two fp32 moments
    CHECK(e.activation_bytes_ckpt < e.activation_bytes_no_ckpt / 2);
    CHECK(e.fits);
    CHECK(e.suggested_batch_size >= o.batch_size);
    o.optimizer = OptimizerKind::Adafactor;
    CHECK(estimate_training_memory(cfg, o, int64_t(64) << 30).optimizer_bytes < e.optimizer_bytes / 10);
    o.optimizer = OptimizerKind::AdamW;
    MemoryEstimate small = estimate_training_memory(cfg, o, int64_t(2) << 30);
    CHECK_FALSE(small.fits);
    CHECK(small.suggested_batch_size < o.batch_size);
    o.gradient_checkpointing = true;
    CHECK(estimate_training_memory(cfg, o, int64_t(2) << 30).suggested_batch_size > small.suggested_batch_size);
    CHECK(e.to_text().find("largest micro-batch") != std::string::npos);
    // A measured process baseline replaces the typical figure on CPU (not on CUDA).
    const MemoryEstimate with_base = estimate_training_memory(cfg, o, int64_t(64) << 30, int64_t(500) << 20);
    const MemoryEstimate no_base = estimate_training_memory(cfg, o, int64_t(64) << 30);
    CHECK(with_base.total_bytes - no_base.total_bytes == (int64_t(500) << 20) - (int64_t(300) << 20));
    CHECK(with_base.to_text().find("the process held") != std::string::npos);
    o.device = TrainDevice::Cuda;
    CHECK(estimate_training_memory(cfg, o, int64_t(64) << 30, int64_t(500) << 20).process_bytes == -1);
}

namespace {

struct ChildMemory {
    int64_t peak = 0;           // measured (the run's JSON)
    double estimated_mib = -1;  // the plan's estimate, from the trainer's closing memory line
};

// Peak RSS of a child `t5studio train` run on a random model (separate processes: VmHWM is per process).
// `model`: "--init-config <dir>/config.json" or "--model DIR ..."; `name` names the output folder and log.
ChildMemory child_peak_rss(const std::filesystem::path& dir, const std::string& name, const std::string& model,
                           const std::string& extra) {
    const std::filesystem::path err = dir / (name + ".err");
    const std::string cmd = std::string(T5S_CLI_BIN) + " train " + model + " --data " + (dir / "data.jsonl").string() +
                            " --out " + (dir / name).string() +
                            " --steps 2 --batch-size 16 --threads 1 --eval-split 0 --vocab-size 300 --max-source-len 256 "
                            "--max-target-len 64 --seed 1 " +
                            extra + " 2>" + err.string();
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    REQUIRE(pclose(p) == 0);
    ChildMemory m;
    m.peak = nlohmann::json::parse(out).at("peak_memory_bytes").get<int64_t>();
    std::ifstream log(err);
    std::string line;
    while (std::getline(log, line)) {
        const auto at = line.find("estimated ");
        if (line.find("memory: measured peak") != std::string::npos && at != std::string::npos)
            m.estimated_mib = std::atof(line.c_str() + at + 10);
    }
    return m;
}

}  // namespace

TEST_CASE("gradient checkpointing lowers the measured peak memory; the plan is within a third of it (LoRA too)",
          "[trainer][checkpointing][lora][slow]") {
    TempDir dir("ckpt_mem");
    write_text(dir / "config.json", R"({"d_model": 256, "d_kv": 32, "d_ff": 1024, "num_layers": 6, "num_heads": 8,
        "feed_forward_proj": "gated-gelu", "tie_word_embeddings": false, "dropout_rate": 0.1, "vocab_size": 400})");
    // Long sources so activations dominate.
    std::string data;
    for (int i = 0; i < 64; ++i) {
        std::string s;
        for (int k = 0; k < 60; ++k) s += "word" + std::to_string((i * 7 + k * 13) % 97) + " ";
        data += "{\"source\": \"" + s + "\", \"target\": \"short answer " + std::to_string(i) + " with a few words\"}\n";
    }
    write_text(dir / "data.jsonl", data);
    const std::string init = "--init-config " + (dir / "config.json").string();
    const ChildMemory plain_run = child_peak_rss(dir.path(), "plain", init, "");
    const ChildMemory ckpt_run = child_peak_rss(dir.path(), "ck", init, "--grad-checkpointing");
    // LoRA on the model the plain run wrote, its base held in bf16: the plan counts the base at 2
    // bytes a parameter, the adapter's state and LoRA's own activations.
    const ChildMemory lora_run = child_peak_rss(dir.path(), "lora", "--model " + (dir / "plain" / "final").string(),
                                                "--lora --lora-base-precision bf16 --samples 0");
    WARN("LoRA (bf16 base) peak RSS " << lora_run.peak / 1048576.0 << " MiB; estimated " << lora_run.estimated_mib << " MiB");
    const int64_t plain = plain_run.peak, ckpt = ckpt_run.peak;
    WARN("peak RSS: " << plain / 1048576.0 << " MiB without, " << ckpt / 1048576.0 << " MiB with gradient checkpointing (saves "
                      << (plain - ckpt) / 1048576.0 << " MiB); estimated " << plain_run.estimated_mib << " / "
                      << ckpt_run.estimated_mib << " MiB");
    CHECK(ckpt < plain);
    // The memory plan is within a third of what was measured (it includes the process's own baseline).
    for (const ChildMemory& m : {plain_run, ckpt_run, lora_run}) {
        REQUIRE(m.estimated_mib > 0);
        const double measured_mib = m.peak / 1048576.0;
        CHECK(std::abs(m.estimated_mib - measured_mib) < measured_mib / 3);
    }
}
