// The app's LoRA flow against a fake engine: adapters of the loaded base switched by SetAdapter
// (none included) without a LoadModel, the "LoRA (low memory)" preset, and "use" of a LoRA run
// loading its base with the adapter.
#include <catch2/catch.hpp>

#include <algorithm>

#include "controller.h"
#include "recording_controller.h"
#include "settings.h"
#include "ui_state.h"

using namespace t5s;
using namespace t5s::ui;

TEST_CASE_METHOD(test::RecordingController, "controller: adapters switch on the loaded base; LoRA preset; a LoRA run's use",
                 "[ui][controller][lora]") {
    auto& m = c.state().model;
    // No base yet: a message, no command.
    m.adapter_input = "/adapters/a";
    c.add_adapter();
    CHECK(sent.empty());
    CHECK_FALSE(m.adapter_error.empty());

    load();
    c.add_adapter();
    REQUIRE(std::holds_alternative<SetAdapter>(sent.back()));
    CHECK(std::get<SetAdapter>(sent.back()).dir == "/adapters/a");
    c.apply(AdapterSet{m.adapter_job, "/adapters/a", 4608});
    CHECK(m.active_adapter == "/adapters/a");
    CHECK(m.adapters["/m"] == std::vector<std::string>{"/adapters/a"});
    // A bad folder: the error shows, the current adapter stays.
    m.adapter_input = "/adapters/bad";
    c.add_adapter();
    c.apply(JobFailed{m.adapter_job, ErrorCode::InvalidArgument, "bad: shape"});
    CHECK(m.adapter_job == 0);
    CHECK(m.adapter_error.find("bad: shape") != std::string::npos);
    CHECK(m.active_adapter == "/adapters/a");
    CHECK(m.adapters["/m"].size() == 1);
    // "none": SetAdapter with an empty folder; never a reload of the base.
    c.use_adapter("");
    CHECK(std::get<SetAdapter>(sent.back()).dir.empty());
    c.apply(AdapterSet{m.adapter_job, "", 0});
    CHECK(m.active_adapter.empty());
    CHECK(std::count_if(sent.begin(), sent.end(), [](const Command& x) { return std::holds_alternative<LoadModel>(x); }) == 1);

    // The preset.
    c.apply_training_preset(int(TrainPreset::Lora));
    CHECK(c.state().train.options.lora);
    CHECK(c.state().train.options.lora_r == 8);
    CHECK(c.state().train.options.lora_base_precision == t5s::Precision::Bf16);
    c.apply_training_preset(int(TrainPreset::Quick));
    CHECK(c.state().train.options.lora_base_precision == t5s::Precision::Fp32);
    c.apply_training_preset(int(TrainPreset::Lora));
    CHECK(c.state().train.options.lora_targets == "q,v");
    c.apply_training_preset(int(TrainPreset::Quick));
    CHECK_FALSE(c.state().train.options.lora);

    // Past runs: "use" of a LoRA run loads its base with the adapter.
    c.refresh_training_runs();
    const JobId q = c.state().train.runs_job;
    TrainingOptions o;
    o.model_dir = "/models/base";
    o.lora = true;
    StoredTrainingRun run;
    run.id = 9;
    run.status = "completed";
    run.final_dir = "/runs/lora/final";
    run.options_json = training_options_to_json(o);
    StoredTrainingRun full = run;
    full.id = 10;
    full.final_dir = "/runs/full/final";
    full.options_json = training_options_to_json(TrainingOptions{});
    c.apply(TrainingRunsLoaded{q, {run, full}});
    c.use_run_model(9);
    REQUIRE(std::holds_alternative<LoadModel>(sent.back()));
    CHECK(std::get<LoadModel>(sent.back()).dir == "/models/base");
    CHECK(std::get<LoadModel>(sent.back()).runtime.adapter == "/runs/lora/final");
    c.use_run_model(10);
    CHECK(std::get<LoadModel>(sent.back()).dir == "/runs/full/final");
    CHECK(std::get<LoadModel>(sent.back()).runtime.adapter.empty());
}

TEST_CASE("the adapters listed per base survive a restart (settings.json)", "[ui][settings][lora]") {
    UiState before;
    before.model.adapters["/models/base"] = {"/runs/a/final", "/runs/b/final"};
    before.model.adapters["/models/other"] = {"/runs/c/final"};
    std::string warning;
    UiState after = test::after_restart(before, &warning);
    CHECK(warning.empty());
    CHECK(after.model.adapters == before.model.adapters);
    // Settings written before adapters were remembered: an empty list, nothing else lost.
    const AppSettings old = settings_from_json(R"({"recent_models": ["/models/base"]})", &warning);
    CHECK(old.adapters.empty());
    CHECK(old.recent_models.size() == 1);
}
