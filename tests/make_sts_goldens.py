#!/usr/bin/env python3
"""Goldens for `t5studio sts --baseline chrf`, from sacrebleu and scipy themselves.

Run from the repository root (a second, no network):

    .venv/bin/python tests/make_sts_goldens.py

It (re)writes deterministically:
  tests/data/sts/jsts-valid-48.jsonl   the first 48 pairs of ../shared/data/jglue-jsts/valid.jsonl
                                       (JGLUE JSTS, CC BY-SA 4.0; fields sentence1, sentence2, label)
  tests/data/goldens/sts_chrf.json     {pairs, spearman, pearson} of the symmetric chrF
                                       ((chrF(a, b) + chrF(b, a)) / 2, sacrebleu CHRF() defaults)
                                       against the labels (scipy.stats.spearmanr / pearsonr)
"""
import json
import pathlib

from sacrebleu.metrics import CHRF
from scipy import stats

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared" / "data" / "jglue-jsts" / "valid.jsonl"
DATA = ROOT / "tests" / "data" / "sts" / "jsts-valid-48.jsonl"
OUT = ROOT / "tests" / "data" / "goldens" / "sts_chrf.json"

rows = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines()[:48]]
keep = [{"sentence1": r["sentence1"], "sentence2": r["sentence2"], "label": r["label"]} for r in rows]
DATA.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in keep), encoding="utf-8")

chrf = CHRF()
scores = [(chrf.sentence_score(r["sentence1"], [r["sentence2"]]).score + chrf.sentence_score(r["sentence2"], [r["sentence1"]]).score) / 200
          for r in keep]
labels = [r["label"] for r in keep]
OUT.write_text(json.dumps({"pairs": len(keep), "spearman": stats.spearmanr(scores, labels).statistic,
                           "pearson": stats.pearsonr(scores, labels).statistic}, indent=1) + "\n", encoding="utf-8")
print(OUT.read_text())
