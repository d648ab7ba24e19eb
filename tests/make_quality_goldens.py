#!/usr/bin/env python3
"""chrF goldens for the C++ quality scores (engine/src/quality/chrf.cpp), from sacrebleu itself.

Run from the repository root (a second or two, no network):

    .venv/bin/python tests/make_quality_goldens.py

It (re)writes tests/data/goldens/chrf.json deterministically:
  pairs:     {hypothesis, reference, chrf} with chrf = sacrebleu.metrics.CHRF() (defaults: char
             order 6, word order 0, beta 2, whitespace removed, effective-order averaging)
             .sentence_score(hypothesis, [reference]).score / 100
  diversity: {candidates, diversity} = mean over ordered pairs i != j of 1 - chrF(c_i, c_j)
The pairs cover English, Chinese and Japanese (fixed rows of ../shared/data: Tatoeba cmn-eng and
JGLUE JSTS valid), empty, identical, whitespace-only, punctuation, mixed-script, emoji and very
short (< 6 characters) strings.
"""
import itertools
import json
import pathlib

import sacrebleu
from sacrebleu.metrics import CHRF

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
OUT = ROOT / "tests" / "data" / "goldens" / "chrf.json"

HANDWRITTEN = [
    ("", ""),
    ("", "a reference"),
    ("a hypothesis", ""),
    ("   ", "\t\n "),
    ("   ", "abc"),
    ("The cat sat on the mat.", "The cat sat on the mat."),
    ("The cat sat on the mat.", "The cat is sitting on the mat."),
    ("The cat is sitting on the mat.", "The cat sat on the mat."),
    ("A completely different sentence.", "The cat sat on the mat."),
    ("the cat", "The Cat"),
    ("Thecat  sat", "The cat sat"),
    ("a", "a"),
    ("a", "b"),
    ("ab", "ba"),
    ("abc", "abcd"),
    ("abcde", "abcdef"),
    ("abcdef", "abcde"),
    ("aaaaaaa", "aaa"),
    ("aaa", "aaaaaaa"),
    ("!!!", "?!"),
    ("...", "..."),
    ("Hello, world!", "Hello world"),
    ("(hi)", "hi"),
    ("東京", "東京都"),
    ("猫", "猫"),
    ("我爱你。", "我喜欢你。"),
    ("今日は良い天気です。", "今日はいい天気ですね。"),
    ("Tokyo 東京 is big", "東京 Tokyo is large"),
    ("Résumé naïve café", "Resume naive cafe"),
    ("e\u0301te\u0301", "\u00e9t\u00e9"),
    ("I 😀 you 👍🏽", "I 😀 you 👍"),
    ("👨\u200d👩\u200d👧", "👨\u200d👩\u200d👦"),
    ("non\u00a0breaking\u3000space", "non breaking space"),
    ("line\none\r\ntwo", "line one two"),
    ("Привет, мир", "Привет мир!"),
    ("مرحبا بالعالم", "مرحبا"),
    ("12345", "123456789"),
]


def dataset_pairs():
    pairs = []
    tatoeba = (SHARED / "tatoeba-cmn-eng" / "cmn-eng.tsv").read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in tatoeba[1000:21000:2000]]  # 10 fixed rows
    for i, (eng, cmn) in enumerate(rows):
        next_eng, next_cmn = rows[(i + 1) % len(rows)]
        pairs += [(cmn, next_cmn), (eng, next_eng), (cmn, eng)]
    with open(SHARED / "jglue-jsts" / "valid.jsonl", encoding="utf-8") as f:
        jsts = [json.loads(line) for line in f]
    for row in jsts[0:1400:100]:  # 14 fixed rows, both directions
        pairs += [(row["sentence1"], row["sentence2"]), (row["sentence2"], row["sentence1"])]
    return pairs


def main():
    metric = CHRF()
    assert (metric.char_order, metric.word_order, metric.beta, metric.whitespace, metric.eps_smoothing) == (
        6, 0, 2, False, False)

    def chrf(hyp, ref):
        return metric.sentence_score(hyp, [ref]).score / 100.0

    pairs = [{"hypothesis": h, "reference": r, "chrf": chrf(h, r)} for h, r in HANDWRITTEN + dataset_pairs()]
    candidate_sets = [
        [],
        ["only one"],
        ["The cat sat on the mat.", "The cat sat on the mat."],
        ["The cat sat on the mat.", "A cat was sitting on a mat.", "On the mat sat the cat."],
        ["今日は良い天気です。", "今日はいい天気ですね。", "本日は晴天なり。", ""],
        ["我爱你。", "我喜欢你。"],
    ]
    diversity = []
    for cands in candidate_sets:
        ordered = list(itertools.permutations(range(len(cands)), 2))
        value = sum(1.0 - chrf(cands[i], cands[j]) for i, j in ordered) / len(ordered) if ordered else None
        diversity.append({"candidates": cands, "diversity": value})

    doc = {"sacrebleu_version": sacrebleu.__version__, "signature": str(metric.get_signature()),
           "pairs": pairs, "diversity": diversity}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(pairs)} pairs, {len(diversity)} candidate sets")


if __name__ == "__main__":
    main()
