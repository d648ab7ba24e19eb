// A SentencePiece vocabulary for training from scratch, in T5's id layout.
#include <sentencepiece_trainer.h>

#include <filesystem>
#include <fstream>

#include "t5s/error.h"
#include "t5s/trainer.h"

namespace t5s {

void train_sentencepiece(const std::vector<std::string>& texts, const std::string& model_prefix, int vocab_size, int threads) {
    if (texts.empty()) throw Error(ErrorCode::InvalidArgument, "no text to train a vocabulary on");
    const std::string corpus = model_prefix + ".corpus.txt";
    {
        std::ofstream out(corpus, std::ios::binary);
        for (const auto& t : texts) {
            std::string line = t;
            for (char& c : line)
                if (c == '\n' || c == '\r') c = ' ';
            out << line << "\n";
        }
        if (!out) throw Error(ErrorCode::Internal, corpus + ": cannot write the vocabulary corpus");
    }
    const std::string args = "--input=" + corpus + " --model_prefix=" + model_prefix +
                             " --vocab_size=" + std::to_string(vocab_size) +
                             " --model_type=unigram --character_coverage=0.9995 --byte_fallback=true"
                             " --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --pad_piece=<pad> --eos_piece=</s> --unk_piece=<unk>"
                             " --normalization_rule_name=nmt_nfkc --split_digits=true --input_sentence_size=2000000"
                             " --shuffle_input_sentence=true --hard_vocab_limit=false --minloglevel=2 --num_threads=" +
                             std::to_string(std::max(1, threads));
    const auto status = sentencepiece::SentencePieceTrainer::Train(args);
    std::error_code ec;
    std::filesystem::remove(corpus, ec);
    if (!status.ok()) throw Error(ErrorCode::Internal, "SentencePiece training failed: " + status.ToString());
    std::filesystem::remove(model_prefix + ".vocab", ec);
}

}  // namespace t5s
