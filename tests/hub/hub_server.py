#!/usr/bin/env python3
"""A local stand-in for the Hugging Face Hub, for tests with no network.

Serves fixture repositories (folders on disk) with the routes and headers the official
huggingface_hub client uses (checked by running huggingface_hub.snapshot_download against it):

  GET  /api/models/ORG/NAME[/revision/REV][?blobs=true]  {"id", "sha", "siblings": [{"rfilename",
                                                          "size", "blobId", "lfs": {"sha256", "size"}}]}
  HEAD|GET /ORG/NAME/resolve/REV/PATH   regular files: 200, ETag = git blob sha1, X-Repo-Commit;
                                        LFS files: 302 to /_lfs/ORG/NAME/SHA256 with X-Linked-Etag
                                        (the SHA-256), X-Linked-Size, X-Repo-Commit
  GET  /_lfs/ORG/NAME/SHA256            the bytes, with Range support (206)

Errors as the Hub answers them: unknown repository 404 (X-Error-Code: RepoNotFound), unknown
revision 404 (RevisionNotFound), a gated repository's files without the right bearer token 401
(GatedRepo). The test controls faults over HTTP:

  POST /_control {"fail": [{"match": S, "status": 500, "count": N}],     answer N requests with status
                  "drop": [{"match": S, "after": BYTES, "count": N}],   close after BYTES of a body
                  "slow": [{"match": S, "bytes_per_s": R}],             throttle bodies
                  "corrupt": [{"match": S}],                            flip one byte of the body
                  "norange": [{"match": S}]}                            ignore Range (answer 200, whole file)
  POST /_reset   clear faults and counters
  GET  /_stats   {"served": {path: body bytes sent}, "requests": [{"method", "path", "range_start", "status"}]}

`S` is a substring of the request path. Prints "READY http://127.0.0.1:PORT" on stdout when listening.

    hub_server.py --repo ORG/NAME=DIR [--repo ...] [--gated ORG/NAME] [--token T] [--port 0]
"""
import argparse
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse, parse_qs

LFS_SUFFIXES = (".safetensors", ".bin", ".model", ".h5", ".onnx", ".msgpack", ".ot", ".pt")


class Repo:
    def __init__(self, name, folder, gated):
        self.name, self.folder, self.gated = name, folder, gated
        self.files = {}  # rfilename -> dict(size, sha256, git_sha1, lfs)
        for root, _, names in os.walk(folder):
            for n in names:
                path = os.path.join(root, n)
                rel = os.path.relpath(path, folder).replace(os.sep, "/")
                data = open(path, "rb").read()
                self.files[rel] = {
                    "size": len(data),
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "git_sha1": hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest(),
                    "lfs": rel.endswith(LFS_SUFFIXES),
                }
        listing = "".join(f"{k}:{v['sha256']}\n" for k, v in sorted(self.files.items()))
        self.commit = hashlib.sha1(listing.encode()).hexdigest()

    def by_sha256(self, sha):
        for rel, f in self.files.items():
            if f["sha256"] == sha:
                return rel
        return None


