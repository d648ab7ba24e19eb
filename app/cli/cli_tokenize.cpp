// t5studio tokenize --model DIR --text T [--text T ...] [--json]
// Needs only spiece.model or tokenizer.json (and config.json when present, to check the vocabulary fits).
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "common/args.h"
#include "common/json_output.h"
#include "t5s/error.h"

namespace t5s::cli {

const CommandSpec kTokenizeSpec = {
    "tokenize",
    "token ids and pieces of texts by the model's SentencePiece tokenizer",
    {
        {"model", "DIR",
         "model folder; only spiece.model or tokenizer.json is needed (config.json, when present, must fit its vocabulary)",
         kModel},
        {"text", "T", "a text to tokenize", kRepeatable},
        {"no-eos", "", "leave out the final </s>"},
        {"json", "", "print {\"ids\": [[...]], \"tokens\": [[...]]} on stdout"},
    }};

int run_tokenize(const Argv& argv) {
    Args args(argv, kTokenizeSpec);
    const std::filesystem::path dir = args.require("model");
    if (args.all("text").empty()) throw UsageError("give at least one --text");
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw Error(ErrorCode::FileNotFound, dir.string() + ": model directory not found");
    Tokenizer tok = Tokenizer::load_folder(dir);  // spiece.model, else tokenizer.json
    if (std::filesystem::exists(dir / "config.json")) {
        ModelConfig c = load_model_config(dir / "config.json");
        if (tok.vocab_size() > c.vocab_size) {
            throw Error(ErrorCode::CorruptFile, tok.path().string() + ": tokenizer has more ids than config.json vocab_size");
        }
    }
    nlohmann::json ids = nlohmann::json::array(), tokens = nlohmann::json::array();
    for (const auto& text : args.all("text")) {
        auto row = tok.encode(text, !args.has("no-eos"));
        ids.push_back(row);
        nlohmann::json t = nlohmann::json::array();
        for (int id : row) t.push_back(tok.id_to_token(id));
        tokens.push_back(t);
    }
    if (args.has("json")) {
        print_json({{"ids", ids}, {"tokens", tokens}});
    } else {
        for (size_t i = 0; i < ids.size(); ++i) {
            for (size_t j = 0; j < ids[i].size(); ++j) std::cout << (j ? " " : "") << ids[i][j].get<int>();
            std::cout << "\n";
            for (size_t j = 0; j < tokens[i].size(); ++j) std::cout << (j ? " " : "") << tokens[i][j].get<std::string>();
            std::cout << "\n";
        }
    }
    return 0;
}

}  // namespace t5s::cli
