"""Hostile requests against `t5studio serve` on loopback (ctest `serve_attacks`).

Each attack is answered with a 4xx (never a crash, never a stored pair), and the server still serves
a normal /augment after it. The server's peak resident memory (VmHWM, reset through clear_refs)
during the chunked-body and header floods stays under twice its idle VmRSS; the figures are listed
under "measured". Every loop is bounded in count and time; waits poll for an event with a deadline.

    python -m pytest -q tests/serve/test_serve_attacks.py --t5studio T5STUDIO --model MODEL_DIR --work WORK_DIR
The tests against the Basic-auth server share it and run in file order (the last one stops it).
"""
import base64
import itertools
import json
import os
import select
import socket
import threading
import time

import pytest
import requests

import pyutil

READ_TIMEOUT = 2
DEEP = "[" * 100000 + "]" * 100000
CONFIG = '<View><Text name="src" value="$sentence"/><TextArea name="out" toName="src"/></View>'
AUTH = {"Authorization": "Basic " + base64.b64encode(b"ls:pw").decode()}
JSON = dict(AUTH, **{"Content-Type": "application/json"})
ANNOTATION = {"action": "ANNOTATION_CREATED", "project": {"id": 1, "label_config": CONFIG},
              "task": {"id": 1, "data": {"sentence": "the cat sat"}},
              "annotation": {"id": 1, "result": [{"from_name": "out", "type": "textarea", "value": {"text": ["a cat was sitting"]}}]}}


