// XLM-R SentencePiece with fairseq's id layout, as transformers' slow XLMRobertaTokenizer.
#include "embed/embed_common.h"
#include "embed/embed_tokenizers.h"
#include "sentencepiece_model.h"
#include "t5s/error.h"
#include "t5s/tokenizer.h"

namespace t5s::embed_detail {
namespace {

// fairseq puts <s>, <pad>, </s>, <unk> first; SentencePiece ids move up by one (its <unk>=0 maps to 3).
constexpr int kBos = 0, kPad = 1, kEos = 2, kUnk = 3, kFairseqOffset = 1;

class XlmrTokenizer final : public EmbedTokenizer {
public:
    XlmrTokenizer(const std::filesystem::path& model, const std::filesystem::path& config_path) {
        kind_ = Kind::XlmrSentencePiece;
        load_sentencepiece(model, sp_);
        // XLM-R's model: <unk>=0, <s>=1, </s>=2. A T5 spiece.model (<pad>=0, </s>=1, <unk>=2) or
        // another layout would silently give wrong ids.
        if (sp_.GetPieceSize() < 4 || sp_.IdToPiece(0) != "<unk>" || sp_.IdToPiece(1) != "<s>" || sp_.IdToPiece(2) != "</s>") {
            throw Error(ErrorCode::Unsupported, model.string() +
                                                    ": SentencePiece model does not have XLM-R's layout "
                                                    "(expected <unk>=0, <s>=1, </s>=2)");
        }
        sp_size_ = sp_.GetPieceSize();
        mask_id_ = sp_size_ + kFairseqOffset;
        vocab_size_ = sp_size_ + kFairseqOffset + 1;
        start_id_ = kBos;
        end_id_ = kEos;
        pad_id_ = kPad;
        unk_id_ = kUnk;
        const TokenizerConfig cfg = read_tokenizer_config(config_path);
        model_max_length_ = cfg.model_max_length;
        specials_ = {{"<s>", kBos}, {"<pad>", kPad}, {"</s>", kEos}, {"<unk>", kUnk}, {"<mask>", mask_id_, true}};
    }

    std::vector<int> encode_plain(std::string_view text) const override {
        return encode_around_specials(text, specials_, [&](std::string_view chunk, std::vector<int>& ids) {
            std::vector<int> sp_ids;
            sp_.Encode(chunk, &sp_ids);
            for (int id : sp_ids) ids.push_back(id == sp_.unk_id() ? kUnk : id + kFairseqOffset);
        });
    }

    std::string token(int id) const override {
        static const char* const kFirst[] = {"<s>", "<pad>", "</s>", "<unk>"};
        if (id >= 0 && id < 4) return kFirst[id];
        if (id == mask_id_) return "<mask>";
        if (id > kUnk && id < mask_id_) return sp_.IdToPiece(id - kFairseqOffset);
        return "";
    }

private:
    sentencepiece::SentencePieceProcessor sp_;
    std::vector<SpecialToken> specials_;
    int sp_size_ = 0, mask_id_ = 0;
};

}  // namespace

std::unique_ptr<EmbedTokenizer> make_xlmr_tokenizer(const std::filesystem::path& sentencepiece_model,
                                                    const std::filesystem::path& tokenizer_config) {
    return std::make_unique<XlmrTokenizer>(sentencepiece_model, tokenizer_config);
}

}  // namespace t5s::embed_detail
