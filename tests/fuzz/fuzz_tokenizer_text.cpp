// libFuzzer target: any bytes as input text (encode) and as token ids (decode) with the genuine
// T5 spiece.model. Invalid UTF-8 must be a t5s::Error, never a crash or a silent <unk>.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "t5s/error.h"
#include "t5s/tokenizer.h"

#ifndef T5S_FUZZ_SPIECE
#error "T5S_FUZZ_SPIECE (path of a spiece.model) must be defined"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const t5s::Tokenizer tok = t5s::Tokenizer::load(T5S_FUZZ_SPIECE);
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const auto ids = tok.encode(text);
        for (int id : ids) {
            if (id < 0 || id >= tok.vocab_size()) std::abort();
        }
        (void)tok.decode(ids, true);
        (void)tok.decode(ids, false);
    } catch (const t5s::Error&) {
    }
    // The same bytes as ids (2 bytes each, some past the vocabulary or negative).
    std::vector<int> ids;
    for (size_t i = 0; i + 1 < size; i += 2) ids.push_back(static_cast<int16_t>(data[i] | data[i + 1] << 8));
    (void)tok.decode(ids, false);
    (void)tok.decode(ids, true);
    for (int id : ids) (void)tok.id_to_token(id);
    return 0;
}
