#!/usr/bin/env python3
"""`t5studio serve` answers an empty text as `generate --text ""` and a file row do (ctest
`serve_consistency`): 400 naming the field ("text", "texts[1]") with the words "empty text"; and
with --json its stdout stays JSON lines: {"listening"}, {"ready", "health"}, then at SIGTERM
{"stopped", "drained"}. Loopback only; every wait polls for an event with a deadline.
Usage: test_serve_consistency.py T5STUDIO MODEL_DIR WORK_DIR
"""
import json
import os
import queue
import shutil
import subprocess
import sys
import threading

import requests
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from py_checks import check, failures  # noqa: E402

BIN, MODEL, WORK = sys.argv[1:4]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)


def read_json_line(lines, limit):
    """The next stdout line of the server as JSON, or None when none comes within `limit` seconds."""
    try:
        line = lines.get(timeout=limit)
    except queue.Empty:
        return None
    return json.loads(line) if line and line.strip() else None


proc = subprocess.Popen([BIN, "serve", "--model", MODEL, "--port", "0", "--threads", "1", "--json"],
                        stdout=subprocess.PIPE, stderr=open(os.path.join(WORK, "serve.err"), "w"), text=True)
lines = queue.Queue()
threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout] + [lines.put(None)], daemon=True).start()
try:
    listening = read_json_line(lines, 30)
    check(listening is not None and "listening" in listening, "--json: first line {\"listening\"}: %s" % listening)
    if not listening:
        raise SystemExit(1)
    ready = read_json_line(lines, 60)
    check(ready is not None and ready.get("ready") == listening["listening"] and "health" in ready,
          "--json: then {\"ready\", \"health\"} once loaded: %s" % ready)
    base = "http://" + listening["listening"]

    def augment(body):
        return requests.post(base + "/augment", json=body, timeout=60)

    good = augment({"text": "hello world", "max_new_tokens": 3})
    check(good.status_code == 200, "a text is served (%s)" % good.status_code)
    # These used to be generated from (200) while a file row with "" was refused as a bad row.
    for body, field in (({"text": ""}, "'text'"), ({"text": " \t\n"}, "'text'"), ({"texts": ["hello", ""]}, "'texts[1]'"),
                        ({"texts": ["  ", "hello"]}, "'texts[0]'")):
        r = augment(body)
        check(r.status_code == 400 and (field + ": empty text") in r.text, "%s -> 400 naming %s: %s %s" % (body, field, r.status_code, r.text[:160]))
    # Label Studio's /predict: the same rule, naming the task.
    config = '<View><Text name="src" value="$text"/><TextArea name="out" toName="src"/></View>'
    r = requests.post(base + "/predict", json={"tasks": [{"data": {"text": "hello"}}, {"data": {"text": " "}}], "label_config": config},
                      timeout=60)
    check(r.status_code == 400 and "'tasks[1].data.text': empty text" in r.text, "/predict with an empty task -> 400: %s %s" % (r.status_code, r.text[:160]))
    proc.terminate()
    stopped = read_json_line(lines, 60)
    check(stopped == {"stopped": "SIGTERM", "drained": True}, "--json: {\"stopped\", \"drained\"} at SIGTERM: %s" % stopped)
    check(proc.wait(60) == 0, "SIGTERM: exit 0")
finally:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)

print("serve consistency: %d failures" % len(failures))
sys.exit(1 if failures else 0)
