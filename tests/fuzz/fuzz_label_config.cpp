// libFuzzer target: Label Studio labeling configs (app/serve/label_config.h) as /setup, /predict,
// /webhook and /train receive them. The scanner reads only inside the input (ASan), gives tags
// with names, and a config it accepts has the Text input its TextArea labels.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "serve/label_config.h"
#include "t5s/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view xml(reinterpret_cast<const char*>(data), size);
    for (const auto& tag : t5s::serve::scan_config_tags(xml)) {
        if (tag.name.empty() || tag.name.size() >= size) std::abort();
    }
    try {
        const t5s::serve::LabelConfig c = t5s::serve::parse_label_config(xml, "label_config");
        if (c.input_name.empty() || c.input_field.empty() || c.output_name.empty() || c.output_to != c.input_name) std::abort();
    } catch (const t5s::Error&) {
    }
    return 0;
}
