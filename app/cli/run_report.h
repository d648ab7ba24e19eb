#pragma once
// `generate --input FILE --report DIR`: the run's score statistics and plots, the same sections as
// an hf-dataset card (t5s/score_report.h), in DIR/README.md with the PNGs in DIR/plots/; under a
// recipe also the candidates per route.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "t5s/generation_options.h"
#include "t5s/score_report.h"

namespace t5s::cli {

class RunReport {
public:
    // Refuses a file or a non-empty folder at once (before the model loads); creates the folder.
    explicit RunReport(std::string dir);

    void add(const std::vector<GenerationResult>& results);  // each batch's results as they come
    void write(const std::string& model) const;              // after the run: README.md and plots

    const std::string& dir() const { return dir_; }

private:
    std::string dir_;
    ReportInput input_;
    std::map<std::string, int64_t> dropped_;  // candidates dropped per printed reason
};

}  // namespace t5s::cli
