// XLM-R SentencePiece with fairseq's id layout, as transformers' slow XLMRobertaTokenizer
// (sentencepiece.bpe.model) or its fast one (tokenizer.json, whose vocabulary has the final ids).
#include <memory>

#include "t5s/error.h"
#include "t5s/tokenizer.h"
#include "text/embed_common.h"
#include "text/embed_tokenizers.h"
#include "text/json_unigram.h"
#include "text/sentencepiece_model.h"

namespace t5s::embed_detail {
namespace {

// fairseq puts <s>, <pad>, </s>, <unk> first; SentencePiece ids move up by one (its <unk>=0 maps to 3).
constexpr int kBos = 0, kPad = 1, kEos = 2, kUnk = 3, kFairseqOffset = 1;

class XlmrTokenizer final : public EmbedTokenizer {
public:
    // sentencepiece.bpe.model: <unk>=0, <s>=1, </s>=2, ids shifted by one, <mask> after the last.
    XlmrTokenizer(const std::filesystem::path& model, const std::filesystem::path& config_path) {
        load_sentencepiece(model, sp_);
        // A T5 spiece.model (<pad>=0, </s>=1, <unk>=2) or another layout would silently give wrong ids.
        if (sp_.GetPieceSize() < 4 || sp_.IdToPiece(0) != "<unk>" || sp_.IdToPiece(1) != "<s>" || sp_.IdToPiece(2) != "</s>") {
            throw Error(ErrorCode::Unsupported, model.string() +
                                                    ": SentencePiece model does not have XLM-R's layout "
                                                    "(expected <unk>=0, <s>=1, </s>=2)");
        }
        offset_ = kFairseqOffset;
        init(sp_.GetPieceSize() + kFairseqOffset, config_path);
        specials_ = {{"<s>", kBos}, {"<pad>", kPad}, {"</s>", kEos}, {"<unk>", kUnk}, {"<mask>", mask_id_, true}};
    }

    // tokenizer.json: <s>, <pad>, </s>, <unk> first, <mask> last; the ids are SentencePiece's own.
    XlmrTokenizer(const TokenizerJson& tj, const std::filesystem::path& config_path) {
        const auto& p = tj.pieces;
        if (p.size() < 5 || p[0].first != "<s>" || p[1].first != "<pad>" || p[2].first != "</s>" || p[3].first != "<unk>" ||
            tj.unk_id != kUnk || tj.added_id("<mask>") != static_cast<int>(p.size()) - 1) {
            throw Error(ErrorCode::Unsupported, tj.file +
                                                    ": Unigram vocabulary does not have XLM-R's layout "
                                                    "(expected <s>, <pad>, </s>, <unk> first and <mask> last)");
        }
        json_ = std::make_unique<JsonUnigram>(tj, p.size());
        load_serialized_sentencepiece(json_->take_with_prefix_model(), tj.file, sp_);
        offset_ = 0;
        init(static_cast<int>(p.size()) - 1, config_path);
        for (const auto& a : tj.added_tokens) specials_.push_back({a.content, a.id, a.lstrip, a.rstrip});
    }

    std::vector<int> encode_plain(std::string_view text) const override {
        return encode_around_specials(text, specials_, [&](std::string_view chunk, std::vector<int>& ids) {
            std::vector<int> sp_ids;
            if (json_) json_->encode(sp_, chunk, chunk.data() == text.data(), sp_ids);
            else sp_.Encode(chunk, &sp_ids);
            for (int id : sp_ids) ids.push_back(id == sp_.unk_id() ? kUnk : id + offset_);
        });
    }

    std::string token(int id) const override {
        static const char* const kFirst[] = {"<s>", "<pad>", "</s>", "<unk>"};
        if (id >= 0 && id < 4) return kFirst[id];
        if (id == mask_id_) return "<mask>";
        if (id > kUnk && id < mask_id_) return sp_.IdToPiece(id - offset_);
        return "";
    }

private:
    void init(int mask_id, const std::filesystem::path& config_path) {
        kind_ = Kind::XlmrSentencePiece;
        mask_id_ = mask_id;
        vocab_size_ = mask_id + 1;
        start_id_ = kBos;
        end_id_ = kEos;
        pad_id_ = kPad;
        unk_id_ = kUnk;
        model_max_length_ = read_tokenizer_config(config_path).model_max_length;
    }

    sentencepiece::SentencePieceProcessor sp_;
    std::unique_ptr<JsonUnigram> json_;  // tokenizer.json: its normalizer and Metaspace rule
    std::vector<SpecialToken> specials_;
    int offset_ = kFairseqOffset, mask_id_ = 0;
};

}  // namespace

std::unique_ptr<EmbedTokenizer> make_xlmr_tokenizer(const std::filesystem::path& sentencepiece_model,
                                                    const std::filesystem::path& tokenizer_config) {
    return std::make_unique<XlmrTokenizer>(sentencepiece_model, tokenizer_config);
}

std::unique_ptr<EmbedTokenizer> make_xlmr_tokenizer(const TokenizerJson& tj, const std::filesystem::path& tokenizer_config) {
    return std::make_unique<XlmrTokenizer>(tj, tokenizer_config);
}

}  // namespace t5s::embed_detail
