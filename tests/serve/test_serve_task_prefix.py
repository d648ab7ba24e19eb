"""`t5studio serve` resolves the task prefix by `generate`'s rule on every path (ctest
`serve_task_prefix`): --task-prefix TEXT ("" included) or --task NAME, else the model's default task
(config.json task_specific_params + t5studio_default_task), else none. The tiny model is given a
default task here (a copy of its folder with those keys). Checked: /health's "task_prefix" value and
source against `generate --json`'s task_prefix for the same choice; /augment's default, Label
Studio's /predict and a learning round's training pairs (its manifest's source_prefix) all use it.
Loopback only; every wait polls for an event with a deadline.

    python -m pytest -q tests/serve/test_serve_task_prefix.py --t5studio T5STUDIO --model MODEL_DIR --work WORK_DIR
"""
import glob
import json
import os
import subprocess

import pytest
import requests

import pyutil

TASKS = {"paraphrase": {"prefix": "paraphrase: "}, "summarize": {"prefix": "summarize: "}}
CONFIG = '<View><Text name="src" value="$sentence"/><TextArea name="out" toName="src"/></View>'
TEXTS = ["Tom is a good boy.", "the cat number 3 is here", "Hello world."]
KEY = "prefix-key-0123456789"  # /webhook and /train teach the model: serve wants credentials for them
AUTH = {"Authorization": "Bearer " + KEY}


@pytest.fixture(scope="module")
def tasked(model_dir, work_dir):
    """The tiny model's folder with a default task: its files linked, its config.json extended."""
    out = os.path.join(work_dir, "tasked-model")
    os.makedirs(out)
    for name in os.listdir(model_dir):
        if name != "config.json":
            os.symlink(os.path.join(model_dir, name), os.path.join(out, name))
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    config.update({"task_specific_params": TASKS, "t5studio_default_task": "paraphrase"})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return out


