#include "decode/batch_cache.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace t5s::decode {
namespace {

at::Tensor long_tensor(const std::vector<int64_t>& v, at::Device device) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(device);
}

// A pool of `rows` rows whose first `keep_rows` rows and `keep` positions (dim 2, or 3 for the
// biases) come from `old`, and whose positions past `keep` in those rows are `fill`. Rows from
// `keep_rows` on are left unset: append() writes every position of a row it adds that a step can
// read, so filling them here would only touch (and fault in) memory twice.
at::Tensor regrow(const at::Tensor& old, int64_t rows, int64_t positions, int64_t keep_rows, int64_t keep, int64_t dim,
                  double fill) {
    std::vector<int64_t> shape = old.sizes().vec();
    shape[0] = rows;
    shape[static_cast<size_t>(dim)] = positions;
    at::Tensor grown = at::empty(shape, old.options());
    if (keep_rows <= 0) return grown;
    at::Tensor kept = grown.narrow(0, 0, keep_rows);
    if (keep > 0) kept.narrow(dim, 0, keep).copy_(old.narrow(0, 0, keep_rows).narrow(dim, 0, keep));
    if (positions > keep) kept.narrow(dim, keep, positions - keep).fill_(fill);
    return grown;
}

}  // namespace

double mask_value(at::ScalarType dtype) {
    if (dtype == at::kHalf) return -65504.0;
    if (dtype == at::kBFloat16) return -3.3895313892515355e38;
    return std::numeric_limits<float>::lowest();
}

void BatchCache::clear() {
    rows_ = 0;
    st_.length = 0;
    slot_of_row_.clear();
    std::fill(slot_used_.begin(), slot_used_.end(), 0);
    publish();
}

void BatchCache::ensure_rows(int64_t rows) {
    if (rows <= row_cap_) return;
    const int64_t cap = std::max({rows, 2 * row_cap_, int64_t{4}});
    for (auto* list : {&self_k_, &self_v_}) {
        for (auto& t : *list) t = regrow(t, cap, st_.capacity, rows_, st_.length, 2, 0.0);
    }
    key_bias_ = regrow(key_bias_, cap, st_.capacity, rows_, st_.capacity, 3, mask_value(key_bias_.scalar_type()));
    row_cap_ = cap;
}

void BatchCache::ensure_free_slots(int64_t slots) {
    const int64_t free = std::count(slot_used_.begin(), slot_used_.end(), 0);
    if (free >= slots) return;
    const int64_t cap = std::max({slot_cap_ + slots - free, 2 * slot_cap_, int64_t{4}});
    for (auto* list : {&cross_k_, &cross_v_}) {
        for (auto& t : *list) t = regrow(t, cap, cross_cap_, slot_cap_, cross_cap_, 2, 0.0);
    }
    cross_bias_ = regrow(cross_bias_, cap, cross_cap_, slot_cap_, cross_cap_, 3, mask_value(cross_bias_.scalar_type()));
    slot_used_.resize(static_cast<size_t>(cap), 0);
    slot_cap_ = cap;
}

void BatchCache::ensure_positions(int64_t capacity, const at::Tensor& table) {
    if (capacity <= st_.capacity) return;
    for (auto* list : {&self_k_, &self_v_}) {
        for (auto& t : *list) t = regrow(t, row_cap_, capacity, rows_, st_.length, 2, 0.0);
    }
    key_bias_ = regrow(key_bias_, row_cap_, capacity, rows_, st_.capacity, 3, 0.0);
    st_.capacity = capacity;
    st_.self_bias_table = table;
}

void BatchCache::ensure_cross(int64_t length) {
    if (length <= cross_cap_) return;
    for (auto* list : {&cross_k_, &cross_v_}) {
        for (auto& t : *list) t = regrow(t, slot_cap_, length, slot_cap_, cross_cap_, 2, 0.0);
    }
    cross_bias_ = regrow(cross_bias_, slot_cap_, length, slot_cap_, cross_cap_, 3, mask_value(cross_bias_.scalar_type()));
    cross_cap_ = length;
}

int64_t BatchCache::take_slot() {
    ensure_free_slots(1);
    const auto it = std::find(slot_used_.begin(), slot_used_.end(), 0);
    *it = 1;
    return static_cast<int64_t>(it - slot_used_.begin());
}

