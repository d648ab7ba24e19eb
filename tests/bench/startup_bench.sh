#!/usr/bin/env bash
# Start-up before a model loads, split into its parts: wall time and peak RSS (getrusage of each
# child), median of N runs, every case run once per round in turn so a drifting machine slows all alike.
#
#   plain        a main() that returns at once, linked with nothing             (process floor)
#   torch        the same linked with libtorch_cpu + libc10 (--no-as-needed)    (LibTorch's own start-up)
#   linked       the same linked with every library t5studio links             (+ curl, sqlite, GLFW, ...)
#   version      t5studio --version: returns from main at once                  (+ our static initialisers)
#   help         t5studio generate --help: builds and prints the flag table
#   before_load  t5studio info --model EMPTY_DIR: main until Model::load, which fails at config.json
#
# The probes (startup_probe.cpp) also print when the loader finished relocating and when main began,
# so "load" (exec -> libraries mapped and relocated) and "init" (static initialisers) are split.
#   tests/bench/startup_bench.sh [--runs 20] [--build DIR] [--app T5STUDIO] [--json FILE]
# Needs: cmake --build build --target t5studio t5s_startup_plain t5s_startup_torch t5s_startup_linked
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
py="$root/.venv/bin/python"
[ -x "$py" ] || py=python3
exec "$py" - "$root" "$@" <<'PY'
import argparse, datetime, json, os, statistics, subprocess, sys, tempfile, time

root = sys.argv[1]
ap = argparse.ArgumentParser(prog="startup_bench.sh")
ap.add_argument("--runs", type=int, default=20)
ap.add_argument("--build", default=os.environ.get("T5S_BUILD_DIR", os.path.join(root, "build")))
ap.add_argument("--app", default=None, help="the t5studio to time (default: BUILD/app/t5studio)")
ap.add_argument("--json", default=None, help="also write every run here")
args = ap.parse_args(sys.argv[2:])
sys.path.insert(0, os.path.join(root, "tests", "bench"))
import bandwidth_limit  # noqa: E402  (CPU class only: nothing imports torch here)

app = args.app or os.path.join(args.build, "app", "t5studio")
probe = lambda name: os.path.join(args.build, "tests", name)
empty = tempfile.mkdtemp(prefix="t5s-startup-")
CASES = [("plain", [probe("t5s_startup_plain")], 0), ("torch", [probe("t5s_startup_torch")], 0),
         ("linked", [probe("t5s_startup_linked")], 0), ("version", [app, "--version"], 0),
         ("help", [app, "generate", "--help"], 0), ("before_load", [app, "info", "--model", empty], 1)]
missing = [c[1][0] for c in CASES if not os.access(c[1][0], os.X_OK)]
if not os.access("/usr/bin/time", os.X_OK):
    sys.exit("startup_bench: needs GNU time at /usr/bin/time (Debian: apt-get install time)")
if missing:
    sys.exit("startup_bench: not built: " + ", ".join(sorted(set(missing))) + "\n  cmake --build " + args.build +
             " --target t5studio t5s_startup_plain t5s_startup_torch t5s_startup_linked")


def run_once(argv, expect_rc):
    """One child: wall ms, peak RSS MB, and the probe's loaded/main stamps as ms since the spawn.
    The peak comes from /usr/bin/time (GNU time forks the child from its own small process): a child
    spawned by this Python directly would start with Python's high-water mark as its ru_maxrss."""
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as rss:
        timed = ["/usr/bin/time", "-f", "%M", "-o", rss.name] + argv
        start = time.monotonic_ns()
        pid = os.posix_spawn(timed[0], timed, dict(os.environ), file_actions=[
            (os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
        _, status, _ = os.wait4(pid, 0)
        end = time.monotonic_ns()
        out.seek(0)
        text = out.read().decode(errors="replace").split()
        peak_kb = int(rss.read().split()[-1])
    rc = os.waitstatus_to_exitcode(status)
    if rc != expect_rc:
        sys.exit(f"startup_bench: {' '.join(argv)} exited {rc}, expected {expect_rc}")
    r = {"wall_ms": (end - start) / 1e6, "peak_rss_mb": peak_kb / 1024.0}
    if len(text) == 2 and all(t.isdigit() for t in text):  # a probe's stamps
        loaded, main = int(text[0]), int(text[1])
        r["load_ms"], r["init_ms"] = (loaded - start) / 1e6, (main - loaded) / 1e6
        r["exit_ms"] = r["wall_ms"] - (main - start) / 1e6  # main's return to the parent seeing the exit
    return r


def cpu_line():
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    return f"{model}; {os.cpu_count()} logical CPUs; CPU class {bandwidth_limit.cpu_class()}"


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "cpu": cpu_line(), "runs": args.runs,
        "loadavg_start": loadavg()}
for name, argv, rc in CASES:  # one unmeasured run each: the files are in the page cache for every measured one
    run_once(argv, rc)
runs = {name: [] for name, _, _ in CASES}
for i in range(args.runs):
    order = CASES if i % 2 == 0 else list(reversed(CASES))
    for name, argv, rc in order:
        runs[name].append(run_once(argv, rc))
meta["loadavg_end"] = loadavg()
os.rmdir(empty)

med = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
print(f"# start-up before a model loads ({meta['date']})")
print(f"CPU: {meta['cpu']}; load average {meta['loadavg_start']} at start, {meta['loadavg_end']} at end")
print(f"median of {args.runs} runs each, cases alternating; wall = spawn to exit as the parent sees it (through "
      "/usr/bin/time); peak RSS = GNU time's maximum resident set; probes only: loaded = spawn until the libraries "
      "are mapped and relocated, static init = until main, exit = main's return until the parent sees the exit")
print()
print("| case | wall ms | peak RSS MB | loaded ms | static init ms | exit ms | what it adds | + wall ms | + RSS MB |")
print("|---|---|---|---|---|---|---|---|---|")
ADDS = {"plain": "process floor", "torch": "LibTorch (libtorch_cpu + libc10)", "linked": "t5studio's other libraries",
        "version": "our binary and static initialisers", "help": "building + printing generate's flags",
        "before_load": "info: main until Model::load"}
BASE = {"torch": "plain", "linked": "torch", "version": "linked", "help": "version", "before_load": "version"}
for name, _, _ in CASES:
    m = med[name]
    probe_cols = (f"{m['load_ms']:.1f} | {m['init_ms']:.1f} | {m['exit_ms']:.1f}") if "load_ms" in m else "— | — | —"
    base = med.get(BASE.get(name, ""), None)
    delta = f"{m['wall_ms'] - base['wall_ms']:+.1f} | {m['peak_rss_mb'] - base['peak_rss_mb']:+.1f}" if base else "— | —"
    print(f"| {name} | {m['wall_ms']:.1f} | {m['peak_rss_mb']:.1f} | {probe_cols} | {ADDS[name]} | {delta} |")
if args.json:
    with open(args.json, "w") as f:
        json.dump({"meta": meta, "median": med, "runs": runs}, f, indent=1)
PY
