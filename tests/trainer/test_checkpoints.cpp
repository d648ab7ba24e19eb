// Checkpoints: HF layout that transformers loads (the comparison itself is check_hf_load.py, run by
// ctest after this), training state for --resume, and a child process killed with SIGKILL mid-run
// whose --resume continues the loss curve exactly, with no half-written checkpoint ever visible.
#include "trainer/trainer_test_support.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <set>
#include <thread>

#include "t5s/model.h"
#include "t5s/safetensors.h"
#include "t5s/tokenizer.h"
#include "t5s/trainer.h"
#include "torch/weight_loader.h"
#include "trainer/checkpoint.h"
#include "trainer/core.h"

using namespace t5s;
using namespace t5s::test;
namespace fs = std::filesystem;

namespace {

// Every visible checkpoint is complete: all files present, weights and state parse, config loads.
void require_complete_checkpoints(const fs::path& out) {
    for (const auto& e : fs::directory_iterator(out)) {
        const std::string n = e.path().filename().string();
        if (n.rfind("checkpoint-", 0) != 0) continue;
        INFO(e.path());
        for (const char* f :
             {"config.json", "model.safetensors", "spiece.model", "generation_config.json", "tokenizer_config.json",
              "special_tokens_map.json", "training_state.safetensors", "trainer_state.json"}) {
            REQUIRE(fs::exists(e.path() / f));
        }
        auto j = load_json(e.path() / "trainer_state.json");
        CHECK(n == "checkpoint-" + std::to_string(j["global_step"].get<int64_t>()));
        CHECK_NOTHROW(SafetensorsFile::open(e.path() / "training_state.safetensors"));
        CHECK_NOTHROW(load_trainable(e.path(), at::kCPU));
        CHECK_NOTHROW(Tokenizer::load(e.path() / "spiece.model"));
    }
}

// A command line, flags beside their values (clang-format would put one word on each line).
// clang-format off
std::vector<std::string> train_args(const fs::path& data, const fs::path& out, int steps) {
    return {"train", "--model", model_dir("t5v10-tied-relu").string(), "--data", data.string(), "--out", out.string(),
            "--steps", std::to_string(steps), "--batch-size", "4", "--grad-accum", "2", "--lr", "1e-3", "--save-every", "5",
            "--eval-every", "40", "--keep-last", "2", "--threads", "1", "--seed", "7", "--dropout", "0.1", "--log-every", "1"};
}
// clang-format on

void export_logits(const fs::path& model, const fs::path& dest, const std::string& name) {
    auto m = Model::load(model, RuntimeOptions{Device::Cpu, Precision::Fp32, 1});
    const IdBatch src{{5, 17, 33, 8, 1}, {44, 9, 1}};
    const IdBatch dec{{0, 12, 7, 91}, {0, 3, 3, 3}};
    FloatArray logits = m->logits(src, dec);
    std::vector<std::vector<int>> tok_ids;
    const std::vector<std::string> texts{"Tom is a good boy.", "猫が好きです。", "我们走吧。 <extra_id_0> x"};
    for (const auto& t : texts) tok_ids.push_back(m->tokenizer().encode(t));
    nlohmann::json j = {{"model_dir", model.string()}, {"input_ids", src}, {"decoder_input_ids", dec}, {"shape", logits.shape},
                        {"logits", logits.data},       {"texts", texts},   {"token_ids", tok_ids}};
    fs::create_directories(dest);
    write_text(dest / ("logits-" + name + ".json"), j.dump());
}

}  // namespace

