#!/usr/bin/env python3
"""End-to-end test of the Models window in the real app under Xvfb, no network.

A local Hub (tests/hub/hub_server.py) serves a tiny T5 as test-org/tiny-t5, throttled so that a
download takes seconds. The app (HF_ENDPOINT = that server, HF_HUB_CACHE = a temp folder) is driven
by a test script: Ctrl+M opens the Models window, the Download tab's field starts the download,
the progress bar moves, Cancel stops it mid-file, Download again resumes it, the model then appears
in the Local tab (parameters, size, memory fit) and Open loads it through the app's model-open path.
Screenshots of each stage go to OUT/screenshots. Afterwards: the server saw a ranged request for
the interrupted file (resumed, not re-fetched from 0), every snapshot file equals the fixture's,
no .incomplete blob is left. Skipped (exit 0 + T5S_SKIP line, run via run_skippable.sh) without xvfb-run.

    run_e2e_models.py APP HUB_TEST_DIR MODEL_DIR OUT_DIR
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import urllib.request
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from py_checks import check, failures  # noqa: E402

APP, HUB_DIR, MODEL, OUT = (os.path.abspath(a) for a in sys.argv[1:5])
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


def main():
    if shutil.which("xvfb-run") is None:
        print("T5S_SKIP: ui_e2e_models: no X server: xvfb-run is not installed (apt install xvfb xauth)")
        return 0
    shutil.rmtree(OUT, ignore_errors=True)
    for d in ("screenshots", "config", "home", "cache"):
        os.makedirs(os.path.join(OUT, d))
    server = subprocess.Popen([sys.executable, os.path.join(HUB_DIR, "hub_server.py"), "--port", "0", "--repo", f"{REPO}={MODEL}"],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        if not line.startswith("READY "):
            print("hub server did not start: %r" % line)
            return 1
        url = line.split()[1]
        # ~60 KB/s for the LFS bodies: each ~240 KB file takes ~4 s, long enough to see and cancel. The byte
        # marks of the script (40000, 300000) fall inside the first and the second LFS file.
        req = urllib.request.Request(url + "/_control", data=json.dumps({"slow": [{"match": "/_lfs/", "bytes_per_s": 60000}]}).encode(),
                                     method="POST")
        urllib.request.urlopen(req, timeout=10).read()
        env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env.update(HF_ENDPOINT=url, HF_HUB_CACHE=os.path.join(OUT, "cache"), HOME=os.path.join(OUT, "home"),
                   XDG_DATA_HOME=os.path.join(OUT, "home", "data"), HF_HUB_DISABLE_TELEMETRY="1")
        outputs = ""
        for n, text in ((1, SCRIPT1), (2, SCRIPT2)):
            script = os.path.join(OUT, f"models{n}.script")
            with open(script, "w") as f:
                f.write(text)
            cmd = ["xvfb-run", "-a", "-s", "-screen 0 1400x900x24", APP, "--config-dir", os.path.join(OUT, "config"),
                   "--history", os.path.join(OUT, "history.sqlite"), "--test-script", script,
                   "--screenshot-dir", os.path.join(OUT, "screenshots"), "--size", "1400x900"]
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=270)
            with open(os.path.join(OUT, f"app{n}.log"), "w") as f:
                f.write(r.stdout + r.stderr)
            outputs += r.stdout
            print(f"-- run {n}")
            print("\n".join(l for l in (r.stdout + r.stderr).splitlines()
                            if l.startswith(("download", "local:", "models window", "loaded", "screenshot:", "test script", "script:"))))
            check(r.returncode == 0, f"run {n}: the app ran the script to the end (exit {r.returncode}; log {OUT}/app{n}.log)")
            if n == 1:
                with open(os.path.join(OUT, "config", "settings.json")) as f:
                    pending = json.load(f).get("pending_downloads", [])
                check(pending == [REPO + "@main"], f"run 1 closed mid-download: the settings keep it to resume ({pending})")
        stats = json.load(urllib.request.urlopen(url + "/_stats", timeout=10))
    finally:
        server.terminate()
        server.wait(timeout=10)
    check("loaded from the Local tab" in outputs, "Open in the Local tab loaded the downloaded snapshot")
    # Resumed, not restarted: a ranged GET of an LFS body, and no file fetched twice over.
    ranged = [q for q in stats["requests"] if q["method"] == "GET" and "/_lfs/" in q["path"] and (q.get("range_start") or 0) > 0]
    check(len(ranged) >= 2, f"resumed with Range requests after Cancel and after the restart ({len(ranged)} ranged GETs)")
    for q in ranged:  # the resumed file was fetched from byte 0 once only (the cancelled attempt)
        from_zero = [x for x in stats["requests"] if x["method"] == "GET" and x["path"] == q["path"] and not x.get("range_start")]
        check(len(from_zero) == 1, f"{q['path']}: fetched from byte 0 once, then resumed at byte {q['range_start']}")
    sizes = {f: os.path.getsize(os.path.join(MODEL, f)) for f in os.listdir(MODEL)}
    lfs_total = sum(s for f, s in sizes.items() if f.endswith((".safetensors", ".model")))
    served = sum(v for p, v in stats["served"].items() if "/_lfs/" in p)
    print(f"LFS bytes served {served} for {lfs_total} bytes of LFS files (the excess: in flight when Cancel stopped the transfer)")
    repo_dir = os.path.join(OUT, "cache", "models--test-org--tiny-t5")
    snaps = os.listdir(os.path.join(repo_dir, "snapshots")) if os.path.isdir(os.path.join(repo_dir, "snapshots")) else []
    check(len(snaps) == 1, f"one snapshot in the cache ({snaps})")
    if snaps:
        snap = os.path.join(repo_dir, "snapshots", snaps[0])
        for name in ("config.json", "model.safetensors", "spiece.model"):
            p = os.path.join(snap, name)
            check(os.path.exists(p) and sha256(p) == sha256(os.path.join(MODEL, name)), f"{name} in the snapshot equals the fixture's")
    leftovers = [n for n in os.listdir(os.path.join(repo_dir, "blobs"))] if os.path.isdir(os.path.join(repo_dir, "blobs")) else []
    check(not [n for n in leftovers if n.endswith(".incomplete")], "no .incomplete blob left")
    for name in SHOTS:
        p = os.path.join(OUT, "screenshots", name + ".png")
        check(os.path.exists(p) and os.path.getsize(p) > 1000, f"screenshot {p}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