class State:
    def __init__(self, repos, token):
        self.repos, self.token = repos, token
        self.lock = threading.RLock()
        self.epoch = 0
        self.reset()

    def reset(self):
        with self.lock:
            self.faults = {"fail": [], "drop": [], "slow": [], "corrupt": [], "norange": []}
            self.served, self.requests = {}, []
            # A response started before the reset (a killed client's, whose socket buffer still
            # takes a chunk or two) counts nothing after it: counters are per epoch.
            self.epoch += 1

    def take(self, kind, path):
        """The first fault of `kind` matching `path` (a counted one is used up)."""
        with self.lock:
            for rule in self.faults[kind]:
                if rule["match"] in path:
                    if "count" in rule:
                        if rule["count"] <= 0:
                            continue
                        rule["count"] -= 1
                    return dict(rule)
        return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State = None

    def log_message(self, fmt, *args):  # quiet: the test prints what it needs
        pass

    def do_HEAD(self):
        self.route(head=True)

    def do_GET(self):
        self.route(head=False)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = urlparse(self.path).path
        if path == "/_reset":
            self.state.reset()
            return self.send_json(200, {"ok": True})
        if path == "/_control":
            rules = json.loads(body or b"{}")
            with self.state.lock:
                for k, v in rules.items():
                    self.state.faults[k] = list(v)
            return self.send_json(200, {"ok": True})
        self.send_json(404, {"error": "no such route"})

    # ---- responses -------------------------------------------------------------------------
    def record(self, status, range_start=0):
        with self.state.lock:
            self.state.requests.append({"method": self.command, "path": urlparse(self.path).path,
                                        "range_start": range_start, "status": status})

    def send_json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.record(status)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_error_code(self, status, code, message):
        self.send_json(status, {"error": message}, {"X-Error-Code": code, "X-Error-Message": message})

    def route(self, head):
        url = urlparse(self.path)
        path = unquote(url.path)
        if path == "/_stats":
            with self.state.lock:
                return self.send_json(200, {"served": self.state.served, "requests": self.state.requests})
        fail = self.state.take("fail", path)
        if fail:
            return self.send_error_code(fail["status"], "Injected", "injected failure")
        m = re.match(r"^/api/models/([^/]+/[^/]+)(?:/revision/(.+))?$", path)
        if m:
            return self.api_info(m.group(1), m.group(2) or "main", "blobs" in parse_qs(url.query))
        m = re.match(r"^/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$", path)
        if m:
            return self.resolve(m.group(1), m.group(2), m.group(3), head)
        m = re.match(r"^/_lfs/([^/]+/[^/]+)/([0-9a-f]{64})$", path)
        if m:
            repo = self.state.repos.get(m.group(1))
            rel = repo.by_sha256(m.group(2)) if repo else None
            if rel is None:
                return self.send_error_code(404, "EntryNotFound", "no such object")
            return self.send_file(repo, rel, head, etag=m.group(2))
        self.send_error_code(404, "RepoNotFound", "not found")

    def find(self, repo_id, revision):
        repo = self.state.repos.get(repo_id)
        if repo is None:
            self.send_error_code(404, "RepoNotFound", f"Repository {repo_id} not found")
            return None
        if revision not in ("main", repo.commit):
            self.send_error_code(404, "RevisionNotFound", f"Invalid rev id: {revision}")
            return None
        return repo

    def api_info(self, repo_id, revision, blobs):
        repo = self.find(repo_id, revision)
        if repo is None:
            return
        siblings = []
        for rel, f in sorted(repo.files.items()):
            s = {"rfilename": rel}
            if blobs:
                s["size"] = f["size"]
                s["blobId"] = f["git_sha1"]
                if f["lfs"]:
                    s["lfs"] = {"size": f["size"], "sha256": f["sha256"], "pointerSize": 134}
            siblings.append(s)
        self.send_json(200, {"_id": repo.commit[:24], "id": repo_id, "modelId": repo_id, "sha": repo.commit,
                             "private": False, "gated": "manual" if repo.gated else False, "disabled": False,
                             "tags": [], "siblings": siblings, "lastModified": "2026-12-01T00:00:00.000Z"})

    def authorised(self, repo):
        return not repo.gated or self.headers.get("Authorization") == f"Bearer {self.state.token}"

    def resolve(self, repo_id, revision, rel, head):
        repo = self.find(repo_id, revision)
        if repo is None:
            return
        if not self.authorised(repo):
            return self.send_error_code(401, "GatedRepo", f"Access to model {repo_id} is restricted.")
        f = repo.files.get(rel)
        if f is None:
            return self.send_error_code(404, "EntryNotFound", f"{rel} does not exist")
        if not f["lfs"]:
            return self.send_file(repo, rel, head, etag=f["git_sha1"])
        host = self.headers.get("Host")
        self.record(302)
        self.send_response(302)
        self.send_header("Location", f"http://{host}/_lfs/{repo_id}/{f['sha256']}")
        self.send_header("X-Repo-Commit", repo.commit)
        self.send_header("X-Linked-Etag", f'"{f["sha256"]}"')
        self.send_header("X-Linked-Size", str(f["size"]))
        self.send_header("ETag", f'"{f["git_sha1"]}"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_file(self, repo, rel, head, etag):
        data = open(os.path.join(repo.folder, rel), "rb").read()
        path = urlparse(self.path).path
        start = 0
        rng = re.match(r"bytes=(\d+)-$", self.headers.get("Range") or "")
        if rng and self.state.take("norange", path):
            rng = None  # a server (or proxy) that ignores Range: the whole file, 200
        if rng:
            start = int(rng.group(1))
            if start >= len(data):
                self.record(416, start)
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        body = data[start:]
        if not head and self.state.take("corrupt", path) and body:
            body = bytes([body[0] ^ 0xFF]) + body[1:]
        status = 206 if rng else 200
        self.record(status, start)
        self.send_response(status)
        self.send_header("ETag", f'"{etag}"')
        self.send_header("X-Repo-Commit", repo.commit)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(body)))
        if rng:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if not head:
            self.send_body(path, body)

    def send_body(self, path, body):
        drop = self.state.take("drop", path)
        slow = self.state.take("slow", path)
        limit = drop["after"] if drop else len(body)
        chunk = 16384
        rate = slow["bytes_per_s"] if slow else 0
        t0, sent = time.monotonic(), 0
        with self.state.lock:
            epoch = self.state.epoch
        try:
            while sent < min(limit, len(body)):
                n = min(chunk, min(limit, len(body)) - sent)
                self.wfile.write(body[sent:sent + n])
                sent += n
                with self.state.lock:
                    if self.state.epoch == epoch:
                        self.state.served[path] = self.state.served.get(path, 0) + n
                if rate:  # throttle: the server paces its own output
                    ahead = sent / rate - (time.monotonic() - t0)
                    if ahead > 0:
                        time.sleep(ahead)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return
        if drop:
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", action="append", default=[], help="ORG/NAME=DIR")
    ap.add_argument("--gated", action="append", default=[])
    ap.add_argument("--token", default="hf_test_token")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    repos = {}
    for spec in a.repo:
        name, folder = spec.split("=", 1)
        repos[name] = Repo(name, folder, name in a.gated)
    Handler.state = State(repos, a.token)
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    print(f"READY http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
