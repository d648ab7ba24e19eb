#!/usr/bin/env python3
"""Hostile requests against `t5studio serve` on loopback (ctest `serve_attacks`).

Each attack is answered with a 4xx (never a crash, never a stored pair), and the server still serves
a normal /augment after it. The server's peak resident memory (VmHWM, reset through clear_refs)
during the chunked-body and header floods stays under twice its idle VmRSS; the figures are printed.
Every loop is bounded in count and time; waits poll for an event with a deadline.
Usage: test_serve_attacks.py T5STUDIO MODEL_DIR WORK_DIR
"""
import base64
import itertools
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import threading
import time

import requests
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from py_checks import check, failures, until  # noqa: E402

BIN, MODEL, WORK = sys.argv[1:4]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
READ_TIMEOUT = 2
DEEP = "[" * 100000 + "]" * 100000
CONFIG = '<View><Text name="src" value="$sentence"/><TextArea name="out" toName="src"/></View>'


def start(*flags):
    proc = subprocess.Popen([BIN, "serve", "--model", MODEL, "--port", "0", "--threads", "1"] + list(flags),
                            stdout=subprocess.PIPE, stderr=open(os.path.join(WORK, "serve-%d.err" % len(flags)), "w"), text=True)
    listening = json.loads(proc.stdout.readline())["listening"]
    return proc, listening


# ---- the server: HTTP Basic only (the case where /augment and PUT /v1/settings used to be open) ----
with open(os.path.join(WORK, "basic"), "w") as f:
    f.write("ls:pw\n")
proc, LISTENING = start("--basic-auth-file", os.path.join(WORK, "basic"), "--history", os.path.join(WORK, "h.sqlite"),
                        "--learn-dir", os.path.join(WORK, "learning"), "--learn-every", "0", "--max-queue", "1",
                        "--read-timeout", str(READ_TIMEOUT))
HOST, PORT = LISTENING.rsplit(":", 1)
PORT = int(PORT)
BASE = "http://" + LISTENING
AUTH = {"Authorization": "Basic " + base64.b64encode(b"ls:pw").decode()}
JSON = dict(AUTH, **{"Content-Type": "application/json"})
until(lambda: requests.get(BASE + "/ready", timeout=10).status_code == 200, 60, "/ready")


def alive(after):
    """A normal /augment answers 200 (and the process still runs)."""
    try:
        r = requests.post(BASE + "/augment", json={"text": "hello world", "max_new_tokens": 4}, headers=AUTH, timeout=60)
        ok = r.status_code == 200 and len(r.json()["results"]) == 1
    except requests.RequestException as e:
        ok, r = False, e
    check(ok and proc.poll() is None, "after %s: a normal /augment is served (%s)" % (after, getattr(r, "status_code", r)))


def refused(what, r, codes, needle=""):
    body = r.text if hasattr(r, "text") else r[1]
    code = r.status_code if hasattr(r, "status_code") else r[0]
    check(code in codes and needle in body, "%s -> %s %s" % (what, code, body[:160]))


def post(path, body, headers=JSON, method="POST", **kw):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return requests.request(method, BASE + path, data=data, headers=headers, timeout=60, **kw)


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


def raw(pieces):
    """Sends the pieces, stopping as soon as the server answers; returns (status, body, bytes sent)."""
    s = socket.create_connection((HOST, PORT), timeout=15)
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


def memory(field):
    with open("/proc/%d/status" % proc.pid) as f:
        return next(int(l.split()[1]) for l in f if l.startswith(field + ":"))  # kB


def peak_during(what, attack, idle_kb):
    with open("/proc/%d/clear_refs" % proc.pid, "w") as f:
        f.write("5")  # resets VmHWM to the current resident size
    result = attack()
    peak = memory("VmHWM")
    print("memory: %s: idle VmRSS %.1f MB, peak VmHWM %.1f MB (%.2fx)" % (what, idle_kb / 1024, peak / 1024, peak / idle_kb), flush=True)
    check(peak < 2 * idle_kb, "%s: peak resident memory under 2x idle" % what)
    return result


alive("start")
idle_kb = memory("VmRSS")
REQUEST_HEAD = "POST /augment HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s" % (LISTENING, "Authorization: %s\r\n" % AUTH["Authorization"])

# ---- a chunked body of 60 MiB: counted as it arrives, refused past 1 MiB ----
def chunked_60mib():
    piece = b"a" * 65536
    chunks = (b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(960))
    return raw(itertools.chain([(REQUEST_HEAD + "Transfer-Encoding: chunked\r\n\r\n").encode()], chunks, [b"0\r\n\r\n"]))


