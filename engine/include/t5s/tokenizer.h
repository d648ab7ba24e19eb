#pragma once
// T5 tokenizer: the SentencePiece library plus the behaviour of transformers' slow T5Tokenizer
// (legacy=True): </s> appended, <extra_id_N> sentinels above the SentencePiece vocabulary
// (<extra_id_0> = sp_size + 99), special tokens written in the text recognised, byte fallback
// where the model has it.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace t5s {

class Tokenizer {
public:
    // `spiece_model` is the path of a spiece.model file. Throws t5s::Error on a missing/corrupt file.
    // The model is validated before SentencePiece sees it (engine/src/text/spiece_validate.h).
    static Tokenizer load(const std::filesystem::path& spiece_model, int extra_ids = 100);
    // The same from the bytes of a spiece.model; `name` is what errors and path() report.
    static Tokenizer from_serialized(std::string_view model, const std::string& name, int extra_ids = 100);
    // A tokenizer.json (the `tokenizers` format) of a T5 / mT5 model, with the ids of transformers'
    // fast T5TokenizerFast: Unigram + Precompiled + Metaspace, its added tokens, </s> always
    // appended. The <extra_id_N> at the end of its vocabulary are our sentinels. Throws t5s::Error
    // naming the file and any type it does not support.
    static Tokenizer load_tokenizer_json(const std::filesystem::path& tokenizer_json);
    // A model folder's tokenizer: spiece.model when there, else tokenizer.json. Throws
    // FileNotFound naming the folder when it has neither.
    static Tokenizer load_folder(const std::filesystem::path& model_dir);
    // The file load_folder reads, or "" when the folder has neither.
    static std::filesystem::path folder_file(const std::filesystem::path& model_dir);
    Tokenizer();
    ~Tokenizer();
    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;

    // Throws t5s::Error(InvalidArgument) on invalid UTF-8.
    std::vector<int> encode(std::string_view text, bool add_eos = true) const;
    std::vector<std::string> tokens(std::string_view text, bool add_eos = true) const;
    std::string decode(const std::vector<int>& ids, bool skip_special_tokens = true) const;
    std::string id_to_token(int id) const;

    int sp_size() const;     // pieces in the SentencePiece model
    int vocab_size() const;  // sp_size + extra ids
    int extra_ids() const;
    bool byte_fallback() const;
    bool is_special(int id) const;  // pad, eos, unk, sentinels
    int pad_id() const { return 0; }
    int eos_id() const { return 1; }
    int unk_id() const { return 2; }
    const std::filesystem::path& path() const;

private:
    std::string run_to_string(const std::vector<int>& ids) const;

public:
    struct Impl;  // engine/src/text/tokenizer_impl.h

private:
    std::unique_ptr<Impl> impl_;
};

// Throws t5s::Error(InvalidArgument) naming `what` and the byte offset if `text` is not UTF-8.
void require_valid_utf8(std::string_view text, const std::string& what);

}  // namespace t5s
