"""Label Studio with a recipe: a real Label Studio (ls_server.py) with `t5studio serve --recipe
bt=FILE --labelstudio-recipe bt` as its ML backend. Label Studio's predictions are the recipe's
candidates, exactly what `t5studio generate --recipe` gives for the task's text (greedy), and the
prediction it stores keeps each candidate's route (value.routes, one per text).

usage: test_labelstudio_recipes.py T5STUDIO DEMO_MODEL RECIPE_FILE WORKDIR
Every wait polls with a deadline; nothing sleeps blindly.
"""
import base64
import json
import os
import shutil
import subprocess
import sys

import ls_server
from ls_server import http, wait_for

T5, DEMO, RECIPE, WORK = sys.argv[1:5]
CONFIG = """<View>
  <Text name="text" value="$text"/>
  <TextArea name="paraphrase" toName="text" rows="2" editable="true"/>
</View>"""
TEXTS = ["I like green tea.", "The weather is nice today."]
PREFIX = "paraphrase: "  # the base prefix of /predict (each step of the recipe sets its own)
procs = []


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)
    print("ok:", what, flush=True)


def start_serve():
    basic = os.path.join(WORK, "basic-auth")
    with open(basic, "w") as f:
        f.write("labelstudio:s3cret\n")
    p = subprocess.Popen([T5, "serve", "--model", DEMO, "--port", "0", "--threads", "1", "--task-prefix", PREFIX, "--recipe", "bt=" + RECIPE,
                          "--labelstudio-recipe", "bt", "--basic-auth-file", basic],
                         stdout=subprocess.PIPE, stderr=open(os.path.join(WORK, "serve.log"), "w"), text=True)
    procs.append(p)
    url = "http://" + json.loads(p.stdout.readline())["listening"]
    wait_for("t5studio serve /ready", lambda: http("GET", url + "/ready")[0] == 200, 120)
    return url


def cli_candidates(text):
    out = subprocess.run([T5, "generate", "--model", DEMO, "--recipe", RECIPE, "--prefix", PREFIX, "--threads", "1", "--json", "--text", text],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["results"][0]["candidates"]


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    serve = start_serve()
    ls, auth = ls_server.start_label_studio(WORK, procs)
    status, project = http("POST", ls + "/api/projects", {"title": "t5studio recipes", "label_config": CONFIG}, auth)
    check(status == 201, f"project created (HTTP {status})")
    pid = project["id"]
    status, _ = http("POST", f"{ls}/api/projects/{pid}/import", [{"text": t} for t in TEXTS], auth)
    check(status == 201, "tasks imported")
    status, tasks = http("GET", f"{ls}/api/tasks?project={pid}&page_size=100", None, auth)
    tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
    status, ml = http("POST", ls + "/api/ml", {"project": pid, "url": serve, "title": "t5studio", "auth_method": "BASIC_AUTH",
                                               "basic_auth_user": "labelstudio", "basic_auth_pass": "s3cret"}, auth)
    check(status == 201, f"t5studio serve connected as the ML backend (HTTP {status})")
    ids = [t["id"] for t in tasks]
    status, _ = http("POST", f"{ls}/api/dm/actions?id=retrieve_tasks_predictions&project={pid}",
                     {"selectedItems": {"all": False, "included": ids}}, auth, timeout=600)
    check(status == 200, f"Label Studio ran retrieve_tasks_predictions (HTTP {status})")
    for task in tasks:
        status, body = http("GET", f"{ls}/api/predictions?task={task['id']}", None, auth)
        preds = body if isinstance(body, list) else body.get("results", [])
        check(preds and preds[-1]["result"], f"task {task['id']}: Label Studio stored a prediction")
        value = preds[-1]["result"][0]["value"]
        want = cli_candidates(task["data"]["text"])
        check(value["text"] == [c["text"] for c in want], f"task {task['id']}: the prediction is generate --recipe's candidates {value['text']}")
        check(value.get("routes") == [c["route"] for c in want], f"task {task['id']}: Label Studio keeps each candidate's route {value.get('routes')}")


try:
    main()
    print("PASS", flush=True)
finally:
    ls_server.stop_all(procs)
