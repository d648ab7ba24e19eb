"""Label Studio with a recipe: a real Label Studio (ls_server.py) with `t5studio serve --recipe
bt=FILE --labelstudio-recipe bt` as its ML backend. Label Studio's predictions are the recipe's
candidates, exactly what `t5studio generate --recipe` gives for the task's text (greedy), and the
prediction it stores keeps each candidate's route (value.routes, one per text).

    run_in_ls_venv.sh test_labelstudio_recipes.py --t5studio T5STUDIO --model DEMO_MODEL --data RECIPE_FILE --work WORKDIR
Every wait polls with a deadline; nothing sleeps blindly.
"""
import json
import os
import subprocess

import pytest

import pyutil
from ls_server import http

CONFIG = """<View>
  <Text name="text" value="$text"/>
  <TextArea name="paraphrase" toName="text" rows="2" editable="true"/>
</View>"""
TEXTS = ["I like green tea.", "The weather is nice today."]
PREFIX = "paraphrase: "  # the base prefix of /predict (each step of the recipe sets its own)


@pytest.fixture(scope="module")
def serve(t5studio, model_dir, data_path, work_dir, procs):
    """`t5studio serve` with the recipe as Label Studio's, behind HTTP Basic auth: its URL once ready."""
    basic = os.path.join(work_dir, "basic-auth")
    with open(basic, "w") as f:
        f.write("labelstudio:s3cret\n")
    server, url = pyutil.start_serve(t5studio, ["--model", model_dir, "--threads", "1", "--task-prefix", PREFIX, "--recipe", "bt=" + data_path,
                                                "--labelstudio-recipe", "bt", "--basic-auth-file", basic], os.path.join(work_dir, "serve.log"))
    procs.append(server.proc)
    return url


def cli_candidates(t5studio, model_dir, recipe, text):
    out = subprocess.run([t5studio, "generate", "--model", model_dir, "--recipe", recipe, "--prefix", PREFIX, "--threads", "1", "--json",
                          "--text", text], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, "generate --recipe: " + out.stderr.strip()[-300:]
    return json.loads(out.stdout)["results"][0]["candidates"]


def test_predictions_are_the_recipes(t5studio, model_dir, data_path, serve, label_studio):
    ls, auth = label_studio
    status, project = http("POST", ls + "/api/projects", {"title": "t5studio recipes", "label_config": CONFIG}, auth)
    assert status == 201, f"project created (HTTP {status})"
    pid = project["id"]
    status, _ = http("POST", f"{ls}/api/projects/{pid}/import", [{"text": t} for t in TEXTS], auth)
    assert status == 201, "tasks imported"
    status, tasks = http("GET", f"{ls}/api/tasks?project={pid}&page_size=100", None, auth)
    tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
    status, ml = http("POST", ls + "/api/ml", {"project": pid, "url": serve, "title": "t5studio", "auth_method": "BASIC_AUTH",
                                               "basic_auth_user": "labelstudio", "basic_auth_pass": "s3cret"}, auth)
    assert status == 201, f"t5studio serve connected as the ML backend (HTTP {status})"
    ids = [t["id"] for t in tasks]
    status, _ = http("POST", f"{ls}/api/dm/actions?id=retrieve_tasks_predictions&project={pid}",
                     {"selectedItems": {"all": False, "included": ids}}, auth, timeout=600)
    assert status == 200, f"Label Studio ran retrieve_tasks_predictions (HTTP {status})"
    for task in tasks:
        status, body = http("GET", f"{ls}/api/predictions?task={task['id']}", None, auth)
        preds = body if isinstance(body, list) else body.get("results", [])
        assert preds and preds[-1]["result"], f"task {task['id']}: Label Studio stored a prediction"
        value = preds[-1]["result"][0]["value"]
        want = cli_candidates(t5studio, model_dir, data_path, task["data"]["text"])
        assert value["text"] == [c["text"] for c in want], f"task {task['id']}: the prediction is generate --recipe's candidates {value['text']}"
        assert value.get("routes") == [c["route"] for c in want], f"task {task['id']}: Label Studio keeps each candidate's route {value.get('routes')}"
