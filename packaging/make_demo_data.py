#!/usr/bin/env python3
"""Builds the demo model's training data from ../shared/data (standard library only).

JGLUE JSTS pairs with label >= 4 in both directions -> "paraphrase: " (Japanese paraphrases);
Tatoeba cmn-eng -> "translate English to Chinese: " / "translate Chinese to English: ".
Eval: JSTS valid (label >= 4) + every 60th Tatoeba pair, interleaved so the first samples cover
all three tasks. Usage: make_demo_data.py SHARED_DATA_DIR OUT_DIR
"""
import json
import os
import sys

shared, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)


def jsts(name):
    rows = []
    with open(os.path.join(shared, "jglue-jsts", name), encoding="utf-8") as f:
        for line in f:
            j = json.loads(line)
            if float(j["label"]) >= 4.0:
                a, b = j["sentence1"].strip(), j["sentence2"].strip()
                if a and b and a != b:
                    rows.append(("paraphrase: " + a, b))
                    rows.append(("paraphrase: " + b, a))
    return rows


tat_train, tat_eval = [], []
with open(os.path.join(shared, "tatoeba-cmn-eng", "cmn-eng.tsv"), encoding="utf-8") as f:
    for i, line in enumerate(f):
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 2 or not parts[0].strip() or not parts[1].strip():
            continue
        en, zh = parts[0].strip(), parts[1].strip()
        dest = tat_eval if i % 60 == 59 else tat_train
        dest.append(("translate English to Chinese: " + en, zh))
        dest.append(("translate Chinese to English: " + zh, en))

train = jsts("train.jsonl") + tat_train
ja_eval = jsts("valid.jsonl")
en_zh = [p for p in tat_eval if p[0].startswith("translate English")]
zh_en = [p for p in tat_eval if p[0].startswith("translate Chinese")]
evals = []
for i in range(max(len(ja_eval), len(en_zh), len(zh_en))):
    for lst in (ja_eval, en_zh, zh_en):
        if i < len(lst):
            evals.append(lst[i])


def write(name, rows):
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        for s, t in rows:
            f.write(json.dumps({"source": s, "target": t}, ensure_ascii=False) + "\n")


write("train.jsonl", train)
write("eval.jsonl", evals)
print(f"train {len(train)} pairs, eval {len(evals)} pairs -> {out}", file=sys.stderr)
