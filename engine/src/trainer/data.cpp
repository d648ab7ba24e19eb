// Training pairs from JSONL / CSV / TSV files, with file:line errors, and the pre-training data report.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_set>

#include "delimited_text.h"
#include "t5s/error.h"
#include "t5s/tokenizer.h"
#include "t5s/trainer.h"
#include "trainer/data_internal.h"

namespace t5s {
namespace {

std::string lower_ext(const std::string& file) {
    auto dot = file.find_last_of('.');
    std::string ext = dot == std::string::npos ? "" : file.substr(dot + 1);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext;
}

bool valid_utf8(const std::string& s, size_t* bad_offset) {
    try {
        require_valid_utf8(s, "");
        return true;
    } catch (const Error&) {
        // Find the offset ourselves for the message.
        size_t i = 0;
        while (i < s.size()) {
            unsigned char c = static_cast<unsigned char>(s[i]);
            int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
            if (n == 0 || i + n > s.size()) break;
            bool ok = true;
            for (int k = 1; k < n; ++k) ok = ok && (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
            if (!ok) break;
            i += n;
        }
        *bad_offset = i;
        return false;
    }
}

bool is_blank(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

struct Collector {
    const std::string& file;
    const DataOptions& opt;
    PairSet out;
    void bad(int64_t line, const std::string& reason) {
        const std::string where = file + ":" + std::to_string(line);
        if (opt.on_bad_row == BadRowPolicy::Fail) throw Error(ErrorCode::CorruptFile, where + ": " + reason);
        out.bad_rows.push_back({where, reason});
    }
    // Returns false (after reporting) when the pair is unusable.
    void add(int64_t line, std::string source, std::string target) {
        size_t off = 0;
        if (!valid_utf8(source, &off)) return bad(line, "invalid UTF-8 in the source at byte " + std::to_string(off));
        if (!valid_utf8(target, &off)) return bad(line, "invalid UTF-8 in the target at byte " + std::to_string(off));
        if (is_blank(source)) return bad(line, "empty source");
        if (is_blank(target)) return bad(line, "empty target");
        out.pairs.push_back({opt.source_prefix + source, std::move(target), file + ":" + std::to_string(line)});
    }
};

const char* kSourceNames[] = {"source", "input", "text", "src"};
const char* kTargetNames[] = {"target", "output", "tgt", "paraphrase"};

void load_jsonl(std::istream& in, Collector& c) {
    std::string line;
    int64_t n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (is_blank(line)) continue;
        size_t off = 0;
        if (!valid_utf8(line, &off)) {
            c.bad(n, "invalid UTF-8 at byte " + std::to_string(off));
            continue;
        }
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(line);
        } catch (const std::exception& e) {
            c.bad(n, "malformed JSON line");
            continue;
        }
        if (!j.is_object()) {
            c.bad(n, "expected a JSON object");
            continue;
        }
        auto field = [&](const std::string& wanted, const char* const* names, size_t count, const char* what,
                         std::string* value) -> bool {
            std::vector<std::string> candidates;
            if (!wanted.empty()) candidates.push_back(wanted);
            else candidates.assign(names, names + count);
            for (const auto& name : candidates) {
                auto it = j.find(name);
                if (it == j.end()) continue;
                if (!it->is_string()) {
                    c.bad(n, "field '" + name + "' is not a string");
                    return false;
                }
                *value = it->get<std::string>();
                return true;
            }
            c.bad(n, std::string("missing ") + what + " field (" +
                         (wanted.empty() ? std::string("looked for ") + names[0] + "/" + names[1] + "/" + names[2] : "'" + wanted + "'") + ")");
            return false;
        };
        std::string s, t;
        if (!field(c.opt.source_field, kSourceNames, 4, "source", &s)) continue;
        if (!field(c.opt.target_field, kTargetNames, 4, "target", &t)) continue;
        c.add(n, std::move(s), std::move(t));
    }
}

// One CSV record: the shared reader (engine/src/delimited_text.h). Returns false at EOF.
// `bad_quote`: why the record's quoting is not RFC 4180, or empty.
bool read_csv_record(std::istream& in, char sep, std::vector<std::string>& fields, int64_t& line_no, std::string& bad_quote) {
    DelimitedRecord rec;
    if (!read_delimited_record(in, sep, &line_no, &rec)) return false;
    fields = std::move(rec.fields);
    bad_quote = rec.unterminated_quote ? "unterminated quoted field"
                : rec.stray_quote      ? "stray quote: text after a quoted field's closing quote"
                                       : "";
    return true;
}

void load_delimited(std::istream& in, char sep, Collector& c) {
    std::vector<std::string> header, row;
    int64_t line = 0;
    std::string bad_quote;
    if (!read_csv_record(in, sep, header, line, bad_quote) || header.empty())
        throw Error(ErrorCode::CorruptFile, c.file + ":1: missing header row");
    if (!header.empty() && header[0].rfind("\xEF\xBB\xBF", 0) == 0) header[0] = header[0].substr(3);  // BOM
    auto column = [&](const std::string& wanted, const char* const* names, size_t count, const char* what) {
        std::vector<std::string> candidates;
        if (!wanted.empty()) candidates.push_back(wanted);
        else candidates.assign(names, names + count);
        for (const auto& name : candidates)
            for (size_t k = 0; k < header.size(); ++k)
                if (header[k] == name) return k;
        throw Error(ErrorCode::CorruptFile, c.file + ":1: header has no " + what + " column (" +
                                                (wanted.empty() ? std::string("looked for ") + names[0] + "/" + names[1] + "/" + names[2]
                                                                : "'" + wanted + "'") + ")");
    };
    const size_t sc = column(c.opt.source_field, kSourceNames, 4, "source");
    const size_t tc = column(c.opt.target_field, kTargetNames, 4, "target");
    while (true) {
        const int64_t start = line + 1;
        if (!read_csv_record(in, sep, row, line, bad_quote)) break;
        if (row.empty() || (row.size() == 1 && is_blank(row[0]))) continue;
        if (!bad_quote.empty()) {
            c.bad(start, bad_quote);
            continue;
        }
        if (row.size() <= std::max(sc, tc)) {
            c.bad(start, "missing column (" + std::to_string(row.size()) + " fields, header has " + std::to_string(header.size()) + ")");
            continue;
        }
        c.add(start, row[sc], row[tc]);
    }
}

}  // namespace

PairSet load_pairs(const std::string& file, const DataOptions& options) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error(ErrorCode::FileNotFound, file + ": data file not found");
    Collector c{file, options, {}};
    const std::string ext = lower_ext(file);
    if (ext == "jsonl" || ext == "json" || ext == "ndjson") load_jsonl(in, c);
    else if (ext == "csv") load_delimited(in, ',', c);
    else if (ext == "tsv" || ext == "txt" || ext == "tab") load_delimited(in, '\t', c);
    else throw Error(ErrorCode::InvalidArgument, file + ": unknown data format '." + ext + "' (expected .jsonl, .csv or .tsv)");
    if (c.out.pairs.empty()) {
        std::string why = c.out.bad_rows.empty() ? "" : " (first bad row " + c.out.bad_rows[0].where + ": " + c.out.bad_rows[0].reason + ")";
        throw Error(ErrorCode::CorruptFile, file + ": no usable pairs" + why);
    }
    return std::move(c.out);
}

