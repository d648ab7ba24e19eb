"""Shared by the Python drivers (hf_bench.py, ct2_bench.py) and run_bench.py: workload names,
deterministic inputs (t5s_bench.cpp computes the same ids), memory and timing helpers, and the
driver command line. Every driver prints one JSON object on stdout.

Workload names (the name is the definition):
  greedy_bN     greedy, N inputs
  beamK_bN      beam search with K beams (1 returned sequence), N inputs
  sampleK_bN    top-k 50 sampling, K candidates per input, N inputs (N*K sequences)
  train_bN      one training step (forward, loss, backward, AdamW), N rows of --train-src/--train-tgt tokens
  train_ckpt_bN the same with gradient checkpointing (activations recomputed in the backward)
  train_lora_bN the same with LoRA r 8, alpha 16, dropout 0.05 on q,v (the trainer's defaults; PEFT for transformers)
Every generation produces exactly --new-tokens tokens per sequence (min = max new tokens).
"""
import argparse
import json
import os
import re
import time

_WORKLOAD = re.compile(r"^(greedy|beam(\d+)|sample(\d+)|train(?:_(ckpt|lora))?)_b(\d+)$")


def parse_workload(name):
    m = _WORKLOAD.match(name)
    if not m:
        raise SystemExit(f"bad workload name '{name}' (greedy_bN, beamK_bN, sampleK_bN, train_bN, train_ckpt_bN, train_lora_bN)")
    kind = m.group(1)
    batch = int(m.group(5))
    if kind.startswith("beam"):
        return {"name": name, "kind": "beam", "batch": batch, "beams": int(m.group(2)), "candidates": 1}
    if kind.startswith("sample"):
        return {"name": name, "kind": "sample", "batch": batch, "beams": 1, "candidates": int(m.group(3))}
    if kind.startswith("train"):
        return {"name": name, "kind": "train", "variant": m.group(4) or "", "batch": batch, "beams": 1, "candidates": 1}
    return {"name": name, "kind": kind, "batch": batch, "beams": 1, "candidates": 1}


def source_ids(row, length):
    """Row `row` of a benchmark input: length-1 ordinary T5 pieces (ids in [3, 31993)) then </s> (id 1)."""
    return [3 + (row * 7919 + j * 104729 + 12345) % 31990 for j in range(length - 1)] + [1]


def target_ids(row, length):
    return [3 + (row * 6007 + j * 15485863 + 777) % 31990 for j in range(length - 1)] + [1]


def sampling_top_k():
    return 50  # transformers' GenerationConfig default; every engine is given it explicitly


# ---- memory / time ----------------------------------------------------------------------------

def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def peak_rss():
    return _status_kb("VmHWM")


def current_rss():
    return _status_kb("VmRSS")


def rss_breakdown():
    """Anonymous (heap: weights, activations) and file-backed (mapped libraries) resident bytes."""
    return {"anon": _status_kb("RssAnon"), "file": _status_kb("RssFile")}


def reset_peak_rss():
    """Resets VmHWM to the current RSS (Linux >= 4.0), so each workload reports its own peak."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def seconds_since_process_start():
    """Wall time since this process was started (from /proc, 10 ms resolution)."""
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    start_ticks = int(fields[19])  # field 22 overall: starttime
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def now():
    return time.perf_counter()


# ---- driver command line -------------------------------------------------------------------------

def driver_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--model", required=True)
    ap.add_argument("--dtype", default="fp32")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--workloads", default="greedy_b1")
    ap.add_argument("--input-len", type=int, default=32)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--train-src", type=int, default=64)
    ap.add_argument("--train-tgt", type=int, default=32)
    args = ap.parse_args()
    args.workload_list = [parse_workload(w) for w in args.workloads.split(",") if w]
    return args


def emit(result):
    print(json.dumps(result), flush=True)
