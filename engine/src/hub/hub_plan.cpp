#include "hub/hub_plan.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "hub/hub_paths.h"
#include "t5s/hub_pull.h"

namespace t5s::hub {

namespace {

ErrorCode error_code(PullFailure f) {
    switch (f) {
        case PullFailure::BadRequest: return ErrorCode::InvalidArgument;
        case PullFailure::NotFound:
        case PullFailure::Offline: return ErrorCode::FileNotFound;
        case PullFailure::HashMismatch: return ErrorCode::CorruptFile;
        case PullFailure::Unsupported: return ErrorCode::Unsupported;
        case PullFailure::Cancelled: return ErrorCode::Cancelled;
        default: return ErrorCode::Internal;
    }
}

}  // namespace

PullError::PullError(PullFailure failure, const std::string& message) : Error(error_code(failure), message), failure_(failure) {}

namespace {

using json = nlohmann::json;

const std::set<std::string> kConfigFiles = {"config.json",
                                            "generation_config.json",
                                            "spiece.model",
                                            "tokenizer.json",
                                            "tokenizer_config.json",
                                            "special_tokens_map.json",
                                            "added_tokens.json",
                                            "vocab.txt",
                                            "sentencepiece.bpe.model",
                                            "modules.json",
                                            "config_sentence_transformers.json",
                                            "sentence_bert_config.json",
                                            "README.md",
                                            "LICENSE",
                                            "LICENSE.md"};

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The weights of one folder ("" = root): safetensors when there are any, else .bin.
void add_weights(const std::vector<std::string>& files, const std::string& folder, std::vector<std::string>& out) {
    std::vector<std::string> st, bin;
    for (const std::string& f : files) {
        const size_t slash = f.rfind('/');
        const std::string dir = slash == std::string::npos ? "" : f.substr(0, slash);
        const std::string base = slash == std::string::npos ? f : f.substr(slash + 1);
        if (dir != folder) continue;
        if (ends_with(base, ".safetensors") || base == "model.safetensors.index.json") st.push_back(f);
        if ((base.rfind("pytorch_model", 0) == 0 && ends_with(base, ".bin")) || base == "pytorch_model.bin.index.json")
            bin.push_back(f);
    }
    const auto& chosen = st.empty() ? bin : st;
    out.insert(out.end(), chosen.begin(), chosen.end());
}

// Every non-empty "path" of modules.json, as the server wrote it.
std::vector<std::string> module_folders(const std::string& modules_json) {
    std::vector<std::string> out;
    try {
        const json m = json::parse(modules_json);
        if (!m.is_array()) return out;
        for (const json& e : m)
            if (e.is_object() && e.contains("path") && e["path"].is_string() && !e["path"].get<std::string>().empty())
                out.push_back(e["path"].get<std::string>());
    } catch (const json::exception&) {
    }
    return out;
}

}  // namespace

std::vector<std::string> select_files(const std::vector<std::string>& repo_files, const std::string& modules_json) {
    std::vector<std::string> out;
    for (const std::string& f : repo_files)
        if (kConfigFiles.count(f)) out.push_back(f);
    for (const std::string& folder : module_folders(modules_json)) {
        if (!unsafe_path_reason(folder).empty()) continue;
        for (const std::string& f : repo_files)
            if (f.rfind(folder + "/", 0) == 0 && f.find('/', folder.size() + 1) == std::string::npos &&
                (ends_with(f, ".json") || ends_with(f, ".txt") || ends_with(f, ".model")))
                out.push_back(f);
        add_weights(repo_files, folder, out);
    }
    add_weights(repo_files, "", out);
    return out;
}

void check_module_paths(const std::string& repo, const std::string& modules_json) {
    for (const std::string& folder : module_folders(modules_json)) check_relative_path(folder, repo + "/modules.json");
}

ModelKind check_architecture(const std::string& repo, const std::string& config_json, bool has_modules_json) {
    json c;
    try {
        c = json::parse(config_json);
    } catch (const json::exception&) {
        throw PullError(PullFailure::Unsupported, repo + ": config.json is not valid JSON");
    }
    const std::string type = c.is_object() ? c.value("model_type", std::string()) : std::string();
    if (type == "t5" || type == "mt5") return {"generation", type};
    if (has_modules_json && (type == "bert" || type == "xlm-roberta")) return {"encoder", type};
    std::string arch;
    if (c.is_object() && c.contains("architectures") && c["architectures"].is_array())
        for (const json& a : c["architectures"])
            if (a.is_string()) arch += (arch.empty() ? "" : ", ") + a.get<std::string>();
    const std::string what = "model_type '" + type + "'" + (arch.empty() ? "" : " (" + arch + ")");
    const std::string why = (type == "bert" || type == "xlm-roberta")
                                ? " without modules.json: T5 Studio runs BERT/XLM-R only as sentence-transformers encoders"
                                : ": T5 Studio runs T5/mT5 models and BERT/XLM-R sentence encoders";
    throw PullError(PullFailure::Unsupported, repo + ": " + what + why + "; nothing was downloaded");
}

}  // namespace t5s::hub
