// libFuzzer target: dataset rows. The first byte picks the reader: the shared CSV/TSV record parser
// (delimited_text.h) on the rest, or read_dataset() (the app's batch panel: the one input reader
// under BadRowPolicy::Skip) on the rest saved as .jsonl / .csv / .tsv / .txt. Rows read back must be
// non-empty; bad rows are warnings, a bad file a t5s::Error.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine_thread/dataset_reader.h"
#include "input/delimited_text.h"
#include "t5s/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    const int mode = data[0] % 6;
    if (mode < 2) {
        std::istringstream in(text);
        int64_t line = 0, last_line = 0;
        t5s::DelimitedRecord r;
        while (t5s::read_delimited_record(in, mode == 0 ? ',' : '\t', &line, &r)) {
            if (r.first_line <= last_line || r.last_line < r.first_line || r.last_line > line) std::abort();
            last_line = r.last_line;
        }
        return 0;
    }
    static const char* kExt[] = {".jsonl", ".csv", ".tsv", ".txt"};
    // One scratch folder per fuzzing process, removed when it exits.
    static const struct ScratchDir {
        std::string path;
        ScratchDir() {
            const auto d = std::filesystem::temp_directory_path() / ("t5s_fuzz_dataset_" + std::to_string(::getpid()));
            std::filesystem::create_directories(d);
            path = d.string();
        }
        ~ScratchDir() {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    } scratch;
    const std::string& dir = scratch.path;
    const std::string path = dir + "/rows" + kExt[mode - 2];
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    try {
        const auto rows = t5s::detail::read_dataset(path, data[0] & 0x80 ? "text" : "");
        for (const auto& row : rows.rows) {
            if (row.empty()) std::abort();
        }
    } catch (const t5s::Error&) {
    }
    return 0;
}
