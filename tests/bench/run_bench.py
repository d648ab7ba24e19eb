#!/usr/bin/env python3
"""T5 Studio vs transformers vs CTranslate2, same checkpoint, same inputs, same thread count, one run.

Makes the random-weight checkpoints once (make_models.py), then runs one process per
(model, engine, dtype) — each loads the model once and runs every workload --warmup + --runs
times — and writes OUT/results.json (everything, raw run times included) and OUT/results.md.

  tests/bench/run.sh [--models small,base,large,mt5-base] [--runs 5] [--quick] [--threads 2] [--device cpu|cuda]
                     [--engines t5studio,transformers,ctranslate2] [--dtypes fp32,bf16,int8]
                     [--workloads greedy_b1,...] [--input-len 32] [--new-tokens 32] [--tag NAME]
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bandwidth_limit  # noqa: E402
import bench_common as bc  # noqa: E402

ENGINES = ["t5studio", "transformers", "ctranslate2"]
LABEL = {"t5studio": "T5 Studio", "transformers": "transformers", "ctranslate2": "CTranslate2"}
DEFAULT_WORKLOADS = "greedy_b1,greedy_b8,greedy_b32,beam4_b8,sample8_b4,train_b8,train_ckpt_b8,train_lora_b8"
QUICK_WORKLOADS = "greedy_b1,greedy_b8,beam4_b8,sample8_b4,train_b8"
MB = 1024.0 * 1024.0


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


_CT2_TYPES = {}


def supported_dtypes(engine, device, python, hf_int8=False):
    if engine == "t5studio":
        return ["fp32", "bf16", "int8"] + (["fp16"] if device == "cuda" else [])
    if engine == "transformers":
        return ["fp32", "bf16"] + (["fp16"] if device == "cuda" else ["int8"] if hf_int8 else [])
    if device in _CT2_TYPES:
        return _CT2_TYPES[device]
    code = ("import ctranslate2,json;print(json.dumps(sorted(ctranslate2.get_supported_compute_types('%s'))))" % device)
    try:
        types = json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60).stdout)
    except Exception:
        return []
    names = {"float32": "fp32", "int8": "int8", "bfloat16": "bf16", "float16": "fp16"}
    _CT2_TYPES[device] = [names[t] for t in types if t in names]
    return _CT2_TYPES[device]


def driver_command(engine, model_dirs, python, t5s_bench):
    if engine == "t5studio":
        return [t5s_bench, "--model", model_dirs["hf"]]
    if engine == "transformers":
        return [python, os.path.join(HERE, "hf_bench.py"), "--model", model_dirs["hf"]]
    return [python, os.path.join(HERE, "ct2_bench.py"), "--model", model_dirs["ct2"]]


def run_driver(cmd, env, timeout):
    t = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        return {"error": f"exit {p.returncode}: " + " | ".join(tail)}
    out = json.loads(lines[-1])
    out["wall_s"] = time.time() - t
    return out


def summarise(entry):
    runs = entry["runs_s"]
    tok = entry["tokens"]
    med = statistics.median(runs)
    return {"tokens_per_s": tok / med, "tokens_per_s_min": tok / max(runs), "tokens_per_s_max": tok / min(runs),
            "median_s": med, "ms_per_token": med / tok * 1e3, "runs": len(runs), "tokens": tok,
            "peak_rss_mb": entry["peak_rss_bytes"] / MB,
            "peak_gpu_mb": entry.get("peak_gpu_bytes", 0) / MB if "peak_gpu_bytes" in entry else None,
            "exact_new_tokens": entry["new_tokens_min"] == entry["new_tokens_max"]}


def merge_rounds(entries):
    """One (model, engine, dtype) measured in several rounds: runs pooled, peaks maxed, load times median."""
    ok = [e for e in entries if "error" not in e]
    if not ok:
        return entries[0]
    m = dict(ok[0])
    m["workloads"] = {}
    for wl in ok[0]["workloads"]:
        ws = [e["workloads"][wl] for e in ok if wl in e["workloads"]]
        w = dict(ws[0])
        w["runs_s"] = [x for e in ws for x in e["runs_s"]]
        w["peak_rss_bytes"] = max(e["peak_rss_bytes"] for e in ws)
        if "peak_gpu_bytes" in w:
            w["peak_gpu_bytes"] = max(e.get("peak_gpu_bytes", 0) for e in ws)
        w["new_tokens_min"] = min(e["new_tokens_min"] for e in ws)
        w["new_tokens_max"] = max(e["new_tokens_max"] for e in ws)
        m["workloads"][wl] = w
    for k in ("load_s", "first_token_s", "process_start_to_first_token_s"):
        m[k] = statistics.median(e[k] for e in ok)
    m["peak_rss_bytes"] = max(e["peak_rss_bytes"] for e in ok)
    m["rounds"] = len(ok)
    return m


def fmt_tps(s):
    if not s:
        return "—"
    return f"{s['tokens_per_s']:.1f} ({s['tokens_per_s_min']:.1f}–{s['tokens_per_s_max']:.1f})"


def fmt_ratio(a, b):
    if not a or not b:
        return "—"
    return f"{a['tokens_per_s'] / b['tokens_per_s']:.2f}x"


def add_streaming_limits(rows, model_dirs, bandwidth_gbs):
    """Per generation row: the time a returned token would take if each step only streamed its weights
    (bandwidth_limit.streaming_limit) and, per engine, share_of_limit = that time / the measured time."""
    for r in rows:
        limit = bandwidth_limit.streaming_limit(model_dirs[r["model"]]["hf"], r["dtype"], bandwidth_gbs,
                                                bc.parse_workload(r["workload"]))
        if not limit:
            continue
        r["streaming_limit"] = limit
        for s in r["engines"].values():
            s["share_of_limit"] = limit["ms_per_token"] / s["ms_per_token"]


def fmt_limit(r):
    lim = r.get("streaming_limit")
    return f"{lim['ms_per_token']:.3g}" if lim else "—"


def fmt_shares(r):
    if not r.get("streaming_limit"):
        return "—"
    return " / ".join(f"{r['engines'][e]['share_of_limit'] * 100:.0f} %" if r["engines"].get(e) else "—" for e in ENGINES)


def bandwidth_readings(meta):
    """Which readings the limit's bandwidth is the highest of: before, between rounds, after."""
    between = meta.get("read_bandwidth_gbs_between") or []
    middle = f", between rounds ({', '.join(f'{b:.1f}' for b in between)})" if between else ""
    return (f"the highest of the read bandwidth measured before the run ({meta['read_bandwidth_gbs_before']:.1f}){middle} "
            f"and after it ({meta['read_bandwidth_gbs_after']:.1f})")


