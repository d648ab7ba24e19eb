"""Augmentation recipes in `t5studio serve` (ctest `serve_recipes`), with the demo model
(assets/demo-model: an English <-> Chinese translator). Checked: configured recipes (--recipe
NAME=FILE, --recipes DIR) and an inline one give over HTTP exactly what `generate --recipe` gives for
the same texts (greedy: texts, ids and routes), protected spans included; a step on a model of its own;
streaming; refusals (an inline recipe naming a model or adapter, an unknown name, a malformed recipe,
an oversized recipe or body) as 400/413 naming the field; a bad configured recipe stops serve at
start naming its file; Label Studio's /predict through --labelstudio-recipe, each prediction with
its routes; the recipe counter in /metrics. Loopback only; every wait polls for an event with a
deadline.

    python -m pytest -q tests/serve/test_serve_recipes.py --t5studio T5STUDIO --model DEMO_MODEL --recipes RECIPES_DIR --work WORK_DIR
The tests share one server and run in file order: the metrics, SIGTERM and history tests look back
over the requests before them.
"""
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import threading

import pytest
import requests

import pyutil

TO_ZH, TO_EN = "translate English to Chinese: ", "translate Chinese to English: "
TEXTS = ["I like green tea.", "The weather is nice today.", "She reads a book in the library."]
SPAN_TEXTS = ["I bought 12 apples for 5 dollars.", "The meeting is at 3 pm on Friday."]
DRAIN_TEXTS = ["The weather is nice today number %d." % i for i in range(24)]
COMMON = ["--max-new-tokens", "24", "--threads", "1"]
CONFIG = '<View><Text name="src" value="$sentence"/><TextArea name="out" toName="src"/></View>'
KEY = "recipes-key-0123456789"
AUTH = {"Authorization": "Bearer " + KEY}


