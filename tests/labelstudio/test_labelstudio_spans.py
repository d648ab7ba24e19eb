"""Our Label Studio exports import into a real Label Studio with their spans where the text says.
`t5studio generate --output FILE --output-format labelstudio` (predictions) and
`t5studio export --format labelstudio` (an annotation for the accepted candidate, predictions for the
rest) are imported through the REST API into a project with a NER config (Text + Labels + Choices);
for every `labels` result Label Studio stored, the stored task's text at [start, end) — Python's
str slicing, code points, the unit Label Studio's Text tag uses — is the span's text, on rows with
CJK, combining characters and emoji before the spans; the label comes back as the `choices` result.
Then Label Studio's own JSON export of the project is read back by `generate --input`.

    run_in_ls_venv.sh test_labelstudio_spans.py --t5studio T5STUDIO --model MODEL --work WORKDIR
"""
import json
import os
import subprocess

import pytest

from ls_server import http

ROWS = [
    {"text": "我在北京住了3年，田中さんと東京へ。", "spans": [[2, 4, "LOC"], [9, 11, "PER"], [14, 16, "LOC"]], "label": "travel"},
    {"text": "Zu\u0308rich ❤️ 🍕 at 7 pm with 👩‍👩‍👧 Ann", "spans": [[0, 7, "LOC"], [11, 12, "FOOD"], [32, 35, "PER"]], "label": "food"},
    {"text": "🇯🇵🇫🇷 e\u0301te\u0301 in Café Noir, \"quoted\"", "spans": [[5, 10, "DATE"], [14, 23, "ORG"]], "label": "travel"},
    {"text": "no entities here", "label": "none"},
]
# export writes every protected span of the history, a detector's (--protect numbers) with its name.
DETECTED = {"number", "placeholder", "url", "email", "regex"}
LABELS = sorted({s[2] for r in ROWS for s in r.get("spans", [])} | DETECTED)
CHOICES = sorted({r["label"] for r in ROWS})
CONFIG = ('<View>\n  <Text name="text" value="$text"/>\n  <Labels name="label" toName="text">' +
          "".join(f'<Label value="{v}"/>' for v in LABELS) + '</Labels>\n  <Choices name="choice" toName="text">' +
          "".join(f'<Choice value="{v}"/>' for v in CHOICES) + "</Choices>\n</View>")


