// The workspace's Advanced decoding text boxes and Paste settings: both change ws.options through
// the same path as the sliders (settings_changed: a hot swap into a running generation or batch).
#include <algorithm>

#include "controllers/workspace_controller.h"
#include "t5s/error.h"

namespace t5s::ui {

bool WorkspaceController::set_field_text(const GenerationField& field, const std::string& text) {
    auto& ws = s.ws;
    FieldTextVm& box = ws.decoding.field_text[field.json];
    box.text = text;
    GenerationOptions trial = ws.options;
    try {
        set_field_from_text(field, text, &trial);
    } catch (const Error& e) {
        box.error = e.what();  // shown beside the box; the setting keeps its value until the text is valid
        return false;
    }
    box.error.clear();
    ws.options = trial;
    box.synced = field_json_text(field, ws.options);
    settings_changed();
    return true;
}

void WorkspaceController::sync_field_texts() {
    auto& ws = s.ws;
    for (const DecodingRow& row : advanced_decoding_rows()) {
        if (row.control != DecodingControl::List && row.control != DecodingControl::Number &&
            row.control != DecodingControl::OptionalNumber)
            continue;
        const std::string now = field_json_text(*row.field, ws.options);
        FieldTextVm& box = ws.decoding.field_text[row.field->json];
        if (box.synced == now) continue;  // unchanged elsewhere: keep what is typed (and its message)
        box.synced = now;
        box.text = now == "null" ? "" : now;
        box.error.clear();
    }
}

void WorkspaceController::paste_settings() {
    auto& ws = s.ws;
    PasteSettingsVm& paste = ws.decoding.paste;
    paste.error.clear();
    paste.conflict.clear();
    paste.result.reset();
    try {
        paste.result = apply_pasted_settings(paste.text, ws.options);
    } catch (const Error& e) {
        paste.error = e.what();
        ctx.log(true, paste.error);
        return;
    }
    const PastedSettings& p = *paste.result;
    ws.options = p.options;
    const bool prefix =
        std::any_of(p.applied.begin(), p.applied.end(), [](const AppliedSetting& a) { return a.field == "task_prefix"; });
    if (prefix) ws.task_prefix = p.options.task_prefix;  // the workspace's prefix box is what a generation uses
    for (const std::string& line : pasted_settings_lines(p)) ctx.log(false, line);
    try {
        validate_generation_options(effective_options());
    } catch (const Error& e) {
        paste.conflict = e.what();  // applied all the same, as a slider would be: the next Generate says it too
        ctx.log(true, "pasted settings: " + paste.conflict);
    }
    sync_field_texts();
    settings_changed();
}

}  // namespace t5s::ui