def bandwidth_median(meta):
    """The median of every reading (before, between rounds, after)."""
    readings = [meta["read_bandwidth_gbs_before"], *(meta.get("read_bandwidth_gbs_between") or []), meta["read_bandwidth_gbs_after"]]
    return statistics.median(readings)


def spread_warning(meta):
    """The limit takes the highest reading (#40's rule). On a shared VM one reading can stand far above
    the rest (71.9 and 75.4 GB/s against 38-45 on 2026-12-07): then every share rests on that moment,
    and the reader needs the factor to the typical reading to see what the run had."""
    median = bandwidth_median(meta)
    factor = meta["read_bandwidth_gbs"] / median if median else 1.0
    if factor < 1.2:
        return []
    return ["", f"The readings spread: the highest ({meta['read_bandwidth_gbs']:.1f} GB/s) is {factor:.2f}x their median "
                f"({median:.1f} GB/s). Against the median every share above would be {factor:.2f}x higher; the shares "
                f"as printed keep the rule (the highest reading)."]


def limit_explanation(meta):
    if not meta.get("read_bandwidth_gbs"):
        return []
    return ["", f"Streaming limit: the ms a returned token would take if every decoding step only read its weights once at "
                f"{meta['read_bandwidth_gbs']:.1f} GB/s ({bandwidth_readings(meta)}; CPU class {meta['cpu_class']}). Counted per step: every decoder weight but the cross-attention K/V projections, plus "
                f"the LM head, at the dtype's width (int8 1 byte); not counted: encoder, cross K/V, KV cache, activations. "
                f"A step's bytes are shared by the tokens it returns (batch, x candidates when sampling). Share = limit / "
                f"measured ms per token (100 % = bandwidth-bound; large batches are compute-bound, so their share is low)."] + spread_warning(meta)


