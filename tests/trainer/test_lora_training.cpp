// LoRA training: continuing a PEFT adapter matches PEFT + transformers step by step; a LoRA run
// writes adapter checkpoints, an adapter as out/final and (--merge) a merged HF model, all exported
// for check_lora_peft.py (run by ctest after this); SIGKILL + --resume gives the same losses.
#include "trainer/trainer_test_support.h"

#include <c10/core/GradMode.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "t5s/model.h"
#include "t5s/trainer.h"
#include "trainer/checkpoint.h"
#include "trainer/core.h"
#include "trainer/golden_batch.h"

using namespace t5s;
using namespace t5s::test;
namespace fs = std::filesystem;

namespace {

// A command line, flags beside their values (clang-format would put one word on each line).
// clang-format off
std::vector<std::string> lora_args(const fs::path& data, const fs::path& out, int steps) {
    return {"train", "--model", model_dir("t5v10-tied-relu").string(), "--data", data.string(), "--out", out.string(),
            "--steps", std::to_string(steps), "--batch-size", "4", "--lr", "1e-2", "--save-every", "5", "--eval-every", "40",
            "--keep-last", "2", "--threads", "1", "--seed", "7", "--log-every", "1", "--lora", "--lora-r", "4",
            "--lora-targets", "q,v,wo", "--lora-dropout", "0.1"};
}
// clang-format on

}  // namespace

TEST_CASE("continuing a PEFT adapter 10 AdamW steps matches peft + transformers (1e-4)", "[trainer][lora][parity]") {
    const auto g = golden("lora")["train_adamw"];
    const Batch batch = golden_batch(golden("train_adamw"));
    TrainableModel m = load_trainable(model_dir("t5v10-tied-relu"), at::kCPU);
    const std::map<std::string, at::Tensor> base_before = [&] {
        std::map<std::string, at::Tensor> c;
        for (const auto& [n, t] : m.params) c[n] = t.detach().clone();
        return c;
    }();
    auto adapter = make_lora_trainable(m, load_lora_adapter(data_dir() / "lora" / "t5v10-qv-wo", m.config), at::kCPU);
    m.net->set_training(true, 0.0);
    int64_t trainable = 0;
    for (const auto& p : m.named) trainable += p.tensor.numel();
    CHECK(trainable == g["trainable"].get<int64_t>());
    auto opt = make_adamw(m.named, {0.9, 0.999, 1e-8, 0.0});
    double worst = 0;
    for (int step = 0; step < 10; ++step) {
        at::Tensor loss = forward_loss(*m.net, batch, TrainPrecision::Fp32);
        loss.backward();
        worst = std::max(worst, std::abs(loss.item<double>() - g["loss_per_step"][step].get<double>()));
        opt->step(1e-3);
        for (auto& p : m.named) p.tensor.mutable_grad() = at::Tensor();
    }
    WARN("LoRA continue, 10 AdamW steps: max |loss diff| vs PEFT = " << worst);
    CHECK(worst < 1e-4);
    // The base is frozen: no gradient, unchanged values.
    for (const auto& [n, t] : m.params) {
        INFO(n);
        CHECK(!t.grad().defined());
        CHECK(at::equal(t.detach(), base_before.at(n)));
    }
}

TEST_CASE("LoRA with gradient checkpointing gives the same loss and adapter gradients", "[trainer][lora]") {
    const Batch batch = golden_batch(golden("train_adamw"));
    std::vector<std::vector<at::Tensor>> grads;
    for (bool ckpt : {false, true}) {
        TrainableModel m = load_trainable(model_dir("flan-gated-gelu-bf16"), at::kCPU);
        LoraSettings s;
        s.r = 4, s.alpha = 8, s.dropout = 0.2, s.targets = {"all-linear"};
        auto adapter = make_lora_trainable(m, init_lora_adapter(m.config, s, 3), at::kCPU);
        at::manual_seed(5);  // the same B in both runs
        for (auto& [p, mod] : adapter->modules) {
            c10::NoGradGuard no_grad;
            mod.b.normal_(0.0, 0.1);  // B = 0 would hide A's gradients
        }
        m.net->set_training(true, 0.1);
        m.net->set_gradient_checkpointing(ckpt);
        at::manual_seed(11);
        forward_loss(*m.net, batch, TrainPrecision::Fp32).backward();
        std::vector<at::Tensor> gs;
        for (const auto& p : m.named) gs.push_back(p.tensor.grad().clone());
        grads.push_back(gs);
    }
    REQUIRE(grads[0].size() == grads[1].size());
    double worst = 0;
    for (size_t i = 0; i < grads[0].size(); ++i) worst = std::max(worst, (grads[0][i] - grads[1][i]).abs().max().item<double>());
    CHECK(worst < 1e-6);
}

