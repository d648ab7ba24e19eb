// Per-row int8 activations times an int8 weight in int32 (int8_rows_linear.h).
#include "torch/int8_rows_linear.h"

#include <algorithm>

namespace t5s {
namespace {

// cuBLASLt's int8 product wants more than 16 rows, and K and N multiples of 8. Rows are padded
// with zeros to a multiple of 8, at least 24, on every device, so the CPU twin runs the same shapes.
constexpr int64_t kMinRows = 24;
constexpr int64_t kRowAlign = 8;

int64_t padded_rows(int64_t m) { return std::max(kMinRows, (m + kRowAlign - 1) / kRowAlign * kRowAlign); }

}  // namespace

Int8Rows quantize_activation_rows(const at::Tensor& x2d) {
    const at::Tensor xf = x2d.to(at::kFloat);
    Int8Rows r;
    r.scale = (at::maximum(xf.amax({1}, true), -xf.amin({1}, true)) / 127.0).clamp_min(1e-8);
    r.q = at::round(xf / r.scale).clamp_(-127, 127).to(at::kChar);
    return r;
}

at::Tensor int8_rows_linear(const at::Tensor& x, const Int8Rows& w) {
    const int64_t n = w.q.size(0), k = w.q.size(1);
    if (k % kRowAlign != 0 || n % kRowAlign != 0) return at::linear(x, w.q.to(x.scalar_type()) * w.scale.to(x.scalar_type()));
    const at::Tensor x2d = x.reshape({-1, k});
    const int64_t m = x2d.size(0);
    Int8Rows a = quantize_activation_rows(x2d);
    const int64_t mp = padded_rows(m);
    const at::Tensor lhs = mp == m ? a.q : at::constant_pad_nd(a.q, {0, 0, 0, mp - m}, 0);
    // [K, N] as a transposed view of the row-major weight: the column-major operand cuBLASLt reads.
    const at::Tensor sums = at::_int_mm(lhs, w.q.t()).narrow(0, 0, m);
    at::Tensor out = sums.to(at::kFloat).mul_(a.scale).mul_(w.scale.to(at::kFloat).view({1, n}));
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
    shape.back() = n;
    return out.to(x.scalar_type()).view(shape);
}

}  // namespace t5s
