#!/usr/bin/env python3
"""A hostile stand-in for the Hugging Face Hub: each repository `evil/NAME` speaks the Hub's protocol
(as tests/hub/hub_server.py does) but attacks the client one way, for tests/hub/test_hub_hostile.py.

  abs-modules      modules.json names an absolute folder (--outside), files listed under it
  rel-modules      modules.json names a relative folder with ".." (--outside-rel), files under it
  escape-names     modules.json names a folder of terminal escape bytes, files under it
  escape-listing   the listing's commit is terminal escape bytes (they must not reach the terminal)
  bad-commit       the listing's commit ("sha") is a path with ".."
  bad-etag         model.safetensors' ETag is ".."
  file-location    model.safetensors' HEAD redirects to file://--secret
  zero-location    ... to file:///dev/zero
  gopher-location  ... to gopher:// on the second listener (which records any connection)
  get-redirect     the HEAD is honest, the GET of the bytes redirects to file://--secret
  other-host       the LFS redirect goes to the second listener (another port): it must get no token
  oversize         model.safetensors is announced at 4 KiB and sent at 30 MiB
  oversize-head    the listing says 4 KiB, the HEAD 30 MiB
  huge-listing     an 80 MiB listing
  drip-listing     the listing drips 1 byte/s
  drip-download    model.safetensors drips 1 byte/s (honest after POST /_calm)

The second listener ("other") answers GET /_lfs/evil/NAME/SHA256 with the right bytes, like a CDN,
and records every connection's request head. GET /_stats on the main port:
  {"events": [{"kind", "repo", ...}], "other": [{"head", "authorization"}], "auth": [{"path", "authorization"}]}
Prints "READY http://127.0.0.1:MAIN http://127.0.0.1:OTHER" when both listen. Loopback only; every
dripping answer ends after 60 s or when the client goes away.

    hostile_hub_server.py --outside DIR --outside-rel RELPATH --secret FILE
"""
import argparse
import hashlib
import json
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

CONFIG = b'{"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_model": 8}\n'
WEIGHTS = bytes((i * 37 + 11) % 251 for i in range(4096))
ESC = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m"
DRIP_LIMIT_S = 60


def sha256(b):
    return hashlib.sha256(b).hexdigest()