status, body, sent = peak_during("60 MiB chunked body", chunked_60mib, idle_kb)
check(status == 413 and "1 MiB" in body and sent < 8 << 20, "60 MiB chunked -> %s %s after %d bytes" % (status, body[:120], sent))
alive("60 MiB chunked body")

# ---- 100k headers: refused past 100 header fields / 64 KiB ----
def header_flood():
    lines = ("".join("X-Flood-%d: v\r\n" % (i + j) for j in range(1000)).encode() for i in range(0, 100000, 1000))
    return raw(itertools.chain([REQUEST_HEAD.encode()], lines, [b"Content-Length: 2\r\n\r\n{}"]))


status, body, sent = peak_during("100k headers", header_flood, idle_kb)
check(status == 431 and "header" in body, "100k headers -> %s %s after %d bytes" % (status, body[:120], sent))
status, body, _ = raw([(REQUEST_HEAD + "X-Long: " + "v" * (100 << 10) + "\r\n\r\n").encode()])
check(status == 431, "a 100 KiB header line -> %s %s" % (status, body[:120]))
alive("header floods")

# ---- JSON nested 100k deep: refused before parsing, on every JSON route ----
for method, path, body in (("POST", "/augment", '{"text": "x", "spans": ' + DEEP + "}"), ("PUT", "/v1/settings", '{"seed": ' + DEEP + "}"),
                           ("POST", "/webhook", '{"action": "ANNOTATION_CREATED", "task": ' + DEEP + "}"),
                           ("POST", "/predict", '{"tasks": ' + DEEP + "}"), ("POST", "/train", '{"annotations": ' + DEEP + "}"),
                           ("POST", "/setup", '{"schema": ' + DEEP + "}")):
    refused("%s %s with JSON nested 100000 deep" % (method, path), post(path, body, method=method), (400,), "nested deeper than 64")
alive("deep JSON")

# ---- a text over 64 KiB is refused before tokenising ----
refused("/augment with a 1 MB text", post("/augment", {"texts": ["b" * 1000] * 3 + ["a" * 1000000]}), (400, 413))
refused("/augment with a 100 KB text", post("/augment", {"text": "x" * 100000}), (400,), "bytes per text")
refused("/predict with a 100 KB task text", post("/predict", {"tasks": [{"id": 1, "data": {"sentence": "y" * 100000}}], "label_config": CONFIG}),
        (400,), "bytes per text")
alive("long texts")

# ---- a web page cannot train the model, nor reach the server by another name ----
annotation = {"action": "ANNOTATION_CREATED", "project": {"id": 1, "label_config": CONFIG},
              "task": {"id": 1, "data": {"sentence": "the cat sat"}},
              "annotation": {"id": 1, "result": [{"from_name": "out", "type": "textarea", "value": {"text": ["a cat was sitting"]}}]}}
pairs_before = requests.get(BASE + "/health", headers=AUTH, timeout=10).json()["learning"]["new_pairs"]
evil = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
refused("a page's text/plain /webhook (Origin evil)", post("/webhook", annotation, headers=evil), (403,), "Origin")
refused("the same with credentials", post("/webhook", annotation, headers=dict(evil, **AUTH)), (403,), "Origin")
refused("/webhook as text/plain with credentials, no Origin", post("/webhook", annotation, headers=dict(AUTH, **{"Content-Type": "text/plain"})),
        (415,), "application/json")
refused("/augment as a form", post("/augment", "text=x", headers=dict(AUTH, **{"Content-Type": "application/x-www-form-urlencoded"})), (415,))
refused("Host: evil.example (DNS rebinding)", post("/augment", {"text": "x"}, headers=dict(JSON, Host="evil.example:%d" % PORT)), (403,), "Host")
refused("Host: 127.0.0.1 on another port", post("/augment", {"text": "x"}, headers=dict(JSON, Host="127.0.0.1:1")), (403,), "Host")
refused("GET /health with Host: evil.example", requests.get(BASE + "/health", headers=dict(AUTH, Host="evil.example"), timeout=10), (403,))
refused("a preflight from evil.example", requests.options(BASE + "/augment", headers={"Origin": "http://evil.example",
        "Access-Control-Request-Method": "POST"}, timeout=10), (403,))
