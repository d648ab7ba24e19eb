#pragma once
// The rule the decoder follows for protected spans, torch-free (the logits processor
// apply_sentinel_guard in decode/logits_processors.h applies it to scores): each sentinel of the
// input is emitted exactly once; </s> waits until all are; none the input lacks; and when only as
// many steps are left as sentinels remain, the next one (in input order) is forced.
#include <cstdint>
#include <vector>

namespace t5s {
class Tokenizer;
}

namespace t5s::spans {

struct SentinelRange {
    int lo = 0, hi = 0;  // sentinel ids [lo, hi); empty: no guard
    bool contains(int64_t id) const { return id >= lo && id < hi; }
    bool empty() const { return hi <= lo; }
};

// [sp_size, vocab_size) of the tokenizer: its <extra_id_N>.
SentinelRange sentinel_range(const Tokenizer& tokenizer);
// The id of <extra_id_n> (sp_size + extra_ids - 1 - n).
int sentinel_id(const Tokenizer& tokenizer, int n);

// The distinct sentinels of an input, in input order.
std::vector<int> sentinels_in(const std::vector<int>& input_ids, SentinelRange range);

struct GuardStep {
    std::vector<int> remaining;  // required sentinels not emitted yet, in input order (allowed now)
    bool force = false;          // remaining.front() must be emitted at this step
};

// The rule at the step after `generated` (n tokens, start token excluded).
GuardStep guard_step(const std::vector<int>& required, const int64_t* generated, int64_t n, int max_new_tokens,
                     SentinelRange range);

// How many tokens of a finished candidate's ids the rule forced (a pure function of the ids).
int count_forced(const std::vector<int>& required, const std::vector<int>& ids, int max_new_tokens, SentinelRange range);

// Per input of a batch: the sentinels it requires (options.keep_sentinels); empty range: off.
struct SentinelGuard {
    SentinelRange range;
    std::vector<std::vector<int>> required;  // per input
};

}  // namespace t5s::spans
