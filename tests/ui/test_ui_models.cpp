// The Models window's view-model logic without GL: the catalogue file, memory fit labels, and the
// controller's commands and event handling (downloads with progress / cancel / resume / open,
// listing, deletion) against a fake engine. The shipped catalogue itself is checked too.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "controller.h"
#include "recording_controller.h"
#include "settings.h"
#include "t5s/hub.h"

using namespace t5s;
using namespace t5s::ui;

namespace {

using Fake = test::RecordingController;

}  // namespace

TEST_CASE("models: catalogue parsing keeps valid entries and names the rest", "[ui][models]") {
    std::string err;
    auto rows = parse_catalogue(R"({"models": [
        {"repo": "google/flan-t5-small", "kind": "generation", "task_prefix": "Paraphrase: ", "languages": "en",
         "parameters": "~80M", "licence": "apache-2.0", "good_for": "first model"},
        {"repo": "not a repo"},
        {"kind": "encoder"}]})",
                                &err);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].repo == "google/flan-t5-small");
    CHECK(rows[0].task_prefix == "Paraphrase: ");
    CHECK(rows[0].licence == "apache-2.0");
    CHECK(err.find("not a repo") != std::string::npos);
    CHECK(err.find("(no repo)") != std::string::npos);
    CHECK(parse_catalogue("{", &err).empty());
    CHECK(err.find("not JSON") != std::string::npos);
    CHECK(parse_catalogue(R"({"items": []})", &err).empty());
    CHECK(err.find("\"models\"") != std::string::npos);
}

TEST_CASE("models: the shipped catalogue parses, with the families the issue names", "[ui][models]") {
    std::ifstream in(T5S_SOURCE_ROOT "/assets/model_catalogue.json");
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string err;
    const auto rows = parse_catalogue(ss.str(), &err);
    CHECK(err.empty());
    std::set<std::string> repos;
    for (const auto& r : rows) {
        repos.insert(r.repo);
        CHECK_FALSE(r.licence.empty());
        CHECK_FALSE(r.parameters.empty());
        CHECK_FALSE(r.good_for.empty());
        CHECK((r.kind == "generation" || r.kind == "encoder"));
    }
    CHECK(repos.size() == rows.size());  // no duplicates
    for (const char* want :
         {"google/flan-t5-small", "google/flan-t5-base", "google/flan-t5-large", "t5-small", "t5-base", "google/mt5-small",
          "google/mt5-base", "humarin/chatgpt_paraphraser_on_T5_base", "Vamsi/T5_Paraphrase_Paws", "sonoisa/t5-base-japanese",
          "Langboat/mengzi-t5-base", "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
          "sentence-transformers/all-MiniLM-L6-v2", "intfloat/multilingual-e5-small"})
        CHECK(repos.count(want) == 1);
}

TEST_CASE("models: memory need at fp32 / bf16 / int8 against the machine", "[ui][models]") {
    const int64_t params = 350'000'000, gib = int64_t(1) << 30;
    auto f = memory_fits(params, 16 * gib);
    CHECK(std::string(f[0].precision) == "fp32");
    CHECK(f[0].bytes == hub::estimated_run_bytes(params, 4));
    CHECK(f[0].bytes > f[1].bytes);
    CHECK(f[1].bytes > f[2].bytes);
    for (const auto& x : f) CHECK(x.label == "fits");
    // 1 GiB available: fp32 (~1.7 GB) too big, bf16 (~0.84 GB) tight, int8 (~0.42 GB) fits.
    f = memory_fits(params, gib);
    CHECK(f[0].label == hub::fit_label(f[0].bytes, gib));
    CHECK(f[0].label == "too big");
    CHECK(f[1].label == "tight");
    CHECK(f[2].label == "fits");
    f = memory_fits(0, gib);
    for (const auto& x : f) CHECK(x.label == "unknown");
}

