#!/usr/bin/env python3
"""Augmentation recipes in `t5studio serve` (ctest `serve_recipes`), with the demo model
(assets/demo-model: an English <-> Chinese translator). Checked: configured recipes (--recipe
NAME=FILE, --recipes DIR) and an inline one give over HTTP exactly what `generate --recipe` gives for
the same texts (greedy: texts, ids and routes), protected spans included; a step on a model of its own;
streaming; refusals (an inline recipe naming a model or adapter, an unknown name, a malformed recipe,
an oversized recipe or body) as 400/413 naming the field; a bad configured recipe stops serve at
start naming its file; Label Studio's /predict through --labelstudio-recipe, each prediction with
its routes; the recipe counter in /metrics. Loopback only; every wait polls for an event with a
deadline.
Usage: test_serve_recipes.py T5STUDIO DEMO_MODEL RECIPES_DIR WORK_DIR
"""
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading

import requests
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from py_checks import check, failures, until  # noqa: E402

BIN, DEMO, RECIPES, WORK = sys.argv[1:5]
DEMO = os.path.abspath(DEMO)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
BT = os.path.join(os.path.abspath(RECIPES), "demo-back-translation-zh.json")
TO_ZH, TO_EN = "translate English to Chinese: ", "translate Chinese to English: "
TEXTS = ["I like green tea.", "The weather is nice today.", "She reads a book in the library."]
SPAN_TEXTS = ["I bought 12 apples for 5 dollars.", "The meeting is at 3 pm on Friday."]
COMMON = ["--max-new-tokens", "24", "--threads", "1"]
CONFIG = '<View><Text name="src" value="$sentence"/><TextArea name="out" toName="src"/></View>'
KEY = "recipes-key-0123456789"
AUTH = {"Authorization": "Bearer " + KEY}