TEST_CASE("checkpoints are HF-format and exported for the transformers check", "[trainer][checkpoint]") {
    const fs::path work = trainer_work() / "exports";
    fs::remove_all(work);
    fs::create_directories(work);
    write_text(work / "data.jsonl", small_jsonl(24));
    for (const std::string name : {"t5v10-tied-relu", "flan-gated-gelu-bf16"}) {
        INFO(name);
        TrainingOptions o;
        o.model_dir = model_dir(name).string();
        o.data_file = (work / "data.jsonl").string();
        o.out_dir = (work / ("run-" + name)).string();
        o.steps = 4;
        o.batch_size = 4;
        o.lr = 1e-2;
        o.threads = 1;
        o.eval_split = 0.2;
        o.sample_count = 1;
        o.sample_max_new_tokens = 4;
        std::vector<TrainingEvent::Kind> kinds;
        TrainingJob job(o);
        TrainingResult r = job.run([&](const TrainingEvent& e) { kinds.push_back(e.kind); });
        CHECK(r.steps == 4);
        CHECK(std::string(to_string(r.stop_reason)) == "completed");
        CHECK(std::count(kinds.begin(), kinds.end(), TrainingEvent::Kind::Step) == 4);
        CHECK(std::count(kinds.begin(), kinds.end(), TrainingEvent::Kind::Eval) == 1);
        CHECK(kinds.back() == TrainingEvent::Kind::Finished);
        const fs::path final = r.final_model_dir;
        auto st = SafetensorsFile::open(final / "model.safetensors");
        CHECK(st->find("shared.weight") != nullptr);
        CHECK(st->find("encoder.embed_tokens.weight") == nullptr);
        CHECK(st->find("decoder.embed_tokens.weight") == nullptr);
        CHECK((st->find("lm_head.weight") != nullptr) == (name == "flan-gated-gelu-bf16"));
        CHECK(st->tensors().size() == t5_parameter_shapes(load_model_config(final / "config.json")).size());
        // Training changed the weights; the final model equals the last checkpoint's.
        auto before = SafetensorsFile::open(model_dir(name) / "model.safetensors");
        auto last = SafetensorsFile::open(fs::path(o.out_dir) / "checkpoint-4" / "model.safetensors");
        const TensorView* a = st->find("shared.weight");
        const TensorView* b = last->find("shared.weight");
        CHECK(std::memcmp(a->data, b->data, a->nbytes) == 0);
        const bool changed = before->find("shared.weight")->dtype != DType::F32 ||
                             std::memcmp(before->find("shared.weight")->data, a->data, a->nbytes) != 0;
        CHECK(changed);
        export_logits(final, work, name);
    }
    // From scratch: an init config + a SentencePiece vocabulary trained on the data.
    write_text(work / "scratch_config.json", R"({"d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_heads": 4,
        "feed_forward_proj": "gated-gelu", "tie_word_embeddings": false, "vocab_size": 999})");
    TrainingOptions o;
    o.init_config = (work / "scratch_config.json").string();
    o.vocab_size = 400;
    o.data_file = (work / "data.jsonl").string();
    o.out_dir = (work / "run-scratch").string();
    o.steps = 3;
    o.batch_size = 4;
    o.threads = 1;
    o.eval_split = 0;
    TrainingJob job(o);
    TrainingResult r = job.run(nullptr);
    auto cfg = load_model_config(fs::path(r.final_model_dir) / "config.json");
    Tokenizer tok = Tokenizer::load(fs::path(r.final_model_dir) / "spiece.model");
    CHECK(cfg.vocab_size == tok.vocab_size());
    CHECK(tok.byte_fallback());
    CHECK(tok.encode("", true) == std::vector<int>{1});
    CHECK(tok.id_to_token(0) == "<pad>");
    CHECK(tok.id_to_token(2) == "<unk>");
    export_logits(r.final_model_dir, work, "scratch");
}

TEST_CASE("a base with only tokenizer.json trains; its checkpoints keep the fast tokenizer's files", "[trainer][checkpoint]") {
    // The demo model as a fast tokenizer saves it: tokenizer.json (+ its configs), no spiece.model.
    const fs::path demo = fs::path(T5S_TEST_DATA).parent_path().parent_path() / "assets" / "demo-model";
    const fs::path fixtures = fs::path(T5S_TEST_DATA) / "tokenizer_json";
    const fs::path work = trainer_work() / "exports", base = trainer_work() / "tokjson-base";
    fs::remove_all(base);
    fs::create_directories(base);
    fs::create_directories(work);
    for (const char* f : {"config.json", "generation_config.json", "model.safetensors"}) fs::copy_file(demo / f, base / f);
    for (const char* f : {"tokenizer_config.json", "special_tokens_map.json"}) fs::copy_file(fixtures / "demo" / f, base / f);
    const auto patch = load_json(fixtures / "goldens.json")["families"]["demo"]["variants"]["always"]["patch"];
    write_text(base / "tokenizer.json", load_json(fixtures / "demo" / "tokenizer.json").patch(patch).dump());
    write_text(work / "data.jsonl", small_jsonl(12));
    TrainingOptions o;
    o.model_dir = base.string();
    o.data_file = (work / "data.jsonl").string();
    o.out_dir = (trainer_work() / "run-tokjson").string();
    fs::remove_all(o.out_dir);
    o.steps = 2;
    o.batch_size = 4;
    o.threads = 1;
    o.eval_split = 0;
    TrainingResult r = TrainingJob(o).run(nullptr);
    const fs::path final = r.final_model_dir;
    for (const char* f : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}) CHECK(fs::exists(final / f));
    CHECK_FALSE(fs::exists(final / "spiece.model"));
    const Tokenizer from_base = Tokenizer::load_folder(base), from_final = Tokenizer::load_folder(final);
    CHECK(from_final.path() == final / "tokenizer.json");
    CHECK(from_final.encode("Hello <extra_id_0> world") == from_base.encode("Hello <extra_id_0> world"));
    export_logits(final, work, "tokjson");  // check_hf_load.py: transformers loads it, fast tokenizer ids equal
}

