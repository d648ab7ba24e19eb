// t5studio score --model DIR --source S --target T [--json]: teacher-forced loss exactly as
// transformers computes it with labels.
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/json_output.h"

namespace t5s::cli {

int run_score(const Argv& argv) {
    Args args(argv, {"json"}, {"model", "source", "target", "dtype", "device", "threads", "adapter"});
    auto model = Model::load(args.require("model"),
                             with_adapter(runtime_from_flags(args.get("device", "cpu"), args.get("dtype", "fp32"), args.get_threads()), args.get("adapter")));
    const Tokenizer& tok = model->tokenizer();
    const auto source = tok.encode(args.require("source"));
    const auto target = tok.encode(args.require("target"));
    ScoreResult r = model->score({source}, {target});
    if (args.has("json")) {
        print_json({{"loss", r.loss}, {"target_ids", r.target_ids[0]}, {"argmax", r.argmax[0]}});
    } else {
        std::cout << "loss " << r.loss << "\n";
    }
    return 0;
}

}  // namespace t5s::cli
