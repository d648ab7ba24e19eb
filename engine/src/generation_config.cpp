#include "t5s/generation_config.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "json_text.h"
#include "t5s/error.h"
#include "t5s/model_config.h"

namespace t5s {
namespace {

using json = nlohmann::json;

class Reader {
public:
    Reader(const json& j, const std::string& source) : j_(j), source_(source) {}

    // Non-negative integers up to `max`; null reads as absent (transformers writes None as null).
    template <class T>
    void integer(const char* key, std::optional<T>* out, int64_t min, int64_t max) {
        const json* v = find(key);
        if (!v) return;
        const json& x = v->is_array() && !v->empty() && std::string(key) == "eos_token_id" ? (*v)[0] : *v;
        if (!x.is_number_integer()) bad(key, "must be an integer", x);
        if ((x.is_number_unsigned() && x.get<uint64_t>() > static_cast<uint64_t>(max)) || x.get<int64_t>() < min ||
            x.get<int64_t>() > max) {
            bad(key, "must be from " + std::to_string(min) + " to " + std::to_string(max), x);
        }
        *out = static_cast<T>(x.get<int64_t>());
    }
    // Every entry of a list of token ids (none when the key holds a single id).
    std::vector<int64_t> id_list(const char* key, int64_t max) {
        const json* v = find(key);
        std::vector<int64_t> ids;
        if (!v || !v->is_array()) return ids;
        for (const json& x : *v) {
            if (!x.is_number_integer() || x.get<int64_t>() < 0 || (x.is_number_unsigned() && x.get<uint64_t>() > static_cast<uint64_t>(max)))
                bad(key, "entries must be token ids", x);
            ids.push_back(x.get<int64_t>());
        }
        return ids;
    }
    void number(const char* key, std::optional<float>* out, double min_exclusive, double max_inclusive) {
        const json* v = find(key);
        if (!v) return;
        if (!v->is_number()) bad(key, "must be a number", *v);
        const double d = v->get<double>();
        if (!std::isfinite(d) || d <= min_exclusive || d > max_inclusive) {
            bad(key, "must be in (" + fmt(min_exclusive) + ", " + fmt(max_inclusive) + "]", *v);
        }
        *out = static_cast<float>(d);
    }
    void boolean(const char* key, std::optional<bool>* out) {
        const json* v = find(key);
        if (!v) return;
        if (v->is_string() && v->get<std::string>() == "never") *out = false;  // HF's third early_stopping value
        else if (v->is_boolean()) *out = v->get<bool>();
        else bad(key, "must be true or false", *v);
    }

private:
    const json* find(const char* key) const {
        auto it = j_.find(key);
        return it == j_.end() || it->is_null() ? nullptr : &*it;
    }
    static std::string fmt(double d) {
        std::ostringstream ss;
        ss << d;
        return ss.str();
    }
    [[noreturn]] void bad(const char* key, const std::string& rule, const json& v) const {
        std::string shown = v.dump();
        if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
        throw Error(ErrorCode::CorruptFile, source_ + ": '" + key + "' " + rule + ", got " + shown);
    }
    const json& j_;
    const std::string& source_;
};

}  // namespace

GenerationConfig parse_generation_config(const std::string& json_text, const std::string& source) {
    const json j = parse_json_text(json_text, source);
    if (!j.is_object()) throw Error(ErrorCode::CorruptFile, source + ": expected a JSON object");
    GenerationConfig g;
    g.present = true;
    Reader r(j, source);
    constexpr int64_t kMaxId = int64_t{1} << 31, kMaxTokens = 1 << 30;
    r.integer("decoder_start_token_id", &g.decoder_start_token_id, 0, kMaxId);
    r.integer("eos_token_id", &g.eos_token_id, 0, kMaxId);
    g.listed_eos_token_ids = r.id_list("eos_token_id", kMaxId);
    r.integer("pad_token_id", &g.pad_token_id, 0, kMaxId);
    r.integer("max_new_tokens", &g.max_new_tokens, 1, kMaxTokens);
    std::optional<int> max_length, min_length;
    r.integer("max_length", &max_length, 2, kMaxTokens);
    if (!g.max_new_tokens && max_length) g.max_new_tokens = *max_length - 1;  // the decoder start token counts
    r.integer("min_new_tokens", &g.min_new_tokens, 0, kMaxTokens);
    r.integer("min_length", &min_length, 0, kMaxTokens);
    if (!g.min_new_tokens && min_length) g.min_new_tokens = std::max(0, *min_length - 1);
    r.integer("num_beams", &g.num_beams, 1, 1 << 16);
    r.integer("num_return_sequences", &g.num_return_sequences, 1, 1 << 16);
    r.integer("top_k", &g.top_k, 0, kMaxId);
    r.integer("no_repeat_ngram_size", &g.no_repeat_ngram_size, 0, kMaxTokens);
    r.boolean("do_sample", &g.do_sample);
    r.boolean("early_stopping", &g.early_stopping);
    r.number("temperature", &g.temperature, 0.0, 1e6);
    r.number("top_p", &g.top_p, 0.0, 1.0);
    r.number("repetition_penalty", &g.repetition_penalty, 0.0, 1e6);
    r.number("length_penalty", &g.length_penalty, -1e6, 1e6);
    return g;
}

GenerationConfig load_generation_config(const std::filesystem::path& file) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return {};
    if (!std::filesystem::is_regular_file(file, ec)) throw Error(ErrorCode::CorruptFile, file.string() + ": not a regular file");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error(ErrorCode::FileNotFound, file.string() + ": cannot open");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_generation_config(ss.str(), file.string());
}

