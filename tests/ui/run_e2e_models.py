"""End-to-end test of the Models window in the real app under Xvfb, no network.

A local Hub (tests/hub/hub_server.py) serves a tiny T5 as test-org/tiny-t5, throttled so that a
download takes seconds. The app (HF_ENDPOINT = that server, HF_HUB_CACHE = a temp folder) is driven
by a test script: Ctrl+M opens the Models window, the Download tab's field starts the download,
the progress bar moves, Cancel stops it mid-file, Download again resumes it, the model then appears
in the Local tab (parameters, size, memory fit) and Open loads it through the app's model-open path.
Screenshots of each stage go to OUT/screenshots. Afterwards: the server saw a ranged request for
the interrupted file (resumed, not re-fetched from 0), every snapshot file equals the fixture's,
no .incomplete blob is left. Skipped with the reason (ctest: 77) without xvfb-run.

    python -m pytest -q tests/ui/run_e2e_models.py --t5studio APP --model MODEL_DIR --work OUT_DIR
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import urllib.request

import pytest

import pyutil

REPO = "test-org/tiny-t5"


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# Run 1: download, cancel mid-file, resume, then close the app mid-download (the settings keep it).
SCRIPT1 = f"""frames 3
wait_model 300
key ctrl+m
frames 3
models_tab download
frames 3
screenshot models_catalogue Models
download {REPO}
wait_download_progress 60 40000
frames 2
screenshot models_downloading Models
cancel_download
wait_download cancelled 30
frames 2
screenshot models_cancelled Models
resume_download
wait_download_progress 60 300000
log closing the app mid-download
"""
# Run 2 (same settings; no model given and, in test mode, the last one not reopened: the Models window
# opens by itself): the download is listed as interrupted; Resume finishes it; Local; Open.
SCRIPT2 = f"""frames 3
expect_models_open
frames 3
screenshot models_first_run
models_tab download
wait_download interrupted 5
frames 3
screenshot models_interrupted Models
resume_download
wait_download done 120
frames 2
screenshot models_downloaded Models
expect_local {REPO}
frames 3
screenshot models_local Models
open_local {REPO}
wait_idle 120
expect_loaded {REPO}
frames 3
screenshot models_opened
log done
"""
SHOTS = ["models_catalogue", "models_downloading", "models_cancelled", "models_first_run", "models_interrupted", "models_downloaded", "models_local",
         "models_opened"]


def run_app(app, out, env, n, text):
    """Runs the app under Xvfb with the test script `text`; (exit code, stdout)."""
    script = os.path.join(out, f"models{n}.script")
    with open(script, "w") as f:
        f.write(text)
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1400x900x24", app, "--config-dir", os.path.join(out, "config"),
           "--history", os.path.join(out, "history.sqlite"), "--test-script", script,
           "--screenshot-dir", os.path.join(out, "screenshots"), "--size", "1400x900"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=270)
    with open(os.path.join(out, f"app{n}.log"), "w") as f:
        f.write(r.stdout + r.stderr)
    print(f"-- run {n}")
    print("\n".join(l for l in (r.stdout + r.stderr).splitlines()
                    if l.startswith(("download", "local:", "models window", "loaded", "screenshot:", "test script", "script:"))))
    return r.returncode, r.stdout


@pytest.fixture(scope="module")
def runs(t5studio, model_dir, work_dir):
    """Both app runs against the throttled local Hub: {"codes", "pending" (after run 1), "outputs", "stats"}."""
    if shutil.which("xvfb-run") is None:
        pytest.skip("ui_e2e_models: no X server: xvfb-run is not installed (apt install xvfb xauth)")
    for d in ("screenshots", "config", "home", "cache"):
        os.makedirs(os.path.join(work_dir, d))
    hub, ready = pyutil.start_server([sys.executable, os.path.join(pyutil.TESTS, "hub", "hub_server.py"), "--port", "0",
                                      "--repo", f"{REPO}={model_dir}"], "READY ", limit=60)
    try:
        url = ready.split()[1]
        # ~60 KB/s for the LFS bodies: each ~240 KB file takes ~4 s, long enough to see and cancel. The byte
        # marks of the script (40000, 300000) fall inside the first and the second LFS file.
        req = urllib.request.Request(url + "/_control", data=json.dumps({"slow": [{"match": "/_lfs/", "bytes_per_s": 60000}]}).encode(),
                                     method="POST")
        urllib.request.urlopen(req, timeout=10).read()
        env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env.update(HF_ENDPOINT=url, HF_HUB_CACHE=os.path.join(work_dir, "cache"), HOME=os.path.join(work_dir, "home"),
                   XDG_DATA_HOME=os.path.join(work_dir, "home", "data"), HF_HUB_DISABLE_TELEMETRY="1")
        result = {"codes": [], "outputs": ""}
        for n, text in ((1, SCRIPT1), (2, SCRIPT2)):
            code, stdout = run_app(t5studio, work_dir, env, n, text)
            result["codes"].append(code)
            result["outputs"] += stdout
            if n == 1:
                with open(os.path.join(work_dir, "config", "settings.json")) as f:
                    result["pending"] = json.load(f).get("pending_downloads", [])
        result["stats"] = json.load(urllib.request.urlopen(url + "/_stats", timeout=10))
        return result
    finally:
        hub.stop()


def test_the_app_runs_both_scripts(runs, work_dir):
    for n, code in enumerate(runs["codes"], 1):
        assert code == 0, f"run {n}: the app ran the script to the end (exit {code}; log {work_dir}/app{n}.log)"
    assert runs["pending"] == [REPO + "@main"], f"run 1 closed mid-download: the settings keep it to resume ({runs['pending']})"
    assert "loaded from the Local tab" in runs["outputs"], "Open in the Local tab loaded the downloaded snapshot"


def test_resumed_not_restarted(runs, model_dir, measured):
    """A ranged GET of an LFS body, and no file fetched twice over."""
    stats = runs["stats"]
    ranged = [q for q in stats["requests"] if q["method"] == "GET" and "/_lfs/" in q["path"] and (q.get("range_start") or 0) > 0]
    assert len(ranged) >= 2, f"resumed with Range requests after Cancel and after the restart ({len(ranged)} ranged GETs)"
    for q in ranged:  # the resumed file was fetched from byte 0 once only (the cancelled attempt)
        from_zero = [x for x in stats["requests"] if x["method"] == "GET" and x["path"] == q["path"] and not x.get("range_start")]
        assert len(from_zero) == 1, f"{q['path']}: fetched from byte 0 once, then resumed at byte {q['range_start']}"
    sizes = {f: os.path.getsize(os.path.join(model_dir, f)) for f in os.listdir(model_dir)}
    lfs_total = sum(s for f, s in sizes.items() if f.endswith((".safetensors", ".model")))
    served = sum(v for p, v in stats["served"].items() if "/_lfs/" in p)
    measured(f"LFS bytes served {served} for {lfs_total} bytes of LFS files (the excess: in flight when Cancel stopped the transfer)")


def test_the_snapshot_is_the_fixture(runs, model_dir, work_dir):
    repo_dir = os.path.join(work_dir, "cache", "models--test-org--tiny-t5")
    snaps = os.listdir(os.path.join(repo_dir, "snapshots")) if os.path.isdir(os.path.join(repo_dir, "snapshots")) else []
    assert len(snaps) == 1, f"one snapshot in the cache ({snaps})"
    snap = os.path.join(repo_dir, "snapshots", snaps[0])
    for name in ("config.json", "model.safetensors", "spiece.model"):
        p = os.path.join(snap, name)
        assert os.path.exists(p) and sha256(p) == sha256(os.path.join(model_dir, name)), f"{name} in the snapshot equals the fixture's"
    leftovers = os.listdir(os.path.join(repo_dir, "blobs")) if os.path.isdir(os.path.join(repo_dir, "blobs")) else []
    assert not [n for n in leftovers if n.endswith(".incomplete")], "no .incomplete blob left"


def test_screenshots(runs, work_dir):
    for name in SHOTS:
        p = os.path.join(work_dir, "screenshots", name + ".png")
        assert os.path.exists(p) and os.path.getsize(p) > 1000, f"screenshot {p}"
