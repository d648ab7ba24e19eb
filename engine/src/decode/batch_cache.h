#pragma once
// The decoder caches of a running batch, kept in pools with spare rows and positions so that rows
// joining and leaving move only their own data: a joining group's rows are written into free rows
// at the end, and when rows leave, only the rows whose place changes are copied (a finished group's
// place is taken by the last group when it has as many rows). Growth (rows, positions, encoder
// length) reallocates with headroom, which happens a few times per busy period, not per request.
//
// The encoder side (cross-attention K/V and mask) is kept once per input, in a slot, not once per
// decoder row: an input's beams or candidates read its slot (DecoderState::cross_rows), so they
// neither copy it when they join nor move it when beams reorder, and a step reads it once per row
// group instead of once per row's copy. A slot is free again when no row reads it.
//
// Masked positions (before a row's first token; past its input's length in cross-attention) hold
// zeros, as T5Network::start_decoding's caches do for a batch alone: a masked key must stay finite
// (0 x NaN is NaN), and its weight after the softmax is exactly 0.
#include <ATen/ATen.h>

#include <vector>

#include "torch/t5_network.h"

namespace t5s::decode {

class BatchCache {
public:
    // The state decode_step reads and appends to: views of the pools' first rows().
    DecoderState& state() { return st_; }
    int64_t rows() const { return rows_; }
    int64_t length() const { return st_.length; }

    // Appends `n` rows that decode an input whose encoder-side state is `sub` (start_decoding_each;
    // its self_bias_table is used when `capacity` exceeds the current one). The rows start at the
    // current length; returns that position. `capacity`: positions the batch needs.
    int64_t append(const DecoderState& sub, int64_t n, int64_t capacity);
    // Room for `rows` more rows of `inputs` more inputs up to `cross_length` tokens long (pools
    // shaped like `like`'s), so that the appends of one call grow the pools at most once.
    void reserve(const DecoderState& like, int64_t rows, int64_t inputs, int64_t cross_length);
    // Positions free at the end after moving every row left by the earliest start in `starts` (the
    // start of each row). Returns the shift, which the caller subtracts from its starts.
    int64_t compact(const std::vector<int64_t>& starts);
    // New row j continues old row sources[j] (sources.size() new rows). Rows already in place are
    // not copied; encoder-side slots no row reads any more become free.
    void relocate(const std::vector<int64_t>& sources);
    // Rows to[j] take the self-attention K/V of rows from[j] at the last position written (rows
    // that already hold the same values before it: contrastive search's candidates of one input).
    void copy_last_position(const std::vector<int64_t>& from, const std::vector<int64_t>& to);
    void clear();

private:
    void ensure_rows(int64_t rows);
    void ensure_free_slots(int64_t slots);
    void ensure_positions(int64_t capacity, const at::Tensor& table);
    void ensure_cross(int64_t length);
    int64_t take_slot();
    void publish();                             // st_'s views over the pools' first rows_
    void make_pools(const DecoderState& like);  // empty pools of `like`'s heads, widths and dtype
    // Rows to[j] of a contiguous host pool [R, H, P, dk] take what rows from[j] held in positions
    // [0, positions): one memcpy per (row, head) through scratch_, which stays allocated (fresh
    // memory every step costs page faults). False where the pool is not such a tensor.
    bool move_rows_on_host(at::Tensor& pool, const std::vector<int64_t>& from, const std::vector<int64_t>& to, int64_t positions);

    // Pools: self K/V [R, H, capacity, dk] and key bias [R, 1, 1, capacity] per decoder row; cross
    // K/V [slots, H, cross_cap, dk] and cross bias [slots, 1, 1, cross_cap] per input slot.
    std::vector<at::Tensor> self_k_, self_v_, cross_k_, cross_v_;
    at::Tensor cross_bias_, key_bias_;
    at::Tensor scratch_;                // bytes for move_rows_on_host
    std::vector<int64_t> slot_of_row_;  // [rows_]: the encoder-side slot each row reads
    std::vector<char> slot_used_;       // [slot_cap_]
    int64_t row_cap_ = 0, slot_cap_ = 0, cross_cap_ = 0, rows_ = 0;
    DecoderState st_;
};

// The additive mask value of `dtype` (as T5Network's masks).
double mask_value(at::ScalarType dtype);

}  // namespace t5s::decode
