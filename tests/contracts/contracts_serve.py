"""`serve`'s HTTP contracts on loopback: the shape of each endpoint's answer, the metric names and
their label names, the error answers (status, body shape, the headers that say why), and the JSON
lines `serve --json` prints. Every wait has a deadline; requests are few and each has a timeout."""
import json
import os
import select
import signal
import subprocess
import time

import requests
from prometheus_client.parser import text_string_to_metric_families

KEY = "contracts-key-0123456789"
TIMEOUT = 30


class Serve:
    def __init__(self, cli, d):
        key_file = cli.path("serve-key.txt")
        with open(key_file, "w") as f:
            f.write(KEY + "\n")
        args = [cli.binary, "serve", "--model", d["model"], "--embedder", d["embedder_sim"], "--host", "127.0.0.1",
                "--port", "0", "--api-key-file", key_file, "--threads", "1", "--json"]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(cli.path("serve.err"), "w"), text=True, env=cli.env)
        self.lines = []

    def next_line(self, limit):
        """The next JSON line serve prints within `limit` seconds, else None."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = self.proc.stdout.readline()
            if not line:
                return None
            if line.strip():
                self.lines.append(json.loads(line))
                return self.lines[-1]
        return None

    def stop(self, limit=30):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(limit)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        for line in self.proc.stdout.read().splitlines():
            if line.strip():
                self.lines.append(json.loads(line))


def request(base, method, path, body=None, raw=None, key=True, content_type="application/json", host=None):
    headers = {"Authorization": "Bearer " + KEY} if key else {}
    if host:
        headers["Host"] = host
    if body is not None or raw is not None:
        headers["Content-Type"] = content_type
    data = raw if raw is not None else (json.dumps(body) if body is not None else None)
    return requests.request(method, base + path, data=data, headers=headers, timeout=TIMEOUT)


def answer(r, headers=()):
    """An answer as its contract: status, content type, the named headers, the body's shape (via the caller)."""
    try:
        body = r.json()
    except ValueError:
        body = {"<not JSON>": r.text[:80]}
    return {"status": r.status_code, "content_type": r.headers.get("Content-Type", ""),
            "headers": {h: r.headers.get(h, "<absent>") for h in headers}}, body


ENDPOINTS = [  # (contract, method, path, body, request options, headers to pin)
    ("http/health.json", "GET", "/health", None, {}, ()),
    ("http/ready.json", "GET", "/ready", None, {}, ()),
    ("http/root.json", "GET", "/", None, {}, ()),
    ("http/settings_get.json", "GET", "/v1/settings", None, {}, ()),
    ("http/augment.json", "POST", "/augment", {"text": "Tom is a good boy.", "max_new_tokens": 4}, {}, ()),
    ("http/augment_quality.json", "POST", "/augment", {"texts": ["Tom has 3 cats.", "hello"], "do_sample": True, "seed": 3,
                                                       "num_return_sequences": 3, "max_new_tokens": 6, "keep_dropped": True,
                                                       "distinct": True, "protect": "numbers"}, {}, ()),
    ("http/error_400_malformed.json", "POST", "/augment", None, {"raw": "{not json"}, ()),
    ("http/error_400_unknown_field.json", "POST", "/augment", {"text": "x", "bogus": 1}, {}, ()),
    ("http/error_401.json", "POST", "/augment", {"text": "x"}, {"key": False}, ("WWW-Authenticate",)),
    ("http/error_403_host.json", "GET", "/v1/settings", None, {"host": "evil.example"}, ()),
    ("http/error_404.json", "GET", "/nope", None, {}, ()),
    ("http/error_405.json", "GET", "/augment", None, {}, ("Allow",)),
    ("http/error_413.json", "POST", "/augment", None, {"raw": json.dumps({"text": "a" * (1 << 20)})}, ()),
    ("http/error_415.json", "POST", "/augment", None, {"raw": '{"text": "x"}', "content_type": "text/plain"}, ()),
]


def endpoints(g, base):
    for contract, method, path, body, opts, pin in ENDPOINTS:
        try:
            meta, doc = answer(request(base, method, path, body, **opts), pin)
        except requests.RequestException as e:
            g.fail(contract, "%s %s: %s" % (method, path, e))
            continue
        g.shape(contract, doc, extra=meta)
    settings = request(base, "GET", "/v1/settings").json()
    put = request(base, "PUT", "/v1/settings", {"max_new_tokens": settings.get("max_new_tokens", 4)})
    meta, doc = answer(put)
    g.shape("http/settings_put.json", doc, extra=meta)


def metrics(g, base):
    """Metric names with their type and label names (values vary: never pinned)."""
    text = request(base, "GET", "/metrics", key=False).text
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            entry = out.setdefault(s.name, {"type": fam.type, "labels": []})
            entry["labels"] = sorted(set(entry["labels"]) | set(s.labels))
    g.data("http/metrics.json", out)


def run(cli, d):
    g = cli.g
    serve = Serve(cli, d)
    try:
        first = serve.next_line(30)
        if not first or "listening" not in first:
            g.fail("http/serve_json_lines.json", "serve printed no {\"listening\"} line within 30 s: %s" %
                   open(cli.path("serve.err")).read()[-400:])
            return
        base = "http://" + first["listening"]
        if not serve.next_line(120):
            g.fail("http/serve_json_lines.json", "serve printed no ready line within 120 s")
            return
        endpoints(g, base)
        metrics(g, base)
    finally:
        serve.stop()
    # Each line is named by its first key ("listening", "ready", "stopped").
    cli.shape("http/serve_json_lines.json", {next(iter(l), ""): l for l in serve.lines})
