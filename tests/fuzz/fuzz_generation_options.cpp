// libFuzzer target: generation-option JSON (what the history's settings column, the app's settings
// and the coming HTTP API accept) -> GenerationOptions -> validate; accepted options round-trip.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "t5s/error.h"
#include "t5s/generation_options.h"
#include "t5s/history_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    t5s::GenerationOptions o;
    try {
        o = t5s::generation_options_from_json(text);
        t5s::validate_generation_options(o);
    } catch (const t5s::Error&) {
        return 0;
    }
    const t5s::GenerationOptions back = t5s::generation_options_from_json(t5s::generation_options_to_json(o));
    if (back.max_new_tokens != o.max_new_tokens || back.num_beams != o.num_beams || back.seed != o.seed ||
        back.do_sample != o.do_sample || back.batch_size != o.batch_size) {
        std::abort();
    }
    return 0;
}