def build_markdown(meta, models, rows, loads, notes):
    md = [f"# T5 Studio benchmark ({meta['device']})", ""]
    md.append(f"- date: {meta['date']}; CPU: {meta['cpu']} ({meta['cpus']} logical CPUs); threads per engine: {meta['threads']}")
    if meta.get("read_bandwidth_gbs"):
        md.append(f"- CPU class {meta['cpu_class']}; measured read bandwidth {meta['read_bandwidth_gbs']:.1f} GB/s, "
                  f"{bandwidth_readings(meta)} ({meta['threads']} threads, best of 5 sums over 1 GiB)")
    if meta.get("gpu"):
        md.append(f"- GPU: {meta['gpu']}")
    md.append(f"- versions: T5 Studio {meta['versions'].get('t5studio', '?')} (LibTorch {meta['versions'].get('libtorch', '?')}), "
              f"transformers {meta['versions'].get('transformers', '?')} (torch {meta['versions'].get('torch', '?')}), "
              f"CTranslate2 {meta['versions'].get('ctranslate2', '?')}")
    md.append(f"- load average (1/5/15 min) at start: {meta['loadavg_start']}; at end: {meta['loadavg_end']}"
              f"{' — machine was busy: numbers are noisy' if meta['busy'] else ''}")
    md.append(f"- inputs: {meta['input_len']} tokens; exactly {meta['new_tokens']} new tokens per sequence (min = max new "
              f"tokens); median of {meta['runs'] * meta.get('rounds', 1)} runs ({meta.get('rounds', 1)} round(s) of {meta['runs']}, "
              f"engines alternating) after {meta['warmup']} warm-up each, (min–max) in brackets; sampling: top-k 50; "
              f"train: batch 8, {meta['train_src']} source / {meta['train_tgt']} target tokens, AdamW, dropout 0.1, fp32")
    md.append(f"- command: `{meta['command']}`; wall time {meta['wall_min']:.1f} min; source: {meta.get('git', '?')}")
    md.append("")
    md.append("tokens/s = generated tokens (all returned sequences) / wall time; train: target tokens / step time. "
              "Ratios compare medians at the same dtype. transformers int8 (with --hf-int8) = torch dynamic quantisation of nn.Linear. "
              "CTranslate2 int8 = compute_type int8 (int8 GEMMs, float32 elsewhere).")
    for model in models:
        md += ["", f"## {model}", ""]
        md.append("| workload | dtype | T5 Studio tok/s | transformers tok/s | CTranslate2 tok/s | T5S / HF | T5S / CT2 | "
                  "peak RSS MB (T5S / HF / CT2) | limit ms/token | share of limit (T5S / HF / CT2) |"
                  + (" peak GPU MB (T5S / HF) |" if meta["device"] == "cuda" else ""))
        md.append("|---|---|---|---|---|---|---|---|---|---|" + ("---|" if meta["device"] == "cuda" else ""))
        for r in [r for r in rows if r["model"] == model]:
            s = r["engines"]
            rss = " / ".join(f"{s[e]['peak_rss_mb']:.0f}" if s.get(e) else "—" for e in ENGINES)
            line = (f"| {r['workload']} | {r['dtype']} | {fmt_tps(s.get('t5studio'))} | {fmt_tps(s.get('transformers'))} | "
                    f"{fmt_tps(s.get('ctranslate2'))} | {fmt_ratio(s.get('t5studio'), s.get('transformers'))} | "
                    f"{fmt_ratio(s.get('t5studio'), s.get('ctranslate2'))} | {rss} | {fmt_limit(r)} | {fmt_shares(r)} |")
            if meta["device"] == "cuda":
                line += " " + " / ".join(f"{s[e]['peak_gpu_mb']:.0f}" if s.get(e) and s[e]["peak_gpu_mb"] is not None
                                         else "—" for e in ["t5studio", "transformers"]) + " |"
            md.append(line)
        md += limit_explanation(meta) if model == models[0] else []
        md += ["", "| engine | dtype | load s | load → first token s | process start → first token s | "
               "RSS before load MB | peak RSS MB (whole process) | weight MB |", "|---|---|---|---|---|---|---|---|"]
        for ld in [x for x in loads if x["model"] == model]:
            md.append(f"| {LABEL[ld['engine']]} | {ld['dtype']} | {ld['load_s']:.2f} | {ld['first_token_s']:.2f} | "
                      f"{ld['process_start_to_first_token_s']:.2f} | {ld['rss_before_load_mb']:.0f} | {ld['peak_rss_mb']:.0f} | "
                      f"{ld['weight_mb']:.0f} |".replace("| nan |", "| — |") if ld.get("load_s") is not None else
                      f"| {LABEL[ld['engine']]} | {ld['dtype']} | failed: {ld.get('error', '?')} | | | | | |")
    if notes:
        md += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(md) + "\n"


