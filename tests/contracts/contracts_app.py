"""The desktop app's settings.json: the app opened headless (Xvfb) in test mode with a one-line
script writes it to --config-dir at exit, as a user's run does. Pinned by shape; the imgui layout
string and the paths in it are values, so only their type is kept."""
import json
import os
import shutil
import subprocess


def run(cli, d):
    xvfb = shutil.which("xvfb-run")
    if not xvfb:
        cli.g.skip("app/", "xvfb-run is not installed: the app cannot open a window here")
        return
    root = cli.path("app")
    shutil.rmtree(root, ignore_errors=True)
    for sub in ("config", "shots"):
        os.makedirs(os.path.join(root, sub))
    script = os.path.join(root, "quit.script")
    with open(script, "w") as f:
        f.write("frames 3\n")
    args = [xvfb, "-a", cli.binary, "--config-dir", os.path.join(root, "config"), "--history", os.path.join(root, "h.db"),
            "--model", d["model"], "--test-script", script, "--screenshot-dir", os.path.join(root, "shots")]
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=90, env=cli.env)
    except subprocess.TimeoutExpired:
        cli.g.fail("app/settings.json", "the app in test mode ran past 90 s")
        return
    path = os.path.join(root, "config", "settings.json")
    if r.returncode != 0 or not os.path.exists(path):
        cli.g.fail("app/settings.json", "the app exited %d without writing settings.json: %s" % (r.returncode, r.stderr[-400:]))
        return
    cli.shape("app/settings.json", json.load(open(path, encoding="utf-8")))