void BatchCache::make_pools(const DecoderState& like) {
    if (!self_k_.empty()) return;
    for (const auto& t : like.self_k) {
        self_k_.push_back(at::zeros({0, t.size(1), 0, t.size(3)}, t.options()));
        self_v_.push_back(at::zeros({0, t.size(1), 0, t.size(3)}, t.options()));
    }
    for (const auto& t : like.cross_k) {
        cross_k_.push_back(at::zeros({0, t.size(1), 0, t.size(3)}, t.options()));
        cross_v_.push_back(at::zeros({0, t.size(1), 0, t.size(3)}, t.options()));
    }
    cross_bias_ = at::zeros({0, 1, 1, 0}, like.cross_bias.options());
    key_bias_ = at::zeros({0, 1, 1, 0}, like.cross_bias.options());
}

void BatchCache::reserve(const DecoderState& like, int64_t rows, int64_t inputs, int64_t cross_length) {
    make_pools(like);
    ensure_rows(rows_ + rows);
    ensure_free_slots(inputs);
    ensure_cross(cross_length);
}

int64_t BatchCache::append(const DecoderState& sub, int64_t n, int64_t capacity) {
    make_pools(sub);  // shapes and dtype from the first input; empty pools grow below
    ensure_positions(capacity, sub.self_bias_table);
    ensure_rows(rows_ + n);
    const int64_t S = sub.cross_bias.size(3), start = st_.length;
    ensure_cross(S);
    const int64_t slot = take_slot();
    for (size_t i = 0; i < self_k_.size(); ++i) {
        for (auto* pool : {&self_k_[i], &self_v_[i]}) pool->narrow(0, rows_, n).narrow(2, 0, start).zero_();
        for (auto [pool, kv] : {std::pair{&cross_k_[i], &sub.cross_k[i]}, std::pair{&cross_v_[i], &sub.cross_v[i]}}) {
            at::Tensor own = pool->narrow(0, slot, 1);
            own.narrow(2, 0, S).copy_(*kv);
            own.narrow(2, S, cross_cap_ - S).zero_();
        }
    }
    const double mask = mask_value(cross_bias_.scalar_type());
    at::Tensor cross = cross_bias_.narrow(0, slot, 1);
    cross.narrow(3, 0, S).copy_(sub.cross_bias);
    cross.narrow(3, S, cross_cap_ - S).fill_(mask);
    at::Tensor keys = key_bias_.narrow(0, rows_, n);
    keys.narrow(3, 0, start).fill_(mask);
    keys.narrow(3, start, st_.capacity - start).zero_();
    slot_of_row_.insert(slot_of_row_.end(), static_cast<size_t>(n), slot);
    rows_ += n;
    publish();
    return start;
}

int64_t BatchCache::compact(const std::vector<int64_t>& starts) {
    if (starts.empty()) return 0;
    const int64_t shift = std::min(st_.length, *std::min_element(starts.begin(), starts.end()));
    if (shift <= 0) return 0;
    const int64_t keep = st_.length - shift;
    for (auto* list : {&self_k_, &self_v_}) {
        for (auto& t : *list) {
            at::Tensor filled = t.narrow(0, 0, rows_);
            if (keep > 0) filled.narrow(2, 0, keep).copy_(filled.narrow(2, shift, keep).clone());
        }
    }
    const auto dev = key_bias_.device();
    at::Tensor pos = at::arange(st_.capacity, at::TensorOptions().dtype(at::kLong).device(dev)).view({1, -1});
    at::Tensor before = pos < (long_tensor(starts, dev) - shift).view({-1, 1});
    at::Tensor bias = at::zeros(before.sizes(), key_bias_.options()).masked_fill_(before, mask_value(key_bias_.scalar_type()));
    key_bias_.narrow(0, 0, rows_).copy_(bias.view({rows_, 1, 1, st_.capacity}));
    st_.length = keep;
    publish();
    return shift;
}