TEST_CASE("SIGKILL mid-training, then --resume continues the loss curve exactly", "[trainer][checkpoint][resume]") {
    const fs::path work = trainer_work() / "resume";
    fs::remove_all(work);
    fs::create_directories(work);
    write_text(work / "data.jsonl", small_jsonl(40));
    const int steps = 200;

    // Reference: one uninterrupted run.
    REQUIRE(wait_exit(spawn_cli(train_args(work / "data.jsonl", work / "ref", steps), work / "ref.log")) == 0);
    const auto ref = step_losses(work / "ref" / "train_log.jsonl");
    REQUIRE(ref.size() == static_cast<size_t>(steps));

    // Killed runs: kill as soon as a new checkpoint appears, verify what is on disk, resume.
    const fs::path out = work / "killed";
    int kills = 0;
    int64_t last_seen = 0;
    for (int attempt = 0; attempt < 6 && kills < 3; ++attempt) {
        auto args = train_args(work / "data.jsonl", out, steps);
        if (attempt > 0) args.push_back("--resume");
        const pid_t pid = spawn_cli(args, work / "killed.log");
        bool killed = false;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (std::chrono::steady_clock::now() < deadline) {
            auto cks = list_checkpoints(out);
            if (!cks.empty() && cks.back().first > last_seen + 20 && cks.back().first < steps - 20) {
                // Let it get a few steps past the checkpoint (and maybe into the next save) first.
                std::this_thread::sleep_for(std::chrono::milliseconds(3 + 7 * attempt));
                kill(pid, SIGKILL);
                killed = true;
                last_seen = cks.back().first;
                break;
            }
            int status = 0;
            if (waitpid(pid, &status, WNOHANG) == pid) goto finished;  // finished before we could kill it
            std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
        if (killed) {
            CHECK(wait_exit(pid) == 128 + SIGKILL);
            ++kills;
            require_complete_checkpoints(out);
            continue;
        }
        kill(pid, SIGKILL);
        wait_exit(pid);
        FAIL("the child neither checkpointed nor finished in time");
    finished:
        break;
    }
    WARN("killed the training child " << kills << " times");
    CHECK(kills >= 1);
    // Finish (resume from the newest checkpoint).
    auto args = train_args(work / "data.jsonl", out, steps);
    args.push_back("--resume");
    REQUIRE(wait_exit(spawn_cli(args, work / "killed.log")) == 0);
    require_complete_checkpoints(out);
    const auto resumed = step_losses(out / "train_log.jsonl");
    REQUIRE(resumed.size() == static_cast<size_t>(steps));
    double worst = 0;
    for (const auto& [step, loss] : ref) worst = std::max(worst, std::abs(resumed.at(step) - loss));
    WARN("max |loss diff| resumed vs uninterrupted run over " << steps << " steps: " << worst);
    CHECK(worst < 1e-5);
    // keep_last 2 + best: old checkpoints pruned.
    CHECK(list_checkpoints(out).size() <= 3);
    std::ifstream in(work / "killed.log");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find("resumed from") != std::string::npos);
}

TEST_CASE("CLI train: one-line errors and exit codes on bad input", "[trainer][cli]") {
    TempDir dir("cli_bad");
    write_text(dir / "bad.jsonl", "{\"source\": \"a\", \"target\": \"b\"}\n{oops\n");
    struct Case {
        std::vector<std::string> args;
        std::string expect;
    };
    const std::string model = model_dir("t5v10-tied-relu").string();
    const std::string out = (dir / "o").string();
    std::vector<Case> cases = {
        {{"train", "--data", (dir / "bad.jsonl").string(), "--out", out}, "exactly one of --model"},
        {{"train", "--model", model, "--data", (dir / "none.jsonl").string(), "--out", out}, "not found"},
        {{"train", "--model", model, "--data", (dir / "bad.jsonl").string(), "--out", out, "--on-bad-row", "fail"},
         "bad.jsonl:2: malformed JSON"},
        {{"train", "--model", model, "--data", (dir / "bad.jsonl").string(), "--out", out, "--optimizer", "sgd"},
         "unknown optimizer"},
        {{"train", "--model", model, "--data", (dir / "bad.jsonl").string(), "--out", out, "--steps", "x"}, "expects an integer"},
        {{"train", "--model", model, "--data", (dir / "bad.jsonl").string(), "--out", out, "--precision", "fp16", "--device",
          "cpu"},
         "fp16 needs CUDA"},
        {{"train", "--model", (dir / "nomodel").string(), "--data", (dir / "bad.jsonl").string(), "--out", out}, "nomodel"},
        {{"train", "--model", model, "--data", (dir / "bad.jsonl").string(), "--out", out, "--bogus", "1"},
         "unknown flag --bogus"},
    };
    for (const auto& c : cases) {
        INFO(c.expect);
        const fs::path log = dir / "err.log";
        fs::remove(log);
        const int code = wait_exit(spawn_cli(c.args, log));
        CHECK(code != 0);
        CHECK(code < 128);  // an error, not a crash
        std::ifstream in(log);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        CHECK(text.find(c.expect) != std::string::npos);
        CHECK(std::count(text.begin(), text.end(), '\n') == 1);
    }
}

