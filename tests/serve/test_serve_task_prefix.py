#!/usr/bin/env python3
"""`t5studio serve` resolves the task prefix by `generate`'s rule on every path (ctest
`serve_task_prefix`): --task-prefix TEXT ("" included) or --task NAME, else the model's default task
(config.json task_specific_params + t5studio_default_task), else none. The tiny model is given a
default task here (a copy of its folder with those keys). Checked: /health's "task_prefix" value and
source against `generate --json`'s task_prefix for the same choice; /augment's default, Label
Studio's /predict and a learning round's training pairs (its manifest's source_prefix) all use it.
Loopback only; every wait polls for an event with a deadline.
Usage: test_serve_task_prefix.py T5STUDIO MODEL_DIR WORK_DIR
"""
import glob
import json
import os
import shutil
import subprocess
import sys

import requests
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from py_checks import check, failures, until  # noqa: E402

BIN, MODEL, WORK = sys.argv[1:4]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
TASKS = {"paraphrase": {"prefix": "paraphrase: "}, "summarize": {"prefix": "summarize: "}}
CONFIG = '<View><Text name="src" value="$sentence"/><TextArea name="out" toName="src"/></View>'
TEXTS = ["Tom is a good boy.", "the cat number 3 is here", "Hello world."]
KEY = "prefix-key-0123456789"  # /webhook and /train teach the model: serve wants credentials for them
AUTH = {"Authorization": "Bearer " + KEY}


def tasked_model():
    """The tiny model's folder with a default task: its files linked, its config.json extended."""
    out = os.path.join(WORK, "tasked-model")
    os.makedirs(out)
    for name in os.listdir(MODEL):
        if name != "config.json":
            os.symlink(os.path.join(os.path.abspath(MODEL), name), os.path.join(out, name))
    with open(os.path.join(MODEL, "config.json")) as f:
        config = json.load(f)
    config.update({"task_specific_params": TASKS, "t5studio_default_task": "paraphrase"})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return out


