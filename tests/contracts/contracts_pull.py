"""`pull --json` against the local stand-in Hub (tests/hub/hub_server.py, loopback): the shape of
each progress event kind and of the result, then `models --json` on the cache it filled."""
import os
import shutil
import subprocess
import sys
import time

HUB_SERVER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hub", "hub_server.py")


def start_hub(repo, folder, limit=30):
    """The hub server's process and URL once it printed READY (within `limit` seconds), else (proc, None)."""
    proc = subprocess.Popen([sys.executable, HUB_SERVER, "--port", "0", "--repo", "%s=%s" % (repo, folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + limit
    line = ""
    while time.monotonic() < deadline and not line.startswith("READY "):
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
    return proc, (line.split()[1] if line.startswith("READY ") else None)


def run(cli, d):
    cache = cli.path("pull-cache")
    shutil.rmtree(cache, ignore_errors=True)
    proc, url = start_hub("contracts/tiny", d["model"])
    try:
        if url is None:
            cli.g.fail("pull/events.json", "the stand-in Hub did not print READY within 30 s")
            return
        env = {"HF_ENDPOINT": url, "HF_HUB_CACHE": cache, "HF_HUB_OFFLINE": None}
        lines = cli.json_lines("pull/events.json", ["pull", "contracts/tiny", "--json", "--retries", "0"], env=env, timeout=60)
        if lines is not None:
            by_event = {}
            for line in lines:
                by_event.setdefault(str(line.get("event")), []).append(line)
            cli.shape("pull/events.json", by_event)
            cli.shape("pull/models_cache.json", cli.json("pull/models_cache.json", ["models", "--cache-dir", cache, "--json"]))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
