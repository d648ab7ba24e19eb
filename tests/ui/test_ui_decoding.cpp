// The workspace's Advanced decoding rows (from the field table: every field the panel's own
// controls do not show, none twice) and the controller side of its text boxes and of Paste
// settings: applied only when valid, hot-swapped like the sliders, logged, saved with the settings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "controller.h"
#include "decoding_view.h"
#include "recording_controller.h"
#include "settings.h"

using namespace t5s;
using namespace t5s::ui;

namespace {

using Fake = test::RecordingController;

const DecodingRow* row_of(const std::vector<DecodingRow>& rows, const std::string& json) {
    for (const DecodingRow& r : rows)
        if (json == r.field->json) return &r;
    return nullptr;
}

bool logged(const UiState& s, const std::string& piece) {
    return std::any_of(s.log.begin(), s.log.end(), [&](const LogLine& l) { return l.text.find(piece) != std::string::npos; });
}

}  // namespace

TEST_CASE("advanced decoding: every field of the table is shown once, with a control of its kind", "[ui][decoding]") {
    const std::vector<DecodingRow> rows = advanced_decoding_rows();
    std::set<std::string> in_rows;
    for (const DecodingRow& r : rows) CHECK(in_rows.insert(r.field->json).second);
    for (const GenerationField& f : generation_fields()) {
        INFO(f.json);
        CHECK(in_rows.count(f.json) != static_cast<size_t>(shown_in_workspace_settings(f)));  // in exactly one place
        if (const DecodingRow* r = row_of(rows, f.json)) {
            if (is_list_field(f)) CHECK(r->control == DecodingControl::List);
            if (r->control == DecodingControl::Slider) CHECK(f.ui_min < f.ui_max);
            if (r->control == DecodingControl::Number) CHECK_FALSE(f.ui_min < f.ui_max);
            CHECK_FALSE(field_help(f).empty());
        }
    }
    // transformers' controls the workspace has no slider for are here, each with its kind and Live mark.
    for (const char* list : {"suppress_tokens", "begin_suppress_tokens", "forced_eos_token_id", "sequence_bias", "stop_strings",
                             "force_words_ids", "exponential_decay_length_penalty", "bad_words_ids"}) {
        INFO(list);
        REQUIRE(row_of(rows, list));
        CHECK(row_of(rows, list)->control == DecodingControl::List);
    }
    REQUIRE(row_of(rows, "renormalize_logits"));
    CHECK(row_of(rows, "renormalize_logits")->control == DecodingControl::Switch);
    REQUIRE(row_of(rows, "max_time"));
    CHECK(row_of(rows, "max_time")->control == DecodingControl::OptionalNumber);
    REQUIRE(row_of(rows, "no_repeat_ngram_size"));
    CHECK(row_of(rows, "no_repeat_ngram_size")->control == DecodingControl::Number);
    CHECK(std::string(live_label(row_of(rows, "no_repeat_ngram_size")->field->live)) == "live");  // EveryStep
    CHECK(std::string(live_label(row_of(rows, "num_beam_groups")->field->live)).empty());         // the request's shape
    CHECK_FALSE(row_of(rows, "num_beams"));
    CHECK_FALSE(row_of(rows, "temperature"));
}