def cli_prefix(model, flags):
    """The prefix `generate` applies with these flags (its --json names it; absent: none)."""
    r = subprocess.run([BIN, "generate", "--model", model, "--text", "x", "--max-new-tokens", "1", "--threads", "1", "--json"] + flags,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        check(False, "generate %s: %s" % (flags, r.stderr.strip()[-300:]))
    return json.loads(r.stdout)["results"][0].get("task_prefix", "") if r.returncode == 0 else None


class Server:
    count = 0

    def __init__(self, model, *flags):
        Server.count += 1
        self.err = os.path.join(WORK, "serve-%d.err" % Server.count)
        key = os.path.join(WORK, "key")
        with open(key, "w") as f:
            f.write(KEY + "\n")
        self.proc = subprocess.Popen([BIN, "serve", "--model", model, "--port", "0", "--threads", "1", "--api-key-file", key] + list(flags),
                                     stdout=subprocess.PIPE, stderr=open(self.err, "w"), text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("{"):
            self.stop()
            sys.exit("serve %s did not start: %s" % (flags, open(self.err).read()))
        self.base = "http://" + json.loads(line)["listening"]
        until(self.ready, 60, "/ready")
        # The random-weight model's byte pieces often form no character: keep such candidates, so that
        # the comparisons below are about the prefix, not that filter (the setting /predict starts from too).
        requests.put(self.base + "/v1/settings", json={"drop_invalid_text": False}, headers=AUTH, timeout=10)

    def ready(self):
        if self.proc.poll() is not None:
            sys.exit("serve exited with %s: %s" % (self.proc.returncode, open(self.err).read()))
        try:
            return requests.get(self.base + "/ready", headers=AUTH, timeout=5).status_code == 200
        except requests.ConnectionError:
            return False

    def get(self, path):
        return requests.get(self.base + path, headers=AUTH, timeout=30).json()

    def post(self, path, body):
        return requests.post(self.base + path, json=body, headers=AUTH, timeout=120)

    def augment(self, text, **options):
        r = self.post("/augment", dict({"texts": [text]}, **options))
        if r.status_code != 200:
            check(False, "/augment %s: %s" % (options, r.text[:200]))
        return [c["text"] for c in r.json()["results"][0]["candidates"]]

    def predict(self, texts):
        r = self.post("/predict", {"tasks": [{"id": i + 1, "data": {"sentence": t}} for i, t in enumerate(texts)], "label_config": CONFIG})
        if r.status_code != 200:
            check(False, "/predict: %s" % r.text[:200])
        return [p["result"][0]["value"]["text"] if p["result"] else [] for p in r.json()["results"]]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def check_resolved(server, model, cli_flags, want, source_words, what):
    """/health's task_prefix and /v1/settings' default are the prefix `generate` resolves from the same choice."""
    h = server.get("/health").get("task_prefix")
    check(isinstance(h, dict) and h.get("value") == want and source_words in h.get("source", ""),
          "%s: /health task_prefix %s (want %r from %s)" % (what, h, want, source_words))
    check(server.get("/v1/settings")["task_prefix"] == want, "%s: /v1/settings' task_prefix is %r" % (what, want))
    cli = cli_prefix(model, cli_flags)
    check(cli == want, "%s: generate %s applies %r, serve %r" % (what, cli_flags, cli, want))


def check_paths_use(server, prefix, what):
    """/augment's default and /predict generate with `prefix`, not without one (the bug: /predict used none)."""
    predicted = server.predict(TEXTS)
    told = [server.augment(t, task_prefix=prefix) for t in TEXTS]
    plain = [server.augment(t) for t in TEXTS]
    other = "" if prefix else "summarize: "
    differs = [t for t in TEXTS if server.augment(t, task_prefix=other) != server.augment(t, task_prefix=prefix)]
    check(differs, "%s: the model answers %r and %r differently for some text (else this test tells nothing)" % (what, prefix, other))
    check(plain == told, "%s: /augment without a prefix uses %r" % (what, prefix))
    check(predicted == told, "%s: /predict uses %r: %s vs %s" % (what, prefix, predicted, told))


def learning_round_prefix(server, learn_dir):
    """Annotations as pairs, one requested round; the source_prefix its manifest records."""
    for k in range(1, 5):
        body = {"action": "ANNOTATION_CREATED", "project": {"id": 1, "label_config": CONFIG},
                "task": {"id": k, "data": {"sentence": "item number %d" % k}},
                "annotation": {"id": k, "result": [{"from_name": "out", "to_name": "src", "type": "textarea", "value": {"text": ["answer %d" % k]}}]}}
        r = server.post("/webhook", body)
        if r.status_code != 201:
            check(False, "annotation %d: %s" % (k, r.text[:200]))
    r = server.post("/train", {})
    if not check(r.status_code == 201, "/train queues a round: %s" % r.text.strip()[:200]):
        return None
    job = r.json()["job"]
    last = until(lambda: (lambda l: l["state"] == "idle" and l.get("last_round", {}).get("job") == job and l["last_round"])(
        server.get("/health")["learning"]), 300, "the requested learning round")
    check(last and last["status"] in ("adopted", "rejected"), "the round trained: %s" % last)
    manifests = glob.glob(os.path.join(learn_dir, "v*", "manifest.json")) + glob.glob(os.path.join(learn_dir, "rejected", "*.json"))
    check(len(manifests) == 1, "one round manifest: %s" % manifests)
    return json.load(open(manifests[0]))["settings"]["source_prefix"] if manifests else None


tasked = tasked_model()
history, learn_dir = os.path.join(WORK, "h.sqlite"), os.path.join(WORK, "learning")

# No prefix flag: the model's default task, on every path, the learner's pairs included.
s = Server(tasked, "--history", history, "--learn-dir", learn_dir, "--learn-every", "0", "--learn-max-steps", "2")
try:
    check_resolved(s, tasked, [], "paraphrase: ", "config.json task 'paraphrase'", "default task")
    check_paths_use(s, "paraphrase: ", "default task")
    prefix = learning_round_prefix(s, learn_dir)
    check(prefix == "paraphrase: ", "the learning round trained and held out 'paraphrase: ' + source (manifest: %r)" % prefix)
finally:
    s.stop()

# --task-prefix "" turns the default off, as generate --prefix "" does.
s = Server(tasked, "--task-prefix", "")
try:
    check_resolved(s, tasked, ["--prefix", ""], "", "--task-prefix", "--task-prefix \"\"")
    check_paths_use(s, "", "--task-prefix \"\"")
finally:
    s.stop()

# --task NAME picks another of the model's tasks, as generate --task NAME does.
s = Server(tasked, "--task", "summarize")
try:
    check_resolved(s, tasked, ["--task", "summarize"], "summarize: ", "--task summarize", "--task summarize")
finally:
    s.stop()

# A model without tasks: none, as before.
s = Server(MODEL)
try:
    check_resolved(s, MODEL, [], "", "built-in default", "no tasks")
finally:
    s.stop()

# Bad choices: one line naming what is wrong, before anything is served.
for flags, words in ((["--task", "nope"], "no task 'nope'"), (["--task", "summarize", "--task-prefix", "x: "], "not both")):
    r = subprocess.run([BIN, "serve", "--model", tasked, "--port", "0"] + flags, capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and words in r.stderr and "listening" not in r.stdout, "serve %s: %s (%s)" % (flags, r.stderr.strip(), r.returncode))

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
