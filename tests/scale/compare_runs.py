#!/usr/bin/env python3
"""Compare two training runs: per-step losses of their train_log.jsonl and the tensors of their
final/model.safetensors (a LoRA run's final/adapter_model.safetensors), each within an absolute tolerance. Standard library only.

usage: compare_runs.py RUN_A RUN_B [--tol 1e-5] [--from-step N]
Prints the largest differences; exits 1 when a difference exceeds the tolerance or a step or tensor
is missing on one side."""
import argparse, json, struct, sys
from array import array
from pathlib import Path


def losses(run: Path, from_step: int):
    out = {}
    for line in (run / "train_log.jsonl").read_text().splitlines():
        j = json.loads(line)
        if "loss" in j and j.get("step", 0) >= from_step:
            out[j["step"]] = j["loss"]
    return out


def tensors(file: Path):
    data = file.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            raise SystemExit(f"{file}: {name} is {t['dtype']}, expected F32")
        a, b = t["data_offsets"]
        out[name] = array("f", data[8 + n + a:8 + n + b])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a"), p.add_argument("b")
    p.add_argument("--tol", type=float, default=1e-5)
    p.add_argument("--from-step", type=int, default=1)
    args = p.parse_args()
    a, b = Path(args.a), Path(args.b)
    la, lb = losses(a, args.from_step), losses(b, args.from_step)
    if sorted(la) != sorted(lb) or not la:
        print(f"steps differ: {sorted(la)} vs {sorted(lb)}")
        return 1
    loss_diff = max(abs(la[s] - lb[s]) for s in la)
    weights = "model.safetensors" if (a / "final" / "model.safetensors").exists() else "adapter_model.safetensors"  # LoRA
    ta, tb = tensors(a / "final" / weights), tensors(b / "final" / weights)
    if sorted(ta) != sorted(tb):
        print("tensor names differ")
        return 1
    weight_diff, worst = 0.0, ""
    for name in ta:
        d = max((abs(x - y) for x, y in zip(ta[name], tb[name])), default=0.0)
        if d > weight_diff:
            weight_diff, worst = d, name
    print(f"{len(la)} steps: max |loss diff| {loss_diff:.3g}; {len(ta)} tensors: max |weight diff| {weight_diff:.3g} ({worst})")
    return 0 if loss_diff <= args.tol and weight_diff <= args.tol else 1


if __name__ == "__main__":
    sys.exit(main())
