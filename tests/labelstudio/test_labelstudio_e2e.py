"""Label Studio end to end (issue 25): a real Label Studio (label-studio from PyPI, SQLite in a temp
folder, user and legacy token from its environment variables) with `t5studio serve` as its ML backend.

Creates a project with a Text + TextArea config through the REST API, imports tasks, connects the
backend (POST /api/ml, HTTP Basic auth), asks Label Studio for predictions and checks they are the
backend's candidates, posts annotations (Label Studio's webhook brings them to /webhook as pairs),
starts training through Label Studio, waits for the learning round, then checks that model_version
changed and that new predictions are those of the adopted adapter (`t5studio generate --adapter`).

usage: test_labelstudio_e2e.py T5STUDIO BASE_MODEL JSTS_VALID WORKDIR
Every wait polls with a deadline; nothing sleeps blindly.
"""
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

T5, BASE, JSTS, WORK = sys.argv[1:5]
VENV_BIN = os.path.dirname(sys.executable)
CONFIG = """<View>
  <Text name="text" value="$text"/>
  <TextArea name="paraphrase" toName="text" rows="2" editable="true" maxSubmissions="1"/>
</View>"""
PREFIX = "paraphrase: "
procs = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None, timeout=120):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode()
            return r.status, (json.loads(text) if text.strip() else None)
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, text


def wait_for(what, check, deadline_s):
    end = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < end:
        try:
            last = check()
            if last:
                return last
        except (OSError, urllib.error.URLError) as e:
            last = e
        time.sleep(0.5)
    raise SystemExit(f"FAIL: timed out after {deadline_s} s waiting for {what} (last: {last})")


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)
    print("ok:", what, flush=True)


def start_serve():
    basic = os.path.join(WORK, "basic-auth")
    with open(basic, "w") as f:
        f.write("labelstudio:s3cret\n")
    log = open(os.path.join(WORK, "serve.log"), "w")
    p = subprocess.Popen([T5, "serve", "--model", BASE, "--port", "0", "--threads", "1", "--history", os.path.join(WORK, "history.sqlite"),
                          "--learn-dir", os.path.join(WORK, "learning"), "--learn-every", "0", "--learn-max-steps", "40",
                          "--task-prefix", PREFIX, "--basic-auth-file", basic], stdout=subprocess.PIPE, stderr=log, text=True)
    procs.append(p)
    listening = json.loads(p.stdout.readline())["listening"]
    url = "http://" + listening
    wait_for("t5studio serve /ready", lambda: http("GET", url + "/ready")[0] == 200, 120)
    return url