def git_sha1(b):
    return hashlib.sha1(b"blob %d\0" % len(b) + b).hexdigest()


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.events, self.other, self.auth = [], [], []
        self.calm = set()
        self.other_port = 0

    def event(self, **e):
        with self.lock:
            self.events.append(e)

    def files(self, name):
        """The repository's files: {rfilename: bytes}."""
        files = {"config.json": CONFIG, "model.safetensors": WEIGHTS}
        folder = {"abs-modules": self.args.outside, "rel-modules": self.args.outside_rel, "escape-names": ESC}.get(name)
        if folder:
            files["modules.json"] = json.dumps([{"idx": 0, "name": "0", "path": folder, "type": "x"}]).encode()
            files[folder + "/config.json"] = CONFIG
            files[folder + "/model.safetensors"] = WEIGHTS
        return files

    def commit(self, name):
        return hashlib.sha1(name.encode()).hexdigest()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State = None

    def log_message(self, fmt, *args):
        pass

    def do_HEAD(self):
        self.route(head=True)

    def do_GET(self):
        self.route(head=False)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        if urlparse(self.path).path == "/_calm":
            with self.state.lock:
                self.state.calm.update(body.get("repos", []))
            return self.send(200, json.dumps({"ok": True}).encode())
        self.send(404, b"{}")

    def send(self, status, body, headers=None, head=False):
        self.send_response(status)
        for k, v in {"Content-Type": "application/json", "Content-Length": str(len(body)), **(headers or {})}.items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def drip(self, repo, data):
        """Headers announcing `data`, then one byte of it a second until the client leaves."""
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.flush()
        self.state.event(kind="drip-start", repo=repo)
        end = time.monotonic() + DRIP_LIMIT_S
        try:
            for i in range(len(data)):
                if time.monotonic() > end:
                    break
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
                time.sleep(1)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.state.event(kind="drip-end", repo=repo)
        self.close_connection = True

    def stream(self, repo, chunks, total, status=200, headers=None):
        """Sends `total` bytes from the `chunks` iterator; records how many went out before the client left."""
        self.send_response(status)
        self.send_header("Content-Length", str(total))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        sent = 0
        try:
            for c in chunks:
                self.wfile.write(c)
                sent += len(c)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.state.event(kind="sent", repo=repo, bytes=sent)
        self.close_connection = True

    def route(self, head):
        url = urlparse(self.path)
        path = unquote(url.path)
        with self.state.lock:
            self.state.auth.append({"path": path, "authorization": self.headers.get("Authorization") is not None})
        if path == "/_stats":
            with self.state.lock:
                body = json.dumps({"events": self.state.events, "other": self.state.other, "auth": self.state.auth})
            return self.send(200, body.encode())
        m = re.match(r"^/api/models/evil/([^/]+)/revision/([^/]+)$", path)
        if m:
            return self.listing(m.group(1), head)
        m = re.match(r"^/evil/([^/]+)/resolve/([0-9a-f]{40})/(.+)$", path)
        if m:
            return self.resolve(m.group(1), m.group(3), head)
        m = re.match(r"^/_lfs/evil/([^/]+)/([0-9a-f]{64})$", path)
        if m:
            return self.lfs(m.group(1), head)
        self.send(404, b'{"error": "not found"}', {"X-Error-Code": "RepoNotFound"}, head)

    def listing(self, name, head):
        s = self.state
        if name == "drip-listing" and name not in s.calm:
            return self.drip(name, b" " * (1 << 20))
        if name == "huge-listing":
            total, piece = 80 << 20, b"A" * (1 << 20)
            first = b'{"sha": "' + ESC.encode() + b'", "junk": "'
            return self.stream(name, [first] + [piece] * 80, len(first) + (80 << 20))
        if name == "escape-listing":
            return self.send(200, json.dumps({"id": "evil/" + name, "sha": ESC * 4, "siblings": []}).encode())
        siblings = []
        for rel, data in sorted(s.files(name).items()):
            e = {"rfilename": rel, "size": len(data), "blobId": git_sha1(data)}
            if rel.endswith(".safetensors"):
                e["lfs"] = {"size": len(data), "sha256": sha256(data), "pointerSize": 134}
            siblings.append(e)
        sha = "../" * 13 + "x" if name == "bad-commit" else s.commit(name)
        self.send(200, json.dumps({"id": "evil/" + name, "sha": sha, "siblings": siblings}).encode(), head=head)

    def resolve(self, name, rel, head):
        files = self.state.files(name)
        if rel not in files:
            return self.send(404, b'{"error": "no such file"}', {"X-Error-Code": "EntryNotFound"}, head)
        data = files[rel]
        common = {"X-Repo-Commit": self.state.commit(name)}
        if not rel.endswith(".safetensors"):
            return self.send(200, data, {"ETag": '"%s"' % git_sha1(data), **common}, head)
        host, other = self.headers.get("Host"), f"127.0.0.1:{self.state.other_port}"
        location = {
            "file-location": "file://" + self.state.args.secret,
            "zero-location": "file:///dev/zero",
            "gopher-location": f"gopher://{other}/_PAYLOAD%0D%0A",
            "other-host": f"http://{other}/_lfs/evil/{name}/{sha256(data)}",
        }.get(name, f"http://{host}/_lfs/evil/{name}/{sha256(data)}")
        etag = ".." if name == "bad-etag" else sha256(data)
        size = 30 << 20 if name == "oversize-head" else len(data)
        self.send(302, b"", {"Location": location, "X-Linked-Etag": '"%s"' % etag, "X-Linked-Size": str(size),
                             "ETag": '"%s"' % git_sha1(data), **common}, head=True)

    def lfs(self, name, head):
        s = self.state
        if name == "get-redirect":
            return self.send(302, b"", {"Location": "file://" + s.args.secret}, head)
        if name == "oversize":
            return self.stream(name, (WEIGHTS for _ in range((30 << 20) // len(WEIGHTS))), 30 << 20)
        if name == "drip-download" and name not in s.calm:
            return self.drip(name, WEIGHTS)
        start = 0
        rng = re.match(r"bytes=(\d+)-$", self.headers.get("Range") or "")
        if rng:
            start = min(int(rng.group(1)), len(WEIGHTS))
        s.event(kind="lfs-get", repo=name, range_start=start)
        self.send(206 if rng else 200, WEIGHTS[start:], {"ETag": '"%s"' % sha256(WEIGHTS)}, head)


def serve_other(sock, state):
    """The second listener: records each connection's request head; serves /_lfs like a CDN."""
    def handle(conn):
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while b"\r\n\r\n" not in data and len(data) < 65536:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            head = data.split(b"\r\n\r\n")[0].decode("latin-1")
            with state.lock:
                state.other.append({"head": head[:2000], "authorization": bool(re.search(r"(?im)^authorization:", head))})
            if re.match(r"GET /_lfs/evil/[^/ ]+/[0-9a-f]{64} HTTP/1\.[01]", head):
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(WEIGHTS) + WEIGHTS)

    while True:
        conn, _ = sock.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--outside", required=True, help="absolute folder outside the cache (abs-modules)")
    ap.add_argument("--outside-rel", required=True, help="the same folder as ../../.. from a snapshot (rel-modules)")
    ap.add_argument("--secret", required=True, help="a local file that must never become a model (file-location)")
    a = ap.parse_args()
    state = State(a)
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen(16)
    state.other_port = other.getsockname()[1]
    threading.Thread(target=serve_other, args=(other, state), daemon=True).start()
    Handler.state = state
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"READY http://127.0.0.1:{server.server_address[1]} http://127.0.0.1:{state.other_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
