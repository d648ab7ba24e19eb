"""Label Studio's ML-backend protocol on `t5studio serve --learn-dir` with the tiny model, without
Label Studio (ctest `serve_labelstudio_protocol`; the real Label Studio runs in `labelstudio_e2e`).

Shapes of GET / /health /setup /predict /webhook /train, tag names read from the config, the error
for an unsupported config, HTTP Basic besides the Bearer key, annotation events as history pairs
(an update edits its pair), a round every --learn-every pairs, model_version naming the adopted
version, and served generations naming it in the history.

    python -m pytest -q tests/serve/test_ls_protocol.py --t5studio T5STUDIO --model MODEL_DIR --work WORK_DIR
The tests share one server and run in file order: the learning test counts every pair annotated so far.
"""
import base64
import json
import os
import subprocess

import pytest
import requests

import pyutil

CONFIG = '<View><Header value="x"/><Text name="src" value="$sentence"/><TextArea name="out" toName="src"/></View>'
KEY = "bearer-key-0123456789"
BASIC = {"Authorization": "Basic " + base64.b64encode(b"ls:pw").decode()}
BEARER = {"Authorization": "Bearer " + KEY}


class LsServe:
    def __init__(self, t5studio, model_dir, work):
        self.bin, self.history = t5studio, os.path.join(work, "h.sqlite")
        with open(os.path.join(work, "basic"), "w") as f:
            f.write("ls:pw\n")
        with open(os.path.join(work, "key"), "w") as f:
            f.write(KEY + "\n")
        flags = ["--model", model_dir, "--threads", "1", "--history", self.history, "--learn-dir", os.path.join(work, "learning"),
                 "--learn-every", "10", "--basic-auth-file", os.path.join(work, "basic"), "--api-key-file", os.path.join(work, "key")]
        self.server, self.base = pyutil.start_serve(t5studio, flags, os.path.join(work, "serve.err"))

    def get(self, path, headers=BASIC):
        return requests.get(self.base + path, headers=headers, timeout=60)

    def post(self, path, body, headers=BASIC):
        return requests.post(self.base + path, json=body, headers=headers, timeout=60)

    def learning(self):
        return self.get("/health").json()["learning"]

    def history_search(self, text):
        out = subprocess.run([self.bin, "history", "--history", self.history, "--search", text, "--json"], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, "history --search: " + out.stderr.strip()[-300:]
        return json.loads(out.stdout)["generations"]


@pytest.fixture(scope="module")
def ls(t5studio, model_dir, work_dir):
    s = LsServe(t5studio, model_dir, work_dir)
    yield s
    s.server.stop(limit=60)


def test_health_auth_and_setup(ls):
    h = ls.get("/health").json()
    assert h["status"] == "ok" and h["model_class"] == "T5Studio" and h["learning"]["version"] == 0, \
        f"/health keeps its fields, adds model_class and learning: {h}"
    mv0 = h["model_version"]
    assert ls.get("/", headers={}).status_code == 401, "GET / without credentials: 401"
    assert ls.get("/", headers={"Authorization": "Basic " + base64.b64encode(b"ls:no").decode()}).status_code == 401, "wrong password: 401"
    r = ls.get("/").json()
    assert r == {"status": "UP", "model_class": "T5Studio", "model_version": mv0}, f"GET / with Basic auth: {r}"
    assert ls.get("/", headers=BEARER).status_code == 200, "the Bearer key works on the ML endpoints too"
    r = ls.post("/setup", {"project": "3.1700000000", "schema": CONFIG})
    assert r.status_code == 200 and r.json()["model_version"] == mv0, f"/setup answers model_version: {r.text}"
    r = ls.post("/setup", {"project": "3.1", "schema": '<View><Image name="i" value="$image"/><Choices name="c" toName="i"/></View>'})
    assert r.status_code == 400 and "TextArea" in r.json()["error"] and "Image, Choices" in r.json()["error"], f"unsupported config: {r.text}"


def test_predict(ls):
    mv0 = ls.get("/health").json()["model_version"]
    texts = ["Hello world.", "Tom is a good boy."]
    r = ls.post("/predict", {"tasks": [{"id": i + 1, "data": {"sentence": t}} for i, t in enumerate(texts)],
                             "label_config": CONFIG, "project": "3.1", "params": {"context": None}})
    assert r.status_code == 200, f"/predict: {r.status_code} {r.text[:200]}"
    res = r.json()["results"]
    assert len(res) == 2, f"one prediction per task: {res}"
    for t, p in zip(texts, res):
        a = ls.post("/augment", {"texts": [t]}, headers=BEARER).json()
        want = [c["text"] for c in a["results"][0]["candidates"]]
        item = p["result"][0]
        assert item["from_name"] == "out" and item["to_name"] == "src" and item["type"] == "textarea", f"tag names from the config: {item}"
        assert item["value"]["text"] == want, f"{t!r}: the TextArea's texts are the candidates {want}"
        assert p["model_version"] == mv0 and 0 < p["score"] <= 1, f"score {p['score']} and model_version"
    r = ls.post("/predict", {"tasks": [{"id": 1, "data": {"text": "x"}}], "label_config": CONFIG})
    assert r.status_code == 400 and "data.sentence" in r.json()["error"], f"a task without the field: {r.text}"


def annotate(ls, action, task, ann, text):
    body = {"action": action, "project": {"id": 3, "label_config": CONFIG}, "task": {"id": task, "data": {"sentence": f"item number {task}"}},
            "annotation": {"id": ann, "result": [{"from_name": "out", "to_name": "src", "type": "textarea", "value": {"text": [text]}}]}}
    return ls.post("/webhook", body)


def test_annotations_rounds_and_versions(ls):
    mv0 = ls.get("/health").json()["model_version"]
    r = ls.post("/webhook", {"action": "TASKS_CREATED", "project": {"id": 3}})
    assert r.status_code == 200 and r.json()["status"] == "Unknown event", f"other webhook actions are ignored: {r.text}"
    r = annotate(ls, "ANNOTATION_CREATED", 1, 1, "a first draft")
    assert r.status_code == 201 and r.json()["pairs"] == 1, f"ANNOTATION_CREATED adds a pair: {r.text}"
    r = annotate(ls, "ANNOTATION_UPDATED", 1, 1, "the same answer for all of them")
    assert r.status_code == 201, f"ANNOTATION_UPDATED: {r.text}"
    gens = [g for g in ls.history_search("item number 1") if g["origin"].startswith("labelstudio:task/1/")]
    assert len(gens) == 1 and gens[0]["candidates"][0]["final_text"] == "the same answer for all of them", f"the update edited its pair: {gens}"
    for k in range(2, 9):
        annotate(ls, "ANNOTATION_CREATED", k, k, "the same answer for all of them")
    l = ls.learning()
    # 9 = 8 created + 1 updated (a changed target is a new pair for the loop)
    assert l["new_pairs"] == 9 and l["state"] == "idle" and "last_round" not in l, f"no round before --learn-every pairs: {l}"
    annotate(ls, "ANNOTATION_CREATED", 9, 9, "the same answer for all of them")  # the 10th
    last = pyutil.until(lambda: (lambda l: l.get("last_round") if l["state"] == "idle" and "last_round" in l else None)(ls.learning()),
                        300, "the automatic round")
    assert last["status"] == "adopted" and last["version"] == 1, f"--learn-every 10: a round ran by itself and was adopted: {last}"
    mv1 = ls.post("/setup", {"project": "3.1"}).json()["model_version"]
    assert mv1 != mv0 and mv1.endswith("+adapter-v1"), f"model_version names the version: {mv1}"
    p = ls.post("/predict", {"tasks": [{"id": 1, "data": {"sentence": "item number 42"}}], "label_config": CONFIG}).json()
    assert p["results"][0]["model_version"] == mv1, f"predictions carry the new model_version: {p['results'][0]['model_version']}"
    r = ls.post("/train", {})
    assert r.status_code == 201 and r.json()["job"] > last["job"], f"/train queues a round: {r.text}"
    pyutil.until(lambda: (lambda l: l["state"] == "idle" and l["last_round"]["job"] == r.json()["job"])(ls.learning()), 300,
                 "the requested round")
    l2 = ls.learning()["last_round"]
    assert l2["status"] == "waiting" and l2["version"] == 1, f"no new pairs: the round waits and v1 stays: {l2}"
    # The server writes the history of what it served; stopped, the history names adapter v1.
    assert ls.server.stop(limit=60) is not None, "serve stops at SIGTERM within 60 s"
    served = [g for g in ls.history_search("item number 42") if g["input"] == "item number 42"]
    assert served and served[0]["adapter_version"] == 1 and served[0]["adapter"].endswith("v0001"), \
        f"served generations name adapter v1 in the history: {served[:1]}"
