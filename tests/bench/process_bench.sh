#!/usr/bin/env bash
# Whole processes as a user runs them: start, load, N inputs, exit. `t5studio generate` against a
# CTranslate2 script doing the same work (Python start-up, SentencePiece, Translator, the same
# inputs, the same batch size, thread count and token count: every candidate is forced to exactly
# --new-tokens tokens on both sides, since the bench models have random weights). Also
# `t5studio` with T5S_EXIT_TEARDOWN=1 (the C++ runtime's full exit) to show what ending the
# process early wins. Every case runs once per round in turn, so a drifting machine slows all
# alike; wall medians and peak RSS (GNU time) per case, and the ratio of medians.
#
#   tests/bench/process_bench.sh [--model small] [--batches 1,8] [--dtypes fp32,int8] [--rows 64]
#                                [--new-tokens 32] [--threads 2] [--rounds 5] [--json FILE]
# Needs: the bench models (tests/bench/run.sh makes them: tests/bench/out/models/NAME and NAME-ct2),
# build/app/t5studio, ctranslate2 + sentencepiece in .venv, /usr/bin/time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exec "$root/.venv/bin/python" - "$root" "$@" <<'PY'
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

root = sys.argv[1]
ap = argparse.ArgumentParser(prog="process_bench.sh")
ap.add_argument("--model", default="small")
ap.add_argument("--batches", default="1,8")
ap.add_argument("--dtypes", default="fp32,int8")
ap.add_argument("--rows", type=int, default=64)
ap.add_argument("--new-tokens", type=int, default=32)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--json", default=None)
args = ap.parse_args(sys.argv[2:])
sys.path.insert(0, os.path.join(root, "tests", "bench"))
import bandwidth_limit  # noqa: E402  (the CPU class line)

models = os.path.join(root, "tests", "bench", "out", "models")
model, ct2_model = os.path.join(models, args.model), os.path.join(models, args.model + "-ct2")
app = os.path.join(root, "build", "app", "t5studio")
for need in (model, ct2_model, app, "/usr/bin/time"):
    if not os.path.exists(need):
        sys.exit(f"process_bench: missing {need} (tests/bench/run.sh --models {args.model} makes the models)")

work = tempfile.mkdtemp(prefix="t5s-process-bench-")
rows = os.path.join(work, "rows.txt")
tsv = os.path.join(root, "..", "shared", "data", "tatoeba-cmn-eng", "cmn-eng.tsv")
lines = [l.split("\t")[0] for l in open(tsv, encoding="utf-8")] if os.path.exists(tsv) else []
lines = [l for l in lines if len(l) > 30][: args.rows] or ["The weather is nice today, so we will walk."] * args.rows
open(rows, "w", encoding="utf-8").write("\n".join(lines) + "\n")

CT2 = r'''
import sys, ctranslate2, sentencepiece as spm
model, ct2_model, rows, batch, n, threads, compute = sys.argv[1:8]
sp = spm.SentencePieceProcessor(model_file=model + "/spiece.model")
tr = ctranslate2.Translator(ct2_model, device="cpu", compute_type=compute, intra_threads=int(threads), inter_threads=1)
src = [sp.encode(l.rstrip("\n"), out_type=str) + ["</s>"] for l in open(rows, encoding="utf-8") if l.strip()]
n = int(n)
for r in tr.translate_batch(src, max_batch_size=int(batch), beam_size=1, min_decoding_length=n,
                            max_decoding_length=n, return_scores=False):
    print(sp.decode(r.hypotheses[0]))
'''


def cases(batch, dtype):
    t5s = [app, "generate", "--model", model, "--input", rows, "--batch-size", str(batch), "--dtype", dtype,
           "--threads", str(args.threads), "--min-new-tokens", str(args.new_tokens),
           "--max-new-tokens", str(args.new_tokens), "--no-model-scores"]
    compute = {"fp32": "float32", "int8": "int8"}[dtype]
    ct2 = [sys.executable, "-c", CT2, model, ct2_model, rows, str(batch), str(args.new_tokens), str(args.threads), compute]
    return [("t5studio", t5s, {}), ("t5studio_full_exit", t5s, {"T5S_EXIT_TEARDOWN": "1"}), ("ctranslate2", ct2, {})]


def run_once(argv, env_extra):
    with tempfile.NamedTemporaryFile("r") as rss:
        env = dict(os.environ, **env_extra)
        start = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + argv, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.monotonic() - start
        if p.returncode != 0:
            sys.exit(f"process_bench: {argv[0]} failed ({p.returncode}): {p.stderr.decode()[-400:]}")
        return wall, int(rss.read().split()[-1]) / 1024


print("CPU class:", bandwidth_limit.cpu_class(), flush=True)
report = {"cpu_class": bandwidth_limit.cpu_class(), "model": args.model, "rows": args.rows, "new_tokens": args.new_tokens, "threads": args.threads, "results": []}
print(f"{args.model}, {args.rows} inputs x {args.new_tokens} tokens, {args.threads} threads, {args.rounds} rounds")
print("| batch | dtype | t5studio s | full exit s | CTranslate2 s | CT2 / t5studio | exit saves | RSS MB t5s / CT2 |")
print("|---|---|---|---|---|---|---|---|")
for batch in [int(b) for b in args.batches.split(",")]:
    for dtype in args.dtypes.split(","):
        times = {}
        rss = {}
        for r in range(args.rounds):
            order = cases(batch, dtype)
            for name, argv, env in (order if r % 2 == 0 else order[::-1]):
                w, m = run_once(argv, env)
                times.setdefault(name, []).append(w)
                rss[name] = max(rss.get(name, 0), m)
        med = {k: statistics.median(v) for k, v in times.items()}
        row = {"batch": batch, "dtype": dtype, "median_s": med, "peak_rss_mb": rss, "runs_s": times}
        report["results"].append(row)
        print(f"| {batch} | {dtype} | {med['t5studio']:.2f} | {med['t5studio_full_exit']:.2f} | {med['ctranslate2']:.2f} | "
              f"{med['ctranslate2'] / med['t5studio']:.2f}x | {1000 * (med['t5studio_full_exit'] - med['t5studio']):.0f} ms | "
              f"{rss['t5studio']:.0f} / {rss['ctranslate2']:.0f} |", flush=True)
if args.json:
    json.dump(report, open(args.json, "w"), indent=1)
shutil.rmtree(work)
PY