def read_answer(s, limit=15):
    """(status, body) of the HTTP answer on socket s; (None, "") if none comes within `limit` s."""
    data, end = b"", time.monotonic() + limit
    while time.monotonic() < end:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if sep:
            length = next((int(l.split(b":", 1)[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")), 0)
            if len(rest) >= length:
                return int(head.split()[1]), rest[:length].decode(errors="replace")
        ready, _, _ = select.select([s], [], [], max(0.0, end - time.monotonic()))
        try:
            chunk = s.recv(65536) if ready else b""
        except OSError:
            chunk = b""
        if not chunk:
            break
        data += chunk
    head = data.partition(b"\r\n")[0].split()
    return (int(head[1]) if len(head) > 1 and head[0].startswith(b"HTTP/") else None), data.partition(b"\r\n\r\n")[2].decode(errors="replace")



class Target:
    """A started `serve` and the ways to attack it: HTTP through requests, raw bytes through a socket."""

    @classmethod
    def start(cls, t5studio, model_dir, work, name, *flags):
        """`serve --port 0 FLAGS` (stderr in WORK/NAME.err), waited for until /ready answers."""
        t = cls()
        with open(os.path.join(work, name + ".err"), "w") as err:
            t.server, first = pyutil.start_server([t5studio, "serve", "--model", model_dir, "--port", "0", "--threads", "1", *flags], "{",
                                                  limit=60, stderr=err)
        t.proc = t.server.proc
        t.listening = json.loads(first)["listening"]
        t.host, port = t.listening.rsplit(":", 1)
        t.port = int(port)
        t.base = "http://127.0.0.1:%d" % t.port  # sent to loopback only, whatever the address bound
        pyutil.until(lambda: requests.get(t.base + "/ready", timeout=10).status_code == 200, 60, "/ready")
        return t

    def post(self, path, body, headers=JSON, method="POST", **kw):
        data = body if isinstance(body, (str, bytes)) else json.dumps(body)
        return requests.request(method, self.base + path, data=data, headers=headers, timeout=60, **kw)

    def alive(self, after):
        """A normal /augment answers 200 (and the process still runs)."""
        try:
            r = requests.post(self.base + "/augment", json={"text": "hello world", "max_new_tokens": 4}, headers=AUTH, timeout=60)
            ok = r.status_code == 200 and len(r.json()["results"]) == 1
        except requests.RequestException as e:
            ok, r = False, e
        assert ok and self.proc.poll() is None, "after %s: a normal /augment is served (%s)" % (after, getattr(r, "status_code", r))

    def raw(self, pieces):
        """Sends the pieces, stopping as soon as the server answers; returns (status, body, bytes sent)."""
        s = socket.create_connection((self.host, self.port), timeout=15)
        sent = 0
        try:
            for piece in pieces:
                if select.select([s], [], [], 0)[0]:
                    break
                try:
                    s.sendall(piece)
                except OSError:
                    break
                sent += len(piece)
            status, body = read_answer(s)
            return status, body, sent
        finally:
            s.close()

    def memory(self, field):
        with open("/proc/%d/status" % self.proc.pid) as f:
            return next(int(l.split()[1]) for l in f if l.startswith(field + ":"))  # kB

    def stop_cleanly(self):
        self.proc.terminate()
        assert self.proc.wait(60) == 0, "SIGTERM: exit 0"


def refused(what, r, codes, needle=""):
    body = r.text if hasattr(r, "text") else r[1]
    code = r.status_code if hasattr(r, "status_code") else r[0]
    assert code in codes and needle in body, "%s -> %s %s" % (what, code, body[:160])


@pytest.fixture(scope="module")
def basic(t5studio, model_dir, work_dir):
    """The server with HTTP Basic only (the case where /augment and PUT /v1/settings used to be open)."""
    with open(os.path.join(work_dir, "basic"), "w") as f:
        f.write("ls:pw\n")
    t = Target.start(t5studio, model_dir, work_dir, "basic", "--basic-auth-file", os.path.join(work_dir, "basic"),
                     "--history", os.path.join(work_dir, "h.sqlite"), "--learn-dir", os.path.join(work_dir, "learning"),
                     "--learn-every", "0", "--max-queue", "1", "--read-timeout", str(READ_TIMEOUT))
    t.alive("start")
    t.idle_kb = t.memory("VmRSS")
    t.request_head = "POST /augment HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s" % (
        t.listening, "Authorization: %s\r\n" % AUTH["Authorization"])
    yield t
    t.server.stop(limit=60)


def peak_during(t, what, attack, measured):
    with open("/proc/%d/clear_refs" % t.proc.pid, "w") as f:
        f.write("5")  # resets VmHWM to the current resident size
    result = attack()
    peak = t.memory("VmHWM")
    measured("memory: %s: idle VmRSS %.1f MB, peak VmHWM %.1f MB (%.2fx)" % (what, t.idle_kb / 1024, peak / 1024, peak / t.idle_kb))
    assert peak < 2 * t.idle_kb, "%s: peak resident memory under 2x idle" % what
    return result


def test_chunked_body_of_60_mib(basic, measured):
    """Counted as it arrives, refused past 1 MiB."""
    def chunked_60mib():
        piece = b"a" * 65536
        chunks = (b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(960))
        return basic.raw(itertools.chain([(basic.request_head + "Transfer-Encoding: chunked\r\n\r\n").encode()], chunks, [b"0\r\n\r\n"]))

    status, body, sent = peak_during(basic, "60 MiB chunked body", chunked_60mib, measured)
    assert status == 413 and "1 MiB" in body and sent < 8 << 20, "60 MiB chunked -> %s %s after %d bytes" % (status, body[:120], sent)
    basic.alive("60 MiB chunked body")


def test_header_floods(basic, measured):
    """100k headers: refused past 100 header fields / 64 KiB."""
    def header_flood():
        lines = ("".join("X-Flood-%d: v\r\n" % (i + j) for j in range(1000)).encode() for i in range(0, 100000, 1000))
        return basic.raw(itertools.chain([basic.request_head.encode()], lines, [b"Content-Length: 2\r\n\r\n{}"]))

    status, body, sent = peak_during(basic, "100k headers", header_flood, measured)
    assert status == 431 and "header" in body, "100k headers -> %s %s after %d bytes" % (status, body[:120], sent)
    status, body, _ = basic.raw([(basic.request_head + "X-Long: " + "v" * (100 << 10) + "\r\n\r\n").encode()])
    assert status == 431, "a 100 KiB header line -> %s %s" % (status, body[:120])
    basic.alive("header floods")


def test_deep_json(basic):
    """JSON nested 100k deep: refused before parsing, on every JSON route."""
    for method, path, body in (("POST", "/augment", '{"text": "x", "spans": ' + DEEP + "}"), ("PUT", "/v1/settings", '{"seed": ' + DEEP + "}"),
                               ("POST", "/webhook", '{"action": "ANNOTATION_CREATED", "task": ' + DEEP + "}"),
                               ("POST", "/predict", '{"tasks": ' + DEEP + "}"), ("POST", "/train", '{"annotations": ' + DEEP + "}"),
                               ("POST", "/setup", '{"schema": ' + DEEP + "}")):
        refused("%s %s with JSON nested 100000 deep" % (method, path), basic.post(path, body, method=method), (400,), "nested deeper than 64")
    basic.alive("deep JSON")


def test_long_texts(basic):
    """A text over 64 KiB is refused before tokenising."""
    refused("/augment with a 1 MB text", basic.post("/augment", {"texts": ["b" * 1000] * 3 + ["a" * 1000000]}), (400, 413))
    refused("/augment with a 100 KB text", basic.post("/augment", {"text": "x" * 100000}), (400,), "bytes per text")
    refused("/predict with a 100 KB task text",
            basic.post("/predict", {"tasks": [{"id": 1, "data": {"sentence": "y" * 100000}}], "label_config": CONFIG}), (400,), "bytes per text")
    basic.alive("long texts")


def test_web_pages(basic):
    """A web page cannot train the model, nor reach the server by another name."""
    b = basic
    pairs_before = requests.get(b.base + "/health", headers=AUTH, timeout=10).json()["learning"]["new_pairs"]
    evil = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
    refused("a page's text/plain /webhook (Origin evil)", b.post("/webhook", ANNOTATION, headers=evil), (403,), "Origin")
    refused("the same with credentials", b.post("/webhook", ANNOTATION, headers=dict(evil, **AUTH)), (403,), "Origin")
    refused("/webhook as text/plain with credentials, no Origin",
            b.post("/webhook", ANNOTATION, headers=dict(AUTH, **{"Content-Type": "text/plain"})), (415,), "application/json")
    refused("/augment as a form", b.post("/augment", "text=x", headers=dict(AUTH, **{"Content-Type": "application/x-www-form-urlencoded"})), (415,))
    refused("Host: evil.example (DNS rebinding)", b.post("/augment", {"text": "x"}, headers=dict(JSON, Host="evil.example:%d" % b.port)), (403,), "Host")
    refused("Host: 127.0.0.1 on another port", b.post("/augment", {"text": "x"}, headers=dict(JSON, Host="127.0.0.1:1")), (403,), "Host")
    refused("GET /health with Host: evil.example", requests.get(b.base + "/health", headers=dict(AUTH, Host="evil.example"), timeout=10), (403,))
    refused("a preflight from evil.example", requests.options(b.base + "/augment", headers={"Origin": "http://evil.example",
            "Access-Control-Request-Method": "POST"}, timeout=10), (403,))
    pairs_after = requests.get(b.base + "/health", headers=AUTH, timeout=10).json()["learning"]["new_pairs"]
    assert pairs_after == pairs_before, "no pair was stored by the refused webhooks (%s -> %s)" % (pairs_before, pairs_after)
    r = b.post("/webhook", ANNOTATION)
    assert r.status_code == 201 and r.json()["pairs"] == 1, "the authenticated JSON webhook still stores its pair: %s %s" % (r.status_code, r.text[:120])


def test_basic_auth_on_every_route(basic):
    """With only --basic-auth-file, every route asks for it; the probes answer without."""
    for method, path, body in (("POST", "/augment", {"text": "x"}), ("PUT", "/v1/settings", {"max_new_tokens": 3}), ("GET", "/v1/settings", None),
                               ("POST", "/webhook", ANNOTATION), ("POST", "/predict", {"tasks": []})):
        refused("%s %s without credentials" % (method, path), basic.post(path, body or "", headers={"Content-Type": "application/json"}, method=method),
                (401,), "credentials")
    for probe in ("/ready", "/health", "/metrics"):  # Kubernetes probes and Prometheus scrapes send no credentials
        assert requests.get(basic.base + probe, timeout=10).status_code == 200, "GET %s (a probe) answers without credentials" % probe
    refused("a probe with Host: evil.example", requests.get(basic.base + "/metrics", headers={"Host": "evil.example"}, timeout=10), (403,), "Host")
    basic.alive("web-page attacks")


def drip(slow, answers, limit):
    """Each slow client sends one byte of an endless header line per round until the server answers it."""
    end = time.monotonic() + limit
    while len(answers) < len(slow) and time.monotonic() < end:
        for i, s in enumerate(slow):
            if i in answers:
                continue
            if select.select([s], [], [], 0)[0]:
                answers[i] = read_answer(s, 5)[0]
                continue
            try:
                s.send(b"X")
            except OSError:
                answers[i] = None
        time.sleep(0.25)  # the attacker's pace, not a synchronisation


def test_slow_clients(basic):
    """More than the server's threads drip their headers; each is cut at --read-timeout."""
    n = 80
    slow = [socket.create_connection((basic.host, basic.port), timeout=10) for _ in range(n)]
    for s in slow:
        s.sendall(("POST /augment HTTP/1.1\r\nHost: %s\r\n" % basic.listening).encode())
    answers = {}
    dripper = threading.Thread(target=drip, args=(slow, answers, READ_TIMEOUT * 3 + 10))
    dripper.start()
    try:
        t0 = time.monotonic()
        basic.alive("%d slow clients started dripping" % n)
        served_in = time.monotonic() - t0
    finally:
        dripper.join()
        for s in slow:
            s.close()
    assert served_in < READ_TIMEOUT * 3 + 5, "a normal /augment among %d slow clients (more than the server's threads) took %.1f s" % (n, served_in)
    codes = sorted(set(answers.values()), key=str)
    assert len(answers) == n and all(c == 408 for c in answers.values()), "every slow client got 408: %d answers, codes %s" % (len(answers), codes)


def test_trickling_body(basic):
    """A body that trickles in is cut at --read-timeout as well."""
    s = socket.create_connection((basic.host, basic.port), timeout=10)
    s.sendall((basic.request_head + "Content-Length: 1000\r\n\r\n{").encode())
    t0, status = time.monotonic(), None
    while status is None and time.monotonic() - t0 < READ_TIMEOUT + 5:
        if select.select([s], [], [], 0.25)[0]:
            status = read_answer(s, 5)[0]
        else:
            s.send(b" ")  # one byte of the body per quarter second
    s.close()
    assert status == 408 and time.monotonic() - t0 < READ_TIMEOUT + 3, "a trickling body -> %s after %.1f s" % (status, time.monotonic() - t0)
    basic.alive("a trickling body")


def test_parsers_survive(basic):
    """What the regex and label-config parsers must survive (the span and label-config code)."""
    b = basic
    refused("/setup with a 50 KB label config",
            b.post("/setup", {"project": "1", "schema": '<View><Text name="t" value="$t" ' + 'a="b" ' * 8000 + "/></View>"}), (400,))
    b.alive("a 50 KB label config")
    refused("/augment with a 100 KB URL and protect urls", b.post("/augment", {"text": "see http://" + "a" * 100000, "protect": "urls"}), (400,))
    refused("/augment with a 60 KB URL and protect urls", b.post("/augment", {"text": "see http://" + "a" * 60000 + " now", "protect": "urls"}),
            (400, 413))
    b.alive("long URLs")
    t0 = time.monotonic()
    r = b.post("/augment", {"text": "a" * 40 + "!", "protect_regex": "(a+)+$", "max_new_tokens": 4})
    assert r.status_code in (200, 400) and time.monotonic() - t0 < 20, "protect_regex (a+)+$ answered in %.1f s: %s %s" % (
        time.monotonic() - t0, r.status_code, r.text[:120])
    b.alive("a catastrophic-backtracking regex")


def test_basic_server_stops_cleanly(basic):
    basic.stop_cleanly()


def test_no_credentials_configured(t5studio, model_dir, work_dir):
    """Without any credentials configured, /webhook and /train refuse to learn; allowed origins and hosts work."""
    page = "http://localhost:8080"
    t = Target.start(t5studio, model_dir, work_dir, "open", "--history", os.path.join(work_dir, "h2.sqlite"), "--learn-dir",
                     os.path.join(work_dir, "learning2"), "--allow-origin", page, "--allow-origin", "https://studio.example",
                     "--allow-host", "t5.internal")
    try:
        r = requests.options(t.base + "/augment", headers={"Origin": page, "Access-Control-Request-Method": "POST",
                                                           "Access-Control-Request-Headers": "content-type"}, timeout=10)
        assert r.status_code == 204 and r.headers.get("Access-Control-Allow-Origin") == page and \
            "POST" in r.headers.get("Access-Control-Allow-Methods", ""), "an --allow-origin page's preflight: %s %s" % (r.status_code, dict(r.headers))
        r = requests.post(t.base + "/augment", json={"text": "hello", "max_new_tokens": 3}, headers={"Origin": "https://studio.example"}, timeout=60)
        assert r.status_code == 200 and r.headers.get("Access-Control-Allow-Origin") == "https://studio.example", \
            "the second --allow-origin may call /augment and read the answer: %s" % r.status_code
        refused("an origin not listed", t.post("/augment", {"text": "x"}, headers={"Origin": "http://localhost:8081", "Content-Type": "application/json"}),
                (403,), "Origin")
        for host in ("t5.internal:%d" % t.port, "t5.internal", "T5.Internal:443", "localhost:%d" % t.port, "localhost", "[::1]:%d" % t.port,
                     "127.0.0.2:%d" % t.port):
            r = requests.get(t.base + "/health", headers={"Host": host}, timeout=10)
            assert r.status_code == 200, "Host %s is served: %s" % (host, r.status_code)
        for host in ("t5.internal.evil.example:%d" % t.port, "127.evil.example:%d" % t.port, "", "localhost:%d, evil" % t.port):
            refused("Host %r" % host, requests.get(t.base + "/health", headers={"Host": host}, timeout=10), (403,), "Host")
        for path in ("/webhook", "/train"):
            refused(path + " with no credentials configured", t.post(path, ANNOTATION, headers={"Content-Type": "application/json"}), (403,), "credentials")
        r = requests.post(t.base + "/augment", json={"text": "hello", "max_new_tokens": 3}, timeout=60)
        assert r.status_code == 200, "loopback without credentials: /augment still served (%s)" % r.status_code
        t.stop_cleanly()
    finally:
        t.server.stop(limit=60)


def test_bound_to_every_interface(t5studio, model_dir, work_dir):
    """Bound to 0.0.0.0 (a container): names and ports it cannot know are served, the key still rules."""
    with open(os.path.join(work_dir, "key"), "w") as f:
        f.write("k3y\n")
    t = Target.start(t5studio, model_dir, work_dir, "any", "--host", "0.0.0.0", "--api-key-file", os.path.join(work_dir, "key"))
    try:
        for host in ("t5studio.default.svc.cluster.local", "t5studio:80", "10.1.2.3:8000"):
            assert requests.get(t.base + "/health", headers={"Host": host}, timeout=10).status_code == 200, "bound to 0.0.0.0: Host %s is served" % host
            refused("bound to 0.0.0.0, Host %s without the key" % host,
                    requests.post(t.base + "/augment", json={"text": "x"}, headers={"Host": host}, timeout=10), (401,), "credentials")
        r = requests.post(t.base + "/augment", json={"text": "hello", "max_new_tokens": 3},
                          headers={"Host": "t5studio:80", "Authorization": "Bearer k3y"}, timeout=60)
        assert r.status_code == 200, "bound to 0.0.0.0: /augment with the key under a Service name (%s)" % r.status_code
        refused("bound to 0.0.0.0: an Origin not allowed", requests.get(t.base + "/health", headers={"Origin": "http://evil.example"}, timeout=10),
                (403,), "Origin")
        t.stop_cleanly()
    finally:
        t.server.stop(limit=60)
