#pragma once
// Sentence-embedding models as sentence-transformers saves them (modules.json,
// sentence_bert_config.json, 1_Pooling/config.json, optional Dense and Normalize modules), run by the
// engine. Used to score how well a paraphrase keeps its source's meaning (cosine similarity).
// Only plain C++ types here; LibTorch stays inside the engine library.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "t5s/model.h"

namespace t5s {

struct EmbedderInfo {
    std::filesystem::path dir;
    std::string architecture;        // "bert" or "xlm-roberta"
    std::string tokenizer;           // "wordpiece" or "sentencepiece-xlmr"
    std::string pooling;             // "mean", "cls" or "max"
    bool normalize = false;          // a Normalize module ends the pipeline
    int dense_layers = 0;            // Dense modules after pooling
    int dim = 0;                     // embedding size (after Dense)
    int max_seq_length = 0;          // tokens per text, special tokens included; longer is truncated
    std::string precision;           // precision it runs in
    std::string device;              // "cpu" or "cuda:0"
    std::vector<std::string> files;  // files read
};

struct EmbedOptions {
    std::string prefix;   // prepended to every text, e.g. "query: " for multilingual-e5
    int batch_size = 32;  // texts encoded together (padded)
};

class Embedder {
public:
    // Throws t5s::Error naming the file and the problem ("unsupported: ..." for architectures,
    // poolings or activations it does not implement: never wrong numbers).
    static std::unique_ptr<Embedder> load(const std::filesystem::path& dir, const RuntimeOptions& options = {});
    virtual ~Embedder() = default;

    virtual const EmbedderInfo& info() const = 0;
    // One row of info().dim floats per text, as SentenceTransformer.encode returns them.
    virtual std::vector<std::vector<float>> embed(const std::vector<std::string>& texts,
                                                  const EmbedOptions& options = {}) const = 0;
    // The token ids embed() feeds the encoder for each text (prefix added, lower-cased when
    // sentence_bert_config.json says so, start/end tokens included, cut at max_seq_length).
    virtual std::vector<std::vector<int>> token_ids(const std::vector<std::string>& texts,
                                                    const EmbedOptions& options = {}) const = 0;
};

// Cosine similarity of two embeddings of the same size, in [-1, 1] (0 when either is all zeros).
double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace t5s
