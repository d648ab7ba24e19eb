#include "torch/mean_log_probs.h"

namespace t5s {

std::vector<double> per_row_mean_log_probs(const T5Network& net, const at::Tensor& input_ids, const at::Tensor& attention_mask,
                                           const at::Tensor& labels) {
    at::Tensor logits = net.lm_logits(net.decode(net.shift_right(labels), net.encode(input_ids, attention_mask), attention_mask));
    at::Tensor log_probs = at::log_softmax(logits.to(at::kFloat), -1);
    at::Tensor valid = labels != -100;
    at::Tensor picked = log_probs.gather(-1, labels.clamp_min(0).unsqueeze(-1)).squeeze(-1).to(at::kDouble);
    at::Tensor sums = (picked * valid.to(at::kDouble)).sum(1);
    at::Tensor counts = valid.sum(1).clamp_min(1).to(at::kDouble);
    at::Tensor means = (sums / counts).cpu().contiguous();
    return std::vector<double>(means.data_ptr<double>(), means.data_ptr<double>() + means.numel());
}

}  // namespace t5s
