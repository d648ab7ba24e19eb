#pragma once
// Batch panel: load a dataset, augment every row (N candidates each) with pause / resume / cancel.
#include <string>

#include "controllers/panel_controller.h"

namespace t5s::ui {

// "kept 12, dropped 5 (change>0.8 3, copy 2)": the candidates of the rows finished in this run.
std::string kept_dropped_line(const BatchVm& batch);
// "spans: 42 in 20 rows; 3 candidates lost one (dropped), 5 forced" for the rows done in this run
// ("" when none had spans).
std::string batch_spans_line(const BatchVm& batch);
// Whether a dropped file is a rows file for the batch panel, by its extension (any case): the input
// reader's formats, .txt .jsonl .ndjson .csv .tsv .tab and .json (a Label Studio export). Anything
// else dropped on the window is taken as a model folder.
bool is_rows_file(const std::string& path);

class WorkspaceController;

class BatchController : public PanelController {
public:
    BatchController(ControllerContext& context, WorkspaceController& workspace) : PanelController(context), ws_(workspace) {}
    void load_dataset();
    void start_batch();
    void pause_batch();
    void resume_batch();
    void cancel_batch();
    void review_in_workspace();  // dataset rows -> the workspace's review queue

    void apply(const Event& event) override;
    void failed(const JobFailed& failure) override;
    void engine_died() override;

private:
    WorkspaceController& ws_;  // the generation settings and the review queue
};

}  // namespace t5s::ui
