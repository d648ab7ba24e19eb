#pragma once
// `export --format hf-dataset`: a folder that Hugging Face `datasets.load_dataset(DIR)` opens and the
// Hub renders. DIR/data/train.jsonl holds the rows (export_to with ExportFormat::HfDataset: the JSONL
// columns with the scores), DIR/README.md the dataset card: a YAML header with the config and the
// features, how the data was made (models, settings, seeds, filters, rows kept and dropped by
// reason), score statistics with histograms and candidates per source, whose PNGs lie in DIR/plots/.
// The card's numbers are computed from the data file as written.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "t5s/history_store.h"

namespace t5s {

struct HfDatasetResult {
    ExportResult data;  // the data file's (path = DIR/data/train.jsonl)
    std::string dir;
    std::vector<std::string> files;  // written, relative to dir: data file, README.md, plots
};

// A non-empty DIR is refused (InvalidArgument) unless options.overwrite; then the files above are
// replaced (and earlier plots removed) and nothing else in it is touched. options.format and
// options.with_scores are ignored (always this format, always the scores).
HfDatasetResult export_hf_dataset(HistoryStore& store, const std::string& dir, const ExportOptions& options,
                                  const std::function<void(const ExportProgress&)>& progress = {},
                                  const std::atomic<bool>* cancel = nullptr);

}  // namespace t5s
