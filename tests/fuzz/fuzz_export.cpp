// libFuzzer target: the history export writer. Fields cut from the input (0xFF separates source,
// target, model) go through every format; CSV rows must read back field for field with the
// shared CSV parser (delimited_text.h, the input reader's), JSONL rows with a JSON parser (for valid UTF-8, which the store
// guarantees).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "history/export_format.h"
#include "input/delimited_text.h"
#include "t5s/error.h"
#include "t5s/text_offsets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace t5s::history;
    using t5s::ExportFormat;
    if (size < 16) return 0;
    int64_t created = 0;
    double score = 0;
    std::memcpy(&created, data, 8);
    std::memcpy(&score, data + 8, 8);
    const std::string rest(reinterpret_cast<const char*>(data) + 16, size - 16);
    std::string parts[3];
    for (size_t i = 0, k = 0; i < rest.size(); ++i) {
        if (rest[i] == '\xff' && k < 2) ++k;
        else parts[k].push_back(rest[i]);
    }
    ExportRow row;
    row.source = parts[0];
    row.target = parts[1];
    row.model = parts[2];
    row.score = score;
    row.created_at_ms = created;
    row.rank = static_cast<int>(created & 0xFF);
    row.original = created & 0x100;
    row.state = static_cast<t5s::CandidateState>((created >> 9) % 4);
    bool utf8 = t5s::is_valid_utf8(parts[0]) && t5s::is_valid_utf8(parts[1]) && t5s::is_valid_utf8(parts[2]);
    for (auto format : {ExportFormat::Csv, ExportFormat::Tsv, ExportFormat::Jsonl}) {
        std::string out = export_header(format);
        append_export_row(format, row, out);
        if (format == ExportFormat::Csv) {
            std::istringstream in(out);
            int64_t line = 0;
            bool unterminated = false;
            std::vector<t5s::DelimitedRecord> records;
            for (t5s::DelimitedRecord r; t5s::read_delimited_record(in, ',', &line, &r);) {
                unterminated = unterminated || r.unterminated_quote;
                if (!(r.fields.empty() || (r.fields.size() == 1 && r.fields[0].empty()))) records.push_back(r);  // blank lines
            }
            if (unterminated || records.size() != 2 || records[1].fields.size() != records[0].fields.size() ||
                records[1].fields[0] != parts[0] || records[1].fields[1] != parts[1] || records[1].fields[7] != parts[2]) {
                std::abort();  // our own CSV does not read back
            }
        }
        if (format == ExportFormat::Jsonl && utf8) {
            const auto j = nlohmann::json::parse(out);
            if (j["source"] != parts[0] || j["target"] != parts[1] || j["model"] != parts[2]) std::abort();
        }
    }
    return 0;
}
