"""`t5studio pull` / `models` / `--model ORG/NAME` against a local Hub server, no network (ctest `hub`).

    python -m pytest -q tests/hub/test_hub_pull.py --t5studio T5STUDIO --work WORK_DIR [-k NAME]
The server (tests/hub/hub_server.py) is first proven honest with huggingface_hub.snapshot_download;
then our pull, resume after kill -9 and after a dropped connection, Ctrl-C, a corrupted file, 401 /
404 / 500 / connection refused / unsupported architecture / offline, transformers and
sentence-transformers loading what we wrote, and T5 Studio opening a cache huggingface_hub wrote.
`-k NAME` runs one test (ctest `hub_disk_full` is `-k disk_full`: it needs root for a tmpfs and is
skipped with that reason otherwise); the tests reading huggingface_hub's cache fill it first, alone too.
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

import pytest

import hub_fixtures
import pyutil

PY = sys.executable
HERE = os.path.dirname(os.path.abspath(__file__))
MEDIUM = "t5s-test/t5-medium"


class HubServer:
    """tests/hub/hub_server.py on loopback, serving `repos`, with its test controls."""

    def __init__(self, repos, gated):
        args = [PY, os.path.join(HERE, "hub_server.py"), "--port", "0"]
        for name, folder in repos.items():
            args += ["--repo", f"{name}={folder}"]
        for g in gated:
            args += ["--gated", g]
        self.server, ready = pyutil.start_server(args, "READY ", limit=60)
        self.url = ready.split()[1]
        self.repos = repos

    def post(self, route, obj=None):
        req = urllib.request.Request(self.url + route, data=json.dumps(obj or {}).encode(), method="POST")
        return json.load(urllib.request.urlopen(req, timeout=10))

    def stats(self):
        return json.load(urllib.request.urlopen(self.url + "/_stats", timeout=10))

    def stop(self):
        self.server.stop()


class Rig:
    """The binary under test, the work folder and the server: runs pulls in a clean environment."""

    def __init__(self, t5studio, work, hub):
        self.bin, self.work, self.hub = t5studio, work, hub

    def env(self, cache, endpoint):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env.update(HF_HUB_CACHE=cache, HF_ENDPOINT=endpoint, HOME=os.path.join(self.work, "home"),
                   HF_HUB_DISABLE_TELEMETRY="1")
        return env

    def pull(self, repo, cache, *flags, endpoint=None, env_extra=None, timeout=180):
        env = self.env(cache, endpoint or self.hub.url)
        env.update(env_extra or {})
        r = subprocess.run([self.bin, "pull", repo, "--json", *flags], env=env, capture_output=True, text=True,
                           timeout=timeout)
        events = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
        return r, events

    def start_pull(self, repo, cache, stderr):
        return subprocess.Popen([self.bin, "pull", repo, "--json"], env=self.env(cache, self.hub.url),
                                stdout=subprocess.PIPE, stderr=stderr, text=True)

    def fresh(self, name):
        path = os.path.join(self.work, name)
        shutil.rmtree(path, ignore_errors=True)
        return path


@pytest.fixture(scope="module")
def hub(work_dir):
    server = HubServer(hub_fixtures.build(os.path.join(work_dir, "repos")), gated=["t5s-test/gated-t5"])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def rig(t5studio, work_dir, hub):
    return Rig(t5studio, work_dir, hub)


@pytest.fixture(scope="module")
def hf_download(rig):
    """huggingface_hub's own cache of three repos, written by snapshot_download: (the cache, its run)."""
    hf_cache = rig.fresh("hf-cache")
    r = python("from huggingface_hub import snapshot_download\n"
               "for repo in ['t5s-test/tiny-t5', 't5s-test/t5-medium', 't5s-test/st-xlmr']:\n"
               "    print(snapshot_download(repo))\n", rig.env(hf_cache, rig.hub.url))
    return hf_cache, r


@pytest.fixture
def hf_cache(hf_download):
    hf_cache, r = hf_download
    assert r.returncode == 0, "huggingface_hub.snapshot_download works against the local server: " + tail(r.stderr)
    return hf_cache


# ---- small helpers ---------------------------------------------------------------------------------
def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tail(text, n=300):
    return text.strip()[-n:]


def repo_dir(cache, repo):
    return os.path.join(cache, "models--" + repo.replace("/", "--"))


def snapshots(cache, repo):
    return glob.glob(os.path.join(repo_dir(cache, repo), "snapshots", "*"))


