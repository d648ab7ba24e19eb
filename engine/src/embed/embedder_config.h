#pragma once
// What a sentence-transformers folder asks for, read from its JSON files only (torch-free): the
// module pipeline (modules.json), the encoder's config.json, the pooling, Dense and Normalize
// modules. Anything this engine does not implement is rejected here with "unsupported: ..." naming
// the file, before a weight is read.
#include <filesystem>
#include <string>
#include <vector>

namespace t5s::embed_detail {

struct EncoderConfig {
    std::string architecture;  // "bert" or "xlm-roberta"
    int vocab_size = 0, hidden_size = 0, num_layers = 0, num_heads = 0, intermediate_size = 0;
    int max_position_embeddings = 0, type_vocab_size = 0;
    int pad_token_id = 0;
    // XLM-R numbers positions from pad_token_id + 1 (fairseq); BERT from 0.
    int position_offset = 0;
    double layer_norm_eps = 1e-12;
    std::filesystem::path file;  // the config.json read
};

struct DenseConfig {
    std::filesystem::path dir;
    int in_features = 0, out_features = 0;
    bool bias = true;
    bool tanh = false;  // else Identity
};

struct EmbedderSpec {
    std::filesystem::path transformer_dir;  // config.json, weights and tokenizer files
    EncoderConfig encoder;
    int max_seq_length = 0;      // 0: none given (the tokenizer's / position table's limit applies)
    bool do_lower_case = false;  // sentence_bert_config.json: lower-case texts before tokenizing
    std::string pooling;         // "mean", "cls" or "max"
    std::vector<DenseConfig> dense;
    bool normalize = false;
    std::vector<std::string> files;  // JSON files read
};

// Throws t5s::Error naming the file: FileNotFound (missing folder or file), CorruptFile (bad JSON
// or fields), Unsupported ("unsupported: <what> in <file>").
EmbedderSpec read_embedder_spec(const std::filesystem::path& dir);

}  // namespace t5s::embed_detail
