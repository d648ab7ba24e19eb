#include <ATen/Parallel.h>

#include <cstring>

#include "t5s/error.h"
#include "torch/cpu_kernels.h"
#include "torch/t5_network.h"

// Incremental decoding: the decoder's KV cache, one step at a time, and the row selection and
// beam reordering that beam search and batch compaction need.
namespace t5s {

DecoderState T5Network::start_decoding(const at::Tensor& encoder_hidden, const at::Tensor& attention_mask, int64_t capacity,
                                       int64_t rows_per_input) const {
    // Cross-attention K/V are projected once per input and shared by its beams/candidates (not
    // repeated: t5-small, 8 inputs x 4 beams, 32 tokens: 6 MB shared instead of 25 MB of copies).
    DecoderState st;
    const int64_t B = encoder_hidden.size(0) * rows_per_input;
    st.capacity = capacity;
    st.cross_share = rows_per_input;
    st.cross_bias = mask_to_bias(attention_mask);
    st.self_bias_table = position_bias(decoder_[0].self_attn.relative_bias, capacity, capacity, false);
    auto opts = encoder_hidden.options();
    for (const auto& l : decoder_) {
        st.self_k.push_back(at::empty({B, config_.num_heads, capacity, config_.d_kv}, opts));
        st.self_v.push_back(at::empty({B, config_.num_heads, capacity, config_.d_kv}, opts));
        const auto [k, v] = cross_kv(l.cross_attn, encoder_hidden);
        st.cross_k.push_back(split_heads(k).contiguous());
        st.cross_v.push_back(split_heads(v).contiguous());
    }
    return st;
}

std::array<at::Tensor, 2> T5Network::cross_kv(const AttentionWeights& a, const at::Tensor& encoder_hidden) const {
    if (!a.kv.ready()) return {a.k(encoder_hidden), a.v(encoder_hidden)};
    auto kv = a.kv(encoder_hidden).chunk(2, -1);
    return {kv[0], kv[1]};
}

std::vector<DecoderState> T5Network::start_decoding_each(const std::vector<at::Tensor>& encoded, int64_t table_capacity) const {
    // The projections run on every input's rows at once (each weight read once, as encode_each
    // does); a row's K/V do not depend on the rows beside it where the linear layer's rows do not.
    std::vector<DecoderState> states(encoded.size());
    if (encoded.empty()) return states;
    const at::Tensor table = table_capacity > 0
                                 ? position_bias(decoder_[0].self_attn.relative_bias, table_capacity, table_capacity, false)
                                 : at::Tensor();
    const at::Tensor packed = encoded.size() == 1 ? encoded[0] : at::cat(encoded, 1);
    const auto opts = packed.options();
    for (size_t i = 0; i < encoded.size(); ++i) {
        const int64_t S = encoded[i].size(1);
        states[i].cross_bias = mask_to_bias(at::ones({1, S}, opts.dtype(at::kLong)));
        states[i].self_bias_table = table;
    }
    for (const auto& l : decoder_) {
        const auto [k, v] = cross_kv(l.cross_attn, packed);
        int64_t offset = 0;
        for (size_t i = 0; i < encoded.size(); ++i) {
            DecoderState& st = states[i];
            const int64_t S = encoded[i].size(1);
            st.self_k.push_back(at::empty({1, config_.num_heads, 0, config_.d_kv}, opts));
            st.self_v.push_back(at::empty({1, config_.num_heads, 0, config_.d_kv}, opts));
            st.cross_k.push_back(split_heads(k.narrow(1, offset, S)));
            st.cross_v.push_back(split_heads(v.narrow(1, offset, S)));
            offset += S;
        }
    }
    return states;
}

namespace {

// cache[:, :, t] = x for x [B, H, 1, dk] (a strided view into the fused projection's output).
// The CPU's raw form (cpu_kernels.h) where the cache and x allow it, else copy_.
void write_cache_position(at::Tensor& cache, int64_t t, const at::Tensor& x) {
    if (!cache.is_cpu() || !cache.is_contiguous() || x.scalar_type() != cache.scalar_type() || x.stride(3) != 1 ||
        x.size(0) != cache.size(0) || x.size(1) != cache.size(1) || x.size(2) != 1 || x.size(3) != cache.size(3)) {
        cache.narrow(2, t, 1).copy_(x);
        return;
    }
    t5s::write_cache_position(cache, t, x.data_ptr(), x.stride(0), x.stride(1));
}

// q, k, v [B, H, 1, dk] as views of a fused projection's output [B, 1, 3 * H * dk] (one position:
// [B, 3, H, 1, dk]): one reshape and three selects where chunk + split_heads take ten ATen calls.
std::array<at::Tensor, 3> fused_qkv_views(const at::Tensor& qkv, int64_t heads, int64_t d_kv) {
    const at::Tensor parts = qkv.reshape({qkv.size(0), 3, heads, 1, d_kv});
    return {parts.select(1, 0), parts.select(1, 1), parts.select(1, 2)};
}

}  // namespace

at::Tensor T5Network::decode_step(DecoderState& st, const at::Tensor& tokens) const {
    return decode_step_hidden(st, tokens, nullptr);
}

at::Tensor T5Network::decode_step_hidden(DecoderState& st, const at::Tensor& tokens, at::Tensor* final_hidden) const {
    const int64_t t = st.length;
    if (t >= st.capacity) throw Error(ErrorCode::Internal, "decoder cache capacity exceeded");
    if (tokens.dim() == 1 && one_pass_step_ready(st, tokens.size(0))) return decode_step_one_pass(st, tokens, final_hidden);
    at::Tensor h = embed(tokens.unsqueeze(1));  // [B, 1, d]
    at::Tensor self_bias = st.self_bias_table.narrow(2, t, 1).narrow(3, 0, t + 1);
    if (st.self_key_bias.defined()) self_bias = self_bias + st.self_key_bias.narrow(3, 0, t + 1);
    // fp32 on the CPU with the fused kernels: each residual add runs inside the norm after it, and
    // q/k/v are read from the fused projection's output in place (fewer ATen calls per step).
    const bool fused = use_fused_cpu_kernels(h) && h.scalar_type() == at::kFloat;
    at::Tensor x = rms_norm(h, decoder_[0].ln_self);  // the next sublayer's (normed) input
    at::Tensor residual;                              // the fused path's h: written in place from the first add
    auto add_then_norm = [&](const at::Tensor& y, const at::Tensor& ln) {
        if (fused && ln.scalar_type() == at::kFloat) {
            x = residual_rms_norm_cpu_f32(h, y, residual, ln, config_.layer_norm_epsilon, kernels_.step);
            h = residual;
        } else {
            h = clamp_fp16(h + y);
            x = rms_norm(h, ln);
        }
    };
    for (size_t i = 0; i < decoder_.size(); ++i) {
        const DecoderLayer& l = decoder_[i];
        auto [q, k, v] = fused && l.self_attn.qkv.ready() ? fused_qkv_views(l.self_attn.qkv(x), config_.num_heads, config_.d_kv)
                                                          : project_qkv(l.self_attn, x);
        write_cache_position(st.self_k[i], t, k);
        write_cache_position(st.self_v[i], t, v);
        at::Tensor keys = st.self_k[i].narrow(2, 0, t + 1), values = st.self_v[i].narrow(2, 0, t + 1);
        add_then_norm(l.self_attn.o(attend_merged(q, keys, values, self_bias)), l.ln_cross);
        add_then_norm(l.cross_attn.o(attend_cross(split_heads(l.cross_attn.q(x)), st, i)), l.ln_ff);
        add_then_norm(feed_forward(l.ff, x), i + 1 < decoder_.size() ? decoder_[i + 1].ln_self : dec_final_ln_);
    }
    st.length = t + 1;
    if (final_hidden) *final_hidden = x.squeeze(1);  // x: rms_norm(h, dec_final_ln_), [B, 1, d]
    return lm_logits(x).squeeze(1);
}

namespace {

bool gather_on_host(const DecoderState& st, const at::Tensor& rows) {
    return rows.is_cpu() && !st.self_k.empty() && st.self_k[0].is_cpu();
}

// `rows` as host indices, checked against the cache's current batch.
at::Tensor host_rows(const DecoderState& st, const at::Tensor& rows) {
    at::Tensor idx = rows.to(at::kLong).contiguous();
    const int64_t* r = idx.data_ptr<int64_t>();
    for (int64_t b = 0; b < idx.numel(); ++b) {
        if (r[b] < 0 || r[b] >= st.self_k[0].size(0)) throw Error(ErrorCode::Internal, "decoder cache row out of range");
    }
    return idx;
}

// dst[r, :, :len] = src[rows[r], :, :len] for contiguous CPU caches [B, H, capacity, d_kv]: one
// memcpy per (row, head) of the filled part, instead of index_select into a temporary + copy_.
void gather_cache_rows(const at::Tensor& src, at::Tensor& dst, const at::Tensor& idx, int64_t len) {
    const int64_t* r = idx.data_ptr<int64_t>();
    const int64_t B = dst.size(0), H = src.size(1), head_bytes = src.size(2) * src.size(3) * src.element_size();
    const int64_t row_bytes = H * head_bytes, chunk = len * src.size(3) * src.element_size();
    const char* s = static_cast<const char*>(src.data_ptr());
    char* d = static_cast<char*>(dst.data_ptr());
    at::parallel_for(0, B * H, 64, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const int64_t b = i / H, h = i % H;
            std::memcpy(d + b * row_bytes + h * head_bytes, s + r[b] * row_bytes + h * head_bytes, chunk);
        }
    });
}

}  // namespace

