// t5s::Tokenizer from tokenizer.json, as transformers' T5TokenizerFast runs it: the Unigram model
// goes to the SentencePiece library as a ModelProto (tokenizer_json_spiece.cpp); what the
// `tokenizers` pipeline does around it (added tokens with their own strip flags, the Metaspace
// prepend scheme, </s> from the post-processor) is done here.
#include <sentencepiece_processor.h>

#include "t5s/error.h"
#include "text/tokenizer_impl.h"

namespace t5s {
namespace {

namespace fs = std::filesystem;
using TJ = TokenizerJson;

// How many pieces come before the trailing <extra_id_N> (counting down to <extra_id_0> last).
size_t pieces_before_sentinels(const TJ& tj) {
    size_t n = 0;
    while (n < tj.pieces.size() && tj.pieces[tj.pieces.size() - 1 - n].first == "<extra_id_" + std::to_string(n) + ">") ++n;
    return tj.pieces.size() - n;
}

void check_t5_layout(const TJ& tj) {
    if (tj.model != TJ::Model::Unigram) {
        throw Error(ErrorCode::Unsupported,
                    tj.file + ": a WordPiece tokenizer.json is not a T5 tokenizer (T5 and mT5 use Unigram)");
    }
    for (const auto& a : tj.added_tokens) {
        if (a.id >= static_cast<int>(tj.pieces.size())) {
            throw Error(ErrorCode::Unsupported, tj.file + ": added token '" + a.content + "' (id " + std::to_string(a.id) +
                                                    ") lies beyond the vocabulary of " + std::to_string(tj.pieces.size()));
        }
    }
    const bool t5_template = tj.prefix_tokens.empty() && tj.suffix_tokens == std::vector<std::string>{"</s>"};
    if (!t5_template) throw Error(ErrorCode::Unsupported, tj.file + ": a post_processor other than T5's \"$A </s>\"");
}

}  // namespace

Tokenizer Tokenizer::load_tokenizer_json(const fs::path& tokenizer_json) {
    const TJ tj = read_tokenizer_json(tokenizer_json);
    check_t5_layout(tj);
    const size_t sp_size = pieces_before_sentinels(tj);
    const int extra = static_cast<int>(tj.pieces.size() - sp_size);
    auto json = std::make_unique<JsonUnigram>(tj, sp_size);
    Tokenizer t = from_serialized(json->take_with_prefix_model(), tokenizer_json.string(), extra);
    Impl& impl = *t.impl_;
    impl.path = tokenizer_json;
    impl.fast = true;
    impl.json = std::move(json);
    for (const auto& a : tj.added_tokens) impl.added.push_back({a.content, a.id, a.lstrip, a.rstrip});
    return t;
}

std::vector<int> encode_fast(const Tokenizer::Impl& impl, std::string_view text) {
    std::vector<int> ids;
    for (const embed_detail::TextChunk& c : embed_detail::split_special_tokens(text, impl.added)) {
        if (c.special_id >= 0) {
            ids.push_back(c.special_id);
            continue;
        }
        impl.json->encode(impl.sp, c.text, c.text.data() == text.data(), ids);
    }
    return ids;
}

fs::path Tokenizer::folder_file(const fs::path& model_dir) {
    std::error_code ec;
    if (fs::exists(model_dir / "spiece.model", ec)) return model_dir / "spiece.model";
    if (fs::exists(model_dir / "tokenizer.json", ec)) return model_dir / "tokenizer.json";
    return {};
}

Tokenizer Tokenizer::load_folder(const fs::path& model_dir) {
    const fs::path file = folder_file(model_dir);
    if (file.empty())
        throw Error(ErrorCode::FileNotFound, model_dir.string() + ": no spiece.model or tokenizer.json in the model folder");
    return file.filename() == "spiece.model" ? load(file) : load_tokenizer_json(file);
}

}  // namespace t5s
