// Gradient checkpointing: a custom autograd function per block. Forward runs the block without
// building a graph and saves only its inputs; backward restores the RNG and autocast state of the
// forward pass, re-runs the block with grad and differentiates it (torch.utils.checkpoint's
// non-reentrant idea, written as a reentrant C++ Function).
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <mutex>

#include "torch/t5_network.h"

namespace t5s {
namespace {

// The tensors autograd must see as inputs of a block: its plain linear weights and LoRA terms,
// then its norms.
template <class Layer>
std::vector<at::Tensor> linear_weights(const Layer& l) {
    std::vector<at::Tensor> out;
    for (const Linear* x : linear_layers(l)) {
        if (x->weight().defined()) out.push_back(x->weight());
        if (x->has_lora()) out.push_back(x->lora().a), out.push_back(x->lora().b);
    }
    return out;
}

std::vector<at::Tensor> block_params(const EncoderLayer& l) {
    auto w = linear_weights(l);
    w.push_back(l.ln_attn);
    w.push_back(l.ln_ff);
    return w;
}

std::vector<at::Tensor> block_params(const DecoderLayer& l) {
    auto w = linear_weights(l);
    for (const at::Tensor& t : {l.ln_self, l.ln_cross, l.ln_ff}) w.push_back(t);
    return w;
}

struct AutocastState {
    bool cpu = false, cuda = false;
    at::ScalarType cpu_dtype = at::kBFloat16, cuda_dtype = at::kHalf;
    static AutocastState current() {
        return {at::autocast::is_autocast_enabled(at::kCPU), at::autocast::is_autocast_enabled(at::kCUDA),
                at::autocast::get_autocast_dtype(at::kCPU), at::autocast::get_autocast_dtype(at::kCUDA)};
    }
    void apply() const {
        at::autocast::set_autocast_enabled(at::kCPU, cpu);
        at::autocast::set_autocast_enabled(at::kCUDA, cuda);
        at::autocast::set_autocast_dtype(at::kCPU, cpu_dtype);
        at::autocast::set_autocast_dtype(at::kCUDA, cuda_dtype);
    }
};

at::Generator default_generator(at::Device device) {
    return at::globalContext().defaultGenerator(device.is_cuda() ? at::Device(at::kCUDA, device.index() < 0 ? 0 : device.index())
                                                                 : at::Device(at::kCPU));
}

}  // namespace

bool T5Network::checkpoint_blocks() const { return checkpointing_ && training_ && at::GradMode::is_enabled(); }

struct BlockCheckpoint : torch::autograd::Function<BlockCheckpoint> {
    static at::Tensor run(const T5Network& net, int64_t index, bool decoder, const std::vector<at::Tensor>& a) {
        if (decoder) return net.decoder_layer(net.decoder_[index], a[0], a[1], a[2], a[3]);
        return net.encoder_layer(net.encoder_[index], a[0], a[1]);
    }

    static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, at::TensorList acts_in,
                                                  at::TensorList params, int64_t net_ptr, int64_t index, bool decoder) {
        const std::vector<at::Tensor> acts = acts_in.vec();
        const auto* net = reinterpret_cast<const T5Network*>(net_ptr);
        ctx->saved_data["net"] = net_ptr;
        ctx->saved_data["index"] = index;
        ctx->saved_data["decoder"] = decoder;
        ctx->saved_data["acts"] = static_cast<int64_t>(acts.size());
        const AutocastState ac = AutocastState::current();
        ctx->saved_data["ac_cpu"] = ac.cpu;
        ctx->saved_data["ac_cuda"] = ac.cuda;
        ctx->saved_data["ac_cpu_dtype"] = static_cast<int64_t>(ac.cpu_dtype);
        ctx->saved_data["ac_cuda_dtype"] = static_cast<int64_t>(ac.cuda_dtype);
        if (net->training_ && (net->dropout_ > 0 || net->lora_dropout_ > 0)) {  // replay the same dropout masks in backward
            at::Generator gen = default_generator(net->device_);
            std::lock_guard<std::mutex> lock(gen.mutex());
            ctx->saved_data["rng"] = gen.get_state();
        }
        std::vector<at::Tensor> saved = acts;
        saved.insert(saved.end(), params.begin(), params.end());
        ctx->save_for_backward(saved);
        return {run(*net, index, decoder, acts)};
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grad_out) {
        const auto* net = reinterpret_cast<const T5Network*>(ctx->saved_data["net"].toInt());
        const int64_t index = ctx->saved_data["index"].toInt();
        const bool decoder = ctx->saved_data["decoder"].toBool();
        const auto n_acts = static_cast<size_t>(ctx->saved_data["acts"].toInt());
        std::vector<at::Tensor> saved = ctx->get_saved_variables();
        std::vector<at::Tensor> acts, targets;
        std::vector<int> target_slot;  // index into `saved` of each target
        for (size_t i = 0; i < saved.size(); ++i) {
            const bool needs = ctx->needs_input_grad(i) && saved[i].defined();
            if (i < n_acts) {
                at::Tensor a = saved[i].defined() ? saved[i].detach() : saved[i];
                if (needs) a.requires_grad_(true);
                acts.push_back(a);
                if (needs) targets.push_back(a), target_slot.push_back(static_cast<int>(i));
            } else if (needs) {
                targets.push_back(saved[i]), target_slot.push_back(static_cast<int>(i));
            }
        }
        at::Tensor out;
        {
            // Fork the RNG: replay the forward's state, then put the current one back.
            at::Generator gen = default_generator(net->device_);
            at::Tensor now;
            const bool replay = ctx->saved_data.count("rng") > 0;
            if (replay) {
                std::lock_guard<std::mutex> lock(gen.mutex());
                now = gen.get_state();
                gen.set_state(ctx->saved_data["rng"].toTensor());
            }
            const AutocastState before = AutocastState::current();
            AutocastState{ctx->saved_data["ac_cpu"].toBool(), ctx->saved_data["ac_cuda"].toBool(),
                          static_cast<at::ScalarType>(ctx->saved_data["ac_cpu_dtype"].toInt()),
                          static_cast<at::ScalarType>(ctx->saved_data["ac_cuda_dtype"].toInt())}
                .apply();
            {
                at::AutoGradMode grad(true);
                out = run(*net, index, decoder, acts);
            }
            before.apply();
            if (replay) {
                std::lock_guard<std::mutex> lock(gen.mutex());
                gen.set_state(now);
            }
        }
        torch::autograd::variable_list result(saved.size() + 3);
        if (!targets.empty()) {
            auto grads = torch::autograd::grad({out}, targets, {grad_out[0]}, /*retain_graph=*/false, /*create_graph=*/false,
                                               /*allow_unused=*/true);
            for (size_t k = 0; k < grads.size(); ++k) result[target_slot[k]] = grads[k];
        }
        return result;
    }
};

at::Tensor T5Network::checkpointed_block(size_t index, bool decoder, const std::vector<at::Tensor>& acts) const {
    // TensorList (not std::vector) so that autograd sees every element as an input.
    const std::vector<at::Tensor> weights = decoder ? block_params(decoder_[index]) : block_params(encoder_[index]);
    return BlockCheckpoint::apply(at::TensorList(acts), at::TensorList(weights), reinterpret_cast<int64_t>(this),
                                  static_cast<int64_t>(index), decoder)[0];
}

}  // namespace t5s
