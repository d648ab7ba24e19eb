#pragma once
// What a pull fetches, decided from the repository's file list and config.json alone (before any
// weight): internal to engine/src/hub, unit-tested without a network (tests/test_hub.cpp).
#include <cstdint>
#include <string>
#include <vector>

namespace t5s::hub {

struct RepoFile {
    std::string name;    // path in the repository ("1_Pooling/config.json")
    int64_t size = -1;   // -1 = the API did not say
    std::string sha256;  // LFS files: the Hub's SHA-256 of the content; "" otherwise
};

struct ModelKind {
    std::string kind;          // "generation" | "encoder"
    std::string architecture;  // model_type
};

// The files loading needs, in fetch order (configs and tokenizer first, weights last): root
// configs and tokenizer files; *.safetensors (+ index) when the repository has them, otherwise
// pytorch_model*.bin (+ index); for a sentence-transformers repository (modules_json not empty) the
// module folders it names, with the same weight preference. Other folders (onnx/, openvino/...),
// other frameworks' weights and everything else are left out. A module folder that is not a safe
// relative path (hub_paths.h) is skipped; check_module_paths refuses it first.
std::vector<std::string> select_files(const std::vector<std::string>& repo_files, const std::string& modules_json);

// Throws PullError(Server), one line naming REPO/modules.json, when a module folder it names is not
// a safe relative path (absolute, "..", control bytes: a hostile server's way out of the cache).
void check_module_paths(const std::string& repo, const std::string& modules_json);

// From config.json (and whether modules.json exists): T5/mT5 -> generation, BERT/XLM-R with
// modules.json -> encoder. Throws PullError(Unsupported), one line naming the repository, the
// model_type and the architectures it declares, for anything else.
ModelKind check_architecture(const std::string& repo, const std::string& config_json, bool has_modules_json);

}  // namespace t5s::hub