TEST_CASE("models: a download's commands and events, cancel then resume, open when done", "[ui][models][controller]") {
    Fake fake;
    auto& s = fake.c.state();
    s.models.cache = "/cache";
    s.models.catalogue = {CatalogueEntry{"org/tiny", "generation", "paraphrase: ", "en", "1M", "mit", "tests"}};
    // Not a repository id: a message, no command.
    CHECK_FALSE(fake.c.models().start_download("no spaces allowed/"));
    CHECK(fake.sent.empty());
    CHECK_FALSE(s.models.error.empty());
    s.models.repo_input = "org/tiny@v1";
    REQUIRE(fake.c.models().start_download_from_input());
    REQUIRE(std::holds_alternative<PullModel>(fake.sent.back()));
    const auto& pull = std::get<PullModel>(fake.sent.back());
    CHECK(pull.repo == "org/tiny");
    CHECK(pull.revision == "v1");
    CHECK(pull.cache == "/cache");
    REQUIRE(s.models.downloads.size() == 1);
    const JobId job = s.models.downloads[0].job;
    CHECK(job != 0);
    CHECK(s.models.error.empty());
    // A second start of the same download while it runs: refused.
    CHECK_FALSE(fake.c.models().start_download("org/tiny@v1"));
    CHECK(s.models.downloads.size() == 1);
    // Progress moves the row.
    fake.c.apply(ModelPullProgress{job, "org/tiny", "download", "model.safetensors", 1, 3, 100, 400, 50.0, 6.0});
    const DownloadVm& d = s.models.downloads[0];
    CHECK(d.done == 100);
    CHECK(d.total == 400);
    CHECK(d.file == "model.safetensors");
    CHECK(download_progress_text(d).find("ETA 6 s") != std::string::npos);
    // Cancel: a Cancel command for the job; the failure with Cancelled leaves it resumable.
    fake.c.models().cancel_download(0);
    REQUIRE(std::holds_alternative<Cancel>(fake.sent.back()));
    CHECK(std::get<Cancel>(fake.sent.back()).job == job);
    fake.c.apply(JobFailed{job, ErrorCode::Cancelled, "org/tiny: cancelled"});
    CHECK(s.models.downloads[0].phase == DownloadPhase::Cancelled);
    CHECK(s.models.downloads[0].job == 0);
    // The unfinished download is remembered for the next run.
    AppSettings saved;
    capture_settings(s, saved);
    REQUIRE(saved.pending_downloads == std::vector<std::string>{"org/tiny@v1"});
    UiState restored;
    restore_settings(saved, restored);
    REQUIRE(restored.models.downloads.size() == 1);
    CHECK(restored.models.downloads[0].phase == DownloadPhase::Interrupted);
    CHECK(restored.models.downloads[0].revision == "v1");
    CHECK(download_progress_text(restored.models.downloads[0]) == "partial file kept in the cache");
    // Resume: the same row, a new PullModel (the engine continues the .incomplete blob).
    REQUIRE(fake.c.models().start_download("org/tiny@v1"));
    CHECK(s.models.downloads.size() == 1);
    const JobId job2 = s.models.downloads[0].job;
    CHECK(job2 != job);
    CHECK(s.models.downloads[0].phase == DownloadPhase::Running);
    // Done: the row can be opened; the Local list is refreshed; the catalogue's task prefix is kept.
    fake.c.apply(ModelPulled{job2, "org/tiny", "v1", "0123456789abcdef", "/cache/models--org--tiny/snapshots/0123", "generation",
                             "t5", 400, 300, 100});
    CHECK(s.models.downloads[0].phase == DownloadPhase::Done);
    CHECK(s.models.downloads[0].snapshot == "/cache/models--org--tiny/snapshots/0123");
    CHECK(std::holds_alternative<ListModels>(fake.sent.back()));
    CHECK(s.model.task_prefix["/cache/models--org--tiny/snapshots/0123"] == "paraphrase: ");
    fake.c.models().open_download(0);
    REQUIRE(std::holds_alternative<LoadModel>(fake.sent.back()));
    CHECK(std::get<LoadModel>(fake.sent.back()).dir == "/cache/models--org--tiny/snapshots/0123");
    capture_settings(s, saved);
    CHECK(saved.pending_downloads.empty());
}

TEST_CASE("models: a failed download keeps its one-line error on its row", "[ui][models][controller]") {
    Fake fake;
    auto& s = fake.c.state();
    REQUIRE(fake.c.models().start_download("org/gated"));
    const JobId job = s.models.downloads[0].job;
    fake.c.apply(JobFailed{job, ErrorCode::InvalidArgument, "org/gated: 401 unauthorized: accept the licence and set HF_TOKEN"});
    CHECK(s.models.downloads[0].phase == DownloadPhase::Failed);
    CHECK(s.models.downloads[0].error.find("HF_TOKEN") != std::string::npos);
    CHECK(s.log.back().error);
}

