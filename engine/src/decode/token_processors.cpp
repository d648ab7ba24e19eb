#include "decode/token_processors.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "t5s/error.h"

namespace t5s {
namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

at::Tensor long_tensor(const std::vector<int64_t>& v, at::Device device) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(device);
}

// The ids of `tokens` inside [0, vocab), as transformers' isin() keeps them.
std::vector<int64_t> in_vocab(const TokenIds& tokens, int64_t vocab) {
    std::vector<int64_t> out;
    for (int id : tokens)
        if (id >= 0 && id < vocab) out.push_back(id);
    return out;
}

// transformers turns the list into a dict keyed by the ids: a repeated sequence keeps its first
// place and its last bias.
SequenceBias as_transformers_dict(const SequenceBias& bias) {
    SequenceBias out;
    for (const SequenceBiasEntry& e : bias) {
        auto same = [&](const SequenceBiasEntry& o) { return o.ids == e.ids; };
        auto it = std::find_if(out.begin(), out.end(), same);
        if (it == out.end()) {
            out.push_back(e);
        } else {
            it->bias = e.bias;
        }
    }
    return out;
}
}  // namespace

void apply_sequence_bias(at::Tensor& scores, const at::Tensor& sequences, const SequenceBias& entries) {
    if (entries.empty()) return;
    const int64_t V = scores.size(1), rows = scores.size(0);
    for (const SequenceBiasEntry& e : entries)
        for (int id : e.ids)
            if (id < 0 || id >= V)
                throw Error(ErrorCode::InvalidArgument, "sequence_bias: token id " + std::to_string(id) +
                                                            " is outside the vocabulary (" + std::to_string(V) + " tokens)");
    const SequenceBias bias = as_transformers_dict(entries);
    // The columns biased and, per row, the bias transformers accumulates for each in float32: the
    // one-token bias first, then each longer sequence's where the row ends with its prefix.
    std::vector<int64_t> cols;
    for (const SequenceBiasEntry& e : bias)
        if (std::find(cols.begin(), cols.end(), e.ids.back()) == cols.end()) cols.push_back(e.ids.back());
    std::vector<float> acc(static_cast<size_t>(rows) * cols.size(), 0.0f);
    auto column = [&](int id) { return static_cast<size_t>(std::find(cols.begin(), cols.end(), id) - cols.begin()); };
    for (const SequenceBiasEntry& e : bias) {
        if (e.ids.size() != 1) continue;
        for (int64_t r = 0; r < rows; ++r) acc[static_cast<size_t>(r) * cols.size() + column(e.ids[0])] += e.bias;
    }
    const at::Tensor host = sequences.to(at::kCPU, at::kLong).contiguous();
    const int64_t len = host.size(1);
    for (const SequenceBiasEntry& e : bias) {
        const int64_t prefix = static_cast<int64_t>(e.ids.size()) - 1;
        if (prefix == 0 || prefix + 1 > len) continue;  // one token: done; longer than the context: ignored
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t* tail = host.data_ptr<int64_t>() + r * len + (len - prefix);
            bool match = true;
            for (int64_t k = 0; k < prefix && match; ++k) match = tail[k] == e.ids[static_cast<size_t>(k)];
            acc[static_cast<size_t>(r) * cols.size() + column(e.ids.back())] += match ? e.bias : 0.0f;
        }
    }
    const at::Tensor index = long_tensor(cols, scores.device());
    const at::Tensor added =
        at::tensor(acc).view({rows, static_cast<int64_t>(cols.size())}).to(scores.device(), scores.scalar_type());
    scores.index_copy_(1, index, scores.index_select(1, index) + added);
}

void apply_suppress_tokens(at::Tensor& scores, const TokenIds& tokens) {
    const std::vector<int64_t> ids = in_vocab(tokens, scores.size(1));
    if (!ids.empty()) scores.index_fill_(1, long_tensor(ids, scores.device()), kNegInf);
}

void apply_begin_suppress_tokens(at::Tensor& scores, int64_t length, int64_t begin_index, const TokenIds& tokens) {
    if (length == begin_index) apply_suppress_tokens(scores, tokens);
}

int64_t begin_suppress_index(const GenerationOptions& o) { return o.forced_bos_token_id >= 0 ? 2 : 1; }

void apply_forced_bos(at::Tensor& scores, int64_t length, int id) {
    if (id < 0 || length != 1) return;
    scores.fill_(kNegInf);
    scores.select(1, id).fill_(0.0f);
}

void apply_forced_eos(at::Tensor& scores, int64_t length, int64_t max_length, const TokenIds& ids) {
    if (ids.empty() || length != max_length - 1) return;
    scores.fill_(kNegInf);
    scores.index_fill_(1, long_tensor(std::vector<int64_t>(ids.begin(), ids.end()), scores.device()), 0.0f);
}

void apply_length_decay(at::Tensor& scores, int64_t length, const std::optional<LengthDecay>& decay, int64_t eos_id) {
    if (!decay) return;
    const int64_t start = decay->start_index + 1;  // transformers adds the input length: the start token
    if (length <= start) return;
    // transformers: pow() of Python floats (doubles), then a float32 tensor times that scalar.
    const double factor = std::pow(static_cast<double>(decay->decay_factor), static_cast<double>(length - start)) - 1.0;
    at::Tensor eos = scores.select(1, eos_id);
    eos.add_(eos.abs() * factor);
}

void apply_renormalize(at::Tensor& scores, bool renormalize) {
    if (renormalize) scores = at::log_softmax(scores, -1);
}

std::string token_settings_outside_vocab(const GenerationOptions& o, int64_t vocab) {
    auto outside = [&](int id) { return id < 0 || id >= vocab; };
    auto message = [&](const char* field, int id) {
        return std::string(field) + ": token id " + std::to_string(id) + " is outside the vocabulary (" + std::to_string(vocab) +
               " tokens)";
    };
    for (const SequenceBiasEntry& e : o.sequence_bias)
        for (int id : e.ids)
            if (outside(id)) return message("sequence_bias", id);
    if (o.forced_bos_token_id >= 0 && outside(o.forced_bos_token_id))
        return message("forced_bos_token_id", o.forced_bos_token_id);
    for (int id : o.forced_eos_token_id)
        if (outside(id)) return message("forced_eos_token_id", id);
    return "";
}

}  // namespace t5s
