#pragma once
// The embedder flag of `generate` and `sts` (the filter and ranking flags are generation options:
// cli/generation_flags.h; the quality scores' JSON fields are common/json_output.h's).
#include <memory>
#include <string>

#include "common/args.h"
#include "t5s/embedder.h"
#include "t5s/generation_options.h"

namespace t5s::cli {

// --embedder DIR: the sentence-embedding model, or null without the flag.
std::unique_ptr<Embedder> embedder_from_flags(const Args& args, const RuntimeOptions& runtime);

}  // namespace t5s::cli
