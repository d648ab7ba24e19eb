"""`t5studio serve` answers an empty text as `generate --text ""` and a file row do (ctest
`serve_consistency`): 400 naming the field ("text", "texts[1]") with the words "empty text"; and
with --json its stdout stays JSON lines: {"listening"}, {"ready", "health"}, then at SIGTERM
{"stopped", "drained"}. Loopback only; every wait is for an event with a deadline.

    python -m pytest -q tests/serve/test_serve_consistency.py --t5studio T5STUDIO --model MODEL_DIR --work WORK_DIR
"""
import json
import os

import pytest
import requests

import pyutil


def json_line(server, limit):
    """The server's next stdout line as JSON; None when none comes within `limit` s (or at EOF)."""
    line = server.next_line(limit)
    return json.loads(line) if line and line.strip() else None


@pytest.fixture(scope="module")
def serve_json(t5studio, model_dir, work_dir):
    """`serve --json` and the address from its first line; stopped (killed if need be) at the end."""
    with open(os.path.join(work_dir, "serve.err"), "w") as err:
        server = pyutil.LineProcess([t5studio, "serve", "--model", model_dir, "--port", "0", "--threads", "1", "--json"],
                                    stderr=err)
    try:
        listening = json_line(server, 30)
        assert listening is not None and "listening" in listening, "--json: first line {\"listening\"}: %s" % listening
        yield server, listening["listening"]
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait(10)


def test_empty_texts_and_json_lines(serve_json):
    server, address = serve_json
    ready = json_line(server, 60)
    assert ready is not None and ready.get("ready") == address and "health" in ready, \
        "--json: then {\"ready\", \"health\"} once loaded: %s" % ready
    base = "http://" + address

    def augment(body):
        return requests.post(base + "/augment", json=body, timeout=60)

    good = augment({"text": "hello world", "max_new_tokens": 3})
    assert good.status_code == 200, "a text is served (%s)" % good.status_code
    # These used to be generated from (200) while a file row with "" was refused as a bad row.
    for body, field in (({"text": ""}, "'text'"), ({"text": " \t\n"}, "'text'"), ({"texts": ["hello", ""]}, "'texts[1]'"),
                        ({"texts": ["  ", "hello"]}, "'texts[0]'")):
        r = augment(body)
        assert r.status_code == 400 and (field + ": empty text") in r.text, \
            "%s -> 400 naming %s: %s %s" % (body, field, r.status_code, r.text[:160])
    # Label Studio's /predict: the same rule, naming the task.
    config = '<View><Text name="src" value="$text"/><TextArea name="out" toName="src"/></View>'
    r = requests.post(base + "/predict", json={"tasks": [{"data": {"text": "hello"}}, {"data": {"text": " "}}], "label_config": config},
                      timeout=60)
    assert r.status_code == 400 and "'tasks[1].data.text': empty text" in r.text, \
        "/predict with an empty task -> 400: %s %s" % (r.status_code, r.text[:160])
    server.proc.terminate()
    stopped = json_line(server, 60)
    assert stopped == {"stopped": "SIGTERM", "drained": True}, "--json: {\"stopped\", \"drained\"} at SIGTERM: %s" % stopped
    assert server.proc.wait(60) == 0, "SIGTERM: exit 0"