TEST_CASE("LoRA run: adapter checkpoints, adapter final, merged model; exported for the PEFT check",
          "[trainer][lora][checkpoint]") {
    const fs::path work = trainer_work() / "lora";
    fs::remove_all(work);
    fs::create_directories(work);
    write_text(work / "data.jsonl", small_jsonl(24));
    TrainingOptions o;
    o.model_dir = model_dir("t5v10-tied-relu").string();
    o.data_file = (work / "data.jsonl").string();
    o.out_dir = (work / "run").string();
    o.steps = 8, o.batch_size = 4, o.lr = 5e-2, o.save_every = 4, o.threads = 1, o.sample_count = 0;
    o.lora = true, o.lora_r = 4, o.lora_alpha = 8, o.lora_targets = "q,v,wo", o.lora_dropout = 0.0, o.merge_adapter = true;
    std::string messages;
    TrainingJob job(o);
    const TrainingResult r = job.run([&](const TrainingEvent& e) {
        if (e.kind == TrainingEvent::Kind::Message || e.kind == TrainingEvent::Kind::Plan) messages += e.message + "\n";
    });
    CHECK(r.steps == 8);
    CHECK(messages.find("trainable parameters 4608 of") != std::string::npos);
    CHECK(messages.find("(trainable 4608)") != std::string::npos);
    const fs::path final_dir = work / "run" / "final";
    for (const char* f : {"adapter_config.json", "adapter_model.safetensors", "spiece.model"}) CHECK(fs::exists(final_dir / f));
    CHECK(!fs::exists(final_dir / "model.safetensors"));
    for (const auto& [step, dir] : list_checkpoints(work / "run")) {
        CHECK(fs::exists(dir / "adapter_model.safetensors"));
        CHECK(!fs::exists(dir / "model.safetensors"));
    }
    CHECK(fs::exists(work / "run" / "merged" / "model.safetensors"));

    // base + adapter through the Model API equals the merged checkpoint; exported for check_lora_peft.py.
    RuntimeOptions ro{Device::Cpu, Precision::Fp32, 1};
    ro.adapter = final_dir;
    auto with = Model::load(model_dir("t5v10-tied-relu"), ro);
    auto merged = Model::load(work / "run" / "merged", RuntimeOptions{Device::Cpu, Precision::Fp32, 1});
    auto base = Model::load(model_dir("t5v10-tied-relu"), RuntimeOptions{Device::Cpu, Precision::Fp32, 1});
    const IdBatch src{{5, 17, 33, 8, 1}, {44, 9, 1}};
    const IdBatch dec{{0, 12, 7, 91}, {0, 3, 3, 3}};
    const FloatArray a = with->logits(src, dec), b = merged->logits(src, dec), c = base->logits(src, dec);
    double merge_diff = 0, adapter_effect = 0;
    for (size_t i = 0; i < a.data.size(); ++i) {
        merge_diff = std::max(merge_diff, double(std::abs(a.data[i] - b.data[i])));
        adapter_effect = std::max(adapter_effect, double(std::abs(a.data[i] - c.data[i])));
    }
    CHECK(merge_diff <= 1e-5);
    CHECK(adapter_effect > 1e-3);  // training moved B away from zero
    nlohmann::json j = {{"base", model_dir("t5v10-tied-relu").string()},
                        {"adapter", final_dir.string()},
                        {"merged", (work / "run" / "merged").string()},
                        {"input_ids", src},
                        {"decoder_input_ids", dec},
                        {"shape", a.shape},
                        {"logits", a.data}};
    fs::create_directories(trainer_work() / "lora_exports");
    write_text(trainer_work() / "lora_exports" / "lora-run.json", j.dump());
}

TEST_CASE("SIGKILL during LoRA training, then --resume gives the same losses", "[trainer][lora][resume]") {
    const fs::path work = trainer_work() / "lora_resume";
    fs::remove_all(work);
    fs::create_directories(work);
    write_text(work / "data.jsonl", small_jsonl(40));
    const int steps = 60;
    REQUIRE(wait_exit(spawn_cli(lora_args(work / "data.jsonl", work / "ref", steps), work / "ref.log")) == 0);
    const auto ref = step_losses(work / "ref" / "train_log.jsonl");
    REQUIRE(ref.size() == static_cast<size_t>(steps));

    const fs::path out = work / "killed";
    const pid_t pid = spawn_cli(lora_args(work / "data.jsonl", out, steps), work / "killed.log");
    bool killed = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
        auto cks = list_checkpoints(out);
        if (!cks.empty() && cks.back().first >= 10 && cks.back().first < steps - 10) {
            kill(pid, SIGKILL);
            killed = true;
            break;
        }
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) break;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    if (killed) CHECK(wait_exit(pid) == 128 + SIGKILL);
    CHECK(killed);
    auto args = lora_args(work / "data.jsonl", out, steps);
    args.push_back("--resume");
    REQUIRE(wait_exit(spawn_cli(args, work / "killed.log")) == 0);
    const auto resumed = step_losses(out / "train_log.jsonl");
    REQUIRE(resumed.size() == static_cast<size_t>(steps));
    double worst = 0;
    for (const auto& [step, loss] : ref) worst = std::max(worst, std::abs(resumed.at(step) - loss));
    WARN("LoRA: max |loss diff| resumed vs uninterrupted over " << steps << " steps: " << worst);
    CHECK(worst < 1e-5);
    CHECK(list_checkpoints(out).size() <= 3);
    std::ifstream in(work / "killed.log");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find("resumed from") != std::string::npos);
}
