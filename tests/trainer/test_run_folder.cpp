// Run folders without a model: which folders a new, resumed or overwritten run may use, what
// --overwrite clears (the run's entries, never the user's files), and how a resume tells its own
// run from a different one by the identity saved in trainer_state.json.
#include "trainer_test_support.h"

#include <nlohmann/json.hpp>

#include "t5s/run_folder.h"

namespace fs = std::filesystem;
using namespace t5s;
using namespace t5s::test;

namespace {

// A checkpoint as the trainer leaves it: complete once trainer_state.json is there.
void fake_checkpoint(const fs::path& dir, const std::string& run_identity) {
    fs::create_directories(dir);
    nlohmann::json state = {{"global_step", 3}, {"last_loss", 1.5}};
    if (!run_identity.empty()) state["run"] = nlohmann::json::parse(run_identity);
    write_text(dir / "trainer_state.json", state.dump());
}

TrainingOptions options_in(const TempDir& dir) {
    TrainingOptions o;
    o.model_dir = (dir / "model").string();
    o.data_file = (dir / "a.jsonl").string();
    o.out_dir = (dir / "run").string();
    o.data.source_prefix = "paraphrase: ";
    return o;
}

template <class F>
std::string refusal(F&& f) {
    try {
        f();
    } catch (const RunFolderRefused& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a new run refuses another run's folder; a folder without a run is fine", "[trainer][run_folder]") {
    TempDir dir("run_folder_fresh");
    const std::string run = (dir / "run").string();
    CHECK(prepare_run_folder(run, RunFolderMode::Fresh).empty());  // missing
    fs::create_directories(run);
    write_text(fs::path(run) / "spiece.model", "x");  // a model folder's vocabulary is not a run
    write_text(fs::path(run) / "config.json", "{}");
    CHECK(prepare_run_folder(run, RunFolderMode::Fresh).empty());
    fake_checkpoint(fs::path(run) / "checkpoint-3", "");
    const std::string why = refusal([&] { prepare_run_folder(run, RunFolderMode::Fresh); });
    CHECK(why.find(run) != std::string::npos);
    CHECK(why.find("checkpoint-3") != std::string::npos);
    CHECK(why.find("--resume") != std::string::npos);
    CHECK(why.find("--overwrite") != std::string::npos);
    // A killed save's temp folder alone also marks a run.
    TempDir other("run_folder_tmp");
    fs::create_directories(other / ".tmp-checkpoint-2-99999");
    CHECK_FALSE(refusal([&] { prepare_run_folder(other.path().string(), RunFolderMode::Fresh); }).empty());
}

TEST_CASE("--overwrite clears the run's entries only, and never a folder that holds no run", "[trainer][run_folder]") {
    TempDir dir("run_folder_overwrite");
    const fs::path run = dir / "run";
    fake_checkpoint(run / "checkpoint-2", "");
    fake_checkpoint(run / "checkpoint-4", "");
    fs::create_directories(run / "final");
    fs::create_directories(run / ".old-final-99999");
    for (const char* f : {"train_log.jsonl", "history-pairs.jsonl", "spiece.model", "notes.txt"}) write_text(run / f, "x");
    const auto cleared = prepare_run_folder(run.string(), RunFolderMode::Overwrite);
    CHECK(cleared.size() == 7);
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(run)) left.push_back(e.path().filename().string());
    CHECK(left == std::vector<std::string>{"notes.txt"});
    CHECK(prepare_run_folder(run.string(), RunFolderMode::Fresh).empty());  // now a new run may start

    // The user's home, a model folder: not empty, no run -> refused, untouched.
    const fs::path home = dir / "home";
    fs::create_directories(home);
    write_text(home / "spiece.model", "keep");
    const std::string why = refusal([&] { prepare_run_folder(home.string(), RunFolderMode::Overwrite); });
    CHECK(why.find("holds no training run") != std::string::npos);
    CHECK(fs::exists(home / "spiece.model"));
    fs::create_directories(dir / "empty");
    CHECK(prepare_run_folder((dir / "empty").string(), RunFolderMode::Overwrite).empty());
}

TEST_CASE("--resume continues only the same run, naming what differs", "[trainer][run_folder]") {
    TempDir dir("run_folder_resume");
    const TrainingOptions o = options_in(dir);
    const fs::path ck = fs::path(o.out_dir) / "checkpoint-3";
    fake_checkpoint(ck, run_identity_json(o));
    CHECK(newest_checkpoint(o.out_dir) == ck.string());
    CHECK(check_resume_identity(o, ck.string()));

    TrainingOptions longer = o;  // what a resumed run may change
    longer.steps = 100;
    longer.lr = 1e-3;
    longer.batch_size = 3;
    CHECK(check_resume_identity(longer, ck.string()));

    TrainingOptions other = o;
    other.data.source_prefix = "summarize: ";
    other.data_file = (dir / "b.jsonl").string();
    const std::string why = refusal([&] { check_resume_identity(other, ck.string()); });
    CHECK(why.find("--source-prefix was 'paraphrase: ', now 'summarize: '") != std::string::npos);
    CHECK(why.find("--data was '" + fs::absolute(o.data_file).string() + "', now '" + fs::absolute(other.data_file).string() +
                   "'") != std::string::npos);
    CHECK(why.find(ck.string()) != std::string::npos);

    // A checkpoint saved before runs had an identity is not checked; a field it lacks is not compared.
    fake_checkpoint(ck, "");
    CHECK_FALSE(check_resume_identity(other, ck.string()));
    nlohmann::json partial = nlohmann::json::parse(run_identity_json(o));
    partial.erase("source_prefix");
    fake_checkpoint(ck, partial.dump());
    TrainingOptions prefix_only = o;
    prefix_only.data.source_prefix = "summarize: ";
    CHECK(check_resume_identity(prefix_only, ck.string()));

    // A final model with no checkpoint to continue from: resuming would replace it.
    fs::remove_all(ck);
    fs::create_directories(fs::path(o.out_dir) / "final");
    CHECK(refusal([&] { prepare_run_folder(o.out_dir, RunFolderMode::Resume); }).find("no checkpoint-N") != std::string::npos);
}

TEST_CASE("a folder another run is writing is refused in every mode, and nothing in it is removed", "[trainer][run_folder]") {
    TempDir dir("run_folder_lock");
    const fs::path run = dir / "run";
    fake_checkpoint(run / "checkpoint-2", "");
    {
        const RunFolderLock writing(run.string());  // what a running Runner holds
        for (const RunFolderMode mode : {RunFolderMode::Fresh, RunFolderMode::Resume, RunFolderMode::Overwrite})
            CHECK(refusal([&] { prepare_run_folder(run.string(), mode); }).find("writing to it right now") != std::string::npos);
        CHECK(fs::exists(run / "checkpoint-2" / "trainer_state.json"));
    }
    CHECK(prepare_run_folder(run.string(), RunFolderMode::Overwrite).size() == 1);  // released with the run
}
