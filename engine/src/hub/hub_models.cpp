// `t5studio models`: the T5-family models and sentence encoders in the cache and in given folders,
// with parameters from config.json and the memory they need (t5s/hub.h).
#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "t5s/hub.h"

namespace t5s::hub {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

int64_t num(const json& j, const char* key, int64_t fallback) {
    auto it = j.find(key);
    return (it != j.end() && it->is_number_integer()) ? it->get<int64_t>() : fallback;
}

int64_t t5_parameters(const json& c) {
    const int64_t d = num(c, "d_model", 512), kv = num(c, "d_kv", 64), ff = num(c, "d_ff", 2048);
    const int64_t heads = num(c, "num_heads", 8), vocab = num(c, "vocab_size", 32128);
    const int64_t enc = num(c, "num_layers", 6), dec = num(c, "num_decoder_layers", enc);
    const int64_t buckets = num(c, "relative_attention_num_buckets", 32);
    const std::string proj = c.value("feed_forward_proj", std::string("relu"));
    const int64_t inner = heads * kv;
    const int64_t attn = 4 * d * inner + d;  // q, k, v, o + its layer norm
    const int64_t ffn = (proj.rfind("gated-", 0) == 0 ? 3 : 2) * d * ff + d;
    int64_t p = vocab * d;                                     // shared embedding
    p += enc * (attn + ffn) + dec * (2 * attn + ffn) + 2 * d;  // blocks + final norms
    p += (enc > 0 ? buckets * heads : 0) + (dec > 0 ? buckets * heads : 0);
    if (!c.value("tie_word_embeddings", true)) p += vocab * d;  // untied lm_head
    return p;
}

int64_t encoder_parameters(const json& c) {
    const int64_t h = num(c, "hidden_size", 768), inter = num(c, "intermediate_size", 3072);
    const int64_t layers = num(c, "num_hidden_layers", 12), vocab = num(c, "vocab_size", 30522);
    const int64_t pos = num(c, "max_position_embeddings", 512), types = num(c, "type_vocab_size", 2);
    const int64_t layer = 4 * (h * h + h) + 2 * h + (h * inter + inter) + (inter * h + h) + 2 * h;
    return (vocab + pos + types) * h + 2 * h + layers * layer + (h * h + h);  // + pooler
}

std::string read_text_file(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Fills kind, architecture, parameters and complete from the folder's files; false when it is not a
// model we run.
bool describe(const fs::path& dir, StoredModel& m) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / "config.json", ec)) return false;
    json c;
    try {
        c = json::parse(read_text_file(dir / "config.json"));
    } catch (const json::exception&) {
        return false;
    }
    if (!c.is_object()) return false;
    m.architecture = c.value("model_type", std::string());
    const bool encoder = fs::is_regular_file(dir / "modules.json", ec);
    if (m.architecture == "t5" || m.architecture == "mt5") {
        m.kind = "generation";
    } else if (encoder && (m.architecture == "bert" || m.architecture == "xlm-roberta")) {
        m.kind = "encoder";
    } else {
        return false;
    }
    m.parameters = parameters_from_config(c.dump());
    m.complete = false;
    for (const char* w :
         {"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json"})
        if (fs::exists(dir / w, ec)) m.complete = true;
    return true;
}

int64_t folder_bytes(const fs::path& dir) {
    std::error_code ec;
    std::set<fs::path> seen;  // each blob once, however many names link to it
    int64_t total = 0;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const fs::path target = fs::weakly_canonical(it->path(), ec);
        if (ec || !fs::is_regular_file(target, ec) || !seen.insert(target).second) continue;
        total += static_cast<int64_t>(fs::file_size(target, ec));
    }
    return total;
}

void add_cache_models(const fs::path& cache, std::vector<StoredModel>& out) {
    std::error_code ec;
    for (const auto& repo : fs::directory_iterator(cache, ec)) {
        const std::string folder = repo.path().filename().string();
        if (folder.rfind("models--", 0) != 0) continue;
        const std::string name = display_name(repo.path() / "snapshots" / "x");
        std::map<std::string, std::string> refs;  // commit -> ref names
        for (const auto& r : fs::recursive_directory_iterator(repo.path() / "refs", ec)) {
            if (!r.is_regular_file(ec)) continue;
            std::ifstream in(r.path());
            std::string commit;
            in >> commit;
            auto& names = refs[commit];
            names += (names.empty() ? "" : ",") + fs::relative(r.path(), repo.path() / "refs", ec).generic_string();
        }
        for (const auto& snap : fs::directory_iterator(repo.path() / "snapshots", ec)) {
            StoredModel m;
            if (!snap.is_directory(ec) || !describe(snap.path(), m)) continue;
            m.name = name;
            m.commit = snap.path().filename().string();
            m.revision = refs.count(m.commit) ? refs[m.commit] : "";
            m.dir = snap.path();
            m.disk_bytes = folder_bytes(snap.path());
            m.found_in = "cache";
            out.push_back(m);
        }
    }
}

