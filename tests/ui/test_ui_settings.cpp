// settings.json: combo selections are stored by name (t5s/enum_names.h); files written before,
// which held the combo's index as an integer, keep reading.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "settings.h"
#include "ui_state.h"

using namespace t5s;
using namespace t5s::ui;

TEST_CASE("settings.json stores device and precision by name", "[ui][settings]") {
    AppSettings s;
    s.device = Device::Cuda;
    s.precision = Precision::Int8;
    const nlohmann::json j = nlohmann::json::parse(settings_to_json(s));
    CHECK(j["device"] == "cuda");
    CHECK(j["precision"] == "int8");
    std::string warning;
    const AppSettings back = settings_from_json(j.dump(), &warning);
    CHECK(warning.empty());
    CHECK(back.device == Device::Cuda);
    CHECK(back.precision == Precision::Int8);
    UiState st;
    restore_settings(back, st);
    CHECK(st.model.device == Device::Cuda);
    CHECK(st.model.precision == Precision::Int8);
}

TEST_CASE("settings.json written with combo indices keeps reading", "[ui][settings]") {
    std::string warning;
    // The old order: device auto, cpu, cuda; precision fp32, bf16, fp16, int8.
    const AppSettings old = settings_from_json(R"({"version": 1, "device": 2, "precision": 1, "per_row": 5})", &warning);
    CHECK(warning.empty());
    CHECK(old.device == Device::Cuda);
    CHECK(old.precision == Precision::Bf16);
    CHECK(old.per_row == 5);
    const AppSettings cpu = settings_from_json(R"({"device": 1, "precision": 3})", &warning);
    CHECK(cpu.device == Device::Cpu);
    CHECK(cpu.precision == Precision::Int8);
    // Out of range, unknown names or wrong types: the defaults, the rest of the file still read.
    const AppSettings odd = settings_from_json(R"({"device": 7, "precision": "fp8", "per_row": 4})", &warning);
    CHECK(odd.device == Device::Auto);
    CHECK(odd.precision == Precision::Fp32);
    CHECK(odd.per_row == 4);
    const AppSettings alias = settings_from_json(R"({"device": "gpu"})", &warning);
    CHECK(alias.device == Device::Cuda);
}
