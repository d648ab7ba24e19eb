"""`t5studio serve` end to end on loopback with a tiny model (ctest `serve`).

    python -m pytest -q tests/serve/test_serve.py --t5studio T5STUDIO --model MODEL_DIR --work WORK_DIR
Every wait is bounded by a deadline; nothing sleeps for a fixed time to "let things settle". The tests
against the main server share it and run in file order: its metrics and history count what came before.
"""
import concurrent.futures as futures
import json
import os
import signal
import socket
import subprocess
import threading
from collections import Counter

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

import pyutil

KEY = "test-key-0123456789"
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


def flags_of(body, embedder):
    out = ["--embedder", embedder]
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


class Server:
    """`serve` on loopback; counts the texts it answered 200 (each becomes a history row)."""
    count = 0

    def __init__(self, t5studio, model_dir, work, *flags, key=None):
        args = ["--model", model_dir] + list(flags)
        if key:
            path = os.path.join(work, "key.txt")
            with open(path, "w") as f:
                f.write(key + "\n")
            args += ["--api-key-file", path]
        Server.count += 1
        self.headers = {"Authorization": "Bearer " + key} if key else {}
        self.server, self.base = pyutil.start_serve(t5studio, args, os.path.join(work, "serve-%d.err" % Server.count), headers=self.headers)
        self.proc = self.server.proc
        self.served = 0
        # The random-weight test model's byte-fallback pieces often form no character: keep such
        # candidates (as cli_generate does), so that these checks stay about serving, not that filter.
        requests.put(self.base + "/v1/settings", json={"drop_invalid_text": False}, headers=self.headers, timeout=10)

    def get(self, path, **kw):
        return requests.get(self.base + path, headers=self.headers, timeout=60, **kw)

    def post(self, body, **kw):
        r = requests.post(self.base + "/augment", json=body, headers=self.headers, timeout=60, **kw)
        if r.status_code == 200:
            self.served += len(body["texts"]) if "texts" in body else 1
        return r

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
            return self.proc.wait(limit)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            return "killed"


