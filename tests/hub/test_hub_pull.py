#!/usr/bin/env python3
"""`t5studio pull` / `models` / `--model ORG/NAME` against a local Hub server, no network (ctest `hub`).

Usage: test_hub_pull.py T5STUDIO WORK_DIR [disk_full]
The server (tests/hub/hub_server.py) is first proven honest with huggingface_hub.snapshot_download;
then our pull, resume after kill -9 and after a dropped connection, Ctrl-C, a corrupted file, 401 /
404 / 500 / connection refused / unsupported architecture / offline, transformers and
sentence-transformers loading what we wrote, and T5 Studio opening a cache huggingface_hub wrote.
`disk_full` runs the full-disk check alone (needs root for a tmpfs; prints T5S_SKIP otherwise).
Every wait is bounded by a deadline and synchronised on output lines or files, never a fixed sleep.
"""
import glob
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import hub_fixtures  # noqa: E402
from py_checks import check, failures  # noqa: E402

BIN, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
MODE = sys.argv[3] if len(sys.argv) > 3 else "all"
PY = sys.executable


class HubServer:
    def __init__(self, repos, gated):
        args = [PY, os.path.join(HERE, "hub_server.py"), "--port", "0"]
        for name, folder in repos.items():
            args += ["--repo", f"{name}={folder}"]
        for g in gated:
            args += ["--gated", g]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # the READY line (or EOF if it died)
        if not line.startswith("READY "):
            raise SystemExit("hub server did not start: %r" % line)
        self.url = line.split()[1]

    def post(self, route, obj=None):
        req = urllib.request.Request(self.url + route, data=json.dumps(obj or {}).encode(), method="POST")
        return json.load(urllib.request.urlopen(req, timeout=10))

    def stats(self):
        return json.load(urllib.request.urlopen(self.url + "/_stats", timeout=10))

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def base_env(cache, endpoint):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HUB_CACHE=cache, HF_ENDPOINT=endpoint, HOME=os.path.join(WORK, "home"), HF_HUB_DISABLE_TELEMETRY="1")
    return env


def pull(repo, cache, endpoint, *flags, env_extra=None, timeout=180):
    env = base_env(cache, endpoint)
    env.update(env_extra or {})
    r = subprocess.run([BIN, "pull", repo, "--json", *flags], env=env, capture_output=True, text=True, timeout=timeout)
    events = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    return r, events


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def repo_dir(cache, repo):
    return os.path.join(cache, "models--" + repo.replace("/", "--"))


def snapshots(cache, repo):
    return glob.glob(os.path.join(repo_dir(cache, repo), "snapshots", "*"))


