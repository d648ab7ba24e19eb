#pragma once
// One function per panel (ImHex / Tracy style): each draws its view-model and turns clicks into
// Controller actions. Window titles double as screenshot names in test mode.
#include "widgets.h"

namespace t5s::ui {

inline constexpr const char* kModelPanel = "Model";
inline constexpr const char* kWorkspacePanel = "Workspace";
inline constexpr const char* kBatchPanel = "Batch augmentation";
inline constexpr const char* kHistoryPanel = "History";
inline constexpr const char* kExportPanel = "Export";
inline constexpr const char* kMonitorPanel = "Monitor";
inline constexpr const char* kHelpPanel = "Keys (F1)";
inline constexpr const char* kTrainingPanel = "Training";
inline constexpr const char* kModelsPanel = "Models";
inline constexpr const char* kLearningPanel = "Learning";

void draw_model_panel(PanelContext& ctx);
void draw_workspace_panel(PanelContext& ctx);
void draw_batch_panel(PanelContext& ctx);
void draw_history_panel(PanelContext& ctx);
void draw_export_panel(PanelContext& ctx);
void draw_monitor_panel(PanelContext& ctx);
void draw_help_panel(PanelContext& ctx);
void draw_training_panel(PanelContext& ctx);  // shown when state().train.open (View > Training)
void draw_models_panel(PanelContext& ctx);    // shown when state().models.open (File > Models..., Ctrl+M)
void draw_learning_panel(PanelContext& ctx);  // shown when state().learn.open (View > Learning, Ctrl+L)
void draw_learning_switch(Controller& ctl);   // the workspace's "learn from my decisions" line (learning_panel.cpp)

}  // namespace t5s::ui
