#pragma once
// The model store: the Hugging Face cache, read and written in its standard layout, so a model that
// transformers or sentence-transformers downloaded opens here with no copy and a model pulled here
// loads there with local_files_only=True.
//
//   $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
//     models--ORG--NAME/
//       blobs/<etag>                 file contents (LFS files: etag = their SHA-256)
//       blobs/<etag>.incomplete      a download in progress (resumed with an HTTP Range request)
//       snapshots/<commit>/<file>    relative symlinks into blobs/
//       refs/<revision>              the commit a branch or tag pointed to when it was fetched
//
// Torch-free and network-free: the download itself is t5s/hub_pull.h.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace t5s::hub {

struct RepoRef {
    std::string repo;               // "ORG/NAME" (or a legacy "NAME")
    std::string revision = "main";  // branch, tag or 40-hex commit
};

// "ORG/NAME" or "ORG/NAME@REV" (also "NAME[@REV]"); nullopt when `text` cannot be a repository id
// (empty parts, "..", characters the Hub does not allow).
std::optional<RepoRef> parse_repo_ref(const std::string& text);

// The cache root from the environment (see above); not created.
std::filesystem::path cache_dir();

// <cache>/models--ORG--NAME
std::filesystem::path repo_folder(const std::filesystem::path& cache, const std::string& repo);

// The snapshot folder of `ref` in `cache`: refs/<revision> names the commit, or the revision is a
// commit with a snapshot; with no refs/<revision> for the default revision, the only snapshot there
// is. nullopt when absent.
std::optional<std::filesystem::path> find_snapshot(const std::filesystem::path& cache, const RepoRef& ref);

// What every `--model` / `--embedder` value goes through: an existing file or folder is returned
// unchanged (a folder always wins over a repository id); otherwise `text` is read as ORG/NAME[@REV]
// and resolved to its snapshot folder in the cache. Throws t5s::Error(FileNotFound), one line: not a
// folder and not in the cache, with the `t5studio pull` command that fetches it, for ORG/NAME[@REV];
// anything else not found (an absolute path, a bare NAME not in the cache) comes back unchanged for
// the loader to report as a missing folder.
std::filesystem::path resolve_model(const std::string& text);

// A PEFT LoRA adapter folder (adapter_config.json and no config.json) and the base model its
// base_model_name_or_path names: `dir` is that base's folder — the path as written when it is a
// folder (an absolute path, else relative to the working directory, else to the adapter folder),
// else ORG/NAME[@REV]'s snapshot in `cache` — or nullopt when neither exists.
struct AdapterBase {
    std::string name;                          // base_model_name_or_path as written ("" when absent)
    std::optional<std::filesystem::path> dir;  // where it was found
};
// nullopt when `dir` is not an adapter folder; CorruptFile naming the file when its
// adapter_config.json is not a JSON object (or larger than 1 MiB).
std::optional<AdapterBase> adapter_base(const std::filesystem::path& dir, const std::filesystem::path& cache = cache_dir());

// A model's name for people: "ORG/NAME" for a snapshot folder of the cache
// (…/models--ORG--NAME/snapshots/COMMIT), else the folder's own name.
std::string display_name(const std::filesystem::path& dir);

// One model found in a cache or a folder, for `t5studio models` and the app's model list.
struct StoredModel {
    std::string name;                // "ORG/NAME" for cache entries, the folder name otherwise
    std::string revision;            // refs name(s) pointing at this snapshot ("main"), or ""
    std::string commit;              // snapshot folder name; "" for plain folders
    std::filesystem::path dir;       // the folder to open
    std::string kind;                // "generation" (T5/mT5) or "encoder" (sentence-transformers)
    std::string architecture;        // model_type: t5, mt5, bert, xlm-roberta
    int64_t parameters = 0;          // computed from config.json (0 when it cannot be)
    int64_t disk_bytes = 0;          // bytes of the files the snapshot links to (each blob once)
    bool complete = true;            // weights present
    std::string found_in;            // "cache" (the Hugging Face cache), else the folder given that holds it
    std::string base;                // an adapter's base_model_name_or_path ("" for models)
    std::filesystem::path base_dir;  // that base's folder when it was found (empty otherwise)
};

// Estimated memory to run a model of `parameters` at 4 (fp32), 2 (bf16) or 1 (int8) byte(s) per
// weight: weights + 20% for activations, caches and the runtime (at least 64 MiB).
int64_t estimated_run_bytes(int64_t parameters, int bytes_per_weight);
// "fits" (<= 60% of `available`), "tight" (<= available) or "too big"; "unknown" when available <= 0.
std::string fit_label(int64_t need_bytes, int64_t available_bytes);

// Parameters from a config.json: T5/mT5 (shared embedding, blocks, untied head when not tied) and
// BERT/XLM-R encoders; 0 for anything else.
int64_t parameters_from_config(const std::string& config_json_text);

// T5-family models and sentence encoders in `cache` (one row per snapshot, named ORG/NAME) and in
// each folder of `folders` and its sub-folders down to kFolderDepth levels (a model folder's own
// sub-folders are its modules; hidden ones are skipped), named by their absolute paths. With
// `adapters`, PEFT LoRA adapter folders too (kind "adapter", with their base and its parameters).
// Other models are left out. Sorted by name.
inline constexpr int kFolderDepth = 4;  // DIR/project/runs/NAME/final
std::vector<StoredModel> list_models(const std::filesystem::path& cache, const std::vector<std::filesystem::path>& folders,
                                     bool adapters = false);

}  // namespace t5s::hub