def acceptance_notes(rows, loads, device):
    """The speed and memory targets, checked on this run."""
    notes = []
    for r in rows:
        s, w = r["engines"], r["workload"]
        t5s = s.get("t5studio")
        if not t5s:
            continue
        if not t5s["exact_new_tokens"]:
            notes.append(f"{r['model']} {w} {r['dtype']}: T5 Studio did not produce exactly the requested new tokens")
        ct2 = s.get("ctranslate2")
        if device == "cpu" and ct2 and t5s["peak_rss_mb"] > 1.2 * ct2["peak_rss_mb"]:
            notes.append(f"RSS target missed: {r['model']} {w} {r['dtype']} peak {t5s['peak_rss_mb']:.0f} MB = "
                         f"{t5s['peak_rss_mb'] / ct2['peak_rss_mb']:.2f}x CTranslate2's {ct2['peak_rss_mb']:.0f} MB (target <= 1.2x)")
        if w.startswith(("greedy", "beam")):
            hf, ct = s.get("transformers"), s.get("ctranslate2")
            if hf and t5s["tokens_per_s"] / hf["tokens_per_s"] < 3.0:
                notes.append(f"below target: {r['model']} {w} {r['dtype']} T5S/HF = "
                             f"{t5s['tokens_per_s'] / hf['tokens_per_s']:.2f}x (target >= 3x)")
            if ct and t5s["tokens_per_s"] / ct["tokens_per_s"] < 1.0:
                notes.append(f"below target: {r['model']} {w} {r['dtype']} T5S/CT2 = "
                             f"{t5s['tokens_per_s'] / ct['tokens_per_s']:.2f}x (target >= 1.0x)")
        if re.match(r"train_b\d+$", w):  # the plain step; checkpointed and LoRA steps are measured beside it
            hf = s.get("transformers")
            if hf and t5s["tokens_per_s"] / hf["tokens_per_s"] < 1.4:
                notes.append(f"below target: {r['model']} {w} T5S/HF = {t5s['tokens_per_s'] / hf['tokens_per_s']:.2f}x (target >= 1.4x)")
    if device == "cpu":
        for ld in loads:
            if ld["engine"] != "t5studio" or ld.get("weight_mb") is None:
                continue
            # The target's weight bytes are the checkpoint's parameters at this dtype, not what the
            # engine holds (packed duplicates of the head would otherwise raise the limit).
            limit = 1.2 * ld.get("param_mb_at_dtype", ld["weight_mb"]) + 150
            inf = [r["engines"]["t5studio"]["peak_rss_mb"] for r in rows if r["model"] == ld["model"] and
                   r["dtype"] == ld["dtype"] and r["engines"].get("t5studio") and not r["workload"].startswith("train")]
            if inf and max(inf) > limit:
                notes.append(f"RSS target missed: {ld['model']} {ld['dtype']} inference peak {max(inf):.0f} MB > 1.2 x weights "
                             f"+ 150 = {limit:.0f} MB (RSS before load: {ld['rss_before_load_mb']:.0f} MB, "
                             f"after load: anon {ld['rss_after_load_anon_mb']:.0f} MB + libraries {ld['rss_after_load_file_mb']:.0f} MB)")
    return notes


