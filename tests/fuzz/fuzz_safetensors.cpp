// libFuzzer target: any bytes as a safetensors file -> header + tensor table. Accepted files must
// have every tensor inside the buffer (each byte is read, so ASan sees any overrun).
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "t5s/error.h"
#include "t5s/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);  // exact-size heap copy: overruns are caught
    std::map<std::string, t5s::TensorView> tensors;
    std::map<std::string, std::string> metadata;
    try {
        t5s::parse_safetensors(bytes.data(), bytes.size(), "fuzz.safetensors", &tensors, &metadata);
    } catch (const t5s::Error&) {
        return 0;
    }
    unsigned sum = 0;
    for (const auto& [name, view] : tensors) {
        const auto* p = static_cast<const uint8_t*>(view.data);
        for (size_t i = 0; i < view.nbytes; ++i) sum += p[i];
        if (view.numel() < 0) std::abort();
    }
    return static_cast<int>(sum & 0);
}
