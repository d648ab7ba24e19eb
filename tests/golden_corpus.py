"""Training text for the tiny tokenizer fixtures: fixed sentences plus JGLUE JSTS and Tatoeba
zh-en lines from ../shared/data (one home for the golden scripts that build vocabularies)."""
import json


def shared_corpus(shared, sentences, jsts_rows, tatoeba_rows):
    """`sentences`, then both sentences of the first `jsts_rows` JSTS pairs, then both sides of
    every tenth of the first `tatoeba_rows` Tatoeba lines. `shared` is a pathlib.Path."""
    lines = list(sentences)
    with open(shared / "data" / "jglue-jsts" / "valid.jsonl", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= jsts_rows:
                break
            row = json.loads(line)
            lines += [row["sentence1"], row["sentence2"]]
    with open(shared / "data" / "tatoeba-cmn-eng" / "cmn-eng.tsv", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= tatoeba_rows:
                break
            if i % 10 == 0:
                lines += line.rstrip("\n").split("\t")[:2]
    return lines
