// fuzz_http_request links app/serve/request_json.cpp, whose answer builders reach
// app/cli/quality_flags.cpp, and that file also loads the embedder (LibTorch) from CLI flags
// (app/cli/args.cpp). The request parsers never call either; these stand-ins let the torch-free
// fuzz builds link, and abort should anything ever reach them.
#include <cstdlib>
#include <memory>

#include "cli/args.h"
#include "t5s/embedder.h"

namespace t5s {

std::unique_ptr<Embedder> Embedder::load(const std::filesystem::path&, const RuntimeOptions&) { std::abort(); }

namespace cli {
std::string Args::get(const std::string&, const std::string&) const { std::abort(); }
}  // namespace cli

}  // namespace t5s