def write(work, name, obj):
    path = os.path.join(work, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def read_json(path):
    with open(path) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def bt(recipes_dir):
    return os.path.join(recipes_dir, "demo-back-translation-zh.json")


@pytest.fixture(scope="module")
def cli_recipe(t5studio, model_dir):
    """cli_recipe(recipe_file, texts, *flags): `generate --recipe` over `texts`, its JSON results."""
    def run(recipe_file, texts, *flags):
        args = [t5studio, "generate", "--model", model_dir, "--recipe", recipe_file, "--json"] + COMMON + list(flags)
        for t in texts:
            args += ["--text", t]
        r = subprocess.run(args, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, "generate --recipe %s %s" % (os.path.basename(recipe_file), r.stderr.strip()[-300:])
        return json.loads(r.stdout)["results"]
    return run


@pytest.fixture(scope="module")
def cli_bt(cli_recipe, bt):
    return cli_recipe(bt, TEXTS)


class Server:
    def __init__(self, t5studio, model_dir, work, *flags):
        key = write(work, "key", KEY + "\n")
        self.server, self.base = pyutil.start_serve(
            t5studio, ["--model", model_dir, "--threads", "1", "--api-key-file", key, *flags], os.path.join(work, "serve.err"),
            headers=AUTH)
        self.proc = self.server.proc

    def post(self, path, body=None, data=None):
        return requests.post(self.base + path, json=body, data=data, headers=dict(AUTH, **{"Content-Type": "application/json"}),
                             timeout=300)

    def augment(self, texts, **fields):
        r = self.post("/augment", dict({"texts": texts, "max_new_tokens": 24}, **fields))
        assert r.status_code == 200, "/augment %s: %d %s" % (str(fields)[:80], r.status_code, r.text[:300])
        return r.json()["results"]

    def metrics(self):
        return requests.get(self.base + "/metrics", headers=AUTH, timeout=30).text

    def metric(self, name_and_labels):
        for line in self.metrics().splitlines():
            if line.startswith(name_and_labels + " "):
                return float(line.split()[-1])
        return 0.0


@pytest.fixture(scope="module")
def configured(work_dir, model_dir, recipes_dir):
    """The recipes serve is started with: `own` (a step on a model of its own) and `pooled` in a folder."""
    own = write(work_dir, "dir/own.json", {"steps": [{"name": "pivot", "prefix": TO_ZH},
                                                     {"name": "back", "from": "pivot", "model": model_dir, "prefix": TO_EN}],
                                           "candidates": ["back"]})
    pooled = os.path.join(work_dir, "dir", "pooled.json")
    shutil.copy(os.path.join(recipes_dir, "demo-paraphrase-and-back-translation.json"), pooled)
    return {"own": own, "pooled": pooled, "dir": os.path.dirname(own)}


@pytest.fixture(scope="module")
def server(t5studio, model_dir, work_dir, bt, configured):
    s = Server(t5studio, model_dir, work_dir, "--recipe", "bt=" + bt, "--recipes", configured["dir"], "--labelstudio-recipe", "bt",
               "--history", os.path.join(work_dir, "history.db"))
    yield s
    s.server.stop(limit=60)


def assert_same(what, cli, http):
    """The same candidates (texts, ids, routes) for every text, in order."""
    def view(results):
        return [(r["input"], [(c["text"], c["ids"], c.get("route")) for c in r["candidates"]]) for r in results]
    assert cli and view(cli) == view(http), "%s: HTTP gives what generate --recipe gives:\n  cli  %s\n  http %s" % (what, view(cli), view(http))
    routed = all(c.get("route") and c["route"][-1]["text"] == c["text"] for r in http for c in r["candidates"])
    assert routed and any(r["candidates"] for r in http), "%s: every candidate carries its route" % what


# --- a bad configured recipe stops serve before it listens, naming the file -------------------------
BAD_STARTS = [  # (what, flags by the bad recipe file and the good bt file, exit code, words of the last line)
    ("--recipe with an unknown setting", lambda bad, bt: ["--recipe", "broken=" + bad], 1, ["broken.json", "num_beamz"]),
    ("--recipes DIR with a bad file", lambda bad, bt: ["--recipes", os.path.dirname(bad)], 1, ["broken.json", "num_beamz"]),
    ("--recipe missing file", lambda bad, bt: ["--recipe", "x=" + os.path.join(os.path.dirname(bad), "none.json")], 1, ["none.json"]),
    ("--recipe without NAME=", lambda bad, bt: ["--recipe", bt], 2, ["NAME=FILE"]),
    ("two recipes of one name", lambda bad, bt: ["--recipe", "bt=" + bt, "--recipe", "bt=" + bt], 2, ["'bt'"]),
    ("--labelstudio-recipe unknown", lambda bad, bt: ["--recipe", "bt=" + bt, "--labelstudio-recipe", "nope"], 2, ["nope"]),
]


@pytest.mark.parametrize("what,flags,want_code,want_words", BAD_STARTS, ids=[b[0] for b in BAD_STARTS])
def test_bad_configured_recipe_stops_serve(t5studio, model_dir, work_dir, bt, what, flags, want_code, want_words):
    bad = write(work_dir, "bad/broken.json", {"steps": [{"name": "a", "num_beamz": 2}], "candidates": ["a"]})
    r = subprocess.run([t5studio, "serve", "--model", model_dir, "--port", "0", "--threads", "1"] + flags(bad, bt),
                       capture_output=True, text=True, timeout=120)
    last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    assert r.returncode == want_code and all(w in last for w in want_words) and "listening" not in r.stdout, \
        "%s: exit %d (want %d), message %r names %s" % (what, r.returncode, want_code, last, want_words)


# --- configured recipes: one by --recipe, two by --recipes DIR (one with a step on a model of its own)
def test_recipes_over_http_are_generates(server, cli_recipe, cli_bt, bt, configured):
    assert_same("configured --recipe bt", cli_bt, server.augment(TEXTS, recipe="bt"))
    assert_same("inline recipe", cli_bt, server.augment(TEXTS, recipe=read_json(bt)))
    assert_same("--recipes DIR own (a step on a model of its own)", cli_recipe(configured["own"], TEXTS), server.augment(TEXTS, recipe="own"))
    assert_same("--recipes DIR pooled", cli_recipe(configured["pooled"], TEXTS), server.augment(TEXTS, recipe="pooled"))
    assert_same("protected spans through both legs", cli_recipe(bt, SPAN_TEXTS, "--protect", "numbers", "--keep-dropped"),
                server.augment(SPAN_TEXTS, recipe="bt", protect="numbers", keep_dropped=True))


def test_streaming(server, cli_bt):
    """Every candidate as an event once judged, then "done" with the same results."""
    r = requests.post(server.base + "/augment", json={"texts": TEXTS, "recipe": "bt", "max_new_tokens": 24, "stream": True},
                      headers=AUTH, timeout=300)
    frames = [f for f in r.text.split("\n\n") if f.strip()]
    events = [(f.split("\n")[0][len("event: "):], json.loads(f.split("\n")[1][len("data: "):])) for f in frames]
    streamed = [e[1]["candidate"]["text"] for e in events if e[0] == "candidate"]
    done = [e[1] for e in events if e[0] == "done"]
    assert r.status_code == 200 and len(done) == 1 and events[-1][0] == "done", "stream: candidate events then one done (%d)" % r.status_code
    assert streamed == [c["text"] for res in done[0]["results"] for c in res["candidates"]] == [c["text"] for res in cli_bt for c in res["candidates"]], \
        "stream: the candidates streamed are the recipe's"


def refusals(steps, demo):
    """(what, body, status, words): what a client sends is checked before anything runs."""
    return [
        ("inline recipe naming a model", {"text": "hi", "recipe": {"steps": [dict(steps[0], model=demo)], "candidates": ["pivot"]}},
         400, ["recipe.steps[0].model"]),
        ("inline recipe naming an adapter", {"text": "hi", "recipe": {"steps": [steps[0], dict(steps[1], adapter="/tmp")], "candidates": ["back"]}},
         400, ["recipe.steps[1].adapter"]),
        ("unknown recipe name", {"text": "hi", "recipe": "nope"}, 400, ["unknown recipe 'nope'", "bt"]),
        ("malformed inline recipe: unknown setting", {"text": "hi", "recipe": {"steps": [dict(steps[0], num_beamz=2)], "candidates": ["pivot"]}},
         400, ["num_beamz"]),
        ("malformed inline recipe: no candidates", {"text": "hi", "recipe": {"steps": steps}}, 400, ["candidates"]),
        ("recipe of a wrong type", {"text": "hi", "recipe": 3}, 400, ["'recipe'"]),
        ("inline recipe over 256 KiB", {"text": "hi", "recipe": {"description": "x" * (300 << 10), "steps": steps, "candidates": ["back"]}},
         400, ["'recipe'", "262144"]),
        ("body over 1 MiB", json.dumps({"text": "hi", "recipe": {"description": "x" * (1100 << 10), "steps": steps, "candidates": ["back"]}}),
         413, []),
    ]


def test_refusals(server, bt, model_dir):
    for what, body, status, words in refusals(read_json(bt)["steps"], model_dir):
        r = server.post("/augment", body) if isinstance(body, dict) else server.post("/augment", data=body)
        msg = r.json().get("error", "") if r.headers.get("Content-Type", "").startswith("application/json") else r.text
        assert r.status_code == status and all(w in msg for w in words), "%s: %d (want %d) %r names %s" % (what, r.status_code, status, msg[:200], words)
    assert server.augment(["still serving"], recipe="bt") != [], "the server still serves recipes after the refusals"


def test_labelstudio_predict_routes(server):
    """/predict runs --labelstudio-recipe; each TextArea result keeps its texts' routes."""
    tasks = [{"id": i + 1, "data": {"sentence": t}} for i, t in enumerate(TEXTS)]
    r = server.post("/predict", {"tasks": tasks, "label_config": CONFIG})
    assert r.status_code == 200, "/predict with a recipe: %d %s" % (r.status_code, r.text[:200])
    preds = r.json().get("results", [])
    assert len(preds) == len(TEXTS), "/predict with a recipe: %d predictions" % len(preds)
    routed = [p["result"][0]["value"] for p in preds if p["result"]]
    assert routed and all(len(v["routes"]) == len(v["text"]) and all(route[-1]["text"] == t and [leg["step"] for leg in route] == ["pivot", "back"]
                                                                     for route, t in zip(v["routes"], v["text"])) for v in routed), \
        "/predict: every predicted text has its route (pivot > back) in value.routes"


def test_metrics_and_health(server):
    metrics = server.metrics()
    for label in ('recipe="bt",outcome="ok"', 'recipe="inline",outcome="ok"', 'recipe="own",outcome="ok"'):
        assert "t5studio_recipe_requests_total{%s}" % label in metrics, "/metrics counts recipe requests {%s}" % label
    health = requests.get(server.base + "/health", headers=AUTH, timeout=30).json()
    assert health["config"].get("labelstudio_recipe") == "bt", "/health's config shows --labelstudio-recipe"


def test_client_gone_cancels_recipe(server):
    """A client that goes away cancels its recipe: the request ends as an error long before its
    48 x 4 x 4 sampled texts would be done, and the server goes on serving."""
    sampled = {"steps": [{"name": "pivot", "prefix": TO_ZH, "do_sample": True, "num_return_sequences": 4},
                         {"name": "back", "from": "pivot", "prefix": TO_EN, "do_sample": True, "num_return_sequences": 4}],
               "candidates": ["back"]}
    with pytest.raises(requests.exceptions.Timeout):  # else the cancel check needs a longer request
        requests.post(server.base + "/augment", headers=AUTH, timeout=1.0,
                      json={"texts": ["I like green tea number %d." % i for i in range(48)], "max_new_tokens": 64, "recipe": sampled})
    pyutil.until(lambda: server.metric('t5studio_recipe_requests_total{recipe="inline",outcome="error"}') == 1, 120,
                 "the abandoned recipe request to end cancelled")
    assert server.augment(["after the cancel"], recipe="bt") != [], "the server serves recipes after a cancelled one"


def test_sigterm_drains_a_running_recipe(server):
    """SIGTERM while a recipe's first step runs: the recipe still finishes (its second step gets the
    scheduler), then serve exits 0."""
    answer = {}
    body = {"texts": DRAIN_TEXTS, "max_new_tokens": 48, "recipe": "bt"}
    worker = threading.Thread(target=lambda: answer.update(r=requests.post(server.base + "/augment", json=body, headers=AUTH, timeout=300)))
    worker.start()
    pyutil.until(lambda: server.metric('t5studio_running_sequences{replica="0"}') > 0, 60, "the recipe's first step to run")
    server.proc.send_signal(signal.SIGTERM)
    worker.join(300)
    r = answer.get("r")
    assert r is not None and r.status_code == 200 and len(r.json()["results"]) == 24 and \
        all(c["route"][0]["step"] == "pivot" for res in r.json()["results"] for c in res["candidates"]), \
        "a recipe running at SIGTERM finishes both steps (%s)" % (r.text[:200] if r is not None else "no answer")
    assert server.proc.wait(timeout=120) == 0, "serve exits 0 after draining the recipe"


def test_history_records_recipes(server, work_dir):
    """The history holds each recipe request once (its sources, not the pivot texts a step generated),
    each generation naming its recipe in its settings and each candidate with its route."""
    server.server.stop(limit=60)  # the history is complete once serve has exited
    db = sqlite3.connect(os.path.join(work_dir, "history.db"))
    rows = db.execute("SELECT g.input, g.settings_json, c.route FROM generations g JOIN candidates c ON c.generation_id = g.id").fetchall()
    db.close()
    inputs = {row[0] for row in rows}
    sent = set(TEXTS + SPAN_TEXTS + ["still serving", "after the cancel"] + DRAIN_TEXTS)
    assert inputs and inputs <= sent and set(DRAIN_TEXTS) <= inputs, "the history holds the requests' sources only: %s" % sorted(inputs - sent)[:6]
    named = [json.loads(row[1]).get("recipe", {}).get("name") for row in rows]
    assert {"bt", "own", "pooled", "inline"} <= set(named), "each recorded generation names its recipe (%s)" % sorted(set(map(str, named)))
    bt_record = next((json.loads(row[1])["recipe"] for row in rows if json.loads(row[1]).get("recipe", {}).get("name") == "bt"), {})
    assert bt_record.get("file", "").endswith("demo-back-translation-zh.json") and len(bt_record.get("sha256", "")) == 64, \
        "a configured recipe is recorded with its file and SHA-256: %s" % bt_record
    assert all(row[2] and json.loads(row[2]) for row in rows), "every recorded candidate keeps its route"
