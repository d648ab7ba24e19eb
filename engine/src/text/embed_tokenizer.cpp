#include "t5s/embed_tokenizer.h"

#include <algorithm>

#include "t5s/error.h"
#include "t5s/settings_fields.h"
#include "text/embed_tokenizers.h"

namespace t5s {

std::filesystem::path EmbedTokenizer::folder_file(const std::filesystem::path& model_dir) {
    std::error_code ec;
    for (const char* name : {"sentencepiece.bpe.model", "vocab.txt", "tokenizer.json"}) {
        if (std::filesystem::exists(model_dir / name, ec)) return model_dir / name;
    }
    return {};
}

std::unique_ptr<EmbedTokenizer> EmbedTokenizer::load(const std::filesystem::path& model_dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(model_dir, ec)) {
        throw Error(ErrorCode::FileNotFound, model_dir.string() + ": tokenizer folder not found");
    }
    const auto config = model_dir / "tokenizer_config.json";
    const auto file = folder_file(model_dir);
    const auto name = file.filename();
    if (name == "sentencepiece.bpe.model") return load_xlmr(file, config);
    if (name == "vocab.txt") return load_wordpiece(file, config);
    if (name == "tokenizer.json") return embed_detail::make_tokenizer_from_json(file, config);
    throw Error(ErrorCode::FileNotFound,
                model_dir.string() + ": no vocab.txt, sentencepiece.bpe.model or tokenizer.json (unsupported tokenizer)");
}

std::unique_ptr<EmbedTokenizer> EmbedTokenizer::load_wordpiece(const std::filesystem::path& vocab_txt,
                                                               const std::filesystem::path& tokenizer_config) {
    return embed_detail::make_wordpiece_tokenizer(embed_detail::wordpiece_spec_from_files(vocab_txt, tokenizer_config));
}

std::unique_ptr<EmbedTokenizer> EmbedTokenizer::load_xlmr(const std::filesystem::path& sentencepiece_model,
                                                          const std::filesystem::path& tokenizer_config) {
    return embed_detail::make_xlmr_tokenizer(sentencepiece_model, tokenizer_config);
}

std::vector<int> EmbedTokenizer::encode(std::string_view text, int max_length) const {
    if (max_length == 0) max_length = model_max_length_;
    if (max_length == 1 || max_length < kNoTruncation) {
        constexpr FieldRange kLengths = at_least(2, ">= 2, or 0 (the model's), or -1 (no truncation)");
        throw Error(ErrorCode::InvalidArgument, range_message("max_length", kLengths, max_length));
    }
    std::vector<int> body = encode_plain(text);
    if (max_length >= 2 && body.size() + 2 > static_cast<size_t>(max_length)) body.resize(max_length - 2);
    std::vector<int> ids;
    ids.reserve(body.size() + 2);
    ids.push_back(start_id_);
    ids.insert(ids.end(), body.begin(), body.end());
    ids.push_back(end_id_);
    return ids;
}

EmbedBatch EmbedTokenizer::encode_batch(const std::vector<std::string>& texts, int max_length) const {
    EmbedBatch batch;
    for (const std::string& t : texts) batch.input_ids.push_back(encode(t, max_length));
    for (const auto& row : batch.input_ids) batch.length = std::max(batch.length, static_cast<int>(row.size()));
    for (auto& row : batch.input_ids) {
        std::vector<int> mask(row.size(), 1);
        mask.resize(batch.length, 0);
        row.resize(batch.length, pad_id_);
        batch.attention_mask.push_back(std::move(mask));
    }
    return batch;
}

}  // namespace t5s