pairs_after = requests.get(BASE + "/health", headers=AUTH, timeout=10).json()["learning"]["new_pairs"]
check(pairs_after == pairs_before, "no pair was stored by the refused webhooks (%s -> %s)" % (pairs_before, pairs_after))
r = post("/webhook", annotation)
check(r.status_code == 201 and r.json()["pairs"] == 1, "the authenticated JSON webhook still stores its pair: %s %s" % (r.status_code, r.text[:120]))

# ---- with only --basic-auth-file, every route asks for it ----
for method, path, body in (("POST", "/augment", {"text": "x"}), ("PUT", "/v1/settings", {"max_new_tokens": 3}), ("GET", "/v1/settings", None),
                           ("POST", "/webhook", annotation), ("POST", "/predict", {"tasks": []})):
    refused("%s %s without credentials" % (method, path), post(path, body or "", headers={"Content-Type": "application/json"}, method=method),
            (401,), "credentials")
for probe in ("/ready", "/health", "/metrics"):  # Kubernetes probes and Prometheus scrapes send no credentials
    check(requests.get(BASE + probe, timeout=10).status_code == 200, "GET %s (a probe) answers without credentials" % probe)
refused("a probe with Host: evil.example", requests.get(BASE + "/metrics", headers={"Host": "evil.example"}, timeout=10), (403,), "Host")
alive("web-page attacks")

# ---- slow clients: more than the server's threads drip their headers; each is cut at --read-timeout ----
SLOW = 80
slow = [socket.create_connection((HOST, PORT), timeout=10) for _ in range(SLOW)]
for s in slow:
    s.sendall(("POST /augment HTTP/1.1\r\nHost: %s\r\n" % LISTENING).encode())
answers = {}


def drip():
    end = time.monotonic() + READ_TIMEOUT * 3 + 10
    while len(answers) < SLOW and time.monotonic() < end:
        for i, s in enumerate(slow):
            if i in answers:
                continue
            if select.select([s], [], [], 0)[0]:
                answers[i] = read_answer(s, 5)[0]
                continue
            try:
                s.send(b"X")  # one byte of an endless header line
            except OSError:
                answers[i] = None
        time.sleep(0.25)  # the attacker's pace, not a synchronisation


dripper = threading.Thread(target=drip)
dripper.start()
t0 = time.monotonic()
alive("%d slow clients started dripping" % SLOW)
served_in = time.monotonic() - t0
check(served_in < READ_TIMEOUT * 3 + 5, "a normal /augment among %d slow clients (more than the server's threads) took %.1f s" % (SLOW, served_in))
dripper.join()
for s in slow:
    s.close()
codes = sorted(set(answers.values()), key=str)
check(len(answers) == SLOW and all(c == 408 for c in answers.values()), "every slow client got 408: %d answers, codes %s" % (len(answers), codes))

# ---- a body that trickles in is cut at --read-timeout as well ----
s = socket.create_connection((HOST, PORT), timeout=10)
s.sendall((REQUEST_HEAD + "Content-Length: 1000\r\n\r\n{").encode())
t0, status = time.monotonic(), None
while status is None and time.monotonic() - t0 < READ_TIMEOUT + 5:
    if select.select([s], [], [], 0.25)[0]:
        status = read_answer(s, 5)[0]
    else:
        s.send(b" ")  # one byte of the body per quarter second
s.close()
check(status == 408 and time.monotonic() - t0 < READ_TIMEOUT + 3, "a trickling body -> %s after %.1f s" % (status, time.monotonic() - t0))
alive("a trickling body")

# ---- what the regex and label-config parsers must survive (the span and label-config code) ----
refused("/setup with a 50 KB label config", post("/setup", {"project": "1", "schema": '<View><Text name="t" value="$t" ' + 'a="b" ' * 8000 + "/></View>"}),
        (400,))
alive("a 50 KB label config")
refused("/augment with a 100 KB URL and protect urls", post("/augment", {"text": "see http://" + "a" * 100000, "protect": "urls"}), (400,))
refused("/augment with a 60 KB URL and protect urls", post("/augment", {"text": "see http://" + "a" * 60000 + " now", "protect": "urls"}),
        (400, 413))
alive("long URLs")
t0 = time.monotonic()
r = post("/augment", {"text": "a" * 40 + "!", "protect_regex": "(a+)+$", "max_new_tokens": 4})
check(r.status_code in (200, 400) and time.monotonic() - t0 < 20, "protect_regex (a+)+$ answered in %.1f s: %s %s" %
      (time.monotonic() - t0, r.status_code, r.text[:120]))
alive("a catastrophic-backtracking regex")

