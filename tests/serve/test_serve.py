#!/usr/bin/env python3
"""`t5studio serve` end to end on loopback with a tiny model (ctest `serve`).

Usage: test_serve.py T5STUDIO MODEL_DIR WORK_DIR
Every wait is bounded by a deadline; nothing sleeps for a fixed time to "let things settle".
"""
import concurrent.futures as futures
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter

import requests
from prometheus_client.parser import text_string_to_metric_families
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from py_checks import check, failures, until  # noqa: E402
import py_checks  # noqa: E402
py_checks.print_passes = False  # thousands of request checks: only failures are printed

BIN, MODEL, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(WORK, exist_ok=True)
KEY = "test-key-0123456789"


class Server:
    count = 0

    def __init__(self, *flags, key=None):
        args = [BIN, "serve", "--model", MODEL, "--port", "0"] + list(flags)
        if key:
            path = os.path.join(WORK, "key.txt")
            with open(path, "w") as f:
                f.write(key + "\n")
            args += ["--api-key-file", path]
        Server.count += 1
        self.err_path = os.path.join(WORK, "serve-%d.err" % Server.count)
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(self.err_path, "w"), text=True)
        line = self.proc.stdout.readline()
        check(line.startswith("{"), "serve prints its address first, got %r" % line)
        self.base = "http://" + json.loads(line)["listening"]
        self.headers = {"Authorization": "Bearer " + key} if key else {}
        until(lambda: self.ready(), 60, "/ready")
        # The random-weight test model's byte-fallback pieces often form no character: keep such
        # candidates (as cli_generate does), so that these checks stay about serving, not that filter.
        requests.put(self.base + "/v1/settings", json={"drop_invalid_text": False}, headers=self.headers, timeout=10)

    def ready(self):
        if self.proc.poll() is not None:
            sys.exit("serve exited with %s: %s" % (self.proc.returncode, open(self.err_path).read()))
        try:
            return self.get("/ready").status_code == 200
        except requests.ConnectionError:
            return False

    def get(self, path, **kw):
        return requests.get(self.base + path, headers=self.headers, timeout=60, **kw)

    def post(self, body, **kw):
        return requests.post(self.base + "/augment", json=body, headers=self.headers, timeout=60, **kw)

    def metrics(self):
        out = {}
        for fam in text_string_to_metric_families(self.get("/metrics").text):
            for s in fam.samples:
                out.setdefault(s.name, []).append((s.labels, s.value))
        return out

    def value(self, name, **labels):
        return sum(v for l, v in self.metrics().get(name, []) if all(l.get(k) == w for k, w in labels.items()))

    def stop(self, limit=60):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(limit)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = "killed"
        return rc


