#!/usr/bin/env python3
"""Label Studio's ML-backend protocol on `t5studio serve --learn-dir` with the tiny model, without
Label Studio (ctest `serve_labelstudio_protocol`; the real Label Studio runs in `labelstudio_e2e`).

Shapes of GET / /health /setup /predict /webhook /train, tag names read from the config, the error
for an unsupported config, HTTP Basic besides the Bearer key, annotation events as history pairs
(an update edits its pair), a round every --learn-every pairs, model_version naming the adopted
version, and served generations naming it in the history.
Usage: test_ls_protocol.py T5STUDIO MODEL_DIR WORK_DIR
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import time

import requests
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from py_checks import check, failures, until  # noqa: E402

BIN, MODEL, WORK = sys.argv[1:4]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
CONFIG = '<View><Header value="x"/><Text name="src" value="$sentence"/><TextArea name="out" toName="src"/></View>'
KEY = "bearer-key-0123456789"


with open(os.path.join(WORK, "basic"), "w") as f:
    f.write("ls:pw\n")
with open(os.path.join(WORK, "key"), "w") as f:
    f.write(KEY + "\n")
history = os.path.join(WORK, "h.sqlite")
proc = subprocess.Popen([BIN, "serve", "--model", MODEL, "--port", "0", "--threads", "1", "--history", history, "--learn-dir",
                         os.path.join(WORK, "learning"), "--learn-every", "10", "--basic-auth-file", os.path.join(WORK, "basic"),
                         "--api-key-file", os.path.join(WORK, "key")],
                        stdout=subprocess.PIPE, stderr=open(os.path.join(WORK, "serve.err"), "w"), text=True)
base = "http://" + json.loads(proc.stdout.readline())["listening"]
BASIC = {"Authorization": "Basic " + base64.b64encode(b"ls:pw").decode()}
BEARER = {"Authorization": "Bearer " + KEY}
try:
    until(lambda: requests.get(base + "/ready").status_code == 200, 60, "/ready")
    h = requests.get(base + "/health", headers=BASIC).json()
    check(h["status"] == "ok" and h["model_class"] == "T5Studio" and h["learning"]["version"] == 0, "/health keeps its fields, adds model_class and learning")
    mv0 = h["model_version"]
    check(requests.get(base + "/").status_code == 401, "GET / without credentials: 401")
    check(requests.get(base + "/", headers={"Authorization": "Basic " + base64.b64encode(b"ls:no").decode()}).status_code == 401, "wrong password: 401")
    r = requests.get(base + "/", headers=BASIC).json()
    check(r == {"status": "UP", "model_class": "T5Studio", "model_version": mv0}, f"GET / with Basic auth: {r}")
    check(requests.get(base + "/", headers=BEARER).status_code == 200, "the Bearer key works on the ML endpoints too")
    r = requests.post(base + "/setup", json={"project": "3.1700000000", "schema": CONFIG}, headers=BASIC)
    check(r.status_code == 200 and r.json()["model_version"] == mv0, f"/setup answers model_version: {r.text}")
    r = requests.post(base + "/setup", json={"project": "3.1", "schema": '<View><Image name="i" value="$image"/><Choices name="c" toName="i"/></View>'}, headers=BASIC)
    check(r.status_code == 400 and "TextArea" in r.json()["error"] and "Image, Choices" in r.json()["error"], f"unsupported config: {r.text}")

    texts = ["Hello world.", "Tom is a good boy."]
    r = requests.post(base + "/predict", json={"tasks": [{"id": i + 1, "data": {"sentence": t}} for i, t in enumerate(texts)],
                                               "label_config": CONFIG, "project": "3.1", "params": {"context": None}}, headers=BASIC)
    check(r.status_code == 200, f"/predict: {r.status_code} {r.text[:200]}")
    res = r.json()["results"]
    check(len(res) == 2, "one prediction per task")
    for t, p in zip(texts, res):
        a = requests.post(base + "/augment", json={"texts": [t]}, headers=BEARER).json()
        want = [c["text"] for c in a["results"][0]["candidates"]]
        item = p["result"][0]
        check(item["from_name"] == "out" and item["to_name"] == "src" and item["type"] == "textarea", f"tag names from the config: {item}")
        check(item["value"]["text"] == want, f"{t!r}: the TextArea's texts are the candidates {want}")
        check(p["model_version"] == mv0 and 0 < p["score"] <= 1, f"score {p['score']} and model_version")
    r = requests.post(base + "/predict", json={"tasks": [{"id": 1, "data": {"text": "x"}}], "label_config": CONFIG}, headers=BASIC)
    check(r.status_code == 400 and "data.sentence" in r.json()["error"], f"a task without the field: {r.text}")

    r = requests.post(base + "/webhook", json={"action": "TASKS_CREATED", "project": {"id": 3}}, headers=BASIC)
    check(r.status_code == 200 and r.json()["status"] == "Unknown event", "other webhook actions are ignored")

    def annotate(action, task, ann, text):
        body = {"action": action, "project": {"id": 3, "label_config": CONFIG}, "task": {"id": task, "data": {"sentence": f"item number {task}"}},
                "annotation": {"id": ann, "result": [{"from_name": "out", "to_name": "src", "type": "textarea", "value": {"text": [text]}}]}}
        return requests.post(base + "/webhook", json=body, headers=BASIC)

    r = annotate("ANNOTATION_CREATED", 1, 1, "a first draft")
    check(r.status_code == 201 and r.json()["pairs"] == 1, f"ANNOTATION_CREATED adds a pair: {r.text}")
    r = annotate("ANNOTATION_UPDATED", 1, 1, "the same answer for all of them")
    check(r.status_code == 201, "ANNOTATION_UPDATED")
    out = subprocess.run([BIN, "history", "--history", history, "--search", "item number 1", "--json"], capture_output=True, text=True)
    gens = [g for g in json.loads(out.stdout)["generations"] if g["origin"].startswith("labelstudio:task/1/")]
    check(len(gens) == 1 and gens[0]["candidates"][0]["final_text"] == "the same answer for all of them", f"the update edited its pair: {gens}")
    for k in range(2, 9):
        annotate("ANNOTATION_CREATED", k, k, "the same answer for all of them")
    l = requests.get(base + "/health", headers=BASIC).json()["learning"]
    # 9 = 8 created + 1 updated (a changed target is a new pair for the loop)
    check(l["new_pairs"] == 9 and l["state"] == "idle" and "last_round" not in l, f"no round before --learn-every pairs: {l}")
    annotate("ANNOTATION_CREATED", 9, 9, "the same answer for all of them")  # the 10th
    last = until(lambda: (lambda l: l.get("last_round") if l["state"] == "idle" and "last_round" in l else None)(
        requests.get(base + "/health", headers=BASIC).json()["learning"]), 300, "the automatic round")
    print("round:", json.dumps(last))
    check(last and last["status"] == "adopted" and last["version"] == 1, "--learn-every 10: a round ran by itself and was adopted")
    mv1 = requests.post(base + "/setup", json={"project": "3.1"}, headers=BASIC).json()["model_version"]
    check(mv1 != mv0 and mv1.endswith("+adapter-v1"), f"model_version names the version: {mv1}")
    p = requests.post(base + "/predict", json={"tasks": [{"id": 1, "data": {"sentence": "item number 42"}}], "label_config": CONFIG}, headers=BASIC).json()
    check(p["results"][0]["model_version"] == mv1, "predictions carry the new model_version")
    r = requests.post(base + "/train", json={}, headers=BASIC)
    check(r.status_code == 201 and r.json()["job"] > last["job"], f"/train queues a round: {r.text}")
    until(lambda: (lambda l: l["state"] == "idle" and l["last_round"]["job"] == r.json()["job"])(requests.get(base + "/health", headers=BASIC).json()["learning"]),
          300, "the requested round")
    l2 = requests.get(base + "/health", headers=BASIC).json()["learning"]["last_round"]
    check(l2["status"] == "waiting" and l2["version"] == 1, f"no new pairs: the round waits and v1 stays: {l2}")
finally:
    proc.terminate()
    proc.wait(timeout=60)
out = subprocess.run([BIN, "history", "--history", history, "--search", "item number 42", "--json"], capture_output=True, text=True)
served = [g for g in json.loads(out.stdout)["generations"] if g["input"] == "item number 42"]
check(served and served[0]["adapter_version"] == 1 and served[0]["adapter"].endswith("v0001"), f"served generations name adapter v1 in the history: {served[:1]}")
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
