"""Label Studio end to end: a real Label Studio (label-studio from PyPI, SQLite in a temp
folder, user and legacy token from its environment variables) with `t5studio serve` as its ML backend.

Creates a project with a Text + TextArea config through the REST API, imports tasks, connects the
backend (POST /api/ml, HTTP Basic auth), asks Label Studio for predictions and checks they are the
backend's candidates, posts annotations (Label Studio's webhook brings them to /webhook as pairs),
starts training through Label Studio, waits for the learning round, then checks that model_version
changed and that new predictions are those of the adopted adapter (`t5studio generate --adapter`).

    run_in_ls_venv.sh test_labelstudio_e2e.py --t5studio T5STUDIO --model BASE_MODEL --data JSTS_VALID --work WORKDIR
Every wait polls with a deadline; nothing sleeps blindly. One test: each step builds on the one before.
"""
import base64
import json
import os
import subprocess

import pytest

import pyutil
from ls_server import http, wait_for

CONFIG = """<View>
  <Text name="text" value="$text"/>
  <TextArea name="paraphrase" toName="text" rows="2" editable="true" maxSubmissions="1"/>
</View>"""
PREFIX = "paraphrase: "


@pytest.fixture(scope="module")
def serve(t5studio, model_dir, work_dir, procs):
    """`t5studio serve` learning from Label Studio's annotations, behind HTTP Basic auth: its URL once ready."""
    basic = os.path.join(work_dir, "basic-auth")
    with open(basic, "w") as f:
        f.write("labelstudio:s3cret\n")
    server, url = pyutil.start_serve(
        t5studio, ["--model", model_dir, "--threads", "1", "--history", os.path.join(work_dir, "history.sqlite"),
                   "--learn-dir", os.path.join(work_dir, "learning"), "--learn-every", "0", "--learn-max-steps", "40",
                   "--task-prefix", PREFIX, "--basic-auth-file", basic], os.path.join(work_dir, "serve.log"))
    procs.append(server.proc)
    return url


def jsts_pairs(path, n):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            j = json.loads(line)
            if j["label"] >= 4.0:
                out.append((j["sentence1"], j["sentence2"]))
            if len(out) == n:
                break
    return out


def ls_predictions(ls, auth, project, task_ids):
    status, _ = http("POST", f"{ls}/api/dm/actions?id=retrieve_tasks_predictions&project={project}",
                     {"selectedItems": {"all": False, "included": task_ids}}, auth, timeout=600)
    assert status == 200, f"Label Studio ran retrieve_tasks_predictions (HTTP {status})"
    preds = {}
    for t in task_ids:
        status, body = http("GET", f"{ls}/api/predictions?task={t}", None, auth)
        items = body if isinstance(body, list) else body.get("results", [])
        preds[t] = items
    return preds


def assert_backend_protocol(serve, basic):
    """serve alone, before Label Studio: Basic auth, the config check, GET /; its model_version."""
    assert http("POST", serve + "/setup", {"project": "1.0", "schema": CONFIG})[0] == 401, "the ML endpoints ask for Basic auth"
    status, body = http("POST", serve + "/setup", {"project": "1.0", "schema": "<View><Image name='i' value='$img'/></View>"}, basic)
    assert status == 400 and "TextArea" in body["error"], "an unsupported labeling config gets an error naming what is supported"
    http("PUT", serve + "/v1/settings", {"num_beams": 3, "num_return_sequences": 3}, basic)  # every route asks for the credentials
    status, root = http("GET", serve + "/", None, basic)
    assert status == 200 and root["status"] == "UP" and root["model_class"], "GET / answers {status: UP, model_class}"
    return root["model_version"]