@pytest.fixture(scope="module")
def cli_generate(t5studio, model_dir):
    def run(text, flags):
        out = subprocess.run([t5studio, "generate", "--model", model_dir, "--text", text, "--json", "--threads", "1", "--keep-invalid-text"] + flags,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, "generate %s: %s" % (flags, out.stderr.strip()[-300:])
        return json.loads(out.stdout)["results"][0]
    return run


@pytest.fixture(scope="module")
def embedder(model_dir):
    return os.path.join(os.path.dirname(os.path.dirname(model_dir)), "embedder", "xlmr_mean_norm")


@pytest.fixture(scope="module")
def expected(cli_generate, embedder):
    """`generate` alone for every (text, SETTINGS index) and, with --embedder, every (text, QUALITY index)."""
    with futures.ThreadPoolExecutor(4) as pool:  # the CLI runs are independent: overlap their start-ups
        runs = {(t, i): pool.submit(cli_generate, t, flags) for t in TEXTS for i, (_, flags) in enumerate(SETTINGS)}
        quality_runs = {(t, i): pool.submit(cli_generate, t, flags_of(body, embedder)) for t in TEXTS[:2] for i, body in enumerate(QUALITY)}
        return {k: f.result() for k, f in runs.items()}, {k: f.result() for k, f in quality_runs.items()}


@pytest.fixture(scope="module")
def history(work_dir):
    return os.path.join(work_dir, "history.db")


@pytest.fixture(scope="module")
def main(t5studio, model_dir, work_dir, history, embedder):
    """Two replicas of one thread each (the CLI ran with --threads 1), an API key, a history."""
    s = Server(t5studio, model_dir, work_dir, "--replicas", "2", "--threads", "2", "--max-batch", "16", "--history", history,
               "--embedder", embedder, key=KEY)
    yield s
    s.stop()


def test_implied_sampling_in_generate(expected):
    """Implied sampling is sampling: the same seed gives the explicit request's candidates."""
    for t in TEXTS:
        assert [c["ids"] for c in expected[0][(t, 3)]["candidates"]] == [c["ids"] for c in expected[0][(t, 2)]["candidates"]], \
            "generate with --temperature/--top-p and no --sample samples like --sample: %s" % t


def test_keys_and_health(main, history):
    assert requests.post(main.base + "/augment", json={"text": "x"}, timeout=10).status_code == 401, "no key -> 401"
    assert requests.post(main.base + "/augment", json={"text": "x"}, headers={"Authorization": "Bearer wrong"}, timeout=10).status_code == 401, \
        "wrong key -> 401"
    health = main.get("/health").json()
    assert health["status"] == "ok" and health["replicas"] == 2 and health["dtype"] == "fp32", "health: %s" % health
    # The settings serve started with, one key per flag's field (serve/serve_config.h); the key itself never.
    cfg = health.get("config", {})
    assert cfg.get("max_batch") == 16 and cfg.get("replicas") == 2 and cfg.get("threads") == 2 and cfg.get("max_queue") == 256 \
        and cfg.get("history") == history and "api_key" not in cfg and KEY not in json.dumps(health), "health config: %s" % cfg


def test_concurrent_requests_equal_generate_alone(main, expected):
    def one(k):
        text, i = TEXTS[k % len(TEXTS)], (k // len(TEXTS)) % len(SETTINGS)
        r = main.post(dict(SETTINGS[i][0], text=text))
        return k, text, i, r.status_code, r.json()

    with futures.ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(one, range(200)))
    tokens_in = tokens_out = 0
    for k, text, i, code, body in answers:
        assert code == 200, "request %d: %s %s" % (k, code, body)
        got = body["results"][0]
        want = expected[0][(text, i)]
        assert [c["ids"] for c in got["candidates"]] == [c["ids"] for c in want["candidates"]], \
            "request %d (%s, settings %d) ids differ from generate alone" % (k, text, i)
        assert [c["text"] for c in got["candidates"]] == [c["text"] for c in want["candidates"]], "request %d texts" % k
        tokens_in += body["usage"]["input_tokens"]
        tokens_out += body["usage"]["output_tokens"]
        assert body["usage"]["output_tokens"] == sum(len(c["ids"]) for c in got["candidates"]), "usage.output_tokens"
    m = main.metrics()
    assert main.value("t5studio_requests_total", endpoint="/augment", code="200") == 200, "requests_total{/augment,200} = 200"
    assert main.value("t5studio_generated_tokens_total") == tokens_out, "generated_tokens_total = tokens returned"
    assert main.value("t5studio_input_tokens_total") == tokens_in, "input_tokens_total = input tokens"
    for rep in ("0", "1"):
        assert main.value("t5studio_generated_tokens_total", replica=rep) > 0, "replica %s served" % rep
    assert main.value("t5studio_request_duration_seconds_count") == 200, "duration histogram count"
    assert main.value("t5studio_batch_rows_count") > 0 and main.value("process_resident_memory_bytes") > 0, "batch_rows / rss"
    assert max(v for l, v in m["t5studio_batch_rows_bucket"] if l["le"] == "1") < main.value("t5studio_batch_rows_count"), \
        "some steps ran more than one row"


def sse_events(r):
    return [json.loads(line[6:].decode("utf-8")) for line in r.iter_lines() if line.startswith(b"data: ")]


def test_streaming(main, expected):
    """One event per candidate, then the whole answer."""
    r = main.post(dict(SETTINGS[2][0], text=TEXTS[0], stream=True), stream=True)
    events = sse_events(r)
    assert r.headers["Content-Type"].startswith("text/event-stream") and len(events) == 4, "SSE events: %s" % events
    assert [e["candidate"]["ids"] for e in events[:3]] == [c["ids"] for c in expected[0][(TEXTS[0], 2)]["candidates"]], "SSE candidates"
    assert events[3]["results"][0]["candidates"] == [e["candidate"] for e in events[:3]], "SSE done event: the streamed candidates"


def same_score(a, b):
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= 1e-5)


