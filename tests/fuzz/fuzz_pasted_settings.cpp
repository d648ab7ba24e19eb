// libFuzzer target: text pasted as generation settings (a generate(...) call, a keyword list, a
// JSON object) -> PastedSettings. Anything may be refused with t5s::Error; nothing may crash, and
// what is applied is inside every field's range and reads back from its own JSON.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "t5s/error.h"
#include "t5s/generation_fields.h"
#include "t5s/pasted_settings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    t5s::PastedSettings pasted;
    try {
        pasted = t5s::apply_pasted_settings(text, t5s::GenerationOptions{});
    } catch (const t5s::Error&) {
        return 0;
    }
    if (!t5s::field_range_error(pasted.options).empty()) std::abort();
    const std::string json = t5s::generation_options_to_json(pasted.options);
    if (t5s::generation_options_to_json(t5s::generation_options_from_json(json)) != json) std::abort();
    (void)t5s::pasted_settings_lines(pasted);
    return 0;
}