TEST_CASE("advanced decoding: a list box applies only valid JSON, hot-swapped, and follows other changes", "[ui][decoding]") {
    Fake f;
    f.load();
    auto& ws = f.c.state().ws;
    ws.source = "hello";
    f.c.generate();  // running: a change reaches it by UpdateSettings
    const GenerationField& suppress = *find_generation_field("suppress_tokens");
    const int sent = f.count<UpdateSettings>();
    CHECK_FALSE(f.c.workspace().set_field_text(suppress, "[12, x"));
    const FieldTextVm& box = ws.decoding.field_text["suppress_tokens"];
    CHECK(box.text == "[12, x");
    CHECK(box.error.find("suppress_tokens") != std::string::npos);
    CHECK(ws.options.suppress_tokens.empty());
    CHECK(f.count<UpdateSettings>() == sent);
    CHECK(f.c.workspace().set_field_text(suppress, "[12, 7]"));
    CHECK(box.error.empty());
    CHECK(ws.options.suppress_tokens == TokenIds{12, 7});
    REQUIRE(f.count<UpdateSettings>() == sent + 1);
    CHECK(f.last<UpdateSettings>()->options.suppress_tokens == TokenIds{12, 7});
    // Out of range: refused by the field's own check, shown, not applied.
    const GenerationField& groups = *find_generation_field("num_beam_groups");
    CHECK_FALSE(f.c.workspace().set_field_text(groups, "0"));
    CHECK(ws.decoding.field_text["num_beam_groups"].error.find("num_beam_groups") != std::string::npos);
    CHECK(ws.options.num_beam_groups == 1);
    // An optional number: on with a value, off with null (its checkbox), refused outside its range.
    const GenerationField& max_time = *find_generation_field("max_time");
    CHECK(f.c.workspace().set_field_text(max_time, "2.5"));
    CHECK(ws.options.max_time == 2.5);
    CHECK_FALSE(f.c.workspace().set_field_text(max_time, "-1"));
    CHECK(ws.options.max_time == 2.5);
    CHECK(f.c.workspace().set_field_text(max_time, "null"));
    CHECK_FALSE(ws.options.max_time);
    // A value changed elsewhere replaces the box's text.
    ws.options.suppress_tokens = {3};
    f.c.workspace().sync_field_texts();
    CHECK(box.text == "[3]");
    CHECK(box.error.empty());
    // The next generation and the saved settings carry what the boxes set.
    f.c.apply(GenerationDone{ws.job, {}, {}, {}, {}});
    f.c.generate();
    CHECK(f.last<Generate>()->options.suppress_tokens == TokenIds{3});
    std::string warning;
    UiState restored = test::after_restart(f.c.state(), &warning);
    CHECK(restored.ws.options.suppress_tokens == TokenIds{3});
}

TEST_CASE("paste settings: the humarin recipe becomes the settings, what is not applied is listed and logged", "[ui][decoding]") {
    Fake f;
    f.load();
    auto& ws = f.c.state().ws;
    ws.options.do_sample = true;
    ws.options.num_return_sequences = 4;
    ws.source = "hello";
    f.c.generate();
    auto& paste = ws.decoding.paste;
    paste.text =
        "model.generate(input_ids, num_beams=5, num_beam_groups=5, diversity_penalty=3.0, repetition_penalty=10.0, "
        "no_repeat_ngram_size=2, max_length=128)";
    f.c.workspace().paste_settings();
    CHECK(paste.error.empty());
    CHECK(paste.conflict.empty());
    REQUIRE(paste.result);
    CHECK(ws.options.num_beams == 5);
    CHECK(ws.options.num_beam_groups == 5);
    CHECK(ws.options.diversity_penalty == 3.0f);
    CHECK(ws.options.max_new_tokens == 127);
    CHECK_FALSE(ws.options.do_sample);
    REQUIRE(paste.result->not_applied.size() == 1);
    CHECK(paste.result->not_applied[0].key == "input_ids");
    CHECK(logged(f.c.state(), "num_beam_groups=5"));
    CHECK(logged(f.c.state(), "not applied: input_ids"));
    REQUIRE(f.last<UpdateSettings>());  // the running generation's live fields follow
    CHECK(f.last<UpdateSettings>()->options.repetition_penalty == 10.0f);
    // A task prefix pasted is the workspace's prefix; unreadable text changes nothing and says where.
    paste.text = R"({"task_prefix": "paraphrase: ", "num_beams": 4})";
    ws.task_prefix.clear();
    f.c.workspace().paste_settings();
    CHECK(ws.task_prefix == "paraphrase: ");
    const GenerationOptions before = ws.options;
    paste.text = "num_beams=[3";
    f.c.workspace().paste_settings();
    CHECK(paste.error.find("never closed") != std::string::npos);
    CHECK_FALSE(paste.result);
    CHECK(generation_options_to_json(ws.options) == generation_options_to_json(before));
    CHECK(logged(f.c.state(), "never closed"));
    // Settings that cannot generate together are applied as a slider would be, and said.
    paste.text = "num_beams=4, num_beam_groups=3";
    f.c.workspace().paste_settings();
    CHECK(ws.options.num_beam_groups == 3);
    CHECK(paste.conflict.find("num_beam_groups") != std::string::npos);
}