def python(code, env):
    r = subprocess.run([PY, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        print(r.stderr[-3000:])
    return r


def one_line(text):
    """One error line, besides progress lines ("[i/n] file ...") and retry notices."""
    lines = [l for l in text.splitlines() if l.strip() and "retry" not in l and not l.startswith("[")]
    return len(lines) == 1


def fresh(name):
    path = os.path.join(WORK, name)
    shutil.rmtree(path, ignore_errors=True)
    return path


def wait_progress(proc, file, at_least, limit):
    """Reads --json lines until `file` has at least `at_least` bytes done; False at EOF or deadline."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            return False
        e = json.loads(line)
        if e.get("event") == "progress" and e.get("file") == file and e["done_bytes"] >= at_least:
            return True
    return False


def incomplete_files(cache, repo):
    return glob.glob(os.path.join(repo_dir(cache, repo), "blobs", "*.incomplete"))


# ---- the checks ------------------------------------------------------------------------------
def check_server_is_honest(hub, hf_cache):
    env = base_env(hf_cache, hub.url)
    r = python("from huggingface_hub import snapshot_download\n"
               "for repo in ['t5s-test/tiny-t5', 't5s-test/t5-medium', 't5s-test/st-xlmr']:\n"
               "    print(snapshot_download(repo))\n", env)
    check(r.returncode == 0, "huggingface_hub.snapshot_download works against the local server")
    for repo, folder in (("t5s-test/tiny-t5", hub.repos["t5s-test/tiny-t5"]), ("t5s-test/t5-medium", hub.repos["t5s-test/t5-medium"])):
        snap = snapshots(hf_cache, repo)
        check(len(snap) == 1 and sha256(os.path.join(snap[0], "model.safetensors")) == sha256(os.path.join(folder, "model.safetensors")),
              f"huggingface_hub got {repo}'s bytes")


def check_pull_and_transformers(hub, hf_cache):
    cache = fresh("cache-a")
    hub.post("/_reset")
    r, ev = pull("t5s-test/tiny-t5", cache, hub.url)
    check(r.returncode == 0, "pull tiny-t5 exits 0: " + r.stderr.strip()[-300:] if r.returncode else "pull tiny-t5 exits 0")
    done = [e for e in ev if e.get("event") == "done"]
    check(len(done) == 1 and done[0]["kind"] == "generation" and done[0]["architecture"] == "t5", "pull prints one done line")
    files = set(done[0]["files"]) if done else set()
    check({"config.json", "model.safetensors", "spiece.model"} <= files, "configs, safetensors and spiece.model fetched")
    check(not files & {"pytorch_model.bin", "tf_model.h5", "onnx/encoder_model.onnx"}, "no .bin beside safetensors, no TF/ONNX")
    asked = {q["path"] for q in hub.stats()["requests"]}
    check(not any(p.endswith(("pytorch_model.bin", "tf_model.h5", ".onnx")) for p in asked), "the server was never asked for them")
    check(any(e.get("event") == "progress" and e["phase"] == "download" for e in ev), "progress lines on stdout")
    # Same blob names (etags) as huggingface_hub's cache, and the same snapshot commit.
    ours = {os.path.basename(p) for p in glob.glob(os.path.join(repo_dir(cache, "t5s-test/tiny-t5"), "blobs", "*"))}
    theirs = {os.path.basename(p) for p in glob.glob(os.path.join(repo_dir(hf_cache, "t5s-test/tiny-t5"), "blobs", "*"))}
    check(ours and ours <= theirs, "blobs are named by the same etags huggingface_hub uses")
    check([os.path.basename(p) for p in snapshots(cache, "t5s-test/tiny-t5")] ==
          [os.path.basename(p) for p in snapshots(hf_cache, "t5s-test/tiny-t5")], "same snapshot commit as huggingface_hub")
    env = base_env(cache, "http://127.0.0.1:9")
    env["HF_HUB_OFFLINE"] = "1"
    r = python("import torch\nfrom transformers import T5ForConditionalGeneration, T5Tokenizer\n"
               f"ref = T5ForConditionalGeneration.from_pretrained({hub.repos['t5s-test/tiny-t5']!r})\n"
               "m = T5ForConditionalGeneration.from_pretrained('t5s-test/tiny-t5', local_files_only=True)\n"
               "tok = T5Tokenizer.from_pretrained('t5s-test/tiny-t5', local_files_only=True)\n"
               "assert all(torch.equal(a, b) for a, b in zip(ref.state_dict().values(), m.state_dict().values()))\n"
               "print(tok('hello world').input_ids)\n", env)
    check(r.returncode == 0, "transformers loads our pull with local_files_only=True (same weights, tokenizer)")
    r, ev = pull("t5s-test/tiny-t5", cache, hub.url)
    done = [e for e in ev if e.get("event") == "done"]
    check(r.returncode == 0 and done and done[0]["downloaded_bytes"] == 0 and done[0]["reused_bytes"] > 0, "a second pull fetches nothing")
    r, ev = pull("t5s-test/st-xlmr", cache, hub.url)
    check(r.returncode == 0, "pull a sentence-transformers repo: " + r.stderr.strip()[-300:])
    r = python("from sentence_transformers import SentenceTransformer\n"
               f"ref = SentenceTransformer({hub.repos['t5s-test/st-xlmr']!r}, device='cpu')\n"
               f"m = SentenceTransformer('t5s-test/st-xlmr', cache_folder={cache!r}, local_files_only=True, device='cpu')\n"
               "a, b = ref.encode(['a test sentence']), m.encode(['a test sentence'])\n"
               "assert abs(a - b).max() == 0, abs(a - b).max()\n", env)
    check(r.returncode == 0, "sentence-transformers loads the pulled encoder offline, same embeddings")


def check_drop_and_resume(hub):
    repo, weights = "t5s-test/t5-medium", os.path.join(hub.repos["t5s-test/t5-medium"], "model.safetensors")
    size, want = os.path.getsize(weights), sha256(weights)
    cache = fresh("cache-drop")
    hub.post("/_reset")
    hub.post("/_control", {"drop": [{"match": want, "after": 4 << 20, "count": 1}]})
    r, ev = pull(repo, cache, hub.url)
    check(r.returncode == 0, "a dropped connection mid-file is resumed in the same run: " + r.stderr.strip()[-300:])
    gets = [q for q in hub.stats()["requests"] if q["method"] == "GET" and q["path"].startswith("/_lfs/t5s-test/t5-medium")
            and q["path"].endswith(want)]
    check(len(gets) == 2 and gets[1]["range_start"] == 4 << 20, f"the second request asks for the rest (Range from the drop): {gets}")
    served = hub.stats()["served"].get(f"/_lfs/{repo}/{want}", 0)
    check(served == size, f"bytes served for the file = its size ({served} vs {size}): nothing fetched twice")
    blob = os.path.join(repo_dir(cache, repo), "blobs", want)
    check(os.path.isfile(blob) and sha256(blob) == want, "the resumed blob has the right SHA-256")
    # A server that ignores Range after the drop: the partial file is discarded, the file fetched whole.
    cache = fresh("cache-norange")
    hub.post("/_reset")
    hub.post("/_control", {"drop": [{"match": want, "after": 4 << 20, "count": 1}], "norange": [{"match": want}]})
    r, _ = pull(repo, cache, hub.url)
    blob = os.path.join(repo_dir(cache, repo), "blobs", want)
    check(r.returncode == 0 and os.path.isfile(blob) and sha256(blob) == want and not incomplete_files(cache, repo),
          "a server ignoring Range after a drop: the file is fetched whole, hash right")


def check_kill_and_resume(hub):
    repo, weights = "t5s-test/t5-medium", os.path.join(hub.repos["t5s-test/t5-medium"], "model.safetensors")
    size, want = os.path.getsize(weights), sha256(weights)
    cache = fresh("cache-kill")
    hub.post("/_reset")
    hub.post("/_control", {"slow": [{"match": want, "bytes_per_s": 2 << 20}]})
    proc = subprocess.Popen([BIN, "pull", repo, "--json"], env=base_env(cache, hub.url), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    reached = wait_progress(proc, "model.safetensors", 3 << 20, 60)
    proc.kill()  # SIGKILL: no handler runs
    proc.wait(timeout=10)
    check(reached, "pull reported progress into the weights before the kill")
    part = incomplete_files(cache, repo)
    kept = os.path.getsize(part[0]) if len(part) == 1 else 0
    check(len(part) == 1 and 0 < kept < size, f"kill -9 leaves blobs/<etag>.incomplete ({kept} of {size} bytes)")
    check(not os.path.exists(os.path.join(repo_dir(cache, repo), "snapshots")), "and nothing under snapshots/")
    hub.post("/_reset")  # counters from zero, no throttle
    r, ev = pull(repo, cache, hub.url)
    check(r.returncode == 0, "the same pull again completes")
    gets = [q for q in hub.stats()["requests"] if q["method"] == "GET" and q["path"].endswith(want)]
    check(len(gets) == 1 and gets[0]["range_start"] == kept, f"it resumed at byte {kept} (asked {gets and gets[0]['range_start']})")
    served = hub.stats()["served"].get(f"/_lfs/{repo}/{want}", 0)
    check(served == size - kept, f"only the missing {size - kept} bytes were served ({served})")
    blob = os.path.join(repo_dir(cache, repo), "blobs", want)
    check(os.path.isfile(blob) and sha256(blob) == want and not incomplete_files(cache, repo), "final hash right, no .incomplete left")


def check_ctrl_c(hub):
    repo = "t5s-test/t5-medium"
    want = sha256(os.path.join(hub.repos[repo], "model.safetensors"))
    cache = fresh("cache-int")
    hub.post("/_reset")
    hub.post("/_control", {"slow": [{"match": want, "bytes_per_s": 2 << 20}]})
    proc = subprocess.Popen([BIN, "pull", repo, "--json"], env=base_env(cache, hub.url), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    reached = wait_progress(proc, "model.safetensors", 1 << 20, 60)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    check(reached and proc.returncode == 130, f"Ctrl-C stops the pull with exit code 130 (got {proc.returncode})")
    check("interrupted" in err and "resume" in err, "and says it can be resumed: " + err.strip()[-200:])
    check(len(incomplete_files(cache, repo)) == 1 and not os.path.exists(os.path.join(repo_dir(cache, repo), "snapshots")),
          "the partial file is kept, snapshots/ untouched")
    hub.post("/_reset")
    r, _ = pull(repo, cache, hub.url)
    check(r.returncode == 0 and len(snapshots(cache, repo)) == 1, "the interrupted pull resumes to completion")


def check_corrupt(hub):
    repo = "t5s-test/t5-medium"
    want = sha256(os.path.join(hub.repos[repo], "model.safetensors"))
    cache = fresh("cache-corrupt")
    hub.post("/_reset")
    hub.post("/_control", {"corrupt": [{"match": want}]})
    r, ev = pull(repo, cache, hub.url)
    check(r.returncode == 14, f"a corrupted file: exit code 14 (got {r.returncode})")
    check(one_line(r.stderr) and "SHA-256" in r.stderr, "one line naming the SHA-256: " + r.stderr.strip()[-300:])
    blobs = os.path.join(repo_dir(cache, repo), "blobs")
    check(not os.path.exists(os.path.join(blobs, want)) and not incomplete_files(cache, repo), "the bad bytes are not kept")
    check(not os.path.exists(os.path.join(repo_dir(cache, repo), "snapshots")), "nothing under snapshots/")
    err = [e for e in ev if e.get("event") == "error"]
    check(err and err[0]["failure"] == "hash_mismatch", "--json names the failure")


def check_errors(hub):
    cache = fresh("cache-err")
    hub.post("/_reset")
    r, _ = pull("t5s-test/gated-t5", cache, hub.url)
    check(r.returncode == 10 and one_line(r.stderr) and "HF_TOKEN" in r.stderr and "licence" in r.stderr,
          f"gated without a token: exit 10, one line on getting access ({r.returncode}: {r.stderr.strip()[-300:]})")
    check(not snapshots(cache, "t5s-test/gated-t5"), "nothing in snapshots/ after a 401")
    r, _ = pull("t5s-test/gated-t5", cache, hub.url, env_extra={"HF_TOKEN": "hf_test_token"})
    check(r.returncode == 0, "with HF_TOKEN the gated repo downloads")
    token_file = os.path.join(WORK, "home", ".cache", "huggingface", "token")
    os.makedirs(os.path.dirname(token_file), exist_ok=True)
    with open(token_file, "w") as f:
        f.write("hf_test_token\n")
    r, _ = pull("t5s-test/gated-t5", fresh("cache-token"), hub.url)
    os.remove(token_file)
    check(r.returncode == 0, "the standard token file is read too")
    for repo, what in (("nobody/missing", "repository"), ("t5s-test/tiny-t5@no-such-branch", "revision")):
        r, _ = pull(repo, cache, hub.url)
        check(r.returncode == 11 and one_line(r.stderr) and "not found" in r.stderr, f"unknown {what}: exit 11, one line ({r.stderr.strip()})")
    hub.post("/_control", {"fail": [{"match": "/api/models/t5s-test/tiny-t5", "status": 500, "count": 100}]})
    r, _ = pull("t5s-test/tiny-t5", cache, hub.url, "--retries", "2")
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 13 and len(lines) == 3 and "retry 1/2" in lines[0] and "HTTP 500 after 2 retries" in lines[-1],
          f"500s: two retries with backoff, then exit 13 ({r.returncode}: {lines})")
    hub.post("/_control", {"fail": [{"match": "/api/models/t5s-test/tiny-t5", "status": 503, "count": 1}]})
    r, _ = pull("t5s-test/tiny-t5", cache, hub.url)
    check(r.returncode == 0, "one 503 then success: the retry gets it")
    hub.post("/_reset")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    r, _ = pull("t5s-test/tiny-t5", cache, closed, "--retries", "0")
    check(r.returncode == 12 and one_line(r.stderr) and "cannot reach" in r.stderr, f"connection refused: exit 12 ({r.stderr.strip()})")
    r, ev = pull("t5s-test/llama", cache, hub.url)
    check(r.returncode == 16 and one_line(r.stderr) and "LlamaForCausalLM" in r.stderr, f"unsupported architecture: exit 16 ({r.stderr.strip()})")
    asked = [q["path"] for q in hub.stats()["requests"] if "llama" in q["path"]]
    check(asked and not any("safetensors" in p for p in asked), "refused before any weight was fetched")
    r, ev = pull("t5s-test/tiny-t5", cache, hub.url, env_extra={"HF_HUB_OFFLINE": "1"})
    check(r.returncode == 0 and ev[-1].get("offline") is True, "HF_HUB_OFFLINE=1: a cached repo resolves with no network")
    r, _ = pull("t5s-test/t5-medium", cache, hub.url, env_extra={"HF_HUB_OFFLINE": "1"})
    check(r.returncode == 17 and one_line(r.stderr), f"HF_HUB_OFFLINE=1 and not cached: exit 17 ({r.stderr.strip()})")


def check_open_by_name(hf_cache, hub):
    env = base_env(hf_cache, "http://127.0.0.1:9")
    run = lambda *a: subprocess.run([BIN, *a], env=env, capture_output=True, text=True, timeout=120)
    r = run("info", "--model", "t5s-test/tiny-t5", "--json")
    ok = r.returncode == 0
    info = json.loads(r.stdout) if ok else {}
    n = python("from transformers import T5ForConditionalGeneration as M\n"
               f"m = M.from_pretrained({hub.repos['t5s-test/tiny-t5']!r})\n"
               "print(sum(p.numel() for p in m.parameters()))\n", env)
    params = int(n.stdout.strip()) if n.returncode == 0 else -1
    check(ok and info.get("parameter_count") == params, f"info --model ORG/NAME opens huggingface_hub's cache ({r.stderr.strip()})")
    check(ok and "/snapshots/" in info.get("model_dir", ""), "from its snapshot folder")
    r = run("generate", "--model", "t5s-test/tiny-t5", "--text", "hello world", "--json")
    check(r.returncode == 0 and json.loads(r.stdout)["results"][0]["candidates"], "generate --model ORG/NAME")
    r = run("embed", "--embedder", "t5s-test/st-xlmr", "--text", "hello", "--json")
    check(r.returncode == 0 and json.loads(r.stdout)["dim"] > 0, "embed --embedder ORG/NAME " + r.stderr.strip()[-200:])
    r = run("info", "--model", "nobody/missing")
    check(r.returncode == 1 and one_line(r.stderr) and "t5studio pull nobody/missing" in r.stderr,
          f"a repo not in the cache: one line suggesting pull ({r.stderr.strip()})")
    r = run("models", "--json")
    models = {m["name"]: m for m in json.loads(r.stdout)["models"]} if r.returncode == 0 else {}
    check(set(models) == {"t5s-test/tiny-t5", "t5s-test/t5-medium", "t5s-test/st-xlmr"}, f"models lists the cache ({sorted(models)})")
    check(models.get("t5s-test/tiny-t5", {}).get("parameters") == params, "models: parameters from config.json equal transformers'")
    m = models.get("t5s-test/t5-medium", {})
    check(m.get("revision") == "main" and m.get("memory", {}).get("fp32", {}).get("fit") in ("fits", "tight", "too big")
          and m.get("disk_bytes", 0) >= os.path.getsize(os.path.join(hub.repos["t5s-test/t5-medium"], "model.safetensors")),
          "models: revision, size on disk, memory fit")
    check(models.get("t5s-test/st-xlmr", {}).get("kind") == "encoder", "models: the sentence encoder is listed as one")


def check_disk_full(hub):
    mnt = fresh("tiny-disk")
    os.makedirs(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt], capture_output=True).returncode != 0:
        print("T5S_SKIP: hub_disk_full: cannot mount a tmpfs here (needs root)")
        return
    try:
        r, _ = pull("t5s-test/t5-medium", mnt, hub.url)
        check(r.returncode == 15 and one_line(r.stderr) and "MiB free" in r.stderr, f"disk full: exit 15 before downloading ({r.stderr.strip()})")
        check(not glob.glob(os.path.join(mnt, "*", "blobs", "*")), "no partial files on the full disk")
    finally:
        subprocess.run(["umount", mnt])


# Each check by name, in the order "all" runs them; the ones reading huggingface_hub's cache get it
# filled first (server_is_honest) when run alone.
ORDER = ["server_is_honest", "pull_and_transformers", "drop_and_resume", "kill_and_resume", "ctrl_c", "corrupt", "errors",
         "open_by_name"]
NEEDS_HF_CACHE = {"pull_and_transformers", "open_by_name"}


def run_checks(hub, names):
    hf_cache = os.path.join(WORK, "hf-cache")
    steps = {
        "server_is_honest": lambda: check_server_is_honest(hub, fresh("hf-cache")),
        "pull_and_transformers": lambda: check_pull_and_transformers(hub, hf_cache),
        "drop_and_resume": lambda: check_drop_and_resume(hub),
        "kill_and_resume": lambda: check_kill_and_resume(hub),
        "ctrl_c": lambda: check_ctrl_c(hub),
        "corrupt": lambda: check_corrupt(hub),
        "errors": lambda: check_errors(hub),
        "open_by_name": lambda: check_open_by_name(hf_cache, hub),
        "disk_full": lambda: check_disk_full(hub),
    }
    unknown = [n for n in names if n not in steps]
    if unknown:
        raise SystemExit(f"unknown check(s) {unknown}; known: all, {', '.join(steps)}")
    if NEEDS_HF_CACHE & set(names) and "server_is_honest" not in names:
        names = ["server_is_honest"] + names
    for name in names:
        steps[name]()


def main():
    os.makedirs(WORK, exist_ok=True)
    repos = hub_fixtures.build(os.path.join(WORK, "repos"))
    hub = HubServer(repos, gated=["t5s-test/gated-t5"])
    hub.repos = repos
    try:  # one check by name (drop_and_resume, ctrl_c, ...) for debugging, or all of them
        run_checks(hub, ORDER if MODE == "all" else [MODE])
    finally:
        hub.stop()
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
