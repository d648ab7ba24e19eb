"""The distance to the physics for batch-1 decoding: the CPU class, the measured read
bandwidth, and the tokens/s a batch-1 greedy step could reach if it did nothing but stream the weights
it must read once per token.

Per generated token a T5 decoder reads every decoder weight except the cross-attention K/V
projections (applied once per input) plus the LM head: L * (4 d h + 2 d h + ffn * d * d_ff) + V * d
values, h = num_heads * d_kv, ffn = 3 for gated activations else 2, each at the dtype's width (int8: 1
byte; scales, norms, biases and the relative-position table are left out). t5-small fp32: ~154 MB.
Not counted either: the encoder and the cross-attention K/V (once per input), the KV cache and the
activations. A batch of B rows (or B x K samples) reads the weights once per step for all of them, so
streaming_limit() divides the step's bytes by the tokens the step returns; at large batches the real
limit is arithmetic, not bandwidth, and the share falls accordingly."""
import json
import os
import time


# T5S_CPU_CLASS values (docs/performance.md "CPU kernels") and the names cpu_class() reports for them.
FORCED_CLASS_NAMES = {"x86-64": "portable", "avx2": "AVX2", "avx512": "AVX-512", "avx512-vnni": "AVX-512 VNNI/BF16", "amx": "AMX"}


def cpu_class():
    """The kernel class the engine runs: the CPU's, or the lower one T5S_CPU_CLASS forces (then both)."""
    detected = detected_cpu_class()
    forced = FORCED_CLASS_NAMES.get(os.environ.get("T5S_CPU_CLASS", "").strip().lower())
    order = list(FORCED_CLASS_NAMES.values())
    if forced and detected in order and order.index(forced) < order.index(detected):
        return f"{forced} (T5S_CPU_CLASS; CPU: {detected})"
    return detected


def detected_cpu_class():
    """The kernel class the CPU's flags allow, most capable first (what the engine's paths key on)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return "unknown"
    has = set(flags).__contains__
    if has("amx_int8") and has("amx_tile"):
        return "AMX"
    if has("avx512f") and has("avx512_vnni") and has("avx512_bf16"):
        return "AVX-512 VNNI/BF16"
    if has("avx512f"):
        return "AVX-512"
    if has("avx2") and has("fma"):
        return "AVX2"
    return "portable"


def read_bandwidth_gbs(threads, gib=1.0, repeats=5):
    """Best of `repeats` vectorised sums over a `gib` GiB float32 tensor with `threads` threads (GB/s)."""
    import torch
    torch.set_num_threads(max(1, threads))
    data = torch.ones(int(gib * (1 << 30)) // 4, dtype=torch.float32)
    data.sum()  # page in
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        data.sum()
        best = min(best, time.perf_counter() - start)
    return data.numel() * 4 / best / 1e9


def bytes_per_token(model_dir, weight_bytes):
    """Weight bytes one batch-1 decoding step must read, from the model's config.json."""
    with open(os.path.join(model_dir, "config.json")) as f:
        c = json.load(f)
    d, d_ff, vocab = c["d_model"], c["d_ff"], c["vocab_size"]
    inner = c["num_heads"] * c["d_kv"]
    layers = c.get("num_decoder_layers") or c["num_layers"]
    ffn = 3 if str(c.get("feed_forward_proj", "relu")).startswith("gated") else 2
    values = layers * (6 * d * inner + ffn * d * d_ff) + vocab * d
    return values * weight_bytes


WEIGHT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "int8": 1}


def tokens_per_step(workload):
    """Tokens a decoding step of a bench workload adds to the returned sequences (bench_common.parse_workload):
    greedy and beam return one sequence per input, sampling `candidates` per input."""
    return workload["batch"] * (workload["candidates"] if workload["kind"] == "sample" else 1)


def streaming_limit(model_dir, dtype, bandwidth_gbs, workload):
    """The time a returned token would take if a step did nothing but stream its weights once:
    bytes_per_token() / bandwidth / tokens_per_step(). None for training and dtypes without a width."""
    if dtype not in WEIGHT_BYTES or workload["kind"] == "train":
        return None
    step_bytes = bytes_per_token(model_dir, WEIGHT_BYTES[dtype])
    per_step = tokens_per_step(workload)
    return {"bytes_per_step": step_bytes, "tokens_per_step": per_step,
            "ms_per_token": step_bytes / (bandwidth_gbs * 1e9) / per_step * 1e3}


def limit_tokens_per_s(model_dir, dtype, bandwidth_gbs):
    """The batch-1 tokens/s at which weight streaming alone would take all the measured bandwidth."""
    if dtype not in WEIGHT_BYTES:
        return None
    return bandwidth_gbs * 1e9 / bytes_per_token(model_dir, WEIGHT_BYTES[dtype])


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--model", help="a T5 folder: also print its batch-1 limits")
    a = ap.parse_args()
    bw = read_bandwidth_gbs(a.threads)
    print(f"CPU class {cpu_class()}; read bandwidth {bw:.1f} GB/s with {a.threads} threads")
    if a.model:
        for dtype in ("fp32", "bf16", "int8"):
            mb = bytes_per_token(a.model, WEIGHT_BYTES[dtype]) / 1e6
            print(f"{dtype}: {mb:.0f} MB per token -> at most {limit_tokens_per_s(a.model, dtype, bw):.0f} tok/s at batch 1")