def connect_project(ls, auth, serve, basic, pairs):
    """A project with the pairs' sources as tasks and serve as its ML backend: (project id, tasks, task id by text, ML backend)."""
    status, project = http("POST", ls + "/api/projects", {"title": "t5studio e2e", "label_config": CONFIG}, auth)
    assert status == 201, f"project created (HTTP {status}: {project if status != 201 else ''})"
    pid = project["id"]
    status, imported = http("POST", f"{ls}/api/projects/{pid}/import", [{"text": s} for s, _ in pairs], auth)
    assert status == 201 and imported["task_count"] == len(pairs), "tasks imported"
    status, tasks = http("GET", f"{ls}/api/tasks?project={pid}&page_size=100", None, auth)
    tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
    status, ml = http("POST", ls + "/api/ml", {"project": pid, "url": serve, "title": "t5studio", "auth_method": "BASIC_AUTH",
                                               "basic_auth_user": "labelstudio", "basic_auth_pass": "s3cret"}, auth)
    assert status == 201, f"t5studio serve connected as the ML backend (HTTP {status}: {ml if status != 201 else ''})"
    # Label Studio made a webhook to SERVE/webhook for the backend; it sends no credentials of its
    # own, so the backend's Basic auth goes into the webhook's headers (as docs/serve.md says).
    status, hooks = http("GET", f"{ls}/api/webhooks?project={pid}", None, auth)
    hook = next((h for h in hooks if h["url"].rstrip("/") == serve + "/webhook"), None)
    assert hook is not None, f"Label Studio made the ML backend's webhook (hooks: {hooks})"
    status, _ = http("PATCH", f"{ls}/api/webhooks/{hook['id']}", {"headers": basic}, auth)
    assert status == 200, f"the webhook carries the backend's Basic auth (HTTP {status})"
    return pid, tasks, {t["data"]["text"]: t["id"] for t in tasks}, ml


def test_label_studio_end_to_end(t5studio, model_dir, data_path, work_dir, serve, label_studio):
    pairs = jsts_pairs(data_path, 40)
    basic = {"Authorization": "Basic " + base64.b64encode(b"labelstudio:s3cret").decode()}
    mv0 = assert_backend_protocol(serve, basic)
    ls, auth = label_studio
    pid, tasks, by_text, ml = connect_project(ls, auth, serve, basic, pairs)

    probe = [by_text[s] for s, _ in pairs[:3]]
    preds = ls_predictions(ls, auth, pid, probe)
    for t in probe:
        text = next(x["data"]["text"] for x in tasks if x["id"] == t)
        status, direct = http("POST", serve + "/predict", {"tasks": [{"id": t, "data": {"text": text}}], "label_config": CONFIG}, basic)
        mine = direct["results"][0]["result"][0]["value"]["text"]
        got = preds[t][-1]["result"][0]["value"]["text"] if preds[t] else None
        assert got == mine and len(mine) == 3, f"task {t}: Label Studio's prediction is our 3 candidates {mine}"
        assert preds[t][-1]["model_version"] == mv0, f"task {t}: model_version {mv0}"

    # The annotator writes the JSTS paraphrase for each task; Label Studio's webhook brings each one.
    for s, target in pairs:
        result = [{"from_name": "paraphrase", "to_name": "text", "type": "textarea", "value": {"text": [target]}}]
        status, _ = http("POST", f"{ls}/api/tasks/{by_text[s]}/annotations", {"result": result}, auth)
        assert status == 201, f"annotation of task {by_text[s]} posted"
    wait_for("the annotations as pairs in the learner", lambda: http("GET", serve + "/health", None, basic)[1]["learning"]["new_pairs"] >= len(pairs), 60)
    status, _ = http("POST", f"{ls}/api/ml/{ml['id']}/train", {}, auth)
    assert status in (200, 201), f"Label Studio started training (HTTP {status})"
    health = wait_for("the learning round", lambda: (lambda h: h if h["learning"]["state"] == "idle" and "last_round" in h["learning"] else None)(
        http("GET", serve + "/health", None, basic)[1]), 900)
    last = health["learning"]["last_round"]
    print("learning round:", json.dumps(last), flush=True)
    assert last["status"] == "adopted" and last["version"] == 1, "the round was adopted as v1 (held-out loss lower)"
    mv1 = health["model_version"]
    assert mv1 != mv0 and mv1.endswith("adapter-v1"), f"model_version changed: {mv0} -> {mv1}"

    fresh = [by_text[s] for s, _ in pairs[3:6]]
    preds = ls_predictions(ls, auth, pid, probe + fresh)
    adapter = os.path.join(work_dir, "learning", "v0001")
    for t in probe + fresh:
        text = next(x["data"]["text"] for x in tasks if x["id"] == t)
        latest = [p for p in preds[t] if p["model_version"] == mv1]
        assert latest, f"task {t}: a prediction from {mv1}"
        out = subprocess.run([t5studio, "generate", "--model", model_dir, "--adapter", adapter, "--prefix", PREFIX, "--beams", "3", "--num-return", "3",
                              "--threads", "1", "--json", "--text", text], capture_output=True, text=True, check=True)
        expect = [c["text"] for c in json.loads(out.stdout)["results"][0]["candidates"]]
        assert latest[-1]["result"][0]["value"]["text"] == expect, f"task {t}: the new prediction is the adopted adapter's {expect}"

