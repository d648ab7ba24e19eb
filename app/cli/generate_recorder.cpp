#include "cli/generate_recorder.h"

#include "cli/args.h"

namespace t5s::cli {

struct GenerateRecorder::Impl {};

GenerateRecorder::GenerateRecorder(const std::string& history_path, const Model&) {
    if (!history_path.empty()) throw UsageError("--history needs the history store, which this build does not include");
}
GenerateRecorder::~GenerateRecorder() = default;
void GenerateRecorder::record(const std::vector<GenerationResult>&, const GenerationOptions&, double) {}

}  // namespace t5s::cli