proc.terminate()
check(proc.wait(60) == 0, "SIGTERM: exit 0")

# ---- without any credentials configured, /webhook and /train refuse to learn; allowed origins and hosts work ----
PAGE = "http://localhost:8080"
proc, LISTENING = start("--history", os.path.join(WORK, "h2.sqlite"), "--learn-dir", os.path.join(WORK, "learning2"),
                        "--allow-origin", PAGE, "--allow-origin", "https://studio.example", "--allow-host", "t5.internal")
BASE = "http://" + LISTENING
PORT = int(LISTENING.rsplit(":", 1)[1])
until(lambda: requests.get(BASE + "/ready", timeout=10).status_code == 200, 60, "/ready")
r = requests.options(BASE + "/augment", headers={"Origin": PAGE, "Access-Control-Request-Method": "POST",
                                                 "Access-Control-Request-Headers": "content-type"}, timeout=10)
check(r.status_code == 204 and r.headers.get("Access-Control-Allow-Origin") == PAGE and "POST" in r.headers.get("Access-Control-Allow-Methods", ""),
      "an --allow-origin page's preflight: %s %s" % (r.status_code, dict(r.headers)))
r = requests.post(BASE + "/augment", json={"text": "hello", "max_new_tokens": 3}, headers={"Origin": "https://studio.example"}, timeout=60)
check(r.status_code == 200 and r.headers.get("Access-Control-Allow-Origin") == "https://studio.example",
      "the second --allow-origin may call /augment and read the answer: %s" % r.status_code)
refused("an origin not listed", post("/augment", {"text": "x"}, headers={"Origin": "http://localhost:8081", "Content-Type": "application/json"}),
        (403,), "Origin")
for host in ("t5.internal:%d" % PORT, "t5.internal", "T5.Internal:443", "localhost:%d" % PORT, "localhost", "[::1]:%d" % PORT, "127.0.0.2:%d" % PORT):
    r = requests.get(BASE + "/health", headers={"Host": host}, timeout=10)
    check(r.status_code == 200, "Host %s is served: %s" % (host, r.status_code))
for host in ("t5.internal.evil.example:%d" % PORT, "127.evil.example:%d" % PORT, "", "localhost:%d, evil" % PORT):
    refused("Host %r" % host, requests.get(BASE + "/health", headers={"Host": host}, timeout=10), (403,), "Host")
for path in ("/webhook", "/train"):
    refused(path + " with no credentials configured", post(path, annotation, headers={"Content-Type": "application/json"}), (403,), "credentials")
r = requests.post(BASE + "/augment", json={"text": "hello", "max_new_tokens": 3}, timeout=60)
check(r.status_code == 200, "loopback without credentials: /augment still served (%s)" % r.status_code)
proc.terminate()
check(proc.wait(60) == 0, "SIGTERM: exit 0")

# ---- bound to every interface (a container): names and ports it cannot know are served, the key still rules ----
with open(os.path.join(WORK, "key"), "w") as f:
    f.write("k3y\n")
proc, LISTENING = start("--host", "0.0.0.0", "--api-key-file", os.path.join(WORK, "key"))
BASE = "http://127.0.0.1:" + LISTENING.rsplit(":", 1)[1]  # sent to loopback only
until(lambda: requests.get(BASE + "/ready", timeout=10).status_code == 200, 60, "/ready")
for host in ("t5studio.default.svc.cluster.local", "t5studio:80", "10.1.2.3:8000"):
    check(requests.get(BASE + "/health", headers={"Host": host}, timeout=10).status_code == 200, "bound to 0.0.0.0: Host %s is served" % host)
    refused("bound to 0.0.0.0, Host %s without the key" % host, requests.post(BASE + "/augment", json={"text": "x"}, headers={"Host": host}, timeout=10),
            (401,), "credentials")
r = requests.post(BASE + "/augment", json={"text": "hello", "max_new_tokens": 3}, headers={"Host": "t5studio:80", "Authorization": "Bearer k3y"}, timeout=60)
check(r.status_code == 200, "bound to 0.0.0.0: /augment with the key under a Service name (%s)" % r.status_code)
refused("bound to 0.0.0.0: an Origin not allowed", requests.get(BASE + "/health", headers={"Origin": "http://evil.example"}, timeout=10), (403,), "Origin")
proc.terminate()
check(proc.wait(60) == 0, "SIGTERM: exit 0")

print("serve attacks: %d failures" % len(failures))
sys.exit(1 if failures else 0)
