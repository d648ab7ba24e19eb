// GenerationOptions <-> JSON for the history's settings_json column. Every field by its C++ name.
#include <nlohmann/json.hpp>

#include "t5s/error.h"
#include "t5s/history_store.h"

namespace t5s {

#define T5S_OPTION_FIELDS(X)                                                                         \
    X(max_new_tokens) X(min_new_tokens) X(num_beams) X(length_penalty) X(early_stopping)             \
    X(num_return_sequences) X(do_sample) X(temperature) X(top_k) X(top_p) X(repetition_penalty)      \
    X(no_repeat_ngram_size) X(seed) X(no_copy) X(distinct) X(max_rounds) X(batch_size)

std::string generation_options_to_json(const GenerationOptions& options) {
    nlohmann::ordered_json j;
#define T5S_WRITE(name) j[#name] = options.name;
    T5S_OPTION_FIELDS(T5S_WRITE)
#undef T5S_WRITE
    return j.dump();
}

GenerationOptions generation_options_from_json(const std::string& json) {
    nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
        throw Error(ErrorCode::InvalidArgument, "generation settings: not a JSON object");
    GenerationOptions options;
    try {
#define T5S_READ(name) \
    if (auto it = j.find(#name); it != j.end() && !it->is_null()) it->get_to(options.name);
        T5S_OPTION_FIELDS(T5S_READ)
#undef T5S_READ
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorCode::InvalidArgument, std::string("generation settings: ") + e.what());
    }
    return options;
}

#undef T5S_OPTION_FIELDS

}  // namespace t5s
