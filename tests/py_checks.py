"""check() and until() for the Python-driven tests: failures are collected in `failures` (the script
exits non-zero when any), each printed on its own line; passes too unless `print_passes` is False."""
import time

failures = []
print_passes = True


def check(cond, what):
    if cond and print_passes:
        print("ok:   " + what, flush=True)
    if not cond:
        print("FAIL: " + what, flush=True)
        failures.append(what)
    return cond


def until(pred, limit, what, poll=0.02):
    """Polls pred() until it is true or `limit` seconds pass (then records a failure)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(poll)
    check(False, "timed out waiting for " + what)
    return None