// ------------------------------------------------------------------------------------------------
// Report

namespace {

LengthHistogram histogram(const std::vector<int64_t>& lengths) {
    LengthHistogram h;
    h.bucket_upper = {8, 16, 32, 64, 128, 256, 512, 1024, INT64_MAX};
    h.counts.assign(h.bucket_upper.size(), 0);
    double sum = 0;
    for (int64_t n : lengths) {
        sum += n;
        h.max_len = std::max(h.max_len, n);
        for (size_t b = 0; b < h.bucket_upper.size(); ++b)
            if (n <= h.bucket_upper[b]) {
                ++h.counts[b];
                break;
            }
    }
    h.mean_len = lengths.empty() ? 0 : sum / lengths.size();
    return h;
}

std::string histogram_text(const LengthHistogram& h) {
    std::ostringstream o;
    int64_t lo = 1;
    for (size_t b = 0; b < h.counts.size(); ++b) {
        if (h.counts[b]) {
            o << "  " << lo << "-" << (h.bucket_upper[b] == INT64_MAX ? std::string("inf") : std::to_string(h.bucket_upper[b])) << ": "
              << h.counts[b];
        }
        lo = h.bucket_upper[b] + 1;
    }
    return o.str();
}

}  // namespace

DataReport make_data_report(const std::vector<TokenizedPair>& tokenized, const std::vector<TextPair>& pairs, int64_t bad_rows,
                            int unk_id, int max_source_len, int max_target_len) {
    DataReport r;
    r.pairs = static_cast<int64_t>(tokenized.size());
    r.bad_rows = bad_rows;
    std::vector<int64_t> sl, tl;
    int64_t s_unk = 0, t_unk = 0, s_tok = 0, t_tok = 0;
    for (const auto& p : tokenized) {
        sl.push_back(p.full_source_len);
        tl.push_back(p.full_target_len);
        r.truncated_sources += p.full_source_len > max_source_len;
        r.truncated_targets += p.full_target_len > max_target_len;
        for (int id : p.source) s_unk += id == unk_id;
        for (int id : p.target) t_unk += id == unk_id;
        s_tok += static_cast<int64_t>(p.source.size());
        t_tok += static_cast<int64_t>(p.target.size());
    }
    r.source_lengths = histogram(sl);
    r.target_lengths = histogram(tl);
    r.source_unk_rate = s_tok ? static_cast<double>(s_unk) / s_tok : 0;
    r.target_unk_rate = t_tok ? static_cast<double>(t_unk) / t_tok : 0;
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& p : pairs) {
        if (!seen.insert({p.source, p.target}).second) ++r.duplicates;
        if (p.source == p.target) ++r.identical_pairs;
    }
    auto pct = [](double x) { return std::to_string(static_cast<int>(std::round(x * 1000)) / 10.0).substr(0, 4) + "%"; };
    if (r.source_unk_rate > 0.01)
        r.warnings.push_back("source <unk> rate " + pct(r.source_unk_rate) +
                             ": the vocabulary does not cover this text (e.g. an English T5 vocabulary on Japanese); consider mT5 or a from-scratch vocabulary");
    if (r.target_unk_rate > 0.01)
        r.warnings.push_back("target <unk> rate " + pct(r.target_unk_rate) + ": the model cannot learn to produce these characters");
    if (r.truncated_sources > r.pairs / 20)
        r.warnings.push_back(std::to_string(r.truncated_sources) + " sources exceed max_source_len " + std::to_string(max_source_len));
    if (r.truncated_targets > r.pairs / 20)
        r.warnings.push_back(std::to_string(r.truncated_targets) + " targets exceed max_target_len " + std::to_string(max_target_len));
    if (r.duplicates > r.pairs / 10) r.warnings.push_back(std::to_string(r.duplicates) + " duplicate pairs");
    return r;
}

std::string DataReport::to_text() const {
    std::ostringstream o;
    o << "data: " << pairs << " pairs";
    if (bad_rows) o << ", " << bad_rows << " bad rows skipped";
    o << ", " << duplicates << " duplicates, " << identical_pairs << " with source == target\n";
    o << "source tokens: mean " << static_cast<int>(source_lengths.mean_len + 0.5) << ", max " << source_lengths.max_len
      << ", truncated " << truncated_sources << ";" << histogram_text(source_lengths) << "\n";
    o << "target tokens: mean " << static_cast<int>(target_lengths.mean_len + 0.5) << ", max " << target_lengths.max_len
      << ", truncated " << truncated_targets << ";" << histogram_text(target_lengths) << "\n";
    o << "<unk> rate: source " << source_unk_rate * 100 << "%, target " << target_unk_rate * 100 << "%";
    for (const auto& w : warnings) o << "\nwarning: " << w;
    return o.str();
}

}  // namespace t5s
