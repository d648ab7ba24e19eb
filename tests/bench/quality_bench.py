#!/usr/bin/env python3
"""chrF parity with sacrebleu on whole data sets, and the near-duplicate finder on a real corpus.

    .venv/bin/python tests/bench/quality_bench.py [--brute-n 3000]

Builds build/tests/t5s_quality_bench if needed, writes tests/bench/out/quality/{pairs.jsonl,
texts.txt} from ../shared/data (every JGLUE JSTS valid pair in both directions, every Tatoeba
cmn-eng pair Chinese-vs-English and each row against the next row in both languages), times
sacrebleu's sentence_score on them, runs the C++ driver and prints one JSON object.
"""
import argparse
import json
import pathlib
import subprocess
import time

from sacrebleu.metrics import CHRF

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
OUT = ROOT / "tests" / "bench" / "out" / "quality"


def make_pairs():
    pairs = []
    with open(SHARED / "jglue-jsts" / "valid.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            pairs += [(row["sentence1"], row["sentence2"]), (row["sentence2"], row["sentence1"])]
    rows = [line.split("\t")[:2] for line in
            (SHARED / "tatoeba-cmn-eng" / "cmn-eng.tsv").read_text(encoding="utf-8").splitlines()]
    for (eng, cmn), (next_eng, next_cmn) in zip(rows, rows[1:]):
        pairs += [(cmn, eng), (eng, next_eng), (cmn, next_cmn)]
    return pairs, [text for row in rows for text in row]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--brute-n", type=int, default=3000, help="texts checked against exact Jaccard")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    pairs, texts = make_pairs()
    metric = CHRF()
    start = time.perf_counter()
    scores = [metric.sentence_score(h, [r]).score / 100.0 for h, r in pairs]
    sacrebleu_us = 1e6 * (time.perf_counter() - start) / len(pairs)
    with open(OUT / "pairs.jsonl", "w", encoding="utf-8") as f:
        for (h, r), s in zip(pairs, scores):
            f.write(json.dumps({"hypothesis": h, "reference": r, "chrf": s}, ensure_ascii=False) + "\n")
    (OUT / "texts.txt").write_text("\n".join(t.replace("\n", " ") for t in texts) + "\n", encoding="utf-8")
    subprocess.run(["cmake", "--build", str(ROOT / "build"), "--target", "t5s_quality_bench"], check=True,
                   stdout=subprocess.DEVNULL)
    result = subprocess.run([str(ROOT / "build" / "tests" / "t5s_quality_bench"), str(OUT / "pairs.jsonl"),
                             str(OUT / "texts.txt"), str(args.brute_n)], check=True, capture_output=True, text=True)
    report = json.loads(result.stdout)
    report["chrf"]["sacrebleu_us_per_pair"] = sacrebleu_us
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
