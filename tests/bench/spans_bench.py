#!/usr/bin/env python3
"""Protected spans on real sentences, with the bundled demo model, in one run.

Picks sentences that contain numbers (digits: counts, ages, years, times, prices) from JGLUE JSTS
(paraphrase: Japanese), Tatoeba English (translate English to Chinese) and Tatoeba Chinese
(translate Chinese to English), lets the detectors find their spans (`--protect numbers`), and runs
`t5studio generate` on the same rows twice per task, alternating, without and with protection:

- keep: share of candidates that contain every span of their input exactly as often as the input
  (with protection, candidates dropped as lost_span count as not kept);
- forced: share of protected candidates where the decoder had to force a sentinel;
- back_score: mean over the returned candidates (no embedder in the demo: no similarity);
- time: wall seconds of each run (model load included, same in both) and the ratio.

Usage: tests/bench/spans_bench.py [--bin build/app/t5studio] [--per-task 20] [--beams 4]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "..", "shared", "data")


def pick(n):
    digits = re.compile(r"[0-9]")
    jsts, en, zh = [], [], []
    with open(os.path.join(DATA, "jglue-jsts", "valid.jsonl"), encoding="utf-8") as f:
        for line in f:
            s = json.loads(line)["sentence1"]
            if digits.search(s) and s not in jsts:
                jsts.append(s)
    with open(os.path.join(DATA, "tatoeba-cmn-eng", "cmn-eng.tsv"), encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 2:
                continue
            if digits.search(parts[0]) and parts[0] not in en:
                en.append(parts[0])
            if digits.search(parts[1]) and parts[1] not in zh:
                zh.append(parts[1])
    # Spread over the file, deterministic.
    spread = lambda xs: [xs[i * len(xs) // n] for i in range(n)] if len(xs) > n else xs
    return {"paraphrase: ": spread(jsts), "translate English to Chinese: ": spread(en), "translate Chinese to English: ": spread(zh)}


def run(binary, model, rows_path, prefix, beams, protect):
    cmd = [binary, "generate", "--model", model, "--input", rows_path, "--prefix", prefix, "--beams", str(beams),
           "--num-return", str(beams), "--max-new-tokens", "40", "--keep-dropped", "--threads", "1"]
    if protect:
        cmd += ["--protect", "numbers"]
    start = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.monotonic() - start, [json.loads(l) for l in out.splitlines() if l.strip()]


def keeps(text, pieces, source):
    return all(text.count(p) == source.count(p) for p in pieces)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "app", "t5studio"))
    ap.add_argument("--model", default=os.path.join(ROOT, "assets", "demo-model"))
    ap.add_argument("--per-task", type=int, default=20)
    ap.add_argument("--beams", type=int, default=4)
    a = ap.parse_args()
    totals = {False: {"n": 0, "kept": 0, "forced": 0, "lost": 0, "back": [], "len": [], "time": 0.0},
              True: {"n": 0, "kept": 0, "forced": 0, "lost": 0, "back": [], "len": [], "time": 0.0}}
    spans_total = 0
    counted = [0]
    with tempfile.TemporaryDirectory() as tmp:
        for prefix, texts in pick(a.per_task).items():
            rows = os.path.join(tmp, "rows.jsonl")
            with open(rows, "w", encoding="utf-8") as f:
                for t in texts:
                    f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
            results = {}
            for protect in (False, True):  # same rows, one after the other
                seconds, results[protect] = run(a.bin, a.model, rows, prefix, a.beams, protect)
                totals[protect]["time"] += seconds
            for plain, prot in zip(results[False], results[True]):
                source = prot["input"]
                pieces = [source[s:e] for s, e, _ in prot.get("spans", [])]
                if not pieces:  # digits inside a word ("MP3"): nothing detected, nothing to keep
                    continue
                spans_total += len(pieces)
                counted[0] += 1
                for protect, r in ((False, plain), (True, prot)):
                    t = totals[protect]
                    lost = [d for d in r.get("dropped", []) if d["reason"] == "lost_span"]
                    t["n"] += len(r["candidates"]) + len(lost)
                    t["lost"] += len(lost)
                    t["len"] += [len(c["ids"]) for c in r["candidates"]]
                    t["kept"] += sum(keeps(c["text"], pieces, source) for c in r["candidates"])
                    t["forced"] += sum(c.get("forced_spans", 0) > 0 for c in r["candidates"])
                    t["back"] += [c["back_score"] for c in r["candidates"] if c["back_score"] is not None]
    print(f"spans_bench: {counted[0]} sentences with numbers (JSTS ja paraphrase, Tatoeba en->zh, zh->en), {spans_total} spans, "
          f"demo model, beams {a.beams}, {a.beams} candidates each, 1 thread")
    print("| | candidates decoded | keep all spans (decoded) | dropped lost_span | returned keeping all | needed forcing | "
          "mean back_score | mean tokens | time (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for protect in (False, True):
        t = totals[protect]
        mean = sum(t["back"]) / len(t["back"]) if t["back"] else float("nan")
        forced = f"{100.0 * t['forced'] / max(t['n'], 1):.1f} %" if protect else "-"
        returned = t["n"] - t["lost"]
        print(f"| {'with --protect numbers' if protect else 'without protection'} | {t['n']} | "
              f"{100.0 * t['kept'] / max(t['n'], 1):.1f} % | {t['lost']} | {100.0 * t['kept'] / max(returned, 1):.1f} % | {forced} | "
              f"{mean:.3f} | {sum(t['len']) / max(len(t['len']), 1):.1f} | {t['time']:.1f} |")
    print(f"speed cost: {totals[True]['time'] / totals[False]['time']:.2f}x the time without protection")
    return 0


if __name__ == "__main__":
    sys.exit(main())
