#pragma once
// One declaration per training option (TrainingOptions, t5s/trainer.h) and per learning-loop option
// (LearningOptions, t5s/learning.h): field tables (t5s/settings_fields.h) from which derive the
// JSON the history stores for a run (training_options_to_json / _from_json), `train`'s and
// `learn`'s flags, --help and parsing (app/cli/settings_flags.h), the range checks of
// validate_training_options and the app's training widgets.
//
// Adding a training option: its field in TrainingOptions and its row in training_fields()
// (training_fields.cpp); then its use. Adding a learning option: its field in LearningRoundSettings
// (t5s/learning.h) and its row in learning_fields(): `learn`'s flag, the manifest's settings, the
// range check follow, and serve, the app and LearnNow carry it with its default. Torch-free.
#include <string>
#include <variant>
#include <vector>

#include "t5s/learning.h"
#include "t5s/settings_fields.h"
#include "t5s/trainer.h"

namespace t5s {

using TrainingMember =
    std::variant<int TrainingOptions::*, int64_t TrainingOptions::*, uint64_t TrainingOptions::*, double TrainingOptions::*,
                 bool TrainingOptions::*, std::string TrainingOptions::*, std::vector<std::string> TrainingOptions::*,
                 OptimizerKind TrainingOptions::*, ScheduleKind TrainingOptions::*, Precision TrainingOptions::*,
                 Device TrainingOptions::*, std::string DataOptions::*, BadRowPolicy DataOptions::*>;
using TrainingField = SettingsField<TrainingMember>;

template <>
inline DataOptions& settings_part<DataOptions, TrainingOptions>(TrainingOptions& o) {
    return o.data;
}

// Every training option, in the order of `train --help` (the JSON is in name order).
const std::vector<TrainingField>& training_fields();
// The row with this JSON name, or null.
const TrainingField* find_training_field(const std::string& json_name);

using LearningMember = std::variant<int LearningOptions::*, int64_t LearningOptions::*, uint64_t LearningOptions::*,
                                    double LearningOptions::*, std::string LearningOptions::*, Device LearningOptions::*>;
using LearningField = SettingsField<LearningMember>;

// Every learning-loop option, in the order of `learn --help`; the learn flags refuse what is out of range.
const std::vector<LearningField>& learning_fields();
// The first option outside its range ("--lr must be > 0 (got 0)"), "" when all are inside.
std::string learning_options_error(const LearningOptions& options);

}  // namespace t5s
