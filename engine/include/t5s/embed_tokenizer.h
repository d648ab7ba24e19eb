#pragma once
// Tokenizers of sentence-embedding models (torch-free), with ids identical to Hugging Face's slow
// tokenizers:
//  - BERT WordPiece (vocab.txt + tokenizer_config.json): BertTokenizer's BasicTokenizer (text
//    cleaning, CJK character splitting, NFC, lower-casing and NFD accent stripping as configured,
//    punctuation splitting, never_split) + greedy longest-match WordPiece; [CLS] ... [SEP].
//  - XLM-R SentencePiece (sentencepiece.bpe.model): XLMRobertaTokenizer's fairseq id mapping
//    (<s>=0, <pad>=1, </s>=2, <unk>=3, SentencePiece id + 1, <mask> last); <s> ... </s>.
//  - Either from tokenizer.json alone (engine/src/text/tokenizer_json.h), with the fast tokenizers' ids.
// Special tokens written in the text ([CLS], <mask>, ...) are recognised as HF does.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace t5s {

// A padded batch: every row has `length` ids; padding is on the right, mask 0 there.
struct EmbedBatch {
    std::vector<std::vector<int>> input_ids;
    std::vector<std::vector<int>> attention_mask;
    int length = 0;
};

class EmbedTokenizer {
public:
    enum class Kind { WordPiece, XlmrSentencePiece };

    // Picks by the files in `model_dir`: vocab.txt (WordPiece) or sentencepiece.bpe.model (XLM-R),
    // else tokenizer.json (either, with the ids of transformers' fast tokenizer).
    // Throws t5s::Error naming the folder or file when neither is there or the file is bad.
    static std::unique_ptr<EmbedTokenizer> load(const std::filesystem::path& model_dir);
    // The file load() reads from `model_dir` ("" when it has none of them).
    static std::filesystem::path folder_file(const std::filesystem::path& model_dir);
    // `tokenizer_config` may be empty or name a missing file: BertTokenizer's defaults then apply
    // (do_lower_case true, tokenize_chinese_chars true, strip_accents following do_lower_case).
    static std::unique_ptr<EmbedTokenizer> load_wordpiece(const std::filesystem::path& vocab_txt,
                                                          const std::filesystem::path& tokenizer_config = {});
    static std::unique_ptr<EmbedTokenizer> load_xlmr(const std::filesystem::path& sentencepiece_model,
                                                     const std::filesystem::path& tokenizer_config = {});
    virtual ~EmbedTokenizer() = default;

    // Ids of `text` without the start/end tokens. Throws InvalidArgument on invalid UTF-8.
    virtual std::vector<int> encode_plain(std::string_view text) const = 0;
    // Vocabulary entry of `id` ("" when out of range).
    virtual std::string token(int id) const = 0;

    // start + ids + end, cut to `max_length` tokens in all (the end token kept), like HF's
    // truncation=True. max_length 0 = model_max_length (none when the config gives none);
    // kNoTruncation = never cut. Throws InvalidArgument for 1.
    static constexpr int kNoTruncation = -1;
    std::vector<int> encode(std::string_view text, int max_length = 0) const;
    // Rows padded to the longest row with pad_id().
    EmbedBatch encode_batch(const std::vector<std::string>& texts, int max_length = 0) const;

    Kind kind() const { return kind_; }
    int start_id() const { return start_id_; }  // [CLS] / <s>
    int end_id() const { return end_id_; }      // [SEP] / </s>
    int pad_id() const { return pad_id_; }
    int unk_id() const { return unk_id_; }
    int vocab_size() const { return vocab_size_; }
    int model_max_length() const { return model_max_length_; }  // 0 = unlimited

protected:
    Kind kind_ = Kind::WordPiece;
    int start_id_ = 0, end_id_ = 0, pad_id_ = 0, unk_id_ = 0, vocab_size_ = 0, model_max_length_ = 0;
};

}  // namespace t5s
