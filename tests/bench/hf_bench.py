#!/usr/bin/env python3
"""transformers driver: loads the checkpoint once, runs each workload --warmup + --runs times and
prints one JSON object (see bench_common.py). dtype: fp32 | bf16 | fp16 (CUDA) | int8 (CPU: torch
dynamic quantisation of nn.Linear, the CPU int8 path transformers' docs point to)."""
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402

args = bc.driver_args(__doc__)

import torch  # noqa: E402

torch.set_num_threads(args.threads)
try:
    torch.set_num_interop_threads(1)
except RuntimeError:
    pass
import transformers  # noqa: E402

cuda = args.device.startswith("cuda")
device = torch.device("cuda:0" if cuda else "cpu")
dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "int8": torch.float32}
if args.dtype not in dtypes:
    sys.exit(f"hf_bench: unsupported dtype {args.dtype}")


def sync():
    if cuda:
        torch.cuda.synchronize()


def load(dtype):
    cls = transformers.AutoModelForSeq2SeqLM
    try:
        m = cls.from_pretrained(args.model, dtype=dtype)
    except TypeError:  # transformers < 4.56
        m = cls.from_pretrained(args.model, torch_dtype=dtype)
    m = m.to(device).eval()
    if args.dtype == "int8":
        if cuda:
            sys.exit("hf_bench: int8 is benchmarked on the CPU only")
        m = torch.ao.quantization.quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.qint8)
    return m


def ids_tensor(rows):
    return torch.tensor(rows, dtype=torch.long, device=device)


def generate(model, wl, seed):
    src = ids_tensor([bc.source_ids(i, args.input_len) for i in range(wl["batch"])])
    kw = dict(input_ids=src, attention_mask=torch.ones_like(src), max_new_tokens=args.new_tokens,
              min_new_tokens=args.new_tokens)
    if wl["kind"] == "beam":
        kw.update(num_beams=wl["beams"], num_return_sequences=1, do_sample=False)
    elif wl["kind"] == "sample":
        torch.manual_seed(seed)
        kw.update(do_sample=True, top_k=bc.sampling_top_k(), top_p=1.0, temperature=1.0,
                  num_return_sequences=wl["candidates"], num_beams=1)
    else:
        kw.update(do_sample=False, num_beams=1)
    with torch.inference_mode():
        out = model.generate(**kw)
    sync()
    new = out.shape[1] - 1  # minus the decoder start token
    return out.shape[0] * new, new, new


def train_step(model, opt, wl):
    b = wl["batch"]
    src = ids_tensor([bc.source_ids(i, args.train_src) for i in range(b)])
    labels = ids_tensor([bc.target_ids(i, args.train_tgt) for i in range(b)])
    opt.zero_grad(set_to_none=True)
    loss = model(input_ids=src, attention_mask=torch.ones_like(src), labels=labels).loss
    loss.backward()
    opt.step()
    sync()
    return b * args.train_tgt, args.train_tgt, args.train_tgt


def train_model(model, wl):
    """The model and optimizer a training workload steps: plain, gradient checkpointing, or PEFT
    LoRA (a fresh model each for the variants, so one does not carry into the next)."""
    if wl["variant"]:
        model = load(dtypes[args.dtype])
    if wl["variant"] == "ckpt":
        model.config.use_cache = False
        model.gradient_checkpointing_enable()
    elif wl["variant"] == "lora":
        import peft
        model = peft.get_peft_model(model, peft.LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05, target_modules=["q", "v"]))
    model.train()
    # fused=True: the AdamW that transformers' Trainer picks by default with torch >= 2.8.
    params = [p for p in model.parameters() if p.requires_grad]
    return model, torch.optim.AdamW(params, lr=1e-4, fused=True)


def main():
    result = {"engine": "transformers", "engine_version": transformers.__version__, "torch_version": torch.__version__,
              "dtype": args.dtype, "device": str(device), "threads": torch.get_num_threads(), "workloads": {}}
    result["rss_before_load_bytes"] = bc.current_rss()
    t = bc.now()
    model = load(dtypes[args.dtype])
    sync()
    result["load_s"] = bc.now() - t
    src = ids_tensor([bc.source_ids(0, args.input_len)])
    with torch.inference_mode():
        model.generate(input_ids=src, attention_mask=torch.ones_like(src), max_new_tokens=1, min_new_tokens=1)
    sync()
    result["first_token_s"] = bc.now() - t
    result["process_start_to_first_token_s"] = bc.seconds_since_process_start()
    result["rss_after_load_bytes"] = bc.current_rss()
    result["rss_after_load"] = bc.rss_breakdown()
    result["peak_rss_load_bytes"] = process_peak = bc.peak_rss()
    result["weight_bytes"] = sum(p.numel() * p.element_size() for p in model.parameters())

    # Training replaces the model (train mode, PEFT): it runs last, as in t5s_bench.
    for wl in sorted(args.workload_list, key=lambda w: w["kind"] == "train"):
        bc.reset_peak_rss()
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        if wl["kind"] == "train":
            if args.dtype != "fp32":
                continue
            model, opt = train_model(model, wl)
            fn = lambda seed: train_step(model, opt, wl)  # noqa: E731
        else:
            model.eval()
            fn = lambda seed: generate(model, wl, seed)  # noqa: E731
        runs, lo, hi, tokens = [], 1 << 30, 0, 0
        for i in range(args.warmup + args.runs):
            t = bc.now()
            tokens, mn, mx = fn(i)
            dt = bc.now() - t
            if i >= args.warmup:
                runs.append(dt)
                lo, hi = min(lo, mn), max(hi, mx)
        entry = {"runs_s": runs, "tokens": tokens, "new_tokens_min": lo, "new_tokens_max": hi,
                 "peak_rss_bytes": bc.peak_rss()}
        if cuda:
            entry["peak_gpu_bytes"] = torch.cuda.max_memory_allocated()
        result["workloads"][wl["name"]] = entry
        process_peak = max(process_peak, bc.peak_rss())
    result["peak_rss_bytes"] = max(process_peak, bc.peak_rss())
    bc.emit(result)


main()
