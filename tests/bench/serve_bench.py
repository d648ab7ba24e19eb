#!/usr/bin/env python3
"""Serving benchmark: throughput (generated tokens/s) and p50 / p95 latency at 1, 4, 16, 64
concurrent clients for
  (a) t5studio serve (continuous batching),
  (b) t5studio serve --max-batch 1 (one request at a time),
  (c) FastAPI + transformers, one generate() per request (fastapi_server.py),
on the t5-small shape with random weights (make_models.py), CPU, the same thread count for all.
Random weights stop at once, so every request asks for exactly --new-tokens tokens
(min_new_tokens = max_new_tokens). Servers are measured one after another, each level once per
round; --rounds R alternates the server order per round and pools the latencies.

  .venv/bin/python tests/bench/serve_bench.py [--threads 2] [--clients 1,4,16,64] [--new-tokens 32]
                                             [--servers serve,serve_b1,fastapi] [--rounds R] [--t5studio PATH]
                                             [--no-model-scores]
Writes tests/bench/out/serve_results.md and .json, with the load average at start and end (figures
from a busy machine are not comparable with a quiet one's). --t5studio compares another build of the
server (e.g. a worktree at an older commit) under the same client.
By default every candidate is scored as `generate` scores it (back_score: a teacher-forced pass per
candidate); --no-model-scores sends "model_scores": false, the plain-generation workload the
FastAPI server (which scores nothing) runs.
"""
import argparse
import concurrent.futures as futures
import json
import os
import socket
import statistics
import subprocess
import sys
import time

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import make_models  # noqa: E402

WORDS = ("the quick brown fox jumps over a lazy dog while seven tired students paraphrase long sentences "
         "about rivers mountains markets and the weather in small northern towns").split()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(kind, model, threads, binary):
    port = free_port()
    if kind == "fastapi":
        cmd = [sys.executable, os.path.join(HERE, "fastapi_server.py"), "--model", model, "--port", str(port), "--threads", str(threads)]
    else:
        cmd = [binary, "serve", "--model", model, "--port", str(port), "--threads", str(threads),
               "--max-queue", "1024"] + (["--max-batch", "1"] if kind == "serve_b1" else ["--max-batch", "64"])
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d" % port
    end = time.monotonic() + 300
    while time.monotonic() < end:
        try:
            if requests.get(base + "/ready", timeout=2).status_code == 200:
                return proc, base
        except requests.RequestException:
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(kind + " did not become ready")


def body(i, new_tokens, extra):
    text = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(24))
    return dict({"text": text, "max_new_tokens": new_tokens, "min_new_tokens": new_tokens}, **extra)