TEST_CASE("models: listing, opening an encoder, deleting from the cache", "[ui][models][controller]") {
    Fake fake;
    auto& s = fake.c.state();
    s.models.models_folder = "/data/models";
    s.model.recent = {"/cache/models--org--t5/snapshots/abc", "/work/my-model"};
    // Ctrl+M opens the window and lists.
    fake.c.perform(Action::OpenModels);
    CHECK(s.models.open);
    REQUIRE(std::holds_alternative<ListModels>(fake.sent.back()));
    const auto& list = std::get<ListModels>(fake.sent.back());
    REQUIRE(list.folders.size() == 3);
    CHECK(list.folders[0] == "/data/models");
    CHECK(list.folders[1] == "/cache/models--org--t5/snapshots/abc");
    const JobId lj = s.models.list_job;
    hub::StoredModel t5;
    t5.name = "org/t5";
    t5.commit = "abc";
    t5.dir = "/cache/models--org--t5/snapshots/abc";
    t5.kind = "generation";
    t5.parameters = 60'000'000;
    hub::StoredModel again = t5;  // the same snapshot found among the recent folders
    again.name = "abc";
    again.commit.clear();
    again.dir = "/cache/models--org--t5/snapshots/abc/";
    hub::StoredModel enc;
    enc.name = "org/enc";
    enc.commit = "def";
    enc.dir = "/cache/models--org--enc/snapshots/def";
    enc.kind = "encoder";
    fake.c.apply(ModelsListed{lj, "/cache", {enc, t5, again}, int64_t(8) << 30});
    CHECK(s.models.list_job == 0);
    REQUIRE(s.models.local.size() == 2);  // the duplicate folder is shown once
    CHECK(s.models.available_bytes == int64_t(8) << 30);
    // An encoder opens as the embedding model, a T5 through the model panel's load.
    fake.c.models().open_local(0);
    REQUIRE(std::holds_alternative<LoadEmbedder>(fake.sent.back()));
    CHECK(std::get<LoadEmbedder>(fake.sent.back()).dir == enc.dir);
    fake.c.models().open_local(1);
    REQUIRE(std::holds_alternative<LoadModel>(fake.sent.back()));
    CHECK(std::get<LoadModel>(fake.sent.back()).dir == t5.dir);
    // Delete: a DeleteModel for the repository, then the list is refreshed.
    fake.c.models().delete_model("org/t5");
    REQUIRE(std::holds_alternative<DeleteModel>(fake.sent.back()));
    CHECK(std::get<DeleteModel>(fake.sent.back()).repo == "org/t5");
    fake.c.apply(ModelDeleted{s.models.delete_job, "org/t5", 1234});
    CHECK(s.models.delete_job == 0);
    CHECK(s.models.status.find("org/t5") != std::string::npos);
    CHECK(std::holds_alternative<ListModels>(fake.sent.back()));
    // A failed listing shows its message in the window.
    fake.c.apply(JobFailed{s.models.list_job, ErrorCode::FileNotFound, "/cache: unreadable"});
    CHECK(s.models.error == "/cache: unreadable");
}

TEST_CASE("models: a loaded model's recorded default task sets the prefix; one used before wins", "[ui][models][controller]") {
    Fake fake;
    UiState& s = fake.c.state();
    auto load = [&](const std::string& dir, std::optional<std::string> default_prefix) {
        ModelInfo info;
        info.generation_config.task_prefix = default_prefix;
        info.generation_config.tasks.tasks = {{"translate_english_to_chinese", "translate English to Chinese: "},
                                              {"paraphrase", "paraphrase: "}};
        fake.load(dir, info);
    };
    s.ws.task_prefix = "paraphrase: ";
    load("/models/tuned", std::string("translate English to Chinese: "));
    CHECK(s.ws.task_prefix == "translate English to Chinese: ");  // the fine-tune's training prefix, not the field's old one
    s.model.task_prefix["/models/other"] = "summarize: ";
    load("/models/other", std::string("translate English to Chinese: "));
    CHECK(s.ws.task_prefix == "summarize: ");  // the prefix used with this model before wins
    load("/models/t5-small", std::nullopt);
    CHECK(s.ws.task_prefix == "summarize: ");  // tasks but no default: the field is left as it was
}
