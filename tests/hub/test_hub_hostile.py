"""`t5studio pull` against a hostile Hub (tests/hub/hostile_hub_server.py), loopback only (ctest `hub_hostile`).

    python -m pytest -q tests/hub/test_hub_hostile.py --t5studio T5STUDIO --work WORK_DIR
Each attack runs with a deadline and must be refused with one clear line and a non-zero exit code
(pull's usual codes: 13 server, 14 size/hash, 130 interrupted), writing nothing outside its cache:
the whole work folder outside that cache (with a sentinel folder the attacks aim at, and a secret
file they try to fetch) is compared before and after. The token goes to no other host: the second
listener records every connection. SIGINT and SIGTERM end a dripping listing and a dripping
download within 1 s, leaving a state the next pull resumes from. Waits are synchronised on the
server's events, each with a deadline. The tests run in file order; the last two look back over all.
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

import pyutil
from hostile_hub_server import WEIGHTS

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "hf_hostile_test_token"
SECRET = b"T5S-SECRET-BYTES-that-must-never-become-a-model\n"
SENTINEL = '{"sentinel": true}\n'
RUN_LIMIT_S = 30  # each attack's deadline
STOP_LIMIT_S = 1.0  # SIGINT/SIGTERM to exit


class Server:
    def __init__(self, work):
        outside = os.path.join(work, "outside")
        # From a snapshot WORK/caches/NAME/models--evil--NAME/snapshots/COMMIT, five levels up is WORK.
        args = [sys.executable, os.path.join(HERE, "hostile_hub_server.py"), "--outside", outside,
                "--outside-rel", "../../../../../outside", "--secret", os.path.join(work, "secret.txt")]
        self.server, ready = pyutil.start_server(args, "READY ", limit=60)
        self.url, self.other = ready.split()[1:3]

    def stats(self):
        return json.load(urllib.request.urlopen(self.url + "/_stats", timeout=10))

    def events(self, kind, repo):
        return [e for e in self.stats()["events"] if e["kind"] == kind and e["repo"] == repo]

    def calm(self, repo):
        req = urllib.request.Request(self.url + "/_calm", data=json.dumps({"repos": [repo]}).encode(), method="POST")
        urllib.request.urlopen(req, timeout=10).read()

    def stop(self):
        self.server.stop()


class Rig:
    """The binary under test, the work folder (the sentinel, the secret, the caches) and the server."""

    def __init__(self, t5studio, work, hub):
        self.bin, self.work, self.hub = t5studio, work, hub

    def cache_for(self, name):
        path = os.path.join(self.work, "caches", name)
        shutil.rmtree(path, ignore_errors=True)
        return path

    def env_for(self, cache, endpoint=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env.update(HF_HUB_CACHE=cache, HF_ENDPOINT=endpoint or self.hub.url, HF_TOKEN=TOKEN,
                   HOME=os.path.join(self.work, "home"))
        return env

    def pull(self, repo, cache, *flags):
        t0 = time.monotonic()
        r = subprocess.run([self.bin, "pull", "evil/" + repo, "--json", *flags], env=self.env_for(cache),
                           capture_output=True, timeout=RUN_LIMIT_S)
        return r, time.monotonic() - t0

    def outside_cache(self, cache):
        """The work folder but `cache`: what an attack on that cache must leave as it was."""
        return tree(self.work, cache)


@pytest.fixture(scope="module")
def work(work_dir):
    os.makedirs(os.path.join(work_dir, "outside", "keep"))
    os.makedirs(os.path.join(work_dir, "caches"))
    os.makedirs(os.path.join(work_dir, "home"))
    with open(os.path.join(work_dir, "outside", "config.json"), "w") as f:
        f.write(SENTINEL)
    with open(os.path.join(work_dir, "secret.txt"), "wb") as f:
        f.write(SECRET)
    return work_dir


@pytest.fixture(scope="module")
def hub(work):
    server = Server(work)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def rig(t5studio, work, hub):
    return Rig(t5studio, work, hub)


def tree(root, skip):
    """Every path under root but `skip`: (mode, size, mtime, link target) of each, not following links. A
    folder's own mtime is left out (the cache's parent gains the cache); its entries are compared."""
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if os.path.join(d, x) != skip]
        for name in dirs + files:
            p = os.path.join(d, name)
            st = os.lstat(p)
            folder = os.path.isdir(p) and not os.path.islink(p)
            out[p] = (st.st_mode, 0 if folder else st.st_size, 0 if folder else st.st_mtime_ns,
                      os.readlink(p) if os.path.islink(p) else None)
    return out


def error_lines(text):
    return [l for l in text.splitlines() if l.strip() and "retry" not in l and not l.startswith("[")]


def files_under(root):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]


def holds_secret(root):
    for p in files_under(root):
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as f:
                if SECRET.strip() in f.read(1 << 20):
                    return True
    return False


# (repository, exit code, words the one error line must hold)
REFUSED = [
    ("abs-modules", 13, "modules.json"),
    ("rel-modules", 13, "modules.json"),
    ("escape-names", 13, "modules.json"),
    ("escape-listing", 13, "commit"),
    ("bad-commit", 13, "commit"),
    ("bad-etag", 13, "ETag"),
    ("file-location", 13, "only http and https"),
    ("zero-location", 13, "only http and https"),
    ("gopher-location", 13, "only http and https"),
    ("get-redirect", 13, "only http and https"),
    ("oversize-head", 13, "4096 bytes"),
    ("huge-listing", 13, "larger than"),
]



@pytest.mark.parametrize("repo,code,words", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused(rig, hub, repo, code, words):
    cache = rig.cache_for(repo)
    before = rig.outside_cache(cache)
    other_before = len(hub.stats()["other"])
    r, secs = rig.pull(repo, cache)
    err = r.stderr.decode("utf-8", "replace")
    lines = error_lines(err)
    assert r.returncode == code and len(lines) == 1 and words in err, \
        f"{repo}: refused, exit {code}, one line naming {words!r} (exit {r.returncode} in {secs:.1f} s: {err.strip()[:300]})"
    assert b"\x1b" not in r.stderr and b"\x1b" not in r.stdout and b"\x07" not in r.stderr and len(r.stderr) < 2000, \
        f"{repo}: no raw escape bytes on the terminal, {len(r.stderr)} bytes of stderr"
    assert rig.outside_cache(cache) == before, f"{repo}: nothing outside the cache changed or appeared"
    assert not os.path.exists(os.path.join(cache, "models--evil--" + repo, "snapshots")), f"{repo}: no snapshot written"
    assert not holds_secret(cache), f"{repo}: the local secret file is not in the cache"
    if repo == "gopher-location":
        assert len(hub.stats()["other"]) == other_before, "gopher-location: nothing connected to the other port"
    if repo.startswith("escape"):
        assert "\\x1b" in err, f"{repo}: the escape bytes are shown escaped: {err.strip()[:300]}"


def test_oversize(rig, hub, measured):
    cache = rig.cache_for("oversize")
    before = rig.outside_cache(cache)
    biggest, done = [0], threading.Event()

    weights = hashlib.sha256(WEIGHTS).hexdigest()

    def watch():  # the largest download of the weights seen while the pull runs
        while not done.is_set():
            for p in files_under(cache):
                if weights not in os.path.basename(p):
                    continue
                try:
                    biggest[0] = max(biggest[0], os.path.getsize(p))
                except OSError:
                    pass
            time.sleep(0.001)

    w = threading.Thread(target=watch)
    w.start()
    try:
        r, secs = rig.pull("oversize", cache)
    finally:
        done.set()
        w.join()
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 14 and len(error_lines(err)) == 1 and "more than the 4096 bytes" in err, \
        f"oversize: exit 14, one line ({r.returncode}: {err.strip()[:300]})"
    sent = sum(e["bytes"] for e in pyutil.until(lambda: hub.events("sent", "oversize"), 10, "the server's count"))
    measured(f"a file announced at 4096 bytes, served as 30 MiB: at most {biggest[0]} bytes of it on disk, "
             f"{sent} bytes left the server before the pull hung up")
    assert biggest[0] <= 4096, f"oversize: never more than the announced 4096 bytes on disk ({biggest[0]})"
    assert not [p for p in files_under(cache) if weights in p], "oversize: the partial file is removed"
    assert rig.outside_cache(cache) == before, "oversize: nothing outside the cache changed"


def test_token(rig, hub):
    cache = rig.cache_for("other-host")
    r, _ = rig.pull("other-host", cache)
    other = hub.stats()["other"]
    served = [o for o in other if "/_lfs/evil/other-host/" in o["head"]]
    assert r.returncode == 0 and served, \
        f"an LFS redirect to another port is fetched from there, like a CDN ({r.returncode}: {r.stderr.decode()[-300:]})"
    sent_to_endpoint = [a for a in hub.stats()["auth"] if a["path"].startswith("/api/models/evil/") and a["authorization"]]
    assert sent_to_endpoint, "the token is sent to the endpoint itself"
    assert other and not any(o["authorization"] for o in other), \
        f"the other port never got an Authorization header ({len(other)} connections)"


def stop_while_dripping(rig, repo, sig, cache):
    """Starts a pull, waits for the server to start dripping, sends `sig`; returns (exit code, seconds, stderr)."""
    hub = rig.hub
    n = len(hub.events("drip-start", repo))
    proc = subprocess.Popen([rig.bin, "pull", "evil/" + repo], env=rig.env_for(cache), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        pyutil.until(lambda: len(hub.events("drip-start", repo)) > n, 10, f"{repo} to start dripping")
        t0 = time.monotonic()
        proc.send_signal(sig)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
            return None, 5.0, ""
        secs = time.monotonic() - t0
        return proc.returncode, secs, proc.stderr.read().decode("utf-8", "replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        proc.stderr.close()


def test_signals(rig, hub, measured):
    for repo in ("drip-listing", "drip-download"):
        for sig in (signal.SIGINT, signal.SIGTERM):
            cache = rig.cache_for(repo)
            before = rig.outside_cache(cache)
            code, secs, err = stop_while_dripping(rig, repo, sig, cache)
            measured(f"{sig.name} during {repo}: exit after {secs * 1000:.0f} ms")
            assert code == 130 and secs < STOP_LIMIT_S and "interrupted" in err, \
                f"{repo}: {sig.name} stops the pull within {STOP_LIMIT_S} s with exit 130 ({code} in {secs:.2f} s: {err.strip()[:200]})"
            assert rig.outside_cache(cache) == before, f"{repo} + {sig.name}: nothing outside the cache changed"
            if repo == "drip-download":
                blobs = os.path.join(cache, "models--evil--drip-download", "blobs")
                part = [p for p in files_under(blobs) if p.endswith(".incomplete")]
                assert len(part) == 1 and not os.path.exists(os.path.join(blobs, "..", "snapshots")), \
                    f"drip-download + {sig.name}: the partial file is kept for a resume, no snapshot"
    # The last stop (drip-download, SIGTERM) left `part` in `cache`: an honest server lets it resume.
    kept = os.path.getsize(part[0])
    hub.calm("drip-download")
    r, _ = rig.pull("drip-download", cache)
    gets = hub.events("lfs-get", "drip-download")
    assert r.returncode == 0 and gets and gets[-1]["range_start"] == kept, \
        f"the interrupted download resumes at byte {kept} once the server is honest ({r.returncode}, {gets[-1:]})"


def test_stall(rig, hub, measured):
    cache = rig.cache_for("drip-listing")
    n = len(hub.events("drip-start", "drip-listing"))
    r, secs = rig.pull("drip-listing", cache, "--stall-timeout", "2", "--retries", "0")
    err = r.stderr.decode("utf-8", "replace")
    measured(f"a listing dripping 1 byte/s with --stall-timeout 2: pull gave up after {secs:.1f} s")
    assert r.returncode == 12 and len(error_lines(err)) == 1 and len(hub.events("drip-start", "drip-listing")) > n and secs < 10, \
        f"a dripping listing is dropped after the stall timeout: exit 12, one line ({r.returncode} in {secs:.1f} s: {err.strip()[:200]})"


def test_endpoint_scheme(rig):
    cache = rig.cache_for("endpoint")
    r = subprocess.run([rig.bin, "pull", "evil/abs-modules"], env=rig.env_for(cache, "file:///etc"), capture_output=True,
                       text=True, timeout=RUN_LIMIT_S)
    assert r.returncode == 1 and len(error_lines(r.stderr)) == 1 and "http or https" in r.stderr, \
        f"HF_ENDPOINT=file:///etc is refused ({r.returncode}: {r.stderr.strip()[:200]})"


def test_sentinel_untouched(work):
    """After every attack above: the file they aimed at outside the cache is as it was."""
    path = os.path.join(work, "outside", "config.json")
    with open(path) as f:
        assert f.read() == SENTINEL and not os.path.islink(path), "the sentinel file outside the cache is untouched"


def test_no_token_to_other_port(hub):
    """After every attack above: no request to the second listener carried the token."""
    assert not any(o["authorization"] for o in hub.stats()["other"]), "no Authorization header ever reached the other port"
