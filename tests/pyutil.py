"""Helpers shared by the pytest files under tests/ (their fixtures are in tests/conftest.py).

Every wait here is bounded by a deadline and synchronised on an event (a line, a predicate), never a sleep.
"""
import json
import os
import queue
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)


def fresh_dir(path):
    """`path` emptied and created: each run starts from nothing."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def until(pred, limit, what, poll=0.02):
    """pred()'s first true value within `limit` seconds; fails the test naming `what` after that."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError("timed out after %g s waiting for %s" % (limit, what))


class LineProcess:
    """A child process whose stdout lines are read by a thread, so each can be awaited with a deadline."""

    def __init__(self, args, **popen_kw):
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, **popen_kw)
        self._lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)  # EOF

    def next_line(self, limit):
        """The next stdout line (without its newline); None at EOF or when none comes within `limit` s."""
        try:
            line = self._lines.get(timeout=limit)
        except queue.Empty:
            return None
        return None if line is None else line.rstrip("\n")

    def stop(self, limit=10):
        """SIGTERM, then SIGKILL when it has not exited within `limit` s; its exit code (None if killed)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=limit)
                return None
        return self.proc.returncode


def start_server(args, ready_prefix, limit=60, **popen_kw):
    """Starts a loopback server that announces itself with a stdout line starting `ready_prefix`;
    (the LineProcess, that line). Raises naming the line it got when none comes within `limit` s."""
    server = LineProcess(args, **popen_kw)
    line = server.next_line(limit)
    if line is None or not line.startswith(ready_prefix):
        server.stop()
        raise RuntimeError("%s did not start within %g s (first line %r, exit %s)"
                           % (os.path.basename(args[1] if len(args) > 1 else args[0]), limit, line, server.proc.poll()))
    return server, line


def http_status(url, headers=None, timeout=5):
    """The HTTP status of GET url; None when nothing answers."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def start_serve(t5studio, flags, stderr_path, headers=None, limit=120):
    """`t5studio serve --port 0 FLAGS` on loopback, waited for until /ready answers 200 (within `limit` s;
    asked with `headers`); (the LineProcess, its base URL). Its stderr goes to `stderr_path`, quoted when it dies."""
    with open(stderr_path, "w") as err:
        server, first = start_server([t5studio, "serve", "--port", "0", *flags], "{", limit=limit, stderr=err)
    base = "http://" + json.loads(first)["listening"]

    def ready():
        if server.proc.poll() is not None:
            with open(stderr_path) as f:
                raise AssertionError("serve exited with %s: %s" % (server.proc.returncode, f.read()[-2000:]))
        return http_status(base + "/ready", headers) == 200

    try:
        until(ready, limit, "serve's /ready")
    except BaseException:
        server.stop()
        raise
    return server, base