def level(base, clients, requests_total, new_tokens, extra):
    session_local = {}

    def one(i):
        s = session_local.setdefault(i % clients, requests.Session())
        t0 = time.perf_counter()
        r = s.post(base + "/augment", json=body(i, new_tokens, extra), timeout=600)
        dt = time.perf_counter() - t0
        r.raise_for_status()
        return dt, sum(len(c["ids"]) for c in r.json()["results"][0]["candidates"])

    t0, cpu0 = time.perf_counter(), time.process_time()
    with futures.ThreadPoolExecutor(clients) as pool:
        out = list(pool.map(one, range(requests_total)))
    wall = time.perf_counter() - t0
    # The client shares the machine with the server: its CPU time per request shows what it takes away.
    level.client_cpu_per_request = (time.process_time() - cpu0) / max(1, requests_total)
    return [d for d, _ in out], sum(t for _, t in out), wall


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--clients", default="1,4,16,64")
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--per-client", type=int, default=3, help="requests per client at each level (at least 8 in all)")
    ap.add_argument("--servers", default="serve,serve_b1,fastapi")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-model-scores", action="store_true", help='t5studio requests send "model_scores": false')
    ap.add_argument("--t5studio", default=os.path.join(ROOT, "build", "app", "t5studio"), help="the t5studio binary to serve with")
    args = ap.parse_args()
    model = make_models.make_hf("small", os.path.join(HERE, "out", "models"))
    clients = [int(c) for c in args.clients.split(",")]
    servers = args.servers.split(",")
    load_start = os.getloadavg()
    raw = {s: {c: {"lat": [], "tokens": 0, "wall": 0.0} for c in clients} for s in servers}
    for rnd in range(args.rounds):
        for kind in (servers if rnd % 2 == 0 else servers[::-1]):
            proc, base = start(kind, model, args.threads, args.t5studio)
            extra = {"model_scores": False} if args.no_model_scores and kind != "fastapi" else {}
            try:
                level(base, 1, 2, args.new_tokens, extra)  # warm-up
                for c in clients:
                    lat, tokens, wall = level(base, c, max(8, c * args.per_client), args.new_tokens, extra)
                    r = raw[kind][c]
                    r["lat"] += lat
                    r["tokens"] += tokens
                    r["wall"] += wall
                    print("[serve_bench] round %d %-8s clients %3d: %.1f tok/s p50 %.3f s p95 %.3f s (client CPU %.1f ms/request)" %
                          (rnd, kind, c, tokens / wall, pct(lat, 50), pct(lat, 95), 1e3 * level.client_cpu_per_request),
                          file=sys.stderr, flush=True)
            finally:
                proc.terminate()
                proc.wait(60)
    rows, table = [], ["| server | clients | tokens/s | p50 s | p95 s |", "| --- | --- | --- | --- | --- |"]
    for kind in servers:
        for c in clients:
            r = raw[kind][c]
            row = {"server": kind, "clients": c, "tokens_per_s": r["tokens"] / r["wall"], "p50_s": pct(r["lat"], 50),
                   "p95_s": pct(r["lat"], 95), "requests": len(r["lat"])}
            rows.append(row)
            table.append("| %s | %d | %.1f | %.3f | %.3f |" % (kind, c, row["tokens_per_s"], row["p50_s"], row["p95_s"]))
    get = {(r["server"], r["clients"]): r for r in rows}
    notes = []
    if ("serve", 16) in get and ("serve_b1", 16) in get and ("serve", 1) in get:
        a, b, lone = get[("serve", 16)], get[("serve_b1", 16)], get[("serve", 1)]
        notes.append("16 clients: serve / serve --max-batch 1 throughput = %.2fx (aim >= 4x)" % (a["tokens_per_s"] / b["tokens_per_s"]))
        notes.append("16 clients: serve p95 / lone request p50 = %.2fx (aim <= 2x)" % (a["p95_s"] / lone["p50_s"]))
    if ("serve", 16) in get and ("fastapi", 16) in get:
        notes.append("16 clients: serve / FastAPI+transformers throughput = %.2fx (aim >= 5x)" %
                     (get[("serve", 16)]["tokens_per_s"] / get[("fastapi", 16)]["tokens_per_s"]))
    load_end = os.getloadavg()
    notes.append("load average (1/5/15 min) at start %.2f/%.2f/%.2f, at end %.2f/%.2f/%.2f on %d CPUs" %
                 (load_start + load_end + (os.cpu_count(),)))
    scoring = "t5studio without model scores" if args.no_model_scores else "t5studio scoring every candidate (back_score)"
    out_dir = os.path.join(HERE, "out")
    os.makedirs(out_dir, exist_ok=True)
    text = "\n".join(table + [""] + ["- " + n for n in notes]) + "\n"
    with open(os.path.join(out_dir, "serve_results.md"), "w") as f:
        f.write("t5-small shape, random weights, CPU, %d threads, %d new tokens per request, %s\n\n" %
                (args.threads, args.new_tokens, scoring) + text)
    with open(os.path.join(out_dir, "serve_results.json"), "w") as f:
        json.dump({"rows": rows, "notes": notes, "threads": args.threads, "model_scores": not args.no_model_scores,
                   "new_tokens": args.new_tokens, "rounds": args.rounds, "load_start": load_start, "load_end": load_end}, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