def cli_generate(text, flags):
    out = subprocess.run([BIN, "generate", "--model", MODEL, "--text", text, "--json", "--threads", "1", "--keep-invalid-text"] + flags,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["results"][0]


EMBEDDER = os.path.join(os.path.dirname(os.path.dirname(MODEL)), "embedder", "xlmr_mean_norm")
TEXTS = ["paraphrase: the cat sat on the mat", "hello world", "summarize: a longer input sentence that has more words"]
SETTINGS = [  # (request fields, the same as generate flags)
    ({"max_new_tokens": 12}, ["--max-new-tokens", "12"]),
    ({"num_beams": 3, "num_return_sequences": 2, "max_new_tokens": 10}, ["--beams", "3", "--num-return", "2", "--max-new-tokens", "10"]),
    ({"do_sample": True, "seed": 5, "num_return_sequences": 3, "temperature": 0.85, "top_p": 0.92, "max_new_tokens": 16},
     ["--sample", "--seed", "5", "--num-return", "3", "--temperature", "0.85", "--top-p", "0.92", "--max-new-tokens", "16"]),
    # Sampling controls without do_sample / --sample imply sampling (the seed service's request).
    ({"seed": 5, "num_return_sequences": 3, "temperature": 0.85, "top_p": 0.92, "max_new_tokens": 16},
     ["--seed", "5", "--num-return", "3", "--temperature", "0.85", "--top-p", "0.92", "--max-new-tokens", "16"]),
    # Contrastive search: top_k with penalty_alpha is its width, not a sampling knob.
    ({"penalty_alpha": 0.6, "top_k": 4, "max_new_tokens": 12}, ["--penalty-alpha", "0.6", "--top-k", "4", "--max-new-tokens", "12"]),
]
# Quality scores, filters and ranking: each request body and the same as generate flags (--embedder too).
QUALITY = [
    {"do_sample": True, "seed": 11, "num_return_sequences": 3, "max_new_tokens": 8, "no_copy": True, "distinct": True,
     "min_change": 0.6, "near_duplicate": 0.5, "min_similarity": -0.5, "max_similarity": 0.75, "rank": "auto", "keep_dropped": True},
    {"num_beams": 4, "num_return_sequences": 3, "max_new_tokens": 6, "max_change": 0.97, "rank": "fluency", "keep_dropped": True},
    {"do_sample": True, "seed": 5, "num_return_sequences": 3, "max_new_tokens": 8, "distinct": True, "min_back_score": -8.0,
     "max_similarity": 0.7, "task_prefix": "paraphrase: ", "keep_dropped": True},
    # model_scores off: back_score only because the ranking reads it, no similarity.
    {"num_beams": 3, "num_return_sequences": 2, "max_new_tokens": 6, "model_scores": False, "rank": "back_score", "keep_dropped": True},
]
FLAG_OF = {"max_new_tokens": "--max-new-tokens", "num_beams": "--beams", "num_return_sequences": "--num-return", "do_sample": "--sample",
           "seed": "--seed", "no_copy": "--no-copy", "distinct": "--distinct", "min_change": "--min-change", "max_change": "--max-change",
           "min_similarity": "--min-similarity", "max_similarity": "--max-similarity", "min_back_score": "--min-back-score",
           "near_duplicate": "--near-duplicate", "rank": "--rank", "task_prefix": "--prefix", "keep_dropped": "--keep-dropped",
           "model_scores": "--no-model-scores"}


def flags_of(body):
    out = ["--embedder", EMBEDDER]
    for key, value in body.items():
        if key == "model_scores":  # the flag turns the default off
            out += [] if value else [FLAG_OF[key]]
        else:
            out += [FLAG_OF[key]] if value is True else [FLAG_OF[key], str(value)]
    return out


def option_of(reason):
    """The metric's reason label: the option that dropped the candidate (docs/serve.md, Metrics)."""
    unbounded = {"copy": "no_copy", "duplicate": "distinct", "lost_span": "protect", "invalid_text": "drop_invalid_text"}
    if reason in unbounded:
        return unbounded[reason]
    score, op = (reason.split("<")[0], "<") if "<" in reason else (reason.split(">")[0], ">")
    return score if score == "near_duplicate" else ("min_" if op == "<" else "max_") + score


with futures.ThreadPoolExecutor(4) as pool:  # the CLI runs are independent: overlap their start-ups
    runs = {(t, i): pool.submit(cli_generate, t, flags) for t in TEXTS for i, (_, flags) in enumerate(SETTINGS)}
    quality_runs = {(t, i): pool.submit(cli_generate, t, flags_of(body)) for t in TEXTS[:2] for i, body in enumerate(QUALITY)}
    expected = {k: f.result() for k, f in runs.items()}
    expected_quality = {k: f.result() for k, f in quality_runs.items()}
for t in TEXTS:  # implied sampling is sampling: the same seed gives the explicit request's candidates
    check([c["ids"] for c in expected[(t, 3)]["candidates"]] == [c["ids"] for c in expected[(t, 2)]["candidates"]],
          "generate with --temperature/--top-p and no --sample samples like --sample: %s" % t)
history = os.path.join(WORK, "history.db")
for name in os.listdir(WORK):
    if name.startswith("history.db"):
        os.remove(os.path.join(WORK, name))

# ---- main server: two replicas of one thread each (the CLI ran with --threads 1), API key ----
main = Server("--replicas", "2", "--threads", "2", "--max-batch", "16", "--history", history, "--embedder", EMBEDDER, key=KEY)
check(requests.post(main.base + "/augment", json={"text": "x"}, timeout=10).status_code == 401, "no key -> 401")
check(requests.post(main.base + "/augment", json={"text": "x"}, headers={"Authorization": "Bearer wrong"}, timeout=10).status_code == 401,
      "wrong key -> 401")
health = main.get("/health").json()
check(health["status"] == "ok" and health["replicas"] == 2 and health["dtype"] == "fp32", "health: %s" % health)
# The settings serve started with, one key per flag's field (serve/serve_config.h); the key itself never.
cfg = health.get("config", {})
check(cfg.get("max_batch") == 16 and cfg.get("replicas") == 2 and cfg.get("threads") == 2 and cfg.get("max_queue") == 256
      and cfg.get("history") == history and "api_key" not in cfg and KEY not in json.dumps(health), "health config: %s" % cfg)


def one(k):
    text, i = TEXTS[k % len(TEXTS)], (k // len(TEXTS)) % len(SETTINGS)
    r = main.post(dict(SETTINGS[i][0], text=text))
    return k, text, i, r.status_code, r.json()


with futures.ThreadPoolExecutor(16) as pool:
    answers = list(pool.map(one, range(200)))
tokens_in = tokens_out = 0
for k, text, i, code, body in answers:
    check(code == 200, "request %d: %s %s" % (k, code, body))
    if code != 200:
        continue
    got = body["results"][0]
    want = expected[(text, i)]
    check([c["ids"] for c in got["candidates"]] == [c["ids"] for c in want["candidates"]],
          "request %d (%s, settings %d) ids differ from generate alone" % (k, text, i))
    check([c["text"] for c in got["candidates"]] == [c["text"] for c in want["candidates"]], "request %d texts" % k)
    tokens_in += body["usage"]["input_tokens"]
    tokens_out += body["usage"]["output_tokens"]
    check(body["usage"]["output_tokens"] == sum(len(c["ids"]) for c in got["candidates"]), "usage.output_tokens")

m = main.metrics()
check(main.value("t5studio_requests_total", endpoint="/augment", code="200") == 200, "requests_total{/augment,200} = 200")
check(main.value("t5studio_generated_tokens_total") == tokens_out, "generated_tokens_total = tokens returned")
check(main.value("t5studio_input_tokens_total") == tokens_in, "input_tokens_total = input tokens")
for rep in ("0", "1"):
    check(main.value("t5studio_generated_tokens_total", replica=rep) > 0, "replica %s served" % rep)
check(main.value("t5studio_request_duration_seconds_count") == 200, "duration histogram count")
check(main.value("t5studio_batch_rows_count") > 0 and main.value("process_resident_memory_bytes") > 0, "batch_rows / rss")
check(max(v for l, v in m["t5studio_batch_rows_bucket"] if l["le"] == "1") < main.value("t5studio_batch_rows_count"),
      "some steps ran more than one row")

# ---- streaming: one event per candidate, then the whole answer ----
r = main.post(dict(SETTINGS[2][0], text=TEXTS[0], stream=True), stream=True)
events = [json.loads(line[6:].decode("utf-8")) for line in r.iter_lines() if line.startswith(b"data: ")]
check(r.headers["Content-Type"].startswith("text/event-stream") and len(events) == 4, "SSE events: %s" % events)
if len(events) == 4:
    check([e["candidate"]["ids"] for e in events[:3]] == [c["ids"] for c in expected[(TEXTS[0], 2)]["candidates"]], "SSE candidates")
    check(events[3]["results"][0]["candidates"] == [e["candidate"] for e in events[:3]], "SSE done event: the streamed candidates")

# ---- quality: scores, filters, ranking, rounds and dropped lists equal generate's; metrics count the drops ----
def same_score(a, b):
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= 1e-5)


def same_candidates(got, want):
    return len(got) == len(want) and all(
        g.get("ids") == w.get("ids") and g["text"] == w["text"] and g.get("reason") == w.get("reason") and
        all(same_score(g[f], w[f]) for f in ("similarity", "back_score", "change", "fluency")) for g, w in zip(got, want))


def quality(k):
    text, i = TEXTS[k % 2], (k // 2) % len(QUALITY)
    r = main.post(dict(QUALITY[i], text=text))
    return text, i, r.status_code, r.json()


with futures.ThreadPoolExecutor(6) as pool:
    quality_answers = list(pool.map(quality, range(2 * len(QUALITY))))  # each (text, body), concurrently
dropped = Counter()
for text, i, code, body in quality_answers:
    check(code == 200, "quality request %s %d: %s %s" % (text, i, code, body))
    if code != 200:
        continue
    got, want = body["results"][0], expected_quality[(text, i)]
    check(same_candidates(got["candidates"], want["candidates"]), "quality %d %r: candidates and scores equal generate's:\n%s\n%s" %
          (i, text, got["candidates"], want["candidates"]))
    check(same_candidates(got["dropped"], want["dropped"]), "quality %d %r: dropped equal generate --keep-dropped's" % (i, text))
    check(same_score(got["diversity"], want["diversity"]) and got.get("seed") == want.get("seed"), "quality %d: diversity, seed" % i)
    lean = QUALITY[i].get("model_scores") is False
    check(all((c["similarity"] is None) == lean and c["back_score"] is not None for c in got["candidates"]),
          "quality %d: similarity computed with --embedder unless model_scores is off; back_score where ranked by it" % i)
    dropped.update(option_of(d["reason"]) for d in got["dropped"])
check(sum(dropped.values()) > 0 and len(dropped) >= 2, "the filters dropped candidates for more than one reason: %s" % dropped)
m = main.metrics()
check(main.value("t5studio_candidates_dropped_total") == sum(dropped.values()), "candidates_dropped_total = dropped lists' length")
for reason, n in dropped.items():
    check(main.value("t5studio_candidates_dropped_total", reason=reason) == n, "candidates_dropped_total{reason=%s} = %d" % (reason, n))
check(all("replica" in l for l, v in m.get("t5studio_candidates_dropped_total", [])), "dropped counter has the replica label")

# Streaming with filters: one event per returned candidate, with its scores, once settled (ranked: at the end).
for i in (0, 2):
    r = main.post(dict(QUALITY[i], text=TEXTS[0], stream=True), stream=True)
    events = [json.loads(line[6:].decode("utf-8")) for line in r.iter_lines() if line.startswith(b"data: ")]
    want = expected_quality[(TEXTS[0], i)]["candidates"]
    check(len(events) == len(want) + 1 and same_candidates([e["candidate"] for e in events[:-1]], want) and
          events[-1]["results"][0]["candidates"] == [e["candidate"] for e in events[:-1]], "SSE quality %d: %s" % (i, events))

# ---- the seed service's own example request, exactly: 3 sampled candidates, not a 400 ----
r = main.post({"text": TEXTS[1], "num_return_sequences": 3, "temperature": 0.85, "top_p": 0.92})
check(r.status_code == 200 and len(r.json()["results"][0]["candidates"]) == 3 and r.json()["results"][0].get("seed", -1) >= 0,
      "the seed's request: %s %s" % (r.status_code, r.text[:300]))
bad_beams = main.post({"text": "x", "num_beams": 1, "num_return_sequences": 3, "temperature": 0.85})
check(bad_beams.status_code == 400 and "num_return_sequences" in bad_beams.text, "num_beams named: no implied sampling")

# ---- bad input: status and a message naming the field ----
def bad(body, code, needle, raw=None, method="post", path="/augment"):
    url = main.base + path
    headers = dict(main.headers, **({"Content-Type": "application/json"} if method in ("post", "put") else {}))
    r = requests.request(method, url, data=raw if raw is not None else json.dumps(body), headers=headers, timeout=10)
    check(r.status_code == code and needle in r.text, "%s %s %r -> %s %s" % (method, path, body if raw is None else raw[:20], r.status_code, r.text[:200]))

bad(None, 400, "malformed", raw="{not json")
bad({"text": "x", "bogus": 1}, 400, "bogus")
bad({"text": "x", "temperature": "hot"}, 400, "temperature")
bad({"text": "x", "num_beams": 0}, 400, "num_beams")
bad({"texts": []}, 400, "texts")
bad({}, 400, "text")
bad({"text": 5}, 400, "text")
bad({"text": "x", "stream": "yes"}, 400, "stream")
bad({"text": "x", "keep_dropped": 1}, 400, "keep_dropped")
bad({"text": "x", "model_scores": "no"}, 400, "model_scores")

# ---- protected spans: "protect" and "spans" in the request; equal to generate's --------
SPAN_TEXT = "Send 3 kg to {customer_name} by 17:45"
span_body = {"text": SPAN_TEXT, "protect": "numbers,placeholders", "num_beams": 3, "num_return_sequences": 2, "max_new_tokens": 10}
r = main.post(span_body)
want = cli_generate(SPAN_TEXT, ["--protect", "numbers,placeholders", "--beams", "3", "--num-return", "2", "--max-new-tokens", "10"])
check(r.status_code == 200, "spans request: %s %s" % (r.status_code, r.text[:300]))
if r.status_code == 200:
    got = r.json()["results"][0]
    check(got["spans"] == want["spans"] and [(c["ids"], c["spans"], c["forced_spans"]) for c in got["candidates"]] ==
          [(c["ids"], c["spans"], c["forced_spans"]) for c in want["candidates"]], "spans: serve equals generate --protect:\n%s\n%s" % (got, want))
r = main.post(dict(span_body, spans=[[0, 4, "ACTION"]]))
check(r.status_code == 200, "explicit spans request: %s %s" % (r.status_code, r.text[:300]))
if r.status_code == 200:
    got = r.json()["results"][0]
    pieces = sorted((SPAN_TEXT[s:e], label) for s, e, label in got["spans"])
    check(pieces == [("17:45", "number"), ("3 kg", "number"), ("Send", "ACTION"), ("{customer_name}", "placeholder")], "spans: %s" % pieces)
    check(len(got["candidates"]) == 2 and all(sorted((c["text"][s:e], l) for s, e, l in c["spans"]) == pieces for c in got["candidates"]),
          "spans: every served candidate keeps every span where its offsets say: %s" % got["candidates"])
r = main.post({"texts": ["a 1", "b {x}"], "entities": [[[2, 3, "N"]], []], "protect": "placeholders", "max_new_tokens": 6})
check(r.status_code == 200 and [len(x["spans"]) if "spans" in x else 0 for x in r.json()["results"]] == [1, 1], "entities per text: %s" % r.text[:300])
bad({"text": "abc", "spans": [[1, 9, "X"]]}, 400, "spans")
bad({"texts": ["a", "b"], "spans": [[]]}, 400, "spans")
bad({"text": "x", "protect": "dates"}, 400, "protect")
bad({"text": "x", "min_change": 2}, 400, "min_change")
bad({"text": "x", "rank": "loudest"}, 400, "rank")
# transformers' settings T5 Studio cannot apply yet: a 400 saying so, not "unknown field"; their neutral
# value (it changes nothing) is accepted; max_length points to max_new_tokens.
bad({"text": "x", "token_healing": True}, 400, "'token_healing' is not supported yet")
# Group beam search's settings are options, refused only as transformers refuses them.
bad({"text": "x", "num_beam_groups": 5}, 400, "num_beam_groups (5) must divide num_beams")
bad({"text": "x", "diversity_penalty": 0.5}, 400, "diversity_penalty needs num_beam_groups > 1")
bad({"text": "x", "max_length": 8}, 400, "give 'max_new_tokens'")
bad({"token_healing": True}, 400, "not supported yet", method="put", path="/v1/settings")
r = main.post(dict(SETTINGS[1][0], text=TEXTS[2], num_beam_groups=1, diversity_penalty=0.0, typical_p=1.0))
check(r.status_code == 200 and [c["ids"] for c in r.json()["results"][0]["candidates"]] ==
      [c["ids"] for c in expected[(TEXTS[2], 1)]["candidates"]], "neutral transformers settings change nothing: %s" % r.text[:200])
bad(None, 413, "1 MiB", raw=json.dumps({"text": "a" * (1 << 20)}))
bad(None, 404, "no such endpoint", raw="", method="get", path="/nope")
bad(None, 405, "not allowed", raw="", method="get", path="/augment")
bad(None, 405, "not allowed", raw="", method="delete", path="/v1/settings")

# ---- live settings: the next requests' defaults change, named fields keep theirs ----
before = main.get("/v1/settings").json()
r = requests.put(main.base + "/v1/settings", json={"max_new_tokens": 3}, headers=main.headers, timeout=10)
check(r.status_code == 200 and r.json()["max_new_tokens"] == 3, "PUT settings")
check(requests.put(main.base + "/v1/settings", json={"nope": 1}, headers=main.headers, timeout=10).status_code == 400, "PUT unknown -> 400")
short = main.post({"text": TEXTS[2]}).json()["results"][0]["candidates"][0]["ids"]
own = main.post({"text": TEXTS[2], "max_new_tokens": 12}).json()["results"][0]["candidates"][0]["ids"]
check(len(short) <= 3 and short == expected[(TEXTS[2], 0)]["candidates"][0]["ids"][:3], "default max_new_tokens 3 applies: %s" % short)
check(own == expected[(TEXTS[2], 0)]["candidates"][0]["ids"], "a request naming max_new_tokens keeps it")
requests.put(main.base + "/v1/settings", json={"max_new_tokens": before["max_new_tokens"]}, headers=main.headers, timeout=10)

served_texts = 200 + 1 + len(quality_answers) + 1 + 2 + 2 + 4 + 1  # + the seed service's request, the span requests (1 + 1 + 2 texts), the neutral one
rc = main.stop()
check(rc == 0, "main server exit code after SIGTERM: %s" % rc)
hist = subprocess.run([BIN, "history", "--history", history, "--limit", "10000", "--json"], capture_output=True, text=True)
check(hist.returncode == 0 and len(json.loads(hist.stdout)["generations"]) == served_texts, "history rows: %s" % hist.stdout[:200])

# ---- small server: queue full, disconnects free rows, SIGTERM drains ----
small = Server("--max-batch", "1", "--max-queue", "1", "--threads", "1", "--drain-timeout", "30")
LONG = {"text": "a long one", "max_new_tokens": 3000, "min_new_tokens": 3000}


def raw_request(body):
    s = socket.create_connection((small.base.split("//")[1].split(":")[0], int(small.base.rsplit(":", 1)[1])), timeout=10)
    data = json.dumps(body).encode()
    s.sendall(b"POST /augment HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data) + data)
    return s


a = raw_request(LONG)
until(lambda: small.value("t5studio_running_sequences") == 1, 20, "first long request running")
b = raw_request(LONG)
until(lambda: small.value("t5studio_queue_length") == 1, 20, "second long request queued")
r = small.post({"text": "refused"})
check(r.status_code == 503 and r.headers.get("Retry-After") == "1", "queue full -> 503 + Retry-After: %s" % r.status_code)
a.close()
b.close()
until(lambda: small.value("t5studio_running_sequences") == 0 and small.value("t5studio_queue_length") == 0, 20,
      "disconnected clients' rows freed")
check(small.value("t5studio_running_sequences") == 0, "running_sequences back to 0")

drain_answer = {}
t = threading.Thread(target=lambda: drain_answer.update(r=small.post({"text": "drained", "max_new_tokens": 2000, "min_new_tokens": 2000})))
t.start()
until(lambda: small.value("t5studio_running_sequences") == 1, 20, "request running before SIGTERM")
rc = small.stop()
t.join(30)
check(rc == 0, "SIGTERM: exit code %s" % rc)
check("r" in drain_answer and drain_answer["r"].status_code == 200 and
      len(drain_answer["r"].json()["results"][0]["candidates"][0]["ids"]) == 2000, "the running request finished during the drain")

# ---- a LoRA adapter (PEFT format) serves what `generate --adapter` gives ----
ADAPTER = os.path.join(os.path.dirname(os.path.dirname(MODEL)), "lora", "t5v10-qv-wo")
lora = Server("--adapter", ADAPTER, "--threads", "1")
for text in TEXTS[:2]:
    alone = cli_generate(text, ["--adapter", ADAPTER, "--max-new-tokens", "12"])
    served = lora.post({"text": text, "max_new_tokens": 12}).json()["results"][0]
    check([c["ids"] for c in served["candidates"]] == [c["ids"] for c in alone["candidates"]] and
          abs(served["candidates"][0]["score"] - alone["candidates"][0]["score"]) < 1e-4,
          "--adapter: served ids and score equal generate --adapter for %r" % text)
plain = expected[(TEXTS[0], 0)]["candidates"][0]["score"]
with_adapter = cli_generate(TEXTS[0], ["--adapter", ADAPTER, "--max-new-tokens", "12"])["candidates"][0]["score"]
check(abs(with_adapter - plain) > 1e-6, "the adapter changes the scores (else the check above proves nothing)")
# Without --embedder, similarity filters and rank are refused naming the field (as generate refuses them).
for body, field in (({"min_similarity": 0.5}, "min_similarity"), ({"rank": "similarity"}, "rank")):
    r = lora.post(dict(body, text="x"))
    check(r.status_code == 400 and field in r.json()["error"] and "embedder" in r.json()["error"], "no embedder: %s -> %s %s" %
          (body, r.status_code, r.text))
check(lora.stop() == 0, "adapter server: SIGTERM exit 0")

# ---- a non-loopback address without a key refuses to start ----
p = subprocess.run([BIN, "serve", "--model", MODEL, "--host", "0.0.0.0", "--port", "0"], capture_output=True, text=True, timeout=30)
check(p.returncode == 2 and "without --api-key-file" in p.stderr, "non-loopback without key: rc %s %s" % (p.returncode, p.stderr))

# ---- --devices: a malformed entry is a usage error; a GPU the machine lacks stops the load with one line ----
p = subprocess.run([BIN, "serve", "--model", MODEL, "--devices", "cpu,cuda:x", "--port", "0"], capture_output=True, text=True, timeout=30)
check(p.returncode == 2 and "cuda:x" in p.stderr, "--devices cuda:x: rc %s %s" % (p.returncode, p.stderr))
if os.path.exists("/dev/nvidia1"):
    print("skipped: --devices cuda:1 on a machine without a second GPU (this one has /dev/nvidia1)")
else:
    p = subprocess.run([BIN, "serve", "--model", MODEL, "--devices", "cuda:1", "--port", "0"], capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and "cuda:1" in lines[0], "--devices cuda:1 without that GPU: rc %s %r" % (p.returncode, p.stderr))

print("serve test: %d failures" % len(failures))
sys.exit(1 if failures else 0)