def write(name, obj):
    path = os.path.join(WORK, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def cli_recipe(recipe_file, texts, *flags):
    """`generate --recipe` over `texts`: its JSON results."""
    args = [BIN, "generate", "--model", DEMO, "--recipe", recipe_file, "--json"] + COMMON + list(flags)
    for t in texts:
        args += ["--text", t]
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if not check(r.returncode == 0, "generate --recipe %s %s" % (os.path.basename(recipe_file), r.stderr.strip()[-300:])):
        return []
    return json.loads(r.stdout)["results"]


def start_fails(name, flags, want_code, want_words):
    """serve with `flags` exits `want_code` before it listens, its last stderr line naming `want_words`."""
    r = subprocess.run([BIN, "serve", "--model", DEMO, "--port", "0", "--threads", "1"] + flags,
                       capture_output=True, text=True, timeout=120)
    last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    check(r.returncode == want_code and all(w in last for w in want_words) and "listening" not in r.stdout,
          "%s: exit %d (want %d), message %r names %s" % (name, r.returncode, want_code, last, want_words))


class Server:
    def __init__(self, *flags):
        self.err = os.path.join(WORK, "serve.err")
        key = write("key", KEY + "\n")
        self.proc = subprocess.Popen([BIN, "serve", "--model", DEMO, "--port", "0", "--threads", "1", "--api-key-file", key] + list(flags),
                                     stdout=subprocess.PIPE, stderr=open(self.err, "w"), text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("{"):
            self.stop()
            sys.exit("serve %s did not start: %s" % (flags, open(self.err).read()))
        self.base = "http://" + json.loads(line)["listening"]
        until(self.ready, 120, "/ready")

    def ready(self):
        if self.proc.poll() is not None:
            sys.exit("serve exited with %s: %s" % (self.proc.returncode, open(self.err).read()))
        try:
            return requests.get(self.base + "/ready", headers=AUTH, timeout=5).status_code == 200
        except requests.ConnectionError:
            return False

    def post(self, path, body=None, data=None):
        return requests.post(self.base + path, json=body, data=data, headers=dict(AUTH, **{"Content-Type": "application/json"}),
                             timeout=300)

    def augment(self, texts, **fields):
        r = self.post("/augment", dict({"texts": texts, "max_new_tokens": 24}, **fields))
        check(r.status_code == 200, "/augment %s: %d %s" % (str(fields)[:80], r.status_code, r.text[:300]))
        return r.json()["results"] if r.status_code == 200 else []

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def same(what, cli, http):
    """The same candidates (texts, ids, routes) for every text, in order."""
    def view(results):
        return [(r["input"], [(c["text"], c["ids"], c.get("route")) for c in r["candidates"]]) for r in results]
    ok = bool(cli) and view(cli) == view(http)
    check(ok, "%s: HTTP gives what generate --recipe gives%s" % (what, "" if ok else ":\n  cli  %s\n  http %s" % (view(cli), view(http))))
    routed = all(c.get("route") and c["route"][-1]["text"] == c["text"] for r in http for c in r["candidates"])
    check(routed and any(r["candidates"] for r in http), "%s: every candidate carries its route" % what)


def refused(server, what, body, status, words):
    r = server.post("/augment", body) if isinstance(body, dict) else server.post("/augment", data=body)
    msg = r.json().get("error", "") if r.headers.get("Content-Type", "").startswith("application/json") else r.text
    check(r.status_code == status and all(w in msg for w in words), "%s: %d (want %d) %r names %s" % (what, r.status_code, status, msg[:200], words))


# --- a bad configured recipe stops serve before it listens, naming the file -------------------------
bad_file = write("bad/broken.json", {"steps": [{"name": "a", "num_beamz": 2}], "candidates": ["a"]})
start_fails("--recipe with an unknown setting", ["--recipe", "broken=" + bad_file], 1, ["broken.json", "num_beamz"])
start_fails("--recipes DIR with a bad file", ["--recipes", os.path.dirname(bad_file)], 1, ["broken.json", "num_beamz"])
start_fails("--recipe missing file", ["--recipe", "x=" + os.path.join(WORK, "none.json")], 1, ["none.json"])
start_fails("--recipe without NAME=", ["--recipe", BT], 2, ["NAME=FILE"])
start_fails("two recipes of one name", ["--recipe", "bt=" + BT, "--recipe", "bt=" + BT], 2, ["'bt'"])
start_fails("--labelstudio-recipe unknown", ["--recipe", "bt=" + BT, "--labelstudio-recipe", "nope"], 2, ["nope"])

# --- configured recipes: one by --recipe, two by --recipes DIR (one with a step on a model of its own)
own = write("dir/own.json", {"steps": [{"name": "pivot", "prefix": TO_ZH}, {"name": "back", "from": "pivot", "model": DEMO, "prefix": TO_EN}],
                             "candidates": ["back"]})
shutil.copy(os.path.join(os.path.dirname(BT), "demo-paraphrase-and-back-translation.json"), os.path.join(WORK, "dir", "pooled.json"))
server = Server("--recipe", "bt=" + BT, "--recipes", os.path.join(WORK, "dir"), "--labelstudio-recipe", "bt",
                "--history", os.path.join(WORK, "history.db"))
try:
    cli_bt = cli_recipe(BT, TEXTS)
    same("configured --recipe bt", cli_bt, server.augment(TEXTS, recipe="bt"))
    same("inline recipe", cli_bt, server.augment(TEXTS, recipe=json.load(open(BT))))
    same("--recipes DIR own (a step on a model of its own)", cli_recipe(own, TEXTS), server.augment(TEXTS, recipe="own"))
    same("--recipes DIR pooled", cli_recipe(os.path.join(WORK, "dir", "pooled.json"), TEXTS), server.augment(TEXTS, recipe="pooled"))
    same("protected spans through both legs", cli_recipe(BT, SPAN_TEXTS, "--protect", "numbers", "--keep-dropped"),
         server.augment(SPAN_TEXTS, recipe="bt", protect="numbers", keep_dropped=True))

    # Streaming: every candidate as an event once judged, then "done" with the same results.
    r = requests.post(server.base + "/augment", json={"texts": TEXTS, "recipe": "bt", "max_new_tokens": 24, "stream": True},
                      headers=AUTH, timeout=300)
    frames = [f for f in r.text.split("\n\n") if f.strip()]
    events = [(f.split("\n")[0][len("event: "):], json.loads(f.split("\n")[1][len("data: "):])) for f in frames]
    streamed = [e[1]["candidate"]["text"] for e in events if e[0] == "candidate"]
    done = [e[1] for e in events if e[0] == "done"]
    check(r.status_code == 200 and len(done) == 1 and events[-1][0] == "done", "stream: candidate events then one done (%d)" % r.status_code)
    check(done and streamed == [c["text"] for res in done[0]["results"] for c in res["candidates"]] == [c["text"] for res in cli_bt for c in res["candidates"]],
          "stream: the candidates streamed are the recipe's")

    # Refusals: what a client sends is checked before anything runs.
    steps = json.load(open(BT))["steps"]
    refused(server, "inline recipe naming a model", {"text": "hi", "recipe": {"steps": [dict(steps[0], model=DEMO)], "candidates": ["pivot"]}},
            400, ["recipe.steps[0].model"])
    refused(server, "inline recipe naming an adapter", {"text": "hi", "recipe": {"steps": [steps[0], dict(steps[1], adapter="/tmp")], "candidates": ["back"]}},
            400, ["recipe.steps[1].adapter"])
    refused(server, "unknown recipe name", {"text": "hi", "recipe": "nope"}, 400, ["unknown recipe 'nope'", "bt"])
    refused(server, "malformed inline recipe: unknown setting", {"text": "hi", "recipe": {"steps": [dict(steps[0], num_beamz=2)], "candidates": ["pivot"]}},
            400, ["num_beamz"])
    refused(server, "malformed inline recipe: no candidates", {"text": "hi", "recipe": {"steps": steps}}, 400, ["candidates"])
    refused(server, "recipe of a wrong type", {"text": "hi", "recipe": 3}, 400, ["'recipe'"])
    refused(server, "inline recipe over 256 KiB", {"text": "hi", "recipe": {"description": "x" * (300 << 10), "steps": steps, "candidates": ["back"]}},
            400, ["'recipe'", "262144"])
    refused(server, "body over 1 MiB", json.dumps({"text": "hi", "recipe": {"description": "x" * (1100 << 10), "steps": steps, "candidates": ["back"]}}),
            413, [])
    check(server.augment(["still serving"], recipe="bt") != [], "the server still serves recipes after the refusals")

    # Label Studio: /predict runs --labelstudio-recipe; each TextArea result keeps its texts' routes.
    tasks = [{"id": i + 1, "data": {"sentence": t}} for i, t in enumerate(TEXTS)]
    r = server.post("/predict", {"tasks": tasks, "label_config": CONFIG})
    preds = r.json().get("results", []) if r.status_code == 200 else []
    check(r.status_code == 200 and len(preds) == len(TEXTS), "/predict with a recipe: %d, %d predictions" % (r.status_code, len(preds)))
    routed = [p["result"][0]["value"] for p in preds if p["result"]]
    check(routed and all(len(v["routes"]) == len(v["text"]) and all(route[-1]["text"] == t and [leg["step"] for leg in route] == ["pivot", "back"]
                                                                       for route, t in zip(v["routes"], v["text"])) for v in routed),
          "/predict: every predicted text has its route (pivot > back) in value.routes")

    metrics = requests.get(server.base + "/metrics", headers=AUTH, timeout=30).text
    for label in ('recipe="bt",outcome="ok"', 'recipe="inline",outcome="ok"', 'recipe="own",outcome="ok"'):
        check("t5studio_recipe_requests_total{%s}" % label in metrics, "/metrics counts recipe requests {%s}" % label)
    health = requests.get(server.base + "/health", headers=AUTH, timeout=30).json()
    check(health["config"].get("labelstudio_recipe") == "bt", "/health's config shows --labelstudio-recipe")

    def metric(name_and_labels):
        for line in requests.get(server.base + "/metrics", headers=AUTH, timeout=30).text.splitlines():
            if line.startswith(name_and_labels + " "):
                return float(line.split()[-1])
        return 0.0

    # A client that goes away cancels its recipe: the request ends as an error long before its
    # 48 x 4 x 4 sampled texts would be done, and the server goes on serving.
    sampled = {"steps": [{"name": "pivot", "prefix": TO_ZH, "do_sample": True, "num_return_sequences": 4},
                         {"name": "back", "from": "pivot", "prefix": TO_EN, "do_sample": True, "num_return_sequences": 4}],
               "candidates": ["back"]}
    try:
        requests.post(server.base + "/augment", headers=AUTH, timeout=1.0,
                      json={"texts": ["I like green tea number %d." % i for i in range(48)], "max_new_tokens": 64, "recipe": sampled})
        check(False, "the long recipe request answered within 1 s: the cancel check needs a longer one")
    except requests.exceptions.Timeout:
        pass
    until(lambda: metric('t5studio_recipe_requests_total{recipe="inline",outcome="error"}') == 1, 120,
          "the abandoned recipe request to end cancelled")
    check(server.augment(["after the cancel"], recipe="bt") != [], "the server serves recipes after a cancelled one")

    # SIGTERM while a recipe's first step runs: the recipe still finishes (its second step gets the
    # scheduler), then serve exits 0.
    answer = {}
    body = {"texts": ["The weather is nice today number %d." % i for i in range(24)], "max_new_tokens": 48, "recipe": "bt"}
    worker = threading.Thread(target=lambda: answer.update(r=requests.post(server.base + "/augment", json=body, headers=AUTH, timeout=300)))
    worker.start()
    until(lambda: metric('t5studio_running_sequences{replica="0"}') > 0, 60, "the recipe's first step to run")
    server.proc.send_signal(signal.SIGTERM)
    worker.join(300)
    r = answer.get("r")
    check(r is not None and r.status_code == 200 and len(r.json()["results"]) == 24 and
          all(c["route"][0]["step"] == "pivot" for res in r.json()["results"] for c in res["candidates"]),
          "a recipe running at SIGTERM finishes both steps (%s)" % (r.text[:200] if r is not None else "no answer"))
    check(server.proc.wait(timeout=120) == 0, "serve exits 0 after draining the recipe")
finally:
    server.stop()

# The history holds each recipe request once (its sources, not the pivot texts a step generated),
# each generation naming its recipe in its settings and each candidate with its route.
db = sqlite3.connect(os.path.join(WORK, "history.db"))
rows = db.execute("SELECT g.input, g.settings_json, c.route FROM generations g JOIN candidates c ON c.generation_id = g.id").fetchall()
inputs = {row[0] for row in rows}
sent = set(TEXTS + SPAN_TEXTS + ["still serving", "after the cancel"] + body["texts"])
check(inputs and inputs <= sent and set(body["texts"]) <= inputs, "the history holds the requests' sources only: %s" % sorted(inputs - sent)[:6])
named = [json.loads(row[1]).get("recipe", {}).get("name") for row in rows]
check({"bt", "own", "pooled", "inline"} <= set(named), "each recorded generation names its recipe (%s)" % sorted(set(map(str, named))))
bt_record = next((json.loads(row[1])["recipe"] for row in rows if json.loads(row[1]).get("recipe", {}).get("name") == "bt"), {})
check(bt_record.get("file", "").endswith("demo-back-translation-zh.json") and len(bt_record.get("sha256", "")) == 64,
      "a configured recipe is recorded with its file and SHA-256: %s" % bt_record)
check(all(row[2] and json.loads(row[2]) for row in rows), "every recorded candidate keeps its route")

print("serve_recipes: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