void BatchCache::relocate(const std::vector<int64_t>& sources) {
    bool unchanged = static_cast<int64_t>(sources.size()) == rows_;
    for (size_t j = 0; unchanged && j < sources.size(); ++j) unchanged = sources[j] == static_cast<int64_t>(j);
    if (unchanged) return;  // the usual step: every row continues in place
    // Rows of another input also take its key bias (a row's start); beams of one input share it.
    std::vector<int64_t> from, to, bias_from, bias_to, slots;
    for (size_t j = 0; j < sources.size(); ++j) {
        const int64_t source = sources[j], row = static_cast<int64_t>(j);
        slots.push_back(slot_of_row_[static_cast<size_t>(source)]);
        if (source == row) continue;
        from.push_back(source), to.push_back(row);
        if (slot_of_row_[j] != slots.back()) bias_from.push_back(source), bias_to.push_back(row);  // rows only shrink
    }
    rows_ = static_cast<int64_t>(sources.size());
    slot_of_row_ = std::move(slots);
    std::fill(slot_used_.begin(), slot_used_.end(), 0);
    for (int64_t slot : slot_of_row_) slot_used_[static_cast<size_t>(slot)] = 1;
    const auto dev = key_bias_.device();
    // Through a gathered copy: a row may be both a source and a destination (beams).
    auto move = [](at::Tensor view, const at::Tensor& src, const at::Tensor& dst) {
        view.index_copy_(0, dst, view.index_select(0, src));
    };
    if (!from.empty()) {
        const at::Tensor src = long_tensor(from, dev), dst = long_tensor(to, dev);
        for (auto* list : {&self_k_, &self_v_}) {
            for (auto& t : *list) {
                if (!move_rows_on_host(t, from, to, st_.length)) move(t.narrow(2, 0, st_.length), src, dst);
            }
        }
    }
    if (!bias_from.empty()) move(key_bias_, long_tensor(bias_from, dev), long_tensor(bias_to, dev));
    publish();
}

void BatchCache::copy_last_position(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
    if (from.empty() || st_.length <= 0) return;
    const auto dev = key_bias_.device();
    const at::Tensor src = long_tensor(from, dev), dst = long_tensor(to, dev);
    for (auto* list : {&self_k_, &self_v_}) {
        for (auto& t : *list) {
            at::Tensor last = t.narrow(2, st_.length - 1, 1);
            last.index_copy_(0, dst, last.index_select(0, src));
        }
    }
}

bool BatchCache::move_rows_on_host(at::Tensor& pool, const std::vector<int64_t>& from, const std::vector<int64_t>& to,
                                   int64_t positions) {
    if (!pool.is_cpu() || !pool.is_contiguous() || positions <= 0) return false;
    const int64_t heads = pool.size(1), chunk = positions * pool.size(3) * static_cast<int64_t>(pool.element_size());
    const int64_t head_bytes = pool.size(2) * pool.size(3) * static_cast<int64_t>(pool.element_size());
    const int64_t pieces = static_cast<int64_t>(from.size()) * heads;
    // The moved rows' filled positions, gathered first: a row may be both a source and a destination.
    if (scratch_.numel() < pieces * chunk) scratch_ = at::empty({pieces * chunk}, at::TensorOptions().dtype(at::kByte));
    char* base = static_cast<char*>(pool.data_ptr());
    char* gathered = static_cast<char*>(scratch_.data_ptr());
    auto piece = [&](const std::vector<int64_t>& rows, int64_t i) {
        return base + (rows[static_cast<size_t>(i / heads)] * heads + i % heads) * head_bytes;
    };
    at::parallel_for(0, pieces, 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) std::memcpy(gathered + i * chunk, piece(from, i), static_cast<size_t>(chunk));
    });
    at::parallel_for(0, pieces, 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) std::memcpy(piece(to, i), gathered + i * chunk, static_cast<size_t>(chunk));
    });
    return true;
}

void BatchCache::publish() {
    st_.self_k.resize(self_k_.size());
    st_.self_v.resize(self_v_.size());
    for (size_t i = 0; i < self_k_.size(); ++i) {
        st_.self_k[i] = self_k_[i].narrow(0, 0, rows_);
        st_.self_v[i] = self_v_[i].narrow(0, 0, rows_);
    }
    st_.cross_k = cross_k_;  // every slot: rows read theirs through cross_rows
    st_.cross_v = cross_v_;
    st_.cross_bias = cross_bias_;
    st_.self_key_bias = key_bias_.defined() ? key_bias_.narrow(0, 0, rows_) : at::Tensor();
    st_.cross_rows = at::tensor(slot_of_row_, at::TensorOptions().dtype(at::kLong));
    st_.cross_share = 1;
    st_.spare = at::Tensor();
}

}  // namespace t5s::decode