def cli_prefix(t5studio, model, flags):
    """The prefix `generate` applies with these flags (its --json names it; absent: none)."""
    r = subprocess.run([t5studio, "generate", "--model", model, "--text", "x", "--max-new-tokens", "1", "--threads", "1", "--json"] + flags,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, "generate %s: %s" % (flags, r.stderr.strip()[-300:])
    return json.loads(r.stdout)["results"][0].get("task_prefix", "")


class Server:
    count = 0

    def __init__(self, t5studio, work, model, *flags):
        Server.count += 1
        key = os.path.join(work, "key")
        with open(key, "w") as f:
            f.write(KEY + "\n")
        self.bin, self.model = t5studio, model
        self.server, self.base = pyutil.start_serve(
            t5studio, ["--model", model, "--threads", "1", "--api-key-file", key, *flags],
            os.path.join(work, "serve-%d.err" % Server.count), headers=AUTH)
        # The random-weight model's byte pieces often form no character: keep such candidates, so that
        # the comparisons below are about the prefix, not that filter (the setting /predict starts from too).
        requests.put(self.base + "/v1/settings", json={"drop_invalid_text": False}, headers=AUTH, timeout=10)

    def get(self, path):
        return requests.get(self.base + path, headers=AUTH, timeout=30).json()

    def post(self, path, body):
        return requests.post(self.base + path, json=body, headers=AUTH, timeout=120)

    def augment(self, text, **options):
        r = self.post("/augment", dict({"texts": [text]}, **options))
        assert r.status_code == 200, "/augment %s: %s" % (options, r.text[:200])
        return [c["text"] for c in r.json()["results"][0]["candidates"]]

    def predict(self, texts):
        r = self.post("/predict", {"tasks": [{"id": i + 1, "data": {"sentence": t}} for i, t in enumerate(texts)], "label_config": CONFIG})
        assert r.status_code == 200, "/predict: %s" % r.text[:200]
        return [p["result"][0]["value"]["text"] if p["result"] else [] for p in r.json()["results"]]


@pytest.fixture
def serve(t5studio, work_dir):
    """serve(model, *flags): a started server, stopped at the end of the test."""
    started = []

    def start(model, *flags):
        started.append(Server(t5studio, work_dir, model, *flags))
        return started[-1]

    yield start
    for s in started:
        s.server.stop(limit=60)


def assert_resolved(server, cli_flags, want, source_words, what):
    """/health's task_prefix and /v1/settings' default are the prefix `generate` resolves from the same choice."""
    h = server.get("/health").get("task_prefix")
    assert isinstance(h, dict) and h.get("value") == want and source_words in h.get("source", ""), \
        "%s: /health task_prefix %s (want %r from %s)" % (what, h, want, source_words)
    assert server.get("/v1/settings")["task_prefix"] == want, "%s: /v1/settings' task_prefix is %r" % (what, want)
    cli = cli_prefix(server.bin, server.model, cli_flags)
    assert cli == want, "%s: generate %s applies %r, serve %r" % (what, cli_flags, cli, want)


def assert_paths_use(server, prefix, what):
    """/augment's default and /predict generate with `prefix`, not without one (the bug: /predict used none)."""
    predicted = server.predict(TEXTS)
    told = [server.augment(t, task_prefix=prefix) for t in TEXTS]
    plain = [server.augment(t) for t in TEXTS]
    other = "" if prefix else "summarize: "
    differs = [t for t in TEXTS if server.augment(t, task_prefix=other) != server.augment(t, task_prefix=prefix)]
    assert differs, "%s: the model answers %r and %r differently for some text (else this test tells nothing)" % (what, prefix, other)
    assert plain == told, "%s: /augment without a prefix uses %r" % (what, prefix)
    assert predicted == told, "%s: /predict uses %r: %s vs %s" % (what, prefix, predicted, told)


def learning_round_prefix(server, learn_dir):
    """Annotations as pairs, one requested round; the source_prefix its manifest records."""
    for k in range(1, 5):
        body = {"action": "ANNOTATION_CREATED", "project": {"id": 1, "label_config": CONFIG},
                "task": {"id": k, "data": {"sentence": "item number %d" % k}},
                "annotation": {"id": k, "result": [{"from_name": "out", "to_name": "src", "type": "textarea", "value": {"text": ["answer %d" % k]}}]}}
        r = server.post("/webhook", body)
        assert r.status_code == 201, "annotation %d: %s" % (k, r.text[:200])
    r = server.post("/train", {})
    assert r.status_code == 201, "/train queues a round: %s" % r.text.strip()[:200]
    job = r.json()["job"]
    last = pyutil.until(lambda: (lambda l: l["state"] == "idle" and l.get("last_round", {}).get("job") == job and l["last_round"])(
        server.get("/health")["learning"]), 300, "the requested learning round")
    assert last["status"] in ("adopted", "rejected"), "the round trained: %s" % last
    manifests = glob.glob(os.path.join(learn_dir, "v*", "manifest.json")) + glob.glob(os.path.join(learn_dir, "rejected", "*.json"))
    assert len(manifests) == 1, "one round manifest: %s" % manifests
    with open(manifests[0]) as f:
        return json.load(f)["settings"]["source_prefix"]


def test_default_task_on_every_path(serve, tasked, work_dir):
    """No prefix flag: the model's default task, on every path, the learner's pairs included."""
    learn_dir = os.path.join(work_dir, "learning")
    s = serve(tasked, "--history", os.path.join(work_dir, "h.sqlite"), "--learn-dir", learn_dir, "--learn-every", "0",
              "--learn-max-steps", "2")
    assert_resolved(s, [], "paraphrase: ", "config.json task 'paraphrase'", "default task")
    assert_paths_use(s, "paraphrase: ", "default task")
    prefix = learning_round_prefix(s, learn_dir)
    assert prefix == "paraphrase: ", "the learning round trained and held out 'paraphrase: ' + source (manifest: %r)" % prefix


def test_empty_task_prefix_turns_it_off(serve, tasked):
    """--task-prefix "" turns the default off, as generate --prefix "" does."""
    s = serve(tasked, "--task-prefix", "")
    assert_resolved(s, ["--prefix", ""], "", "--task-prefix", "--task-prefix \"\"")
    assert_paths_use(s, "", "--task-prefix \"\"")


def test_task_by_name(serve, tasked):
    """--task NAME picks another of the model's tasks, as generate --task NAME does."""
    s = serve(tasked, "--task", "summarize")
    assert_resolved(s, ["--task", "summarize"], "summarize: ", "--task summarize", "--task summarize")


def test_model_without_tasks(serve, model_dir):
    """A model without tasks: none, as before."""
    s = serve(model_dir)
    assert_resolved(s, [], "", "built-in default", "no tasks")


@pytest.mark.parametrize("flags,words", [(["--task", "nope"], "no task 'nope'"),
                                         (["--task", "summarize", "--task-prefix", "x: "], "not both")])
def test_bad_choices(t5studio, tasked, flags, words):
    """Bad choices: one line naming what is wrong, before anything is served."""
    r = subprocess.run([t5studio, "serve", "--model", tasked, "--port", "0"] + flags, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and words in r.stderr and "listening" not in r.stdout, "serve %s: %s (%s)" % (flags, r.stderr.strip(), r.returncode)
