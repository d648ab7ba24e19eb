#pragma once
// Internal pieces of the trainer's data path (torch-free).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "t5s/trainer.h"

namespace t5s {

struct TokenizedPair {
    std::vector<int> source, target;                   // truncated to the max lengths, ending in </s>
    int64_t full_source_len = 0, full_target_len = 0;  // before truncation
};

DataReport make_data_report(const std::vector<TokenizedPair>& tokenized, const std::vector<TextPair>& pairs, int64_t bad_rows,
                            int unk_id, int max_source_len, int max_target_len);

// Deterministic batch order for one epoch: shuffle with (seed, epoch); with group_by_length,
// sort chunks of 50 batches by length so each batch holds similar lengths, then shuffle the batches.
std::vector<std::vector<int64_t>> make_epoch_batches(const std::vector<TokenizedPair>& data, int batch_size, bool group_by_length,
                                                     uint64_t seed, int64_t epoch);

}  // namespace t5s
