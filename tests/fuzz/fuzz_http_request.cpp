// libFuzzer target: HTTP request bodies of `t5studio serve` (app/serve/bounded_json.h,
// request_json.h): the bounded JSON parse every route starts with, then a POST /augment body and a
// PUT /v1/settings body. Bad input must end in t5s::Error (a 400 with its message); any other
// exception, a crash or an accepted request without texts is a finding.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "serve/bounded_json.h"
#include "serve/request_json.h"
#include "t5s/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string body(reinterpret_cast<const char*>(data), size);
    try {
        t5s::serve::parse_bounded_json(body, "request body");
    } catch (const t5s::Error&) {
    }
    try {
        const t5s::serve::AugmentRequest a = t5s::serve::parse_augment(body);
        if (a.request.texts.empty() || a.request.texts.size() > t5s::serve::kMaxTextsPerRequest) std::abort();
        if (!a.request.spans.empty() && a.request.spans.size() != a.request.texts.size()) std::abort();
    } catch (const t5s::Error&) {
    }
    try {
        t5s::serve::apply_settings_update(t5s::GenerationOptions{}, body);
    } catch (const t5s::Error&) {
    }
    return 0;
}
