"""Learning curve of the learning loop on real data, run once for docs/learning-loop.md.

Base: assets/demo-model (trained on JGLUE JSTS *train* pairs with label >= 4). Pairs it never saw:
JSTS *valid* pairs with label >= 4 (sentence1 -> sentence2; 146): the first HELDOUT (46) are the
test set; the other 100, then *train* pairs with 3.5 <= label < 4 (never trained on), are fed in order, as an annotator's accepted pairs, through `t5studio serve`'s Label
Studio webhook (ANNOTATION_CREATED), and a learning round runs (POST /train) at 25, 50, 100, 200
(and 400) pairs. After each: the test set's loss (teacher-forced, `t5studio score`), chrF of the
first suggestion against the held-out paraphrase, the share of first suggestions that copy the
source, the share that differ from the base model's first suggestion (did the round move the
output at all), the round's wall time and the machine's load average around it.

usage: python3 tests/bench/learning_curve.py BUILD/app/t5studio [--max-pairs 400] [--threads 2] [--max-steps N]
(--max-steps: serve's --learn-max-steps; default: serve's own default). Prints a Markdown table and
writes tests/bench/out/learning_curve.json.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREFIX = "paraphrase: "


def chrf(hyp, ref, n=6, beta=2.0):
    """chrF (Popovic 2015): character n-grams 1..n, spaces removed, macro-averaged, F-beta."""
    hyp, ref = hyp.replace(" ", ""), ref.replace(" ", "")
    precs, recs = [], []
    for k in range(1, n + 1):
        h = Counter(hyp[i:i + k] for i in range(len(hyp) - k + 1))
        r = Counter(ref[i:i + k] for i in range(len(ref) - k + 1))
        if not h or not r:
            continue
        match = sum((h & r).values())
        precs.append(match / sum(h.values()))
        recs.append(match / sum(r.values()))
    if not precs:
        return 0.0
    p, r = sum(precs) / len(precs), sum(recs) / len(recs)
    return 0.0 if p + r == 0 else 100 * (1 + beta**2) * p * r / (beta**2 * p + r)


AUTH = {"Authorization": "Bearer learning-curve-bench-key"}  # serve's /webhook and /train need credentials


def post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json", **AUTH}, method="POST")
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read() or b"null")


def get(url):
    with urllib.request.urlopen(urllib.request.Request(url, headers=AUTH), timeout=60) as r:
        return json.loads(r.read())


def pairs_from(path, low, high=6.0):
    with open(path, encoding="utf-8") as f:
        return [(j["sentence1"], j["sentence2"]) for j in map(json.loads, f) if low <= j["label"] < high]


def evaluate(t5, base, adapter, test, threads, work):
    extra = ["--adapter", adapter] if adapter else []
    losses = []
    for s, t in test:
        out = subprocess.run([t5, "score", "--model", base, "--source", PREFIX + s, "--target", t, "--threads", str(threads), "--json", *extra],
                             capture_output=True, text=True, check=True)
        losses.append(json.loads(out.stdout)["loss"])
    inp = os.path.join(work, "test-sources.txt")
    with open(inp, "w", encoding="utf-8") as f:
        f.writelines(s + "\n" for s, _ in test)
    out = subprocess.run([t5, "generate", "--model", base, "--prefix", PREFIX, "--input", inp, "--threads", str(threads), *extra],
                         capture_output=True, text=True, check=True)
    firsts = []
    for line in out.stdout.splitlines():
        j = json.loads(line)
        for r in j.get("results", [j]):
            firsts.append(r["candidates"][0]["text"] if r.get("candidates") else "")
    assert len(firsts) == len(test), (len(firsts), len(test))
    norm = lambda x: "".join(x.split())
    return {"firsts": firsts, "heldout_loss": sum(losses) / len(losses),
            "chrf": sum(chrf(h, t) for h, (_, t) in zip(firsts, test)) / len(test),
            "copy_share": sum(norm(h) == norm(s) for h, (s, _) in zip(firsts, test)) / len(test),
            "example": {"source": test[0][0], "first": firsts[0], "reference": test[0][1]}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("t5studio")
    ap.add_argument("--max-pairs", type=int, default=400)
    ap.add_argument("--heldout", type=int, default=46)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-steps", type=int, default=None)
    a = ap.parse_args()
    base = os.path.join(ROOT, "assets", "demo-model")
    jsts = os.path.join(ROOT, "..", "shared", "data", "jglue-jsts")
    pairs = pairs_from(os.path.join(jsts, "valid.jsonl"), 4.0)  # 146 pairs
    # The demo model saw train pairs with label >= 4 only: train pairs with 3.5 <= label < 4 are new to it too.
    test, feed = pairs[:a.heldout], pairs[a.heldout:] + pairs_from(os.path.join(jsts, "train.jsonl"), 3.5, 4.0)
    work = os.path.join(ROOT, "tests", "bench", "out", "learning_curve")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    steps = ["--learn-max-steps", str(a.max_steps)] if a.max_steps else []
    with open(os.path.join(work, "key"), "w") as f:
        f.write(AUTH["Authorization"].split()[1] + "\n")
    serve = subprocess.Popen([a.t5studio, "serve", "--model", base, "--port", "0", "--threads", str(a.threads),
                              "--history", os.path.join(work, "history.sqlite"), "--learn-dir", os.path.join(work, "learning"),
                              "--learn-every", "0", *steps, "--task-prefix", PREFIX, "--api-key-file", os.path.join(work, "key")],
                             stdout=subprocess.PIPE, stderr=open(os.path.join(work, "serve.log"), "w"), text=True)
    url = "http://" + json.loads(serve.stdout.readline())["listening"]
    config = '<View><Text name="text" value="$text"/><TextArea name="paraphrase" toName="text"/></View>'
    rows = []
    try:
        end = time.monotonic() + 120
        while get(url + "/health")["status"] != "ok":
            if time.monotonic() > end:
                raise SystemExit("serve did not get ready")
            time.sleep(0.2)
        row = {"pairs": 0, "version": 0, "round_s": None, **evaluate(a.t5studio, base, "", test, a.threads, work)}
        base_firsts = row["firsts"]
        row["changed_share"] = 0.0
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
        fed = 0
        for mark in [m for m in (25, 50, 100, 200, 400) if m <= min(a.max_pairs, len(feed))]:
            for i in range(fed, mark):
                s, t = feed[i]
                post(url + "/webhook", {"action": "ANNOTATION_CREATED", "project": {"id": 1, "label_config": config},
                                        "task": {"id": i, "data": {"text": s}},
                                        "annotation": {"id": i, "result": [{"from_name": "paraphrase", "to_name": "text", "type": "textarea",
                                                                            "value": {"text": [t]}}]}})
            fed = mark
            load_before = os.getloadavg()[0]
            job = post(url + "/train", {})["job"]
            end = time.monotonic() + 1800
            while True:
                h = get(url + "/health")["learning"]
                if h["state"] == "idle" and h.get("last_round", {}).get("job") == job:
                    break
                if time.monotonic() > end:
                    raise SystemExit("round did not finish")
                time.sleep(0.5)
            last = h["last_round"]
            version = h["version"]
            adapter = os.path.join(work, "learning", "v%04d" % version) if version else ""
            row = {"pairs": mark, "version": version, "round": last, "round_s": last.get("elapsed_s"),
                   "load_avg_1min": [load_before, os.getloadavg()[0]], **evaluate(a.t5studio, base, adapter, test, a.threads, work)}
            row["changed_share"] = sum(f != b for f, b in zip(row["firsts"], base_firsts)) / len(test)
            rows.append(row)
            print(json.dumps(row, ensure_ascii=False), flush=True)
    finally:
        serve.terminate()
        serve.wait(timeout=60)
    with open(os.path.join(ROOT, "tests", "bench", "out", "learning_curve.json"), "w") as f:
        json.dump({"heldout": len(test), "threads": a.threads, "rows": rows}, f, ensure_ascii=False, indent=1)
    print("\n| pairs fed | version | round | pairs new / replayed / held out | test-set loss | chrF first vs reference "
          "| copies of the source | first suggestion changed | round wall time (load before/after) |")
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        rd = r.get("round")
        status = "%s, %d steps" % (rd["status"], rd.get("steps", 0)) if rd else "-"
        split = "%d / %d / %d" % tuple(rd.get(k, 0) for k in ("pairs_new", "pairs_replay", "pairs_heldout")) if rd else "-"
        t = "%.1f s (%.1f/%.1f)" % (r["round_s"], *r["load_avg_1min"]) if r.get("round_s") else "-"
        print(f"| {r['pairs']} | {'v%d' % r['version'] if r['version'] else 'base'} | {status} | {split} | {r['heldout_loss']:.3f} "
              f"| {r['chrf']:.1f} | {100 * r['copy_share']:.0f} % | {100 * r['changed_share']:.0f} % | {t} |")


if __name__ == "__main__":
    sys.exit(main())