TEST_CASE("stop, pause/resume from the event callback; early stopping keeps the best checkpoint", "[trainer][control]") {
    TempDir dir("control");
    write_text(dir / "data.jsonl", small_jsonl(40));
    TrainingOptions o;
    o.model_dir = model_dir("t5v10-tied-relu").string();
    o.data_file = (dir / "data.jsonl").string();
    o.steps = 100;
    o.batch_size = 4;
    o.threads = 1;
    o.lr = 1e-3;
    {
        o.out_dir = (dir / "stop").string();
        TrainingJob job(o);
        std::thread resumer;
        int64_t last_step = 0;
        TrainingResult r = job.run([&](const TrainingEvent& e) {
            if (e.kind != TrainingEvent::Kind::Step) return;
            last_step = e.step;
            if (e.step == 3) {  // pause; another thread resumes it shortly after
                job.pause();
                resumer = std::thread([&] {
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                    job.resume();
                });
            }
            if (e.step == 6) job.stop();
        });
        resumer.join();
        CHECK(std::string(to_string(r.stop_reason)) == "stopped");
        CHECK(r.steps == 6);
        CHECK(last_step == 6);
        auto cks = list_checkpoints(o.out_dir);
        REQUIRE_FALSE(cks.empty());
        CHECK(cks.back().first == 6);  // stop saves a checkpoint first
        CHECK(fs::exists(fs::path(o.out_dir) / "final" / "model.safetensors"));
    }
    {
        o.out_dir = (dir / "early").string();
        o.lr = 3.0;  // diverges: the eval loss stops improving
        o.max_grad_norm = 0;
        o.eval_every = 1;
        o.patience = 2;
        o.eval_split = 0.2;
        o.sample_count = 0;
        TrainingJob job(o);
        std::vector<double> evals;
        TrainingResult r = job.run([&](const TrainingEvent& e) {
            if (e.kind == TrainingEvent::Kind::Eval) evals.push_back(e.eval_loss);
        });
        CHECK(std::string(to_string(r.stop_reason)) == "early_stopping");
        CHECK(r.steps < 100);
        REQUIRE(evals.size() >= 3);
        CHECK(r.best_eval_loss == Approx(*std::min_element(evals.begin(), evals.end())));
        REQUIRE_FALSE(r.best_checkpoint.empty());
        CHECK(fs::exists(fs::path(r.best_checkpoint) / "model.safetensors"));
        auto st = load_json(fs::path(r.best_checkpoint) / "trainer_state.json");
        CHECK(st["best_checkpoint"] == fs::path(r.best_checkpoint).filename().string());
    }
}

TEST_CASE("folders a killed writer left are cleaned; a set-aside published copy comes back", "[trainer][checkpoint]") {
    TempDir dir("abandoned");
    const fs::path out = dir / "run";
    fs::create_directories(out);
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    REQUIRE(child > 0);
    REQUIRE(::waitpid(child, nullptr, 0) == child);  // a pid no live process has
    const std::string dead = std::to_string(child), live = std::to_string(::getpid());
    auto make = [&](const std::string& name) {
        fs::create_directories(out / name);
        std::ofstream(out / name / "model.safetensors") << name;
    };
    make(".tmp-checkpoint-4-" + dead);
    make(".tmp-final-" + dead);
    make(".old-checkpoint-2-" + dead);  // killed between moving checkpoint-2 aside and publishing its replacement
    make("checkpoint-3");
    make(".old-checkpoint-3-" + dead);  // the replacement was published: the old copy is garbage
    make(".tmp-checkpoint-5-" + live);  // a live writer's: untouched
    std::ofstream(out / (".spiece-tmp-" + dead + ".model")) << "x";

    CHECK(recover_abandoned_dirs(out) == 5);
    std::set<std::string> left;
    for (const auto& e : fs::directory_iterator(out)) left.insert(e.path().filename().string());
    CHECK(left == std::set<std::string>{"checkpoint-2", "checkpoint-3", ".tmp-checkpoint-5-" + live});
    std::ifstream restored(out / "checkpoint-2" / "model.safetensors");
    std::string content;
    restored >> content;
    CHECK(content == ".old-checkpoint-2-" + dead);
    CHECK(recover_abandoned_dirs(out) == 0);
}