@pytest.fixture(scope="module")
def t5(t5studio):
    """t5(*args): t5studio's stdout, the run asserted to succeed."""
    def run(*args):
        out = subprocess.run([t5studio, *args], capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, f"t5studio {' '.join(args)}: {out.stderr.strip()}"
        return out.stdout
    return run


@pytest.fixture(scope="module")
def our_files(t5, model_dir, work_dir):
    """(generate --output-format labelstudio's file, export --format labelstudio's file) of ROWS."""
    rows = os.path.join(work_dir, "rows.jsonl")
    with open(rows, "w", encoding="utf-8") as f:
        for r in ROWS:
            for a, b, _ in r.get("spans", []):
                assert r["text"][a:b], (r, a, b)
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    history = os.path.join(work_dir, "h.db")
    generated, exported = os.path.join(work_dir, "generated.json"), os.path.join(work_dir, "exported.json")
    t5("generate", "--model", model_dir, "--input", rows, "--protect", "numbers", "--beams", "2", "--num-return", "2", "--max-new-tokens", "12",
       "--threads", "1", "--output", generated, "--output-format", "labelstudio", "--history", history)
    t5("history", "--history", history, "--accept", "1:0")
    t5("export", "--history", history, "--format", "labelstudio", "--include-originals", "--out", exported)
    return generated, exported


def stored_tasks(ls, auth, project):
    status, body = http("GET", f"{ls}/api/tasks?project={project}&page_size=1000", None, auth)
    assert status == 200, f"tasks listed (HTTP {status})"
    tasks = body["tasks"] if isinstance(body, dict) else body
    out = []
    for t in tasks:
        status, full = http("GET", f"{ls}/api/tasks/{t['id']}", None, auth)
        assert status == 200, f"task {t['id']} read (HTTP {status})"
        out.append(full)
    return out


def assert_project_spans(ls, auth, title, path):
    """Imports `path` into a new project; every stored span where the stored text says. (project id, annotations)."""
    with open(path, encoding="utf-8") as f:
        tasks = json.load(f)
    status, project = http("POST", ls + "/api/projects", {"title": title, "label_config": CONFIG}, auth)
    assert status == 201, f"{title}: project created (HTTP {status}: {project if status != 201 else ''})"
    status, imported = http("POST", f"{ls}/api/projects/{project['id']}/import", tasks, auth, timeout=300)
    assert status == 201 and imported["task_count"] == len(tasks), f"{title}: {len(tasks)} tasks imported (HTTP {status}: {imported})"
    spans = choices = annotated = 0
    sources = {r["text"]: r for r in ROWS}
    for task in stored_tasks(ls, auth, project["id"]):
        text = task["data"]["text"]
        row = sources[task["data"]["source"]]
        results = [r for a in task.get("annotations", []) + task.get("predictions", []) for r in a["result"]]
        annotated += len(task.get("annotations", []))
        want = sorted((row["text"][a:b], lab) for a, b, lab in row.get("spans", []))
        got = []
        for r in results:
            v = r["value"]
            if r["type"] == "labels":
                assert text[v["start"]:v["end"]] == v["text"], f"{title}: stored task {task['id']}: text[{v['start']}:{v['end']}] is {v['text']!r}"
                got.append((v["text"], v["labels"][0]))
                spans += 1
            elif r["type"] == "choices":
                assert v["choices"] == [row["label"]], f"{title}: task {task['id']}: choices {v['choices']} are the row's label"
                choices += 1
        own = sorted(g for g in got if g[1] not in DETECTED)
        assert own == want, f"{title}: task {task['id']}: spans {got} are the row's {want}"
    assert spans > 0 and choices == len(tasks), f"{title}: {spans} spans and {choices} labels checked"
    print(f"{title}: {len(tasks)} tasks, {spans} spans at their offsets in Label Studio's stored text, {annotated} annotations", flush=True)
    return project["id"], annotated


def assert_export_reads_back(t5, model_dir, work_dir, ls, auth, project):
    """Label Studio's own JSON export of the project, read by `generate --input`: each row's spans
    (its annotation's, else its prediction's) are where Label Studio's text says."""
    status, exported = http("GET", f"{ls}/api/projects/{project}/export?exportType=JSON&download_all_tasks=true", None, auth, timeout=300)
    assert status == 200 and isinstance(exported, list) and exported, f"Label Studio exported the project (HTTP {status})"
    path = os.path.join(work_dir, "ls-export.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(exported, f, ensure_ascii=False)
    lines = [json.loads(l) for l in t5("generate", "--model", model_dir, "--input", path, "--max-new-tokens", "2", "--threads", "1").splitlines()]
    assert len(lines) == len(exported), f"generate read every task of Label Studio's export ({len(lines)} of {len(exported)})"
    with_spans = 0
    for line in lines:
        for a, b, label in line.get("spans", []):
            assert label in LABELS and line["input"][a:b], f"row {line['index']}: span [{a}, {b}) {label} inside its text"
        with_spans += bool(line.get("spans"))
    annotated = [t for t in exported if t.get("annotations")]
    assert with_spans >= len(annotated) >= 1, f"{with_spans} rows read with their spans ({len(annotated)} annotated tasks)"
    print(f"Label Studio's export read back: {len(lines)} rows, {with_spans} with spans", flush=True)


def test_generated_file_imports_with_its_spans(our_files, label_studio):
    assert_project_spans(*label_studio, "generate --output", our_files[0])


def test_export_imports_and_reads_back(t5, model_dir, work_dir, our_files, label_studio):
    ls, auth = label_studio
    project, annotated = assert_project_spans(ls, auth, "export", our_files[1])
    assert annotated == 1, "export: the accepted candidate is an annotation"
    assert_export_reads_back(t5, model_dir, work_dir, ls, auth, project)
