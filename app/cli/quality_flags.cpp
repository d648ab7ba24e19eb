#include "cli/quality_flags.h"

#include "t5s/error.h"

namespace t5s::cli {

std::unique_ptr<Embedder> embedder_from_flags(const Args& args, const RuntimeOptions& runtime) {
    if (!args.has("embedder")) return nullptr;
    return Embedder::load(args.get("embedder"), runtime);
}

}  // namespace t5s::cli
