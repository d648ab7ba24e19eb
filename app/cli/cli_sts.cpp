// t5studio sts (--model DIR [--prefix P] | --embedder DIR | --baseline chrf) --data FILE [--limit N] [--scores FILE] [--json]:
// how well a scorer ranks labelled sentence pairs (JSTS's format: JSONL rows with "sentence1",
// "sentence2" and a numeric "label"), as Spearman and Pearson correlation of its scores with the labels.
// Scorers: the T5 model's symmetric back_score (mean log-prob per token of each sentence given the
// other, both directions averaged), an embedder's cosine similarity, or the character-overlap
// baseline (chrF, both directions averaged). --scores FILE writes each pair with its score (JSONL), to
// choose filter thresholds from.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/quality_flags.h"
#include "common/args.h"
#include "common/json_output.h"
#include "common/runtime_flags.h"
#include "t5s/atomic_file.h"
#include "t5s/candidate_scores.h"
#include "t5s/error.h"
#include "t5s/quality.h"
#include "t5s/sts.h"

namespace t5s::cli {
namespace {

struct LabelledPairs {
    std::vector<std::string> first, second;
    std::vector<double> labels;
};

// The one input reader's rows (t5s::read_sts_pairs): JSONL, CSV or TSV; bad rows fail or are skipped.
LabelledPairs read_pairs(const std::string& path, int64_t limit, bool skip_bad_rows, const ColumnChoice& columns) {
    auto report = [](const BadRow& b) { std::cerr << "t5studio sts: skipped bad row " << b.where << ": " << b.reason << "\n"; };
    LabelledPairs p;
    for (auto& pair : read_sts_pairs(path, skip_bad_rows ? BadRowPolicy::Skip : BadRowPolicy::Fail, report, limit, columns)) {
        p.first.push_back(std::move(pair.sentence1));
        p.second.push_back(std::move(pair.sentence2));
        p.labels.push_back(pair.label);
    }
    return p;
}

// Symmetric back_score: both directions in one batched pass each way.
std::vector<double> back_score_of_pairs(const Model& model, const LabelledPairs& p, const std::string& prefix, int batch_size) {
    std::vector<std::string> given(p.second), scored(p.first);
    given.insert(given.end(), p.first.begin(), p.first.end());
    scored.insert(scored.end(), p.second.begin(), p.second.end());
    const std::vector<double> both = back_scores(model, given, scored, prefix, batch_size);
    std::vector<double> out(p.labels.size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = (both[i] + both[i + out.size()]) / 2.0;
    return out;
}

std::vector<double> similarity_of_pairs(const Embedder& embedder, const LabelledPairs& p) {
    const auto a = embedder.embed(p.first), b = embedder.embed(p.second);
    std::vector<double> out;
    for (size_t i = 0; i < a.size(); ++i) out.push_back(cosine_similarity(a[i], b[i]));
    return out;
}

std::vector<double> chrf_of_pairs(const LabelledPairs& p) {
    std::vector<double> out;
    for (size_t i = 0; i < p.labels.size(); ++i)
        out.push_back((chrf(p.first[i], p.second[i]) + chrf(p.second[i], p.first[i])) / 2.0);
    return out;
}

}  // namespace

const RuntimeFlags kStsRuntime{Device::Auto};

const CommandSpec kStsSpec = {
    "sts",
    "correlation of a scorer with labelled sentence pairs (JSTS format)",
    {
        {"data", "FILE", "pairs: \"sentence1\", \"sentence2\", numeric \"label\" (JSONL, or CSV/TSV with those columns)"},
        {"source-field", "NAME",
         "the column or key of the first sentence (default: the first of text, sentence, sentence1, source, input, src, in any "
         "case)"},
        {"text-field", "NAME", "the same as --source-field"},
        {"target-field", "NAME",
         "the column or key of the second sentence (default: the first of target, output, paraphrase, sentence2, tgt)"},
        {"no-header", "", "a CSV/TSV without a header row: column 1 and 2 the sentences, column 3 the label"},
        {"model", "DIR", "score by the T5 model's symmetric back_score", kModel},
        {"prefix", "P", "with --model: task prefix, e.g. \"paraphrase: \""},
        {"embedder", "DIR", "score by the cosine similarity of a sentence-embedding model (sentence-transformers folder)",
         kModel},
        {"baseline", "NAME", "chrf: character overlap, chrF averaged over both directions"},
        {"limit", "N", "only the first N pairs (default: all)"},
        {"skip-bad-rows", "", "skip bad rows (each named file:line on stderr) instead of failing at the first"},
        {"scores", "FILE", "also write each pair with its score (JSONL)"},
        {"batch-size", "B", "pairs scored together (default 32)"},
        kStsRuntime.flags(),
        {"json", "", "print {\"data\", \"scorer\", \"pairs\", \"spearman\", \"pearson\"}"},
    }};

int run_sts(const Argv& argv) {
    const Args args(argv, kStsSpec);
    const int scorers = int(args.has("model")) + int(args.has("embedder")) + int(args.has("baseline"));
    if (scorers != 1) throw UsageError("give one scorer: --model DIR, --embedder DIR or --baseline chrf");
    if (args.has("baseline") && args.get("baseline") != "chrf")
        throw UsageError("--baseline must be chrf, got '" + args.get("baseline") + "'");
    if (args.has("prefix") && !args.has("model")) throw UsageError("--prefix goes with --model");
    const std::string data = args.require("data");
    if (args.has("source-field") && args.has("text-field")) throw UsageError("give --source-field or --text-field, not both");
    const ColumnChoice columns{args.get("source-field", args.get("text-field")), args.get("target-field"), args.has("no-header")};
    const LabelledPairs pairs = read_pairs(data, args.get_int64("limit", 0, 0), args.has("skip-bad-rows"), columns);
    const RuntimeOptions runtime = kStsRuntime.read(args);

    std::string scorer;
    std::vector<double> scores;
    if (args.has("model")) {
        scorer = "back_score";
        auto model = Model::load(args.get("model"), runtime);
        scores = back_score_of_pairs(*model, pairs, args.get("prefix"), args.get_int("batch-size", 32, 1, 4096));
    } else if (args.has("embedder")) {
        scorer = "similarity";
        scores = similarity_of_pairs(*embedder_from_flags(args, runtime), pairs);
    } else {
        scorer = "chrf";
        scores = chrf_of_pairs(pairs);
    }
    if (args.has("scores")) {
        std::string lines;
        for (size_t i = 0; i < scores.size(); ++i) {
            const nlohmann::json row = {
                {"sentence1", pairs.first[i]}, {"sentence2", pairs.second[i]}, {"label", pairs.labels[i]}, {scorer, scores[i]}};
            lines += row.dump() + "\n";
        }
        write_file_atomic(args.get("scores"), lines);
    }
    const double spearman = spearman_correlation(scores, pairs.labels);
    const double pearson_r = pearson_correlation(scores, pairs.labels);
    if (args.has("json")) {
        print_json(
            {{"data", data}, {"scorer", scorer}, {"pairs", pairs.labels.size()}, {"spearman", spearman}, {"pearson", pearson_r}});
    } else {
        std::cout << scorer << " on " << pairs.labels.size() << " pairs: spearman " << spearman << ", pearson " << pearson_r
                  << "\n";
    }
    return 0;
}

}  // namespace t5s::cli
