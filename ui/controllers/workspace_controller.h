#pragma once
// Workspace panel: generate candidates for the source text, decide on them (accept / reject /
// edit / undo / redo, each recorded in the history), walk a review queue row by row.
#include <filesystem>
#include <optional>

#include "controllers/panel_controller.h"

namespace t5s::ui {

class WorkspaceController : public PanelController {
public:
    using PanelController::PanelController;
    void generate();
    void cancel_generation();
    void settings_changed();  // a slider moved: hot-swap into the running request
    // The sort control: reorders the shown candidates at once and ranks the next generation so.
    void set_rank(RankBy rank);
    void accept();
    void reject();
    void begin_edit();
    void commit_edit();
    void cancel_edit();
    void undo();
    void redo();
    void accept_and_next();
    void goto_row(int row);  // review queue; generates
    // A new review queue, from its first row; `spans` and `labels`: each row's explicit spans and
    // label from a labelled file (may be empty).
    void review(const std::vector<std::string>& rows, const std::vector<std::vector<Span>>& spans = {},
                const std::vector<std::string>& labels = {});
    // Protected spans (workspace_spans.cpp). sync_spans: the marks follow edits of the source and
    // the preview (what the next generation protects) is recomputed when its inputs changed; cheap
    // when nothing did, so the panel calls it every frame.
    void sync_spans();
    void protect_selection();  // the source field's selection -> a mark (Ctrl+P)
    void remove_mark(size_t index);
    void set_detector(const std::string& detector, bool on);
    void protect_changed();  // the regex or the detectors changed: hot swap when valid
    // The workspace options as a request takes them: the seed rule applied, and without an
    // embedding model no similarity bound and no similarity ranking (the sliders show them off).
    GenerationOptions effective_options() const;
    // Advanced decoding and Paste settings (workspace_decoding.cpp). set_field_text: a field's text
    // box edited (a list as JSON, a number): applied and hot-swapped when valid, else the message
    // is kept beside the box and the setting keeps its value; returns whether it applied.
    // sync_field_texts: the boxes follow values changed elsewhere (a paste, settings restored).
    // paste_settings: decoding.paste.text read onto the settings (t5s/pasted_settings.h), the
    // outcome kept for the box and written to the log.
    bool set_field_text(const GenerationField& field, const std::string& text);
    void sync_field_texts();
    void paste_settings();

    // The recipe (workspace_recipe.cpp). list_recipes: the shipped ones in `folder` (*.json).
    // choose_recipe: a file read into the editor ("" = None, plain generation); check_recipe: the
    // editor's text parsed as the engine will parse it (cheap when unchanged; the panel calls it
    // every frame); save_recipe_as: the text written to `path` (on the engine's io lane), which
    // becomes the chosen file.
    void list_recipes(const std::filesystem::path& folder);
    void choose_recipe(const std::string& path);
    void check_recipe();
    void save_recipe_as(const std::string& path);
    std::optional<RecipeSource> recipe_source() const;  // what a generation sends; none for None
    void remember_recipe(const std::string& path);      // first of the picker's recent files

    void apply(const Event& event) override;
    void failed(const JobFailed& failure) override;
    void engine_died() override;

private:
    void record(const std::optional<DecisionOut>& d);
};

}  // namespace t5s::ui
