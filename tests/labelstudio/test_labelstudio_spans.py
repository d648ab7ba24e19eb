"""Our Label Studio exports import into a real Label Studio with their spans where the text says.
`t5studio generate --output FILE --output-format labelstudio` (predictions) and
`t5studio export --format labelstudio` (an annotation for the accepted candidate, predictions for the
rest) are imported through the REST API into a project with a NER config (Text + Labels + Choices);
for every `labels` result Label Studio stored, the stored task's text at [start, end) — Python's
str slicing, code points, the unit Label Studio's Text tag uses — is the span's text, on rows with
CJK, combining characters and emoji before the spans; the label comes back as the `choices` result.
Then Label Studio's own JSON export of the project is read back by `generate --input`.

usage: test_labelstudio_spans.py T5STUDIO MODEL WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

import ls_server
from ls_server import http

T5, MODEL, WORK = sys.argv[1:4]
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
procs = []
checks = 0


def check(cond, what):
    global checks
    if not cond:
        raise SystemExit("FAIL: " + what)
    checks += 1


def t5(*args):
    out = subprocess.run([T5, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"FAIL: t5studio {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def our_files():
    rows = os.path.join(WORK, "rows.jsonl")
    with open(rows, "w", encoding="utf-8") as f:
        for r in ROWS:
            for a, b, _ in r.get("spans", []):
                assert r["text"][a:b], (r, a, b)
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    history = os.path.join(WORK, "h.db")
    generated, exported = os.path.join(WORK, "generated.json"), os.path.join(WORK, "exported.json")
    t5("generate", "--model", MODEL, "--input", rows, "--protect", "numbers", "--beams", "2", "--num-return", "2", "--max-new-tokens", "12",
       "--threads", "1", "--output", generated, "--output-format", "labelstudio", "--history", history)
    t5("history", "--history", history, "--accept", "1:0")
    t5("export", "--history", history, "--format", "labelstudio", "--include-originals", "--out", exported)
    return generated, exported


def stored_tasks(ls, auth, project):
    status, body = http("GET", f"{ls}/api/tasks?project={project}&page_size=1000", None, auth)
    check(status == 200, f"tasks listed (HTTP {status})")
    tasks = body["tasks"] if isinstance(body, dict) else body
    out = []
    for t in tasks:
        status, full = http("GET", f"{ls}/api/tasks/{t['id']}", None, auth)
        check(status == 200, f"task {t['id']} read (HTTP {status})")
        out.append(full)
    return out


def check_project(ls, auth, title, path):
    tasks = json.load(open(path, encoding="utf-8"))
    status, project = http("POST", ls + "/api/projects", {"title": title, "label_config": CONFIG}, auth)
    check(status == 201, f"{title}: project created (HTTP {status}: {project if status != 201 else ''})")
    status, imported = http("POST", f"{ls}/api/projects/{project['id']}/import", tasks, auth, timeout=300)
    check(status == 201 and imported["task_count"] == len(tasks), f"{title}: {len(tasks)} tasks imported (HTTP {status}: {imported})")
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
                check(text[v["start"]:v["end"]] == v["text"], f"{title}: stored task {task['id']}: text[{v['start']}:{v['end']}] is {v['text']!r}")
                got.append((v["text"], v["labels"][0]))
                spans += 1
            elif r["type"] == "choices":
                check(v["choices"] == [row["label"]], f"{title}: task {task['id']}: choices {v['choices']} are the row's label")
                choices += 1
        own = sorted(g for g in got if g[1] not in DETECTED)
        check(own == want, f"{title}: task {task['id']}: spans {got} are the row's {want}")
    check(spans > 0 and choices == len(tasks), f"{title}: {spans} spans and {choices} labels checked")
    print(f"ok: {title}: {len(tasks)} tasks, {spans} spans at their offsets in Label Studio's stored text, {annotated} annotations", flush=True)
    return project["id"], annotated


def check_reading_back(ls, auth, project):
    """Label Studio's own JSON export of the project, read by `generate --input`: each row's spans
    (its annotation's, else its prediction's) are where Label Studio's text says."""
    status, exported = http("GET", f"{ls}/api/projects/{project}/export?exportType=JSON&download_all_tasks=true", None, auth, timeout=300)
    check(status == 200 and isinstance(exported, list) and exported, f"Label Studio exported the project (HTTP {status})")
    path = os.path.join(WORK, "ls-export.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(exported, f, ensure_ascii=False)
    lines = [json.loads(l) for l in t5("generate", "--model", MODEL, "--input", path, "--max-new-tokens", "2", "--threads", "1").splitlines()]
    check(len(lines) == len(exported), f"generate read every task of Label Studio's export ({len(lines)} of {len(exported)})")
    with_spans = 0
    for line in lines:
        for a, b, label in line.get("spans", []):
            check(label in LABELS and line["input"][a:b], f"row {line['index']}: span [{a}, {b}) {label} inside its text")
        with_spans += bool(line.get("spans"))
    annotated = [t for t in exported if t.get("annotations")]
    check(with_spans >= len(annotated) >= 1, f"{with_spans} rows read with their spans ({len(annotated)} annotated tasks)")
    print(f"ok: Label Studio's export read back: {len(lines)} rows, {with_spans} with spans", flush=True)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    generated, exported = our_files()
    ls, auth = ls_server.start_label_studio(WORK, procs)
    check_project(ls, auth, "generate --output", generated)
    project, annotated = check_project(ls, auth, "export", exported)
    check(annotated == 1, "export: the accepted candidate is an annotation")
    check_reading_back(ls, auth, project)


try:
    main()
    print(f"PASS ({checks} checks)", flush=True)
finally:
    ls_server.stop_all(procs)
