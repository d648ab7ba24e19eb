// libFuzzer target: any bytes as a spiece.model -> validation -> SentencePiece -> encode/decode.
// Whatever passes validation must load and run without a crash.
#include <cstdint>
#include <string>

#include "t5s/error.h"
#include "t5s/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string model(reinterpret_cast<const char*>(data), size);
    try {
        t5s::Tokenizer tok = t5s::Tokenizer::from_serialized(model, "fuzz/spiece.model");
        for (const char* text :
             {"Hello world, naïve café ①ＡＢＣ ﬁ.", "  spaces  and\ttabs ", "<extra_id_0> x </s>", "\xe2\x96\x81"}) {
            const auto ids = tok.encode(text);
            (void)tok.decode(ids, true);
            (void)tok.decode(ids, false);
            (void)tok.tokens(text);
        }
    } catch (const t5s::Error&) {
    }
    return 0;
}
