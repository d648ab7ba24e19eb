// t5studio embed --embedder DIR --text T [--text T ...] [--json] [--prefix P] [--batch-size B]
//                [--dtype D] [--device D] [--threads N]
// Sentence embeddings from a sentence-transformers folder, as SentenceTransformer.encode gives them.
#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "common/args.h"
#include "common/json_output.h"
#include "common/runtime_flags.h"
#include "t5s/embedder.h"

namespace t5s::cli {

namespace {

nlohmann::json to_json(const EmbedderInfo& info) {
    return {{"dir", info.dir.string()},
            {"architecture", info.architecture},
            {"tokenizer", info.tokenizer},
            {"pooling", info.pooling},
            {"dense_layers", info.dense_layers},
            {"normalize", info.normalize},
            {"dim", info.dim},
            {"max_seq_length", info.max_seq_length},
            {"precision", info.precision},
            {"device", info.device},
            {"files", info.files}};
}

}  // namespace

const RuntimeFlags kEmbedRuntime{Device::Cpu};

const CommandSpec kEmbedSpec = {
    "embed",
    "sentence embeddings from a sentence-transformers folder, as SentenceTransformer.encode",
    {
        {"embedder", "DIR", "sentence-transformers folder (modules.json; BERT or XLM-R encoder, pooling, Dense, Normalize)",
         kModel},
        {"text", "T", "a text to embed", kRepeatable},
        {"prefix", "P", "prepended to every text, e.g. \"query: \" for multilingual-e5"},
        {"batch-size", "B", "texts encoded together, padded (default 32)"},
        kEmbedRuntime.flags(),
        {"json", "", "print {\"dim\": D, \"embeddings\": [[...]], \"embedder\": {...}} on stdout"},
    }};

int run_embed(const Argv& argv) {
    Args args(argv, kEmbedSpec);
    const std::string dir = args.require("embedder");
    const auto& texts = args.all("text");
    if (texts.empty()) throw UsageError("give at least one --text");
    EmbedOptions options;
    options.prefix = args.get("prefix");
    options.batch_size = args.get_int("batch-size", options.batch_size, 1, 4096);
    auto embedder = Embedder::load(dir, kEmbedRuntime.read(args));
    const auto rows = embedder->embed(texts, options);
    if (args.has("json")) {
        print_json({{"dim", embedder->info().dim}, {"embeddings", rows}, {"embedder", to_json(embedder->info())}});
        return 0;
    }
    std::cout << std::setprecision(7);
    for (const auto& row : rows) {
        for (size_t j = 0; j < row.size(); ++j) std::cout << (j ? " " : "") << row[j];
        std::cout << "\n";
    }
    return 0;
}

}  // namespace t5s::cli