def start_label_studio():
    port = free_port()
    data = os.path.join(WORK, "ls-data")
    os.makedirs(data, exist_ok=True)
    token = "t5s-e2e-token-0123456789abcdef0123456789"
    env = dict(os.environ, LABEL_STUDIO_BASE_DATA_DIR=data, LABEL_STUDIO_USERNAME="e2e@example.com", LABEL_STUDIO_PASSWORD="e2e-password-1",
               LABEL_STUDIO_USER_TOKEN=token, LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true", LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK="true",
               COLLECT_ANALYTICS="false", SENTRY_DSN="", FRONTEND_SENTRY_DSN="", SSRF_PROTECTION_ENABLED="false", USE_DEFAULT_BANNED_SUBNETS="false",
               DJANGO_DB="sqlite", LOG_LEVEL="WARNING", PATH=VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    log = open(os.path.join(WORK, "label-studio.log"), "w")
    p = subprocess.Popen([os.path.join(VENV_BIN, "label-studio"), "start", "--no-browser", "--host", "127.0.0.1", "--port", str(port),
                          "--internal-host", "127.0.0.1"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    procs.append(p)
    url = f"http://127.0.0.1:{port}"
    wait_for("Label Studio /health", lambda: p.poll() is None and http("GET", url + "/health", timeout=5)[0] == 200, 600)
    if p.poll() is not None:
        raise SystemExit("FAIL: label-studio exited; see " + log.name)
    return url, {"Authorization": "Token " + token}


def jsts_pairs(n):
    out = []
    with open(JSTS, encoding="utf-8") as f:
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
    check(status == 200, f"Label Studio ran retrieve_tasks_predictions (HTTP {status})")
    preds = {}
    for t in task_ids:
        status, body = http("GET", f"{ls}/api/predictions?task={t}", None, auth)
        items = body if isinstance(body, list) else body.get("results", [])
        preds[t] = items
    return preds


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    serve = start_serve()
    basic = {"Authorization": "Basic " + base64.b64encode(b"labelstudio:s3cret").decode()}
    check(http("POST", serve + "/setup", {"project": "1.0", "schema": CONFIG})[0] == 401, "the ML endpoints ask for Basic auth")
    status, body = http("POST", serve + "/setup", {"project": "1.0", "schema": "<View><Image name='i' value='$img'/></View>"}, basic)
    check(status == 400 and "TextArea" in body["error"], "an unsupported labeling config gets an error naming what is supported")
    http("PUT", serve + "/v1/settings", {"num_beams": 3, "num_return_sequences": 3})
    status, root = http("GET", serve + "/", None, basic)
    check(status == 200 and root["status"] == "UP" and root["model_class"], "GET / answers {status: UP, model_class}")
    mv0 = root["model_version"]

    ls, auth = start_label_studio()
    status, project = http("POST", ls + "/api/projects", {"title": "t5studio e2e", "label_config": CONFIG}, auth)
    check(status == 201, f"project created (HTTP {status}: {project if status != 201 else ''})")
    pid = project["id"]
    pairs = jsts_pairs(40)
    status, imported = http("POST", f"{ls}/api/projects/{pid}/import", [{"text": s} for s, _ in pairs], auth)
    check(status == 201 and imported["task_count"] == len(pairs), "tasks imported")
    status, tasks = http("GET", f"{ls}/api/tasks?project={pid}&page_size=100", None, auth)
    tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
    by_text = {t["data"]["text"]: t["id"] for t in tasks}
    status, ml = http("POST", ls + "/api/ml", {"project": pid, "url": serve, "title": "t5studio", "auth_method": "BASIC_AUTH",
                                               "basic_auth_user": "labelstudio", "basic_auth_pass": "s3cret"}, auth)
    check(status == 201, f"t5studio serve connected as the ML backend (HTTP {status}: {ml if status != 201 else ''})")

    # Label Studio made a webhook to SERVE/webhook for the backend; it sends no credentials of its
    # own, so the backend's Basic auth goes into the webhook's headers (as the README says).
    status, hooks = http("GET", f"{ls}/api/webhooks?project={pid}", None, auth)
    hook = next((h for h in hooks if h["url"].rstrip("/") == serve + "/webhook"), None)
    check(hook is not None, f"Label Studio made the ML backend's webhook (hooks: {hooks})")
    status, _ = http("PATCH", f"{ls}/api/webhooks/{hook['id']}", {"headers": basic}, auth)
    check(status == 200, f"the webhook carries the backend's Basic auth (HTTP {status})")

    probe = [by_text[s] for s, _ in pairs[:3]]
    preds = ls_predictions(ls, auth, pid, probe)
    for t in probe:
        text = next(x["data"]["text"] for x in tasks if x["id"] == t)
        status, direct = http("POST", serve + "/predict", {"tasks": [{"id": t, "data": {"text": text}}], "label_config": CONFIG}, basic)
        mine = direct["results"][0]["result"][0]["value"]["text"]
        got = preds[t][-1]["result"][0]["value"]["text"] if preds[t] else None
        check(got == mine and len(mine) == 3, f"task {t}: Label Studio's prediction is our 3 candidates {mine}")
        check(preds[t][-1]["model_version"] == mv0, f"task {t}: model_version {mv0}")

    # The annotator writes the JSTS paraphrase for each task; Label Studio's webhook brings each one.
    for s, target in pairs:
        result = [{"from_name": "paraphrase", "to_name": "text", "type": "textarea", "value": {"text": [target]}}]
        status, _ = http("POST", f"{ls}/api/tasks/{by_text[s]}/annotations", {"result": result}, auth)
        check(status == 201, f"annotation of task {by_text[s]} posted")
    wait_for("the annotations as pairs in the learner", lambda: http("GET", serve + "/health")[1]["learning"]["new_pairs"] >= len(pairs), 60)
    status, _ = http("POST", f"{ls}/api/ml/{ml['id']}/train", {}, auth)
    check(status in (200, 201), f"Label Studio started training (HTTP {status})")
    health = wait_for("the learning round", lambda: (lambda h: h if h["learning"]["state"] == "idle" and "last_round" in h["learning"] else None)(
        http("GET", serve + "/health")[1]), 900)
    last = health["learning"]["last_round"]
    print("learning round:", json.dumps(last), flush=True)
    check(last["status"] == "adopted" and last["version"] == 1, "the round was adopted as v1 (held-out loss lower)")
    mv1 = health["model_version"]
    check(mv1 != mv0 and mv1.endswith("adapter-v1"), f"model_version changed: {mv0} -> {mv1}")

    fresh = [by_text[s] for s, _ in pairs[3:6]]
    preds = ls_predictions(ls, auth, pid, probe + fresh)
    adapter = os.path.join(WORK, "learning", "v0001")
    for t in probe + fresh:
        text = next(x["data"]["text"] for x in tasks if x["id"] == t)
        latest = [p for p in preds[t] if p["model_version"] == mv1]
        check(latest, f"task {t}: a prediction from {mv1}")
        out = subprocess.run([T5, "generate", "--model", BASE, "--adapter", adapter, "--prefix", PREFIX, "--beams", "3", "--num-return", "3",
                              "--threads", "1", "--json", "--text", text], capture_output=True, text=True, check=True)
        expect = [c["text"] for c in json.loads(out.stdout)["results"][0]["candidates"]]
        check(latest[-1]["result"][0]["value"]["text"] == expect, f"task {t}: the new prediction is the adopted adapter's {expect}")


try:
    main()
    print("PASS", flush=True)
finally:
    for p in reversed(procs):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM) if p.pid == os.getpgid(p.pid) else p.send_signal(signal.SIGTERM)
                p.wait(timeout=60)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                p.kill()
