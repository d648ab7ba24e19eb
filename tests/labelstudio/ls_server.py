"""A real Label Studio for the tests (label-studio from PyPI in .venv-ls, made by setup_venv.sh):
SQLite in a temp folder, user and legacy API token from its environment variables, loopback only.
Shared by test_labelstudio_e2e.py and test_labelstudio_spans.py. Every wait polls with a deadline."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

VENV_BIN = os.path.dirname(sys.executable)
TOKEN = "t5s-e2e-token-0123456789abcdef0123456789"


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
    raise AssertionError(f"timed out after {deadline_s} s waiting for {what} (last: {last})")


def start_label_studio(work, procs):
    """Starts Label Studio on a free loopback port; returns (url, auth headers)."""
    port = free_port()
    data = os.path.join(work, "ls-data")
    os.makedirs(data, exist_ok=True)
    env = dict(os.environ, LABEL_STUDIO_BASE_DATA_DIR=data, LABEL_STUDIO_USERNAME="e2e@example.com", LABEL_STUDIO_PASSWORD="e2e-password-1",
               LABEL_STUDIO_USER_TOKEN=TOKEN, LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true", LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK="true",
               COLLECT_ANALYTICS="false", SENTRY_DSN="", FRONTEND_SENTRY_DSN="", SSRF_PROTECTION_ENABLED="false", USE_DEFAULT_BANNED_SUBNETS="false",
               DJANGO_DB="sqlite", LOG_LEVEL="WARNING", PATH=VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    log = open(os.path.join(work, "label-studio.log"), "w")
    p = subprocess.Popen([os.path.join(VENV_BIN, "label-studio"), "start", "--no-browser", "--host", "127.0.0.1", "--port", str(port),
                          "--internal-host", "127.0.0.1"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    procs.append(p)
    url = f"http://127.0.0.1:{port}"
    wait_for("Label Studio /health", lambda: p.poll() is None and http("GET", url + "/health", timeout=5)[0] == 200, 600)
    if p.poll() is not None:
        raise RuntimeError("label-studio exited; see " + log.name)
    return url, {"Authorization": "Token " + TOKEN}


def stop_all(procs):
    for p in reversed(procs):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM) if p.pid == os.getpgid(p.pid) else p.send_signal(signal.SIGTERM)
                p.wait(timeout=60)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                p.kill()
