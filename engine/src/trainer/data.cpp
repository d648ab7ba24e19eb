// Training pairs from JSONL / CSV / TSV files, with file:line errors, and the pre-training data report.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_set>

#include "t5s/error.h"
#include "t5s/input_reader.h"
#include "t5s/tokenizer.h"
#include "t5s/trainer.h"
#include "trainer/data_internal.h"

namespace t5s {
// The rows come from the one input reader (t5s/input_reader.h): its formats, column rule, line rule and bad rows.
PairSet load_pairs(const std::string& file, const DataOptions& options) {
    const InputFields fields = pair_fields({options.source_field, options.target_field, options.no_header});
    PairSet out;
    InputReader reader(file, fields, options.on_bad_row, [&](const BadRow& bad) { out.bad_rows.push_back(bad); });
    InputRecord row;
    while (reader.next(&row)) out.pairs.push_back({options.source_prefix + row.texts[0], std::move(row.texts[1]), row.where});
    if (out.pairs.empty()) {
        std::string why =
            out.bad_rows.empty() ? "" : " (first bad row " + out.bad_rows[0].where + ": " + out.bad_rows[0].reason + ")";
        throw Error(ErrorCode::CorruptFile, file + ": no usable pairs" + why);
    }
    return out;
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
            o << "  " << lo << "-" << (h.bucket_upper[b] == INT64_MAX ? std::string("inf") : std::to_string(h.bucket_upper[b]))
              << ": " << h.counts[b];
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
                             ": the vocabulary does not cover this text (e.g. an English T5 vocabulary on Japanese); consider "
                             "mT5 or a from-scratch vocabulary");
    if (r.target_unk_rate > 0.01)
        r.warnings.push_back("target <unk> rate " + pct(r.target_unk_rate) +
                             ": the model cannot learn to produce these characters");
    if (r.truncated_sources > r.pairs / 20)
        r.warnings.push_back(std::to_string(r.truncated_sources) + " sources exceed max_source_len " +
                             std::to_string(max_source_len));
    if (r.truncated_targets > r.pairs / 20)
        r.warnings.push_back(std::to_string(r.truncated_targets) + " targets exceed max_target_len " +
                             std::to_string(max_target_len));
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