def python(code, env):
    return subprocess.run([PY, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def one_line(text):
    """One error line, besides progress lines ("[i/n] file ...") and retry notices."""
    lines = [l for l in text.splitlines() if l.strip() and "retry" not in l and not l.startswith("[")]
    return len(lines) == 1


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


def medium_weights(hub):
    """(path, size, SHA-256) of t5-medium's model.safetensors."""
    path = os.path.join(hub.repos[MEDIUM], "model.safetensors")
    return path, os.path.getsize(path), sha256(path)


def lfs_gets(hub, sha):
    return [q for q in hub.stats()["requests"] if q["method"] == "GET" and q["path"].endswith(sha)]


# ---- the tests -------------------------------------------------------------------------------------
def test_server_is_honest(hub, hf_cache):
    for repo in ("t5s-test/tiny-t5", MEDIUM):
        snap = snapshots(hf_cache, repo)
        assert len(snap) == 1, f"huggingface_hub wrote one snapshot of {repo}: {snap}"
        assert sha256(os.path.join(snap[0], "model.safetensors")) == sha256(os.path.join(hub.repos[repo], "model.safetensors")), \
            f"huggingface_hub got {repo}'s bytes"


def test_pull_and_transformers(rig, hub, hf_cache):
    cache = rig.fresh("cache-a")
    hub.post("/_reset")
    r, ev = rig.pull("t5s-test/tiny-t5", cache)
    assert r.returncode == 0, "pull tiny-t5 exits 0: " + tail(r.stderr)
    done = [e for e in ev if e.get("event") == "done"]
    assert len(done) == 1 and done[0]["kind"] == "generation" and done[0]["architecture"] == "t5", f"pull prints one done line: {done}"
    files = set(done[0]["files"])
    assert {"config.json", "model.safetensors", "spiece.model"} <= files, f"configs, safetensors and spiece.model fetched: {files}"
    assert not files & {"pytorch_model.bin", "tf_model.h5", "onnx/encoder_model.onnx"}, "no .bin beside safetensors, no TF/ONNX"
    asked = {q["path"] for q in hub.stats()["requests"]}
    assert not any(p.endswith(("pytorch_model.bin", "tf_model.h5", ".onnx")) for p in asked), "the server was never asked for them"
    assert any(e.get("event") == "progress" and e["phase"] == "download" for e in ev), "progress lines on stdout"
    # Same blob names (etags) as huggingface_hub's cache, and the same snapshot commit.
    ours = {os.path.basename(p) for p in glob.glob(os.path.join(repo_dir(cache, "t5s-test/tiny-t5"), "blobs", "*"))}
    theirs = {os.path.basename(p) for p in glob.glob(os.path.join(repo_dir(hf_cache, "t5s-test/tiny-t5"), "blobs", "*"))}
    assert ours and ours <= theirs, f"blobs are named by the same etags huggingface_hub uses: {ours} vs {theirs}"
    assert [os.path.basename(p) for p in snapshots(cache, "t5s-test/tiny-t5")] == \
        [os.path.basename(p) for p in snapshots(hf_cache, "t5s-test/tiny-t5")], "same snapshot commit as huggingface_hub"
    env = rig.env(cache, "http://127.0.0.1:9")
    env["HF_HUB_OFFLINE"] = "1"
    r = python("import torch\nfrom transformers import T5ForConditionalGeneration, T5Tokenizer\n"
               f"ref = T5ForConditionalGeneration.from_pretrained({hub.repos['t5s-test/tiny-t5']!r})\n"
               "m = T5ForConditionalGeneration.from_pretrained('t5s-test/tiny-t5', local_files_only=True)\n"
               "tok = T5Tokenizer.from_pretrained('t5s-test/tiny-t5', local_files_only=True)\n"
               "assert all(torch.equal(a, b) for a, b in zip(ref.state_dict().values(), m.state_dict().values()))\n"
               "print(tok('hello world').input_ids)\n", env)
    assert r.returncode == 0, "transformers loads our pull with local_files_only=True (same weights, tokenizer): " + tail(r.stderr, 3000)
    r, ev = rig.pull("t5s-test/tiny-t5", cache)
    done = [e for e in ev if e.get("event") == "done"]
    assert r.returncode == 0 and done and done[0]["downloaded_bytes"] == 0 and done[0]["reused_bytes"] > 0, \
        f"a second pull fetches nothing: {done}"
    r, ev = rig.pull("t5s-test/st-xlmr", cache)
    assert r.returncode == 0, "pull a sentence-transformers repo: " + tail(r.stderr)
    r = python("from sentence_transformers import SentenceTransformer\n"
               f"ref = SentenceTransformer({hub.repos['t5s-test/st-xlmr']!r}, device='cpu')\n"
               f"m = SentenceTransformer('t5s-test/st-xlmr', cache_folder={cache!r}, local_files_only=True, device='cpu')\n"
               "a, b = ref.encode(['a test sentence']), m.encode(['a test sentence'])\n"
               "assert abs(a - b).max() == 0, abs(a - b).max()\n", env)
    assert r.returncode == 0, "sentence-transformers loads the pulled encoder offline, same embeddings: " + tail(r.stderr, 3000)


def test_drop_and_resume(rig, hub):
    _, size, want = medium_weights(hub)
    cache = rig.fresh("cache-drop")
    hub.post("/_reset")
    hub.post("/_control", {"drop": [{"match": want, "after": 4 << 20, "count": 1}]})
    r, _ = rig.pull(MEDIUM, cache)
    assert r.returncode == 0, "a dropped connection mid-file is resumed in the same run: " + tail(r.stderr)
    gets = [q for q in lfs_gets(hub, want) if q["path"].startswith("/_lfs/" + MEDIUM)]
    assert len(gets) == 2 and gets[1]["range_start"] == 4 << 20, f"the second request asks for the rest (Range from the drop): {gets}"
    served = hub.stats()["served"].get(f"/_lfs/{MEDIUM}/{want}", 0)
    assert served == size, f"bytes served for the file = its size ({served} vs {size}): nothing fetched twice"
    blob = os.path.join(repo_dir(cache, MEDIUM), "blobs", want)
    assert os.path.isfile(blob) and sha256(blob) == want, "the resumed blob has the right SHA-256"
    # A server that ignores Range after the drop: the partial file is discarded, the file fetched whole.
    cache = rig.fresh("cache-norange")
    hub.post("/_reset")
    hub.post("/_control", {"drop": [{"match": want, "after": 4 << 20, "count": 1}], "norange": [{"match": want}]})
    r, _ = rig.pull(MEDIUM, cache)
    blob = os.path.join(repo_dir(cache, MEDIUM), "blobs", want)
    assert r.returncode == 0 and os.path.isfile(blob) and sha256(blob) == want and not incomplete_files(cache, MEDIUM), \
        "a server ignoring Range after a drop: the file is fetched whole, hash right: " + tail(r.stderr)


def test_kill_and_resume(rig, hub):
    _, size, want = medium_weights(hub)
    cache = rig.fresh("cache-kill")
    hub.post("/_reset")
    hub.post("/_control", {"slow": [{"match": want, "bytes_per_s": 2 << 20}]})
    proc = rig.start_pull(MEDIUM, cache, stderr=subprocess.DEVNULL)
    reached = wait_progress(proc, "model.safetensors", 3 << 20, 60)
    proc.kill()  # SIGKILL: no handler runs
    proc.wait(timeout=10)
    proc.stdout.close()
    assert reached, "pull reported progress into the weights before the kill"
    part = incomplete_files(cache, MEDIUM)
    kept = os.path.getsize(part[0]) if len(part) == 1 else 0
    assert len(part) == 1 and 0 < kept < size, f"kill -9 leaves blobs/<etag>.incomplete ({kept} of {size} bytes)"
    assert not os.path.exists(os.path.join(repo_dir(cache, MEDIUM), "snapshots")), "and nothing under snapshots/"
    hub.post("/_reset")  # counters from zero, no throttle
    r, _ = rig.pull(MEDIUM, cache)
    assert r.returncode == 0, "the same pull again completes: " + tail(r.stderr)
    gets = lfs_gets(hub, want)
    assert len(gets) == 1 and gets[0]["range_start"] == kept, f"it resumed at byte {kept} (asked {gets})"
    served = hub.stats()["served"].get(f"/_lfs/{MEDIUM}/{want}", 0)
    assert served == size - kept, f"only the missing {size - kept} bytes were served ({served})"
    blob = os.path.join(repo_dir(cache, MEDIUM), "blobs", want)
    assert os.path.isfile(blob) and sha256(blob) == want and not incomplete_files(cache, MEDIUM), "final hash right, no .incomplete left"


def test_ctrl_c(rig, hub):
    _, _, want = medium_weights(hub)
    cache = rig.fresh("cache-int")
    hub.post("/_reset")
    hub.post("/_control", {"slow": [{"match": want, "bytes_per_s": 2 << 20}]})
    proc = rig.start_pull(MEDIUM, cache, stderr=subprocess.PIPE)
    reached = wait_progress(proc, "model.safetensors", 1 << 20, 60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert reached and proc.returncode == 130, f"Ctrl-C stops the pull with exit code 130 (got {proc.returncode}, progress seen: {reached})"
    assert "interrupted" in err and "resume" in err, "and says it can be resumed: " + tail(err, 200)
    assert len(incomplete_files(cache, MEDIUM)) == 1 and not os.path.exists(os.path.join(repo_dir(cache, MEDIUM), "snapshots")), \
        "the partial file is kept, snapshots/ untouched"
    hub.post("/_reset")
    r, _ = rig.pull(MEDIUM, cache)
    assert r.returncode == 0 and len(snapshots(cache, MEDIUM)) == 1, "the interrupted pull resumes to completion: " + tail(r.stderr)


def test_corrupt(rig, hub):
    _, _, want = medium_weights(hub)
    cache = rig.fresh("cache-corrupt")
    hub.post("/_reset")
    hub.post("/_control", {"corrupt": [{"match": want}]})
    r, ev = rig.pull(MEDIUM, cache)
    assert r.returncode == 14, f"a corrupted file: exit code 14 (got {r.returncode})"
    assert one_line(r.stderr) and "SHA-256" in r.stderr, "one line naming the SHA-256: " + tail(r.stderr)
    blobs = os.path.join(repo_dir(cache, MEDIUM), "blobs")
    assert not os.path.exists(os.path.join(blobs, want)) and not incomplete_files(cache, MEDIUM), "the bad bytes are not kept"
    assert not os.path.exists(os.path.join(repo_dir(cache, MEDIUM), "snapshots")), "nothing under snapshots/"
    err = [e for e in ev if e.get("event") == "error"]
    assert err and err[0]["failure"] == "hash_mismatch", f"--json names the failure: {err}"


def test_gated(rig, hub):
    cache = rig.fresh("cache-err")
    hub.post("/_reset")
    r, _ = rig.pull("t5s-test/gated-t5", cache)
    assert r.returncode == 10 and one_line(r.stderr) and "HF_TOKEN" in r.stderr and "licence" in r.stderr, \
        f"gated without a token: exit 10, one line on getting access ({r.returncode}: {tail(r.stderr)})"
    assert not snapshots(cache, "t5s-test/gated-t5"), "nothing in snapshots/ after a 401"
    r, _ = rig.pull("t5s-test/gated-t5", cache, env_extra={"HF_TOKEN": "hf_test_token"})
    assert r.returncode == 0, "with HF_TOKEN the gated repo downloads: " + tail(r.stderr)
    token_file = os.path.join(rig.work, "home", ".cache", "huggingface", "token")
    os.makedirs(os.path.dirname(token_file), exist_ok=True)
    with open(token_file, "w") as f:
        f.write("hf_test_token\n")
    try:
        r, _ = rig.pull("t5s-test/gated-t5", rig.fresh("cache-token"))
    finally:
        os.remove(token_file)
    assert r.returncode == 0, "the standard token file is read too: " + tail(r.stderr)


def test_errors(rig, hub):
    cache = rig.fresh("cache-err")
    hub.post("/_reset")
    for repo, what in (("nobody/missing", "repository"), ("t5s-test/tiny-t5@no-such-branch", "revision")):
        r, _ = rig.pull(repo, cache)
        assert r.returncode == 11 and one_line(r.stderr) and "not found" in r.stderr, f"unknown {what}: exit 11, one line ({r.stderr.strip()})"
    hub.post("/_control", {"fail": [{"match": "/api/models/t5s-test/tiny-t5", "status": 500, "count": 100}]})
    r, _ = rig.pull("t5s-test/tiny-t5", cache, "--retries", "2")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 13 and len(lines) == 3 and "retry 1/2" in lines[0] and "HTTP 500 after 2 retries" in lines[-1], \
        f"500s: two retries with backoff, then exit 13 ({r.returncode}: {lines})"
    hub.post("/_control", {"fail": [{"match": "/api/models/t5s-test/tiny-t5", "status": 503, "count": 1}]})
    r, _ = rig.pull("t5s-test/tiny-t5", cache)
    assert r.returncode == 0, "one 503 then success: the retry gets it: " + tail(r.stderr)
    hub.post("/_reset")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    r, _ = rig.pull("t5s-test/tiny-t5", cache, "--retries", "0", endpoint=closed)
    assert r.returncode == 12 and one_line(r.stderr) and "cannot reach" in r.stderr, f"connection refused: exit 12 ({r.stderr.strip()})"
    r, _ = rig.pull("t5s-test/llama", cache)
    assert r.returncode == 16 and one_line(r.stderr) and "LlamaForCausalLM" in r.stderr, f"unsupported architecture: exit 16 ({r.stderr.strip()})"
    asked = [q["path"] for q in hub.stats()["requests"] if "llama" in q["path"]]
    assert asked and not any("safetensors" in p for p in asked), f"refused before any weight was fetched: {asked}"
    # tiny-t5 is in this cache from the 503 case above.
    r, ev = rig.pull("t5s-test/tiny-t5", cache, env_extra={"HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0 and ev and ev[-1].get("offline") is True, \
        f"HF_HUB_OFFLINE=1: a cached repo resolves with no network ({r.returncode}: {ev[-1:]} {tail(r.stderr)})"
    r, _ = rig.pull(MEDIUM, cache, env_extra={"HF_HUB_OFFLINE": "1"})
    assert r.returncode == 17 and one_line(r.stderr), f"HF_HUB_OFFLINE=1 and not cached: exit 17 ({r.stderr.strip()})"


def transformers_parameter_count(hub, env):
    n = python("from transformers import T5ForConditionalGeneration as M\n"
               f"m = M.from_pretrained({hub.repos['t5s-test/tiny-t5']!r})\n"
               "print(sum(p.numel() for p in m.parameters()))\n", env)
    assert n.returncode == 0, "transformers counts tiny-t5's parameters: " + tail(n.stderr, 3000)
    return int(n.stdout.strip())


def test_open_by_name(rig, hub, hf_cache):
    env = rig.env(hf_cache, "http://127.0.0.1:9")

    def run(*a):
        return subprocess.run([rig.bin, *a], env=env, capture_output=True, text=True, timeout=120)

    params = transformers_parameter_count(hub, env)
    r = run("info", "--model", "t5s-test/tiny-t5", "--json")
    assert r.returncode == 0, f"info --model ORG/NAME opens huggingface_hub's cache ({r.stderr.strip()})"
    info = json.loads(r.stdout)
    assert info.get("parameter_count") == params, f"info --model ORG/NAME: {info.get('parameter_count')} parameters, transformers {params}"
    assert "/snapshots/" in info.get("model_dir", ""), f"from its snapshot folder: {info.get('model_dir')}"
    r = run("generate", "--model", "t5s-test/tiny-t5", "--text", "hello world", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["results"][0]["candidates"], "generate --model ORG/NAME: " + tail(r.stderr)
    r = run("embed", "--embedder", "t5s-test/st-xlmr", "--text", "hello", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["dim"] > 0, "embed --embedder ORG/NAME " + tail(r.stderr, 200)
    r = run("info", "--model", "nobody/missing")
    assert r.returncode == 1 and one_line(r.stderr) and "t5studio pull nobody/missing" in r.stderr, \
        f"a repo not in the cache: one line suggesting pull ({r.stderr.strip()})"
    r = run("models", "--json")
    assert r.returncode == 0, "models --json: " + tail(r.stderr)
    models = {m["name"]: m for m in json.loads(r.stdout)["models"]}
    assert set(models) == {"t5s-test/tiny-t5", MEDIUM, "t5s-test/st-xlmr"}, f"models lists the cache ({sorted(models)})"
    assert models["t5s-test/tiny-t5"].get("parameters") == params, "models: parameters from config.json equal transformers'"
    m = models[MEDIUM]
    assert m.get("revision") == "main" and m.get("memory", {}).get("fp32", {}).get("fit") in ("fits", "tight", "too big") \
        and m.get("disk_bytes", 0) >= os.path.getsize(os.path.join(hub.repos[MEDIUM], "model.safetensors")), \
        f"models: revision, size on disk, memory fit: {m}"
    assert models["t5s-test/st-xlmr"].get("kind") == "encoder", "models: the sentence encoder is listed as one"


def test_disk_full(rig):
    mnt = rig.fresh("tiny-disk")
    os.makedirs(mnt)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip("hub_disk_full: cannot mount a tmpfs here (needs root): " + tail(mounted.stderr, 200))
    try:
        r, _ = rig.pull(MEDIUM, mnt)
        assert r.returncode == 15 and one_line(r.stderr) and "MiB free" in r.stderr, f"disk full: exit 15 before downloading ({r.stderr.strip()})"
        assert not glob.glob(os.path.join(mnt, "*", "blobs", "*")), "no partial files on the full disk"
    finally:
        subprocess.run(["umount", mnt])
