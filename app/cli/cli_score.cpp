// t5studio score --model DIR --source S --target T [--json]: teacher-forced loss exactly as
// transformers computes it with labels.
#include <climits>
#include <iostream>

#include "cli/commands.h"
#include "common/args.h"
#include "common/json_output.h"
#include "common/runtime_flags.h"
#include "t5s/error.h"
#include "t5s/generation_limits.h"

namespace t5s::cli {

const RuntimeFlags kScoreRuntime{Device::Cpu};

const CommandSpec kScoreSpec = {
    "score",
    "teacher-forced loss of a target given a source (as transformers with labels)",
    {
        {"model", "DIR", "model folder", kModel},
        {"source", "S", "the input text"},
        {"target", "T", "the output text to score"},
        {"max-source-tokens", "N",
         "longest source and target in tokens (default: the model's n_positions, else 512), as generate"},
        kScoreRuntime.flags(),
        {"adapter", "DIR", "LoRA adapter folder (PEFT format) applied to the model"},
        {"json", "", "print {\"loss\", \"target_ids\", \"argmax\"} on stdout"},
    }};

int run_score(const Argv& argv) {
    Args args(argv, kScoreSpec);
    auto model = Model::load(args.require("model"), with_adapter(kScoreRuntime.read(args), args.get("adapter")));
    const Tokenizer& tok = model->tokenizer();
    const auto source = tok.encode(args.require("source"));
    const auto target = tok.encode(args.require("target"));
    // generate's source limit, for the target too: its attention grows with the square of its length.
    GenerationOptions limits;
    limits.max_source_tokens = args.get_int("max-source-tokens", 0, 0, INT_MAX);
    check_source_lengths({source}, model->info().config, limits);
    const int64_t most = source_token_limit(model->info().config, limits);
    if (static_cast<int64_t>(target.size()) > most)
        throw Error(ErrorCode::InvalidArgument, "the target is " + std::to_string(target.size()) +
                                                    " tokens, more than the limit of " + std::to_string(most) +
                                                    "; shorten it or raise --max-source-tokens");
    ScoreResult r = model->score({source}, {target});
    if (args.has("json")) {
        print_json({{"loss", r.loss}, {"target_ids", r.target_ids[0]}, {"argmax", r.argmax[0]}});
    } else {
        std::cout << "loss " << r.loss << "\n";
    }
    return 0;
}

}  // namespace t5s::cli