GenerationConfig load_model_generation_defaults(const std::filesystem::path& dir) {
    GenerationConfig g = load_generation_config(dir / "generation_config.json");
    const std::filesystem::path config = dir / "config.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(config, ec)) return g;
    std::ifstream in(config, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) return g;
    g.tasks = parse_model_tasks(ss.str(), config.string());
    if (const ModelTask* t = find_task(g.tasks, g.tasks.default_task)) {
        g.task_prefix = t->prefix;
        g.task_prefix_source = "config.json task '" + t->name + "' (" + kDefaultTaskKey + ")";
    }
    return g;
}

GenerationConfig with_task(GenerationConfig g, const std::string& name) {
    const ModelTask* t = find_task(g.tasks, name);
    if (!t) {
        std::string listed;
        for (const ModelTask& task : g.tasks.tasks) listed += (listed.empty() ? "" : ", ") + task.name;
        throw Error(ErrorCode::InvalidArgument, "no task '" + name + "': the model's config.json lists " +
                                                    (listed.empty() ? std::string("no tasks") : "the tasks " + listed));
    }
    g.task_prefix = t->prefix;
    g.task_prefix_source = "--task " + name;
    return g;
}

void apply_generation_config(const GenerationConfig& g, const std::set<std::string>& given, GenerationOptions* o) {
    if (g.task_prefix && !given.count("task_prefix")) o->task_prefix = *g.task_prefix;
#define T5S_APPLY(field) \
    if (g.field && !given.count(#field)) o->field = *g.field;
    T5S_APPLY(max_new_tokens) T5S_APPLY(min_new_tokens) T5S_APPLY(num_beams) T5S_APPLY(num_return_sequences)
    T5S_APPLY(top_k) T5S_APPLY(no_repeat_ngram_size) T5S_APPLY(do_sample) T5S_APPLY(early_stopping)
    T5S_APPLY(temperature) T5S_APPLY(top_p) T5S_APPLY(repetition_penalty) T5S_APPLY(length_penalty)
#undef T5S_APPLY
}

void apply_generation_token_ids(const GenerationConfig& g, const std::string& source, ModelConfig* m) {
    auto take = [&](const std::optional<int64_t>& id, const char* key, int64_t* out) {
        if (!id) return;
        if (*id >= m->vocab_size) {
            throw Error(ErrorCode::CorruptFile, source + ": '" + key + "' " + std::to_string(*id) +
                                                    " is outside the vocabulary (config.json vocab_size " +
                                                    std::to_string(m->vocab_size) + ")");
        }
        *out = *id;
    };
    take(g.decoder_start_token_id, "decoder_start_token_id", &m->decoder_start_token_id);
    take(g.eos_token_id, "eos_token_id", &m->eos_token_id);
    for (int64_t id : g.listed_eos_token_ids) {
        int64_t ignored = 0;
        take(id, "eos_token_id", &ignored);  // the others are not used, but a list naming no token is corrupt
    }
    take(g.pad_token_id, "pad_token_id", &m->pad_token_id);
}

std::string generation_config_to_json(const GenerationConfig& g) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
#define T5S_SHOW(field) \
    if (g.field) j[#field] = *g.field;
    T5S_SHOW(decoder_start_token_id) T5S_SHOW(eos_token_id) T5S_SHOW(pad_token_id) T5S_SHOW(max_new_tokens)
    T5S_SHOW(min_new_tokens) T5S_SHOW(num_beams) T5S_SHOW(num_return_sequences) T5S_SHOW(do_sample)
    T5S_SHOW(early_stopping) T5S_SHOW(temperature) T5S_SHOW(top_k) T5S_SHOW(top_p) T5S_SHOW(repetition_penalty)
    T5S_SHOW(length_penalty) T5S_SHOW(no_repeat_ngram_size)
#undef T5S_SHOW
    return j.dump();
}

}  // namespace t5s