def same_candidates(got, want):
    return len(got) == len(want) and all(
        g.get("ids") == w.get("ids") and g["text"] == w["text"] and g.get("reason") == w.get("reason") and
        all(same_score(g[f], w[f]) for f in ("similarity", "back_score", "change", "fluency")) for g, w in zip(got, want))


def test_quality_equals_generate(main, expected):
    """Scores, filters, ranking, rounds and dropped lists equal generate's; metrics count the drops."""
    def quality(k):
        text, i = TEXTS[k % 2], (k // 2) % len(QUALITY)
        r = main.post(dict(QUALITY[i], text=text))
        return text, i, r.status_code, r.json()

    with futures.ThreadPoolExecutor(6) as pool:
        quality_answers = list(pool.map(quality, range(2 * len(QUALITY))))  # each (text, body), concurrently
    dropped = Counter()
    for text, i, code, body in quality_answers:
        assert code == 200, "quality request %s %d: %s %s" % (text, i, code, body)
        got, want = body["results"][0], expected[1][(text, i)]
        assert same_candidates(got["candidates"], want["candidates"]), "quality %d %r: candidates and scores equal generate's:\n%s\n%s" % (
            i, text, got["candidates"], want["candidates"])
        assert same_candidates(got["dropped"], want["dropped"]), "quality %d %r: dropped equal generate --keep-dropped's" % (i, text)
        assert same_score(got["diversity"], want["diversity"]) and got.get("seed") == want.get("seed"), "quality %d: diversity, seed" % i
        lean = QUALITY[i].get("model_scores") is False
        assert all((c["similarity"] is None) == lean and c["back_score"] is not None for c in got["candidates"]), \
            "quality %d: similarity computed with --embedder unless model_scores is off; back_score where ranked by it" % i
        dropped.update(option_of(d["reason"]) for d in got["dropped"])
    assert sum(dropped.values()) > 0 and len(dropped) >= 2, "the filters dropped candidates for more than one reason: %s" % dropped
    m = main.metrics()
    assert main.value("t5studio_candidates_dropped_total") == sum(dropped.values()), "candidates_dropped_total = dropped lists' length"
    for reason, n in dropped.items():
        assert main.value("t5studio_candidates_dropped_total", reason=reason) == n, "candidates_dropped_total{reason=%s} = %d" % (reason, n)
    assert all("replica" in l for l, v in m.get("t5studio_candidates_dropped_total", [])), "dropped counter has the replica label"


def test_quality_streaming(main, expected):
    """Streaming with filters: one event per returned candidate, with its scores, once settled (ranked: at the end)."""
    for i in (0, 2):
        r = main.post(dict(QUALITY[i], text=TEXTS[0], stream=True), stream=True)
        events = sse_events(r)
        want = expected[1][(TEXTS[0], i)]["candidates"]
        assert len(events) == len(want) + 1 and same_candidates([e["candidate"] for e in events[:-1]], want) and \
            events[-1]["results"][0]["candidates"] == [e["candidate"] for e in events[:-1]], "SSE quality %d: %s" % (i, events)


def test_seed_service_request(main):
    """The seed service's own example request, exactly: 3 sampled candidates, not a 400."""
    r = main.post({"text": TEXTS[1], "num_return_sequences": 3, "temperature": 0.85, "top_p": 0.92})
    assert r.status_code == 200 and len(r.json()["results"][0]["candidates"]) == 3 and r.json()["results"][0].get("seed", -1) >= 0, \
        "the seed's request: %s %s" % (r.status_code, r.text[:300])
    bad_beams = main.post({"text": "x", "num_beams": 1, "num_return_sequences": 3, "temperature": 0.85})
    assert bad_beams.status_code == 400 and "num_return_sequences" in bad_beams.text, "num_beams named: no implied sampling"


def assert_bad(main, body, code, needle, raw=None, method="post", path="/augment"):
    """Status `code` and a message naming `needle`."""
    headers = dict(main.headers, **({"Content-Type": "application/json"} if method in ("post", "put") else {}))
    r = requests.request(method, main.base + path, data=raw if raw is not None else json.dumps(body), headers=headers, timeout=10)
    assert r.status_code == code and needle in r.text, "%s %s %r -> %s %s" % (method, path, body if raw is None else raw[:20], r.status_code, r.text[:200])


@pytest.mark.parametrize("body,needle", [
    ({"text": "x", "bogus": 1}, "bogus"), ({"text": "x", "temperature": "hot"}, "temperature"), ({"text": "x", "num_beams": 0}, "num_beams"),
    ({"texts": []}, "texts"), ({}, "text"), ({"text": 5}, "text"), ({"text": "x", "stream": "yes"}, "stream"),
    ({"text": "x", "keep_dropped": 1}, "keep_dropped"), ({"text": "x", "model_scores": "no"}, "model_scores"),
    ({"text": "abc", "spans": [[1, 9, "X"]]}, "spans"), ({"texts": ["a", "b"], "spans": [[]]}, "spans"), ({"text": "x", "protect": "dates"}, "protect"),
    ({"text": "x", "min_change": 2}, "min_change"), ({"text": "x", "rank": "loudest"}, "rank"),
    # transformers' settings T5 Studio cannot apply yet: a 400 saying so, not "unknown field"; max_length points to max_new_tokens.
    ({"text": "x", "token_healing": True}, "'token_healing' is not supported yet"),
    # Group beam search's settings are options, refused only as transformers refuses them.
    ({"text": "x", "num_beam_groups": 5}, "num_beam_groups (5) must divide num_beams"),
    ({"text": "x", "diversity_penalty": 0.5}, "diversity_penalty needs num_beam_groups > 1"),
    ({"text": "x", "max_length": 8}, "give 'max_new_tokens'")])
def test_bad_request_400(main, body, needle):
    assert_bad(main, body, 400, needle)


def test_bad_requests_other(main):
    assert_bad(main, None, 400, "malformed", raw="{not json")
    assert_bad(main, {"token_healing": True}, 400, "not supported yet", method="put", path="/v1/settings")
    assert_bad(main, None, 413, "1 MiB", raw=json.dumps({"text": "a" * (1 << 20)}))
    assert_bad(main, None, 404, "no such endpoint", raw="", method="get", path="/nope")
    assert_bad(main, None, 405, "not allowed", raw="", method="get", path="/augment")
    assert_bad(main, None, 405, "not allowed", raw="", method="delete", path="/v1/settings")


SPAN_TEXT = "Send 3 kg to {customer_name} by 17:45"
SPAN_BODY = {"text": SPAN_TEXT, "protect": "numbers,placeholders", "num_beams": 3, "num_return_sequences": 2, "max_new_tokens": 10}


def test_protected_spans(main, cli_generate):
    """"protect" and "spans" in the request; equal to generate's."""
    r = main.post(SPAN_BODY)
    want = cli_generate(SPAN_TEXT, ["--protect", "numbers,placeholders", "--beams", "3", "--num-return", "2", "--max-new-tokens", "10"])
    assert r.status_code == 200, "spans request: %s %s" % (r.status_code, r.text[:300])
    got = r.json()["results"][0]
    assert got["spans"] == want["spans"] and [(c["ids"], c["spans"], c["forced_spans"]) for c in got["candidates"]] == \
        [(c["ids"], c["spans"], c["forced_spans"]) for c in want["candidates"]], "spans: serve equals generate --protect:\n%s\n%s" % (got, want)
    r = main.post(dict(SPAN_BODY, spans=[[0, 4, "ACTION"]]))
    assert r.status_code == 200, "explicit spans request: %s %s" % (r.status_code, r.text[:300])
    got = r.json()["results"][0]
    pieces = sorted((SPAN_TEXT[s:e], label) for s, e, label in got["spans"])
    assert pieces == [("17:45", "number"), ("3 kg", "number"), ("Send", "ACTION"), ("{customer_name}", "placeholder")], "spans: %s" % pieces
    assert len(got["candidates"]) == 2 and all(sorted((c["text"][s:e], l) for s, e, l in c["spans"]) == pieces for c in got["candidates"]), \
        "spans: every served candidate keeps every span where its offsets say: %s" % got["candidates"]
    r = main.post({"texts": ["a 1", "b {x}"], "entities": [[[2, 3, "N"]], []], "protect": "placeholders", "max_new_tokens": 6})
    assert r.status_code == 200 and [len(x["spans"]) if "spans" in x else 0 for x in r.json()["results"]] == [1, 1], "entities per text: %s" % r.text[:300]


def test_neutral_transformers_settings(main, expected):
    """Their neutral value changes nothing."""
    r = main.post(dict(SETTINGS[1][0], text=TEXTS[2], num_beam_groups=1, diversity_penalty=0.0, typical_p=1.0))
    assert r.status_code == 200 and [c["ids"] for c in r.json()["results"][0]["candidates"]] == \
        [c["ids"] for c in expected[0][(TEXTS[2], 1)]["candidates"]], "neutral transformers settings change nothing: %s" % r.text[:200]


def test_live_settings(main, expected):
    """The next requests' defaults change, named fields keep theirs."""
    before = main.get("/v1/settings").json()
    r = requests.put(main.base + "/v1/settings", json={"max_new_tokens": 3}, headers=main.headers, timeout=10)
    assert r.status_code == 200 and r.json()["max_new_tokens"] == 3, "PUT settings"
    try:
        assert requests.put(main.base + "/v1/settings", json={"nope": 1}, headers=main.headers, timeout=10).status_code == 400, "PUT unknown -> 400"
        short = main.post({"text": TEXTS[2]}).json()["results"][0]["candidates"][0]["ids"]
        own = main.post({"text": TEXTS[2], "max_new_tokens": 12}).json()["results"][0]["candidates"][0]["ids"]
        assert len(short) <= 3 and short == expected[0][(TEXTS[2], 0)]["candidates"][0]["ids"][:3], "default max_new_tokens 3 applies: %s" % short
        assert own == expected[0][(TEXTS[2], 0)]["candidates"][0]["ids"], "a request naming max_new_tokens keeps it"
    finally:
        requests.put(main.base + "/v1/settings", json={"max_new_tokens": before["max_new_tokens"]}, headers=main.headers, timeout=10)


def test_history_has_every_served_text(t5studio, main, history):
    """After SIGTERM: one history row per text the tests above had answered (219 when they all ran)."""
    rc = main.stop()
    assert rc == 0, "main server exit code after SIGTERM: %s" % rc
    hist = subprocess.run([t5studio, "history", "--history", history, "--limit", "10000", "--json"], capture_output=True, text=True, timeout=120)
    assert hist.returncode == 0 and len(json.loads(hist.stdout)["generations"]) == main.served, \
        "history rows (want %d): %s" % (main.served, hist.stdout[:200])


LONG = {"text": "a long one", "max_new_tokens": 3000, "min_new_tokens": 3000}


def raw_request(base, body):
    s = socket.create_connection((base.split("//")[1].split(":")[0], int(base.rsplit(":", 1)[1])), timeout=10)
    data = json.dumps(body).encode()
    s.sendall(b"POST /augment HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data) + data)
    return s


def test_queue_full_disconnects_and_drain(t5studio, model_dir, work_dir):
    """A small server: queue full, disconnects free rows, SIGTERM drains."""
    small = Server(t5studio, model_dir, work_dir, "--max-batch", "1", "--max-queue", "1", "--threads", "1", "--drain-timeout", "30")
    try:
        a = raw_request(small.base, LONG)
        pyutil.until(lambda: small.value("t5studio_running_sequences") == 1, 20, "first long request running")
        b = raw_request(small.base, LONG)
        pyutil.until(lambda: small.value("t5studio_queue_length") == 1, 20, "second long request queued")
        r = small.post({"text": "refused"})
        assert r.status_code == 503 and r.headers.get("Retry-After") == "1", "queue full -> 503 + Retry-After: %s" % r.status_code
        a.close()
        b.close()
        pyutil.until(lambda: small.value("t5studio_running_sequences") == 0 and small.value("t5studio_queue_length") == 0, 20,
                     "disconnected clients' rows freed")
        assert small.value("t5studio_running_sequences") == 0, "running_sequences back to 0"
        drain_answer = {}
        t = threading.Thread(target=lambda: drain_answer.update(r=small.post({"text": "drained", "max_new_tokens": 2000, "min_new_tokens": 2000})))
        t.start()
        pyutil.until(lambda: small.value("t5studio_running_sequences") == 1, 20, "request running before SIGTERM")
        rc = small.stop()
        t.join(30)
        assert rc == 0, "SIGTERM: exit code %s" % rc
        assert "r" in drain_answer and drain_answer["r"].status_code == 200 and \
            len(drain_answer["r"].json()["results"][0]["candidates"][0]["ids"]) == 2000, "the running request finished during the drain"
    finally:
        small.server.stop(limit=60)


def test_lora_adapter(t5studio, model_dir, work_dir, cli_generate, expected):
    """A LoRA adapter (PEFT format) serves what `generate --adapter` gives."""
    adapter = os.path.join(os.path.dirname(os.path.dirname(model_dir)), "lora", "t5v10-qv-wo")
    lora = Server(t5studio, model_dir, work_dir, "--adapter", adapter, "--threads", "1")
    try:
        for text in TEXTS[:2]:
            alone = cli_generate(text, ["--adapter", adapter, "--max-new-tokens", "12"])
            served = lora.post({"text": text, "max_new_tokens": 12}).json()["results"][0]
            assert [c["ids"] for c in served["candidates"]] == [c["ids"] for c in alone["candidates"]] and \
                abs(served["candidates"][0]["score"] - alone["candidates"][0]["score"]) < 1e-4, \
                "--adapter: served ids and score equal generate --adapter for %r" % text
        plain = expected[0][(TEXTS[0], 0)]["candidates"][0]["score"]
        with_adapter = cli_generate(TEXTS[0], ["--adapter", adapter, "--max-new-tokens", "12"])["candidates"][0]["score"]
        assert abs(with_adapter - plain) > 1e-6, "the adapter changes the scores (else the check above proves nothing)"
        # Without --embedder, similarity filters and rank are refused naming the field (as generate refuses them).
        for body, field in (({"min_similarity": 0.5}, "min_similarity"), ({"rank": "similarity"}, "rank")):
            r = lora.post(dict(body, text="x"))
            assert r.status_code == 400 and field in r.json()["error"] and "embedder" in r.json()["error"], \
                "no embedder: %s -> %s %s" % (body, r.status_code, r.text)
        assert lora.stop() == 0, "adapter server: SIGTERM exit 0"
    finally:
        lora.server.stop(limit=60)


def test_non_loopback_without_key_refused(t5studio, model_dir):
    p = subprocess.run([t5studio, "serve", "--model", model_dir, "--host", "0.0.0.0", "--port", "0"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "without --api-key-file" in p.stderr, "non-loopback without key: rc %s %s" % (p.returncode, p.stderr)


def test_devices_malformed(t5studio, model_dir):
    """--devices: a malformed entry is a usage error."""
    p = subprocess.run([t5studio, "serve", "--model", model_dir, "--devices", "cpu,cuda:x", "--port", "0"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "cuda:x" in p.stderr, "--devices cuda:x: rc %s %s" % (p.returncode, p.stderr)


def test_devices_missing_gpu(t5studio, model_dir):
    """--devices: a GPU the machine lacks stops the load with one line."""
    if os.path.exists("/dev/nvidia1"):
        pytest.skip("--devices cuda:1 on a machine without a second GPU (this one has /dev/nvidia1)")
    p = subprocess.run([t5studio, "serve", "--model", model_dir, "--devices", "cuda:1", "--port", "0"], capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1 and "cuda:1" in lines[0], "--devices cuda:1 without that GPU: rc %s %r" % (p.returncode, p.stderr)