void T5Network::select_rows(DecoderState& st, const at::Tensor& rows) {
    // Only the filled part of the self-attention cache is gathered (not its whole capacity).
    const int64_t len = st.length;
    const at::Tensor idx = gather_on_host(st, rows) ? host_rows(st, rows) : at::Tensor();
    for (auto* list : {&st.self_k, &st.self_v}) {
        for (auto& t : *list) {
            at::Tensor fresh = at::empty({rows.size(0), t.size(1), t.size(2), t.size(3)}, t.options());
            if (len > 0 && idx.defined() && t.is_contiguous()) gather_cache_rows(t, fresh, idx, len);
            else if (len > 0) fresh.narrow(2, 0, len).copy_(t.narrow(2, 0, len).index_select(0, rows));
            t = fresh;
        }
    }
    st.spare = at::Tensor();
    if (st.self_key_bias.defined()) st.self_key_bias = st.self_key_bias.index_select(0, rows);
    select_encoder_rows(st, rows);
}

void T5Network::reorder_beams(DecoderState& st, const at::Tensor& rows) {
    // Beams of one input share its encoder output, so cross-attention K/V need no reordering.
    const int64_t len = st.length;
    const at::Tensor idx = gather_on_host(st, rows) ? host_rows(st, rows) : at::Tensor();
    for (auto* list : {&st.self_k, &st.self_v}) {
        for (auto& t : *list) {
            if (idx.defined() && t.is_contiguous()) {
                // Gather into the spare buffer and swap: every cache tensor has the same shape, so
                // one spare serves them all (the previous tensor becomes the next spare).
                if (!st.spare.defined() || !st.spare.sizes().equals(t.sizes()) || st.spare.dtype() != t.dtype()) {
                    st.spare = at::empty_like(t);
                }
                gather_cache_rows(t, st.spare, idx, len);
                std::swap(t, st.spare);
                continue;
            }
            at::Tensor gathered = t.narrow(2, 0, len).index_select(0, rows);
            t.narrow(2, 0, len).copy_(gathered);
        }
    }
}

void T5Network::select_encoder_rows(DecoderState& st, const at::Tensor& rows) {
    // Shared K/V: a kept row reads its input's entry; after this every row has its own.
    const at::Tensor source = st.cross_share > 1 ? at::div(rows, st.cross_share, "floor") : rows;
    for (auto* list : {&st.cross_k, &st.cross_v}) {
        for (auto& t : *list) t = t.index_select(0, source);
    }
    st.cross_bias = st.cross_bias.index_select(0, source);
    st.cross_share = 1;
}

}  // namespace t5s
