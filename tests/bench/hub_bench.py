#!/usr/bin/env python3
"""`t5studio pull` vs huggingface_hub.snapshot_download, and `t5studio models` on a 20-model cache.

    .venv/bin/python tests/bench/hub_bench.py build/app/t5studio WORK_DIR [--runs 2]

Builds a ~240 MB random T5 (d_model 1024, d_ff 4096, 2+2 layers, safetensors) as a fixture
repository, serves it with the local Hub server (tests/hub/hub_server.py, loopback), and in one run
alternates: our pull into a fresh cache / snapshot_download into a fresh cache, each under
/usr/bin/time -v (wall time, peak RSS). Then copies a huggingface_hub cache entry to 20 names and
times `t5studio models --json` over it (median of 5). Prints one JSON document.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hub"))
import hub_fixtures  # noqa: E402


def timed(cmd, env):
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {r.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", r.stderr).group(1)
    secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":"))))
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return {"wall_s": round(secs, 2), "peak_rss_mib": round(rss_kb / 1024, 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("t5studio")
    ap.add_argument("work")
    ap.add_argument("--runs", type=int, default=2)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    big = os.path.join(a.work, "t5-big")
    if not os.path.isdir(big):
        hub_fixtures.make_t5(big, d_model=1024, d_ff=4096, layers=2)
    size = sum(os.path.getsize(os.path.join(big, f)) for f in os.listdir(big))
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "hub", "hub_server.py"), "--repo", f"bench/t5-big={big}"],
                              stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().split()[1]
    base = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    base.update(HF_ENDPOINT=url, HF_HUB_DISABLE_TELEMETRY="1")
    rows = {"t5studio pull": [], "huggingface_hub.snapshot_download": []}
    try:
        for i in range(a.runs):
            for name in rows:
                cache = os.path.join(a.work, f"cache-{i}-{name.split()[0]}")
                shutil.rmtree(cache, ignore_errors=True)
                env = dict(base, HF_HUB_CACHE=cache)
                cmd = ([a.t5studio, "pull", "bench/t5-big"] if name.startswith("t5studio")
                       else [sys.executable, "-c", "from huggingface_hub import snapshot_download; snapshot_download('bench/t5-big')"])
                rows[name].append(timed(cmd, env))
    finally:
        server.terminate()
    # 20 models: one huggingface_hub cache entry copied to 20 names.
    src = os.path.join(a.work, "cache-0-huggingface_hub.snapshot_download", "models--bench--t5-big")
    many = os.path.join(a.work, "cache-20")
    shutil.rmtree(many, ignore_errors=True)
    os.makedirs(many)
    for k in range(20):
        shutil.copytree(src, os.path.join(many, f"models--bench--t5-{k:02d}"), symlinks=True)
    times = []
    for _ in range(5):
        t0 = time.monotonic()
        r = subprocess.run([a.t5studio, "models", "--json"], env=dict(base, HF_HUB_CACHE=many), capture_output=True, text=True)
        times.append(time.monotonic() - t0)
        assert r.returncode == 0 and len(json.loads(r.stdout)["models"]) == 20, r.stderr
    print(json.dumps({"fixture_bytes": size, "runs": rows, "models_20_median_s": round(statistics.median(times), 3),
                      "models_20_all_s": [round(t, 3) for t in times]}, indent=1))


if __name__ == "__main__":
    main()