def git_state():
    """Commit and the engine files changed since it: numbers belong to this working tree."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "engine"], capture_output=True,
                               text=True).stdout.split("\n")
        changed = [line[3:] for line in dirty if line.strip()]
        return head + (f" + uncommitted changes in {len(changed)} engine file(s)" if changed else "")
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="small", help="small,base,large,mt5base (mt5-base is accepted too); make_models.py")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--dtypes", default="fp32,bf16,int8,fp16", help="tried where the engine and device support them")
    ap.add_argument("--workloads", default=None, help=f"default {DEFAULT_WORKLOADS}")
    ap.add_argument("--runs", type=int, default=None, help="timed runs per workload (default 5; --quick 2)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure every engine this many times, alternating their order, and pool the runs "
                         "(a shared machine's speed drifts over minutes: rounds keep the ratios fair)")
    ap.add_argument("--quick", action="store_true", help=f"2 runs, workloads {QUICK_WORKLOADS}")
    ap.add_argument("--hf-int8", action="store_true",
                    help="also run transformers with torch dynamic int8 quantisation (CPU)")
    ap.add_argument("--threads", type=int, default=0, help="threads per engine (0 = logical CPUs)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--input-len", type=int, default=32)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--train-src", type=int, default=64)
    ap.add_argument("--train-tgt", type=int, default=32)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per driver process")
    ap.add_argument("--python", default=None, help="Python with transformers/ctranslate2 (default: .venv or this one)")
    ap.add_argument("--t5s-bench", default=None, help="t5s_bench binary (default: $T5S_BUILD_DIR/tests/t5s_bench)")
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--tag", default="", help="results-TAG.{md,json} instead of results.{md,json}")
    args = ap.parse_args()

    runs = args.runs if args.runs is not None else (2 if args.quick else 5)
    workloads = args.workloads or (QUICK_WORKLOADS if args.quick else DEFAULT_WORKLOADS)
    wl_names = [bc.parse_workload(w)["name"] for w in workloads.split(",") if w]
    threads = args.threads or os.cpu_count()
    venv_python = os.path.join(ROOT, ".venv", "bin", "python")
    python = args.python or (venv_python if os.path.exists(venv_python) else sys.executable)
    build = os.environ.get("T5S_BUILD_DIR", os.path.join(ROOT, "build"))
    t5s_bench = args.t5s_bench or os.path.join(build, "tests", "t5s_bench")
    engines = [e for e in args.engines.split(",") if e]
    models = [m for m in args.models.split(",") if m]
    os.makedirs(args.out, exist_ok=True)
    started = time.time()
    meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "cpu": cpu_model(), "cpus": os.cpu_count(),
            "threads": threads, "device": args.device, "runs": runs, "rounds": max(1, args.rounds), "warmup": args.warmup,
            "input_len": args.input_len,
            "new_tokens": args.new_tokens, "train_src": args.train_src, "train_tgt": args.train_tgt,
            "loadavg_start": loadavg(), "command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
            "workloads": wl_names, "versions": {}, "git": git_state()}
    if args.device == "cuda":
        try:
            meta["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
                                         capture_output=True, text=True).stdout.strip()
        except OSError:
            pass
    log(f"load average at start: {meta['loadavg_start']}; threads {threads}; runs {runs}")
    if args.device == "cpu":
        meta["cpu_class"], meta["read_bandwidth_gbs_before"] = bandwidth_limit.cpu_class(), bandwidth_limit.read_bandwidth_gbs(threads)
        log(f"CPU class {meta['cpu_class']}; read bandwidth before the run {meta['read_bandwidth_gbs_before']:.1f} GB/s")

    if "t5studio" in engines and not os.path.exists(t5s_bench):
        sys.exit(f"{t5s_bench} not found: build it first (tests/bench/run.sh does)")
    # t5s_bench is not part of the default build: one left from an older build would time old code
    # under today's commit in the report.
    engine_lib = os.path.join(build, "engine", "libt5s_engine.a")
    if ("t5studio" in engines and not args.t5s_bench and os.path.exists(engine_lib)
            and os.path.getmtime(t5s_bench) < os.path.getmtime(engine_lib)):
        sys.exit(f"{t5s_bench} is older than {engine_lib}: rebuild it first "
                 f"(cmake --build {build} --target t5s_bench; tests/bench/run.sh does)")
    want_ct2 = "ctranslate2" in engines
    made = subprocess.run([python, os.path.join(HERE, "make_models.py"), "--models", ",".join(models), "--out",
                           os.path.join(args.out, "models")] + (["--ct2"] if want_ct2 else []),
                          capture_output=True, text=True)
    if made.returncode != 0:
        sys.exit("make_models.py failed:\n" + made.stderr)
    model_dirs = {json.loads(line)["name"]: json.loads(line) for line in made.stdout.splitlines() if line.startswith("{")}

    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="false",
               PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="3")
    want_dtypes = [d for d in args.dtypes.split(",") if d]
    suffix = f"-{args.tag}" if args.tag else ""
    partial = os.path.join(args.out, f"results{suffix}.partial.jsonl")  # one line per finished driver
    open(partial, "w").close()
    raw = []
    meta["read_bandwidth_gbs_between"] = []
    for rnd in range(max(1, args.rounds)):
        if rnd > 0 and args.device == "cpu":
            # This VM's bandwidth moves within minutes: a reading per round keeps the limit from
            # resting on a low moment (which would inflate every share).
            meta["read_bandwidth_gbs_between"].append(bandwidth_limit.read_bandwidth_gbs(threads))
            log(f"read bandwidth before round {rnd + 1}: {meta['read_bandwidth_gbs_between'][-1]:.1f} GB/s")
        for model in models:
            for dtype in want_dtypes:
                for engine in (engines if rnd % 2 == 0 else list(reversed(engines))):
                    if dtype not in supported_dtypes(engine, args.device, python, args.hf_int8):
                        continue
                    if engine == "ctranslate2" and not model_dirs[model].get("ct2"):
                        continue
                    cmd = driver_command(engine, model_dirs[model], python, t5s_bench) + [
                        "--dtype", dtype, "--device", args.device, "--threads", str(threads), "--runs", str(runs),
                        "--warmup", str(args.warmup), "--workloads", ",".join(wl_names), "--input-len", str(args.input_len),
                        "--new-tokens", str(args.new_tokens), "--train-src", str(args.train_src), "--train-tgt", str(args.train_tgt)]
                    log(f"{model} {engine} {dtype} ...")
                    out = run_driver(cmd, env, args.timeout)
                    out.update({"model": model, "engine": engine, "dtype": dtype})
                    with open(partial, "a") as f:
                        f.write(json.dumps(out) + "\n")
                    if "error" in out:
                        log(f"  failed: {out['error']}")
                    else:
                        log(f"  done in {out['wall_s']:.0f} s")
                    raw.append(out)
    # Several rounds of the same (model, engine, dtype) become one entry with pooled runs.
    groups = {}
    for r in raw:
        groups.setdefault((r["model"], r["engine"], r["dtype"]), []).append(r)
    raw = [merge_rounds(g) for g in groups.values()]

    for r in raw:
        if "error" in r:
            continue
        v = meta["versions"]
        if r["engine"] == "t5studio":
            v["t5studio"], v["libtorch"] = r.get("engine_version"), r.get("torch_version")
        elif r["engine"] == "transformers":
            v["transformers"], v["torch"] = r.get("engine_version"), r.get("torch_version")
        else:
            v["ctranslate2"] = r.get("engine_version")

    rows, loads = [], []
    for model in models:
        for wl in wl_names:
            for dtype in want_dtypes:
                engines_here = {}
                for r in raw:
                    if r["model"] == model and r["dtype"] == dtype and "error" not in r and wl in r["workloads"]:
                        engines_here[r["engine"]] = summarise(r["workloads"][wl])
                if engines_here:
                    rows.append({"model": model, "workload": wl, "dtype": dtype, "engines": engines_here})
        for r in raw:
            if r["model"] != model:
                continue
            ld = {"model": model, "engine": r["engine"], "dtype": r["dtype"]}
            if "error" in r:
                ld["error"] = r["error"]
            else:
                after = r.get("rss_after_load", {})
                ld.update(load_s=r["load_s"], first_token_s=r["first_token_s"],
                          process_start_to_first_token_s=r["process_start_to_first_token_s"],
                          rss_before_load_mb=r.get("rss_before_load_bytes", 0) / MB, peak_rss_mb=r["peak_rss_bytes"] / MB,
                          weight_mb=r["weight_bytes"] / MB if r.get("weight_bytes") else float("nan"),
                          **({"param_mb_at_dtype": r["param_bytes_at_dtype"] / MB} if r.get("param_bytes_at_dtype") else {}),
                          rss_after_load_anon_mb=after.get("anon", 0) / MB, rss_after_load_file_mb=after.get("file", 0) / MB)
            loads.append(ld)

    if args.device == "cpu":
        # Bandwidth drifts with the neighbours' load: the best of the readings is the machine's.
        meta["read_bandwidth_gbs_after"] = bandwidth_limit.read_bandwidth_gbs(threads)
        meta["read_bandwidth_gbs"] = max([meta["read_bandwidth_gbs_before"], meta["read_bandwidth_gbs_after"]] +
                                         meta["read_bandwidth_gbs_between"])
        meta["read_bandwidth_gbs_median"] = bandwidth_median(meta)
        log(f"read bandwidth after the run {meta['read_bandwidth_gbs_after']:.1f} GB/s; using {meta['read_bandwidth_gbs']:.1f} "
            f"(median of the readings {meta['read_bandwidth_gbs_median']:.1f})")
        meta["batch1_limit_tok_s"] = {m: {d: bandwidth_limit.limit_tokens_per_s(model_dirs[m]["hf"], d, meta["read_bandwidth_gbs"])
                                          for d in bandwidth_limit.WEIGHT_BYTES} for m in models}
        add_streaming_limits(rows, model_dirs, meta["read_bandwidth_gbs"])
    meta["loadavg_end"] = loadavg()
    meta["wall_min"] = (time.time() - started) / 60
    meta["busy"] = max(float(meta["loadavg_start"].split()[0]), float(meta["loadavg_end"].split()[0])) > 0.5 + 0.25 * (os.cpu_count() or 1)
    notes = acceptance_notes(rows, loads, args.device)
    notes += [f"{r['model']} {LABEL[r['engine']]} {r['dtype']}: {r['error']}" for r in raw if "error" in r]
    if args.device == "cpu" and "ctranslate2" in engines and "bf16" in want_dtypes and \
            "bf16" not in supported_dtypes("ctranslate2", "cpu", python):
        notes.append("CTranslate2 offers no bfloat16 compute type on this CPU build (get_supported_compute_types)")
    with open(os.path.join(args.out, f"results{suffix}.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows, "loads": loads, "notes": notes, "raw": raw}, f, indent=1)
    md = build_markdown(meta, models, rows, loads, notes)
    with open(os.path.join(args.out, f"results{suffix}.md"), "w") as f:
        f.write(md)
    print(md)
    log(f"wrote {os.path.join(args.out, f'results{suffix}.md')} and .json; load average at end: {meta['loadavg_end']}")


if __name__ == "__main__":
    main()
