// libFuzzer target: any bytes as config.json -> ModelConfig and as generation_config.json; an
// accepted config must survive its own round trip (model_config_to_json -> parse) unchanged and be
// checkable against a tensor table; accepted generation configs must give valid token ids.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "t5s/error.h"
#include "t5s/generation_config.h"
#include "t5s/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const t5s::GenerationConfig g = t5s::parse_generation_config(text, "generation_config.json");
        t5s::GenerationOptions o;
        t5s::apply_generation_config(g, {}, &o);
        t5s::ModelConfig m;
        t5s::apply_generation_token_ids(g, "generation_config.json", &m);
        if (m.eos_token_id < 0 || m.eos_token_id >= m.vocab_size) std::abort();
        (void)t5s::generation_config_to_json(g);
    } catch (const t5s::Error&) {
    }
    t5s::ModelConfig c;
    try {
        c = t5s::parse_model_config(text, "config.json");
    } catch (const t5s::Error&) {
        return 0;
    }
    const t5s::ModelConfig again = t5s::parse_model_config(t5s::model_config_to_json(c), "round-trip");
    if (again.d_model != c.d_model || again.num_layers != c.num_layers || again.num_decoder_layers != c.num_decoder_layers ||
        again.vocab_size != c.vocab_size || again.feed_forward_proj != c.feed_forward_proj ||
        again.tie_word_embeddings != c.tie_word_embeddings || again.eos_token_id != c.eos_token_id) {
        std::abort();  // the config we would save is not the config we loaded
    }
    std::map<std::string, std::vector<int64_t>> table = {{"shared.weight", {32128, 512}},
                                                         {"encoder.block.0.layer.0.SelfAttention.q.weight", {512, 512}},
                                                         {"decoder.block.0.layer.0.SelfAttention.q.weight", {512, 512}}};
    try {
        t5s::check_config_against_tensors(c, table, "model.safetensors");
    } catch (const t5s::Error&) {
    }
    return 0;
}
