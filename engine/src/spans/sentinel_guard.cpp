#include "spans/sentinel_guard.h"

#include <algorithm>

#include "t5s/tokenizer.h"

namespace t5s::spans {

SentinelRange sentinel_range(const Tokenizer& tokenizer) { return {tokenizer.sp_size(), tokenizer.vocab_size()}; }

int sentinel_id(const Tokenizer& tokenizer, int n) { return tokenizer.vocab_size() - 1 - n; }

std::vector<int> sentinels_in(const std::vector<int>& input_ids, SentinelRange range) {
    std::vector<int> out;
    for (int id : input_ids) {
        if (range.contains(id) && std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
    }
    return out;
}

GuardStep guard_step(const std::vector<int>& required, const int64_t* generated, int64_t n, int max_new_tokens,
                     SentinelRange range) {
    GuardStep step;
    for (int id : required) {
        if (std::find(generated, generated + n, static_cast<int64_t>(id)) == generated + n) step.remaining.push_back(id);
    }
    const int64_t steps_left = max_new_tokens - n;  // this one included
    step.force = !step.remaining.empty() && static_cast<int64_t>(step.remaining.size()) >= steps_left;
    (void)range;
    return step;
}

int count_forced(const std::vector<int>& required, const std::vector<int>& ids, int max_new_tokens, SentinelRange range) {
    std::vector<int64_t> prefix;
    int forced = 0;
    for (int id : ids) {
        const GuardStep g = guard_step(required, prefix.data(), static_cast<int64_t>(prefix.size()), max_new_tokens, range);
        if (g.force && id == g.remaining.front()) ++forced;
        prefix.push_back(id);
    }
    return forced;
}

}  // namespace t5s::spans