// An adapter folder's row: its base named, and sized by it when the base was found.
bool describe_adapter(const fs::path& dir, const fs::path& cache, StoredModel& m) {
    std::optional<AdapterBase> base;
    try {
        base = adapter_base(dir, cache);
    } catch (const std::exception&) {
        return false;  // a broken adapter_config.json: not listed, as a broken config.json is not
    }
    if (!base) return false;
    m.kind = "adapter";
    m.architecture = "lora";
    m.base = base->name;
    std::error_code ec;
    m.complete = fs::exists(dir / "adapter_model.safetensors", ec) || fs::exists(dir / "adapter_model.bin", ec);
    StoredModel of_base;
    if (base->dir && describe(*base->dir, of_base)) {
        m.base_dir = *base->dir;
        m.parameters = of_base.parameters;  // what running it takes: the base's weights (the adapter's are few)
    }
    return true;
}

struct FolderSearch {
    fs::path root;
    fs::path cache;  // where an adapter's ORG/NAME base is looked up
    bool adapters = false;
    std::vector<StoredModel>* out = nullptr;
    int visited = 0;  // folders looked at: a huge tree is cut off, not walked whole
};

void search_folder(FolderSearch& s, const fs::path& dir, int depth) {
    constexpr int kMaxFolders = 20000;
    if (++s.visited > kMaxFolders) return;
    StoredModel m;
    if (describe(dir, m) || (s.adapters && describe_adapter(dir, s.cache, m))) {
        std::error_code ec;
        const fs::path full = fs::absolute(dir, ec).lexically_normal();
        m.name = (ec ? dir : full).string();
        m.dir = dir;
        m.found_in = s.root.string();
        m.disk_bytes = folder_bytes(dir);
        s.out->push_back(m);
        return;  // a model folder's sub-folders are its modules
    }
    if (depth >= kFolderDepth) return;
    std::error_code ec;
    std::vector<fs::path> subs;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_directory(ec) && e.path().filename().string().front() != '.')
            subs.push_back(e.path());  // .tmp-*, .old-*: being written
    std::sort(subs.begin(), subs.end());
    for (const fs::path& sub : subs) search_folder(s, sub, depth + 1);
}

void add_folder_models(const fs::path& folder, const fs::path& cache, bool adapters, std::vector<StoredModel>& out) {
    FolderSearch s{folder, cache, adapters, &out};
    search_folder(s, folder, 0);
}

}  // namespace

int64_t parameters_from_config(const std::string& config_json_text) {
    try {
        const json c = json::parse(config_json_text);
        const std::string type = c.value("model_type", std::string());
        if (type == "t5" || type == "mt5") return t5_parameters(c);
        if (type == "bert" || type == "xlm-roberta") return encoder_parameters(c);
    } catch (const json::exception&) {
    }
    return 0;
}

int64_t estimated_run_bytes(int64_t parameters, int bytes_per_weight) {
    const int64_t weights = parameters * bytes_per_weight;
    return weights + std::max<int64_t>(weights / 5, int64_t(64) << 20);
}

std::string fit_label(int64_t need_bytes, int64_t available_bytes) {
    if (available_bytes <= 0) return "unknown";
    if (need_bytes * 10 <= available_bytes * 6) return "fits";
    return need_bytes <= available_bytes ? "tight" : "too big";
}

std::vector<StoredModel> list_models(const fs::path& cache, const std::vector<fs::path>& folders, bool adapters) {
    std::vector<StoredModel> out;
    add_cache_models(cache, out);
    for (const fs::path& f : folders) add_folder_models(f, cache, adapters, out);
    std::stable_sort(out.begin(), out.end(), [](const StoredModel& a, const StoredModel& b) { return a.name < b.name; });
    return out;
}

}  // namespace t5s::hub
