#pragma once
// The README.md of an hf-dataset folder: YAML header (config, features, split size) and the card's
// sections. Pure text from numbers already computed (hf_dataset_export.cpp reads them from the data file).
#include <cstdint>
#include <map>
#include <string>

#include "t5s/history_store.h"
#include "t5s/score_report.h"

namespace t5s::history {

inline constexpr const char* kHfDataFile = "data/train.jsonl";

// What the data file holds, read back from it.
struct DataFileSummary {
    int64_t rows = 0, candidates = 0, originals = 0, generations = 0;
    bool has_source_spans = false, has_target_spans = false, has_label = false, has_route = false;
    std::map<std::string, int64_t> states;  // candidate rows per state
    ReportInput report;                     // their scores, candidates per generation
};

std::string dataset_card(const DataFileSummary& data, const HistoryProvenance& provenance, const ExportOptions& options,
                         const ExportResult& written, const Report& report);

}  // namespace t5s::history
