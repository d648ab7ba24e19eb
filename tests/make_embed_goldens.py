#!/usr/bin/env python3
"""Tiny tokenizer fixtures and id goldens for the sentence-embedding tokenizers (no network).

Writes under tests/data/embed/:
  wordpiece/vocab.txt           a BERT WordPiece vocabulary built from a small corpus (characters,
                                "##" characters, frequent words, a few suffixes; some characters
                                left out on purpose so that [UNK] occurs)
  wordpiece/*.json              tokenizer_config.json variants (uncased, cased, lower without
                                accent stripping, no CJK splitting, never_split)
  xlmr/sentencepiece.bpe.model  a unigram SentencePiece model (XLM-R's layout: <unk>=0, <s>=1,
                                </s>=2) trained on JSTS + Tatoeba lines from ../shared/data
  goldens.json                  ids from transformers' slow BertTokenizer / XLMRobertaTokenizer
                                (the reference the C++ test compares with), plus whether the fast
                                tokenizers agree on each sentence, plus padded batches.

    .venv/bin/python tests/make_embed_goldens.py [--shared ../shared]
"""
import argparse
import collections
import json
import pathlib
import tempfile

from golden_corpus import shared_corpus

import sentencepiece as spm
from transformers import BertTokenizer, BertTokenizerFast, XLMRobertaTokenizer, XLMRobertaTokenizerFast
from transformers.models.bert.tokenization_bert import BasicTokenizer

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "data" / "embed"
MAX_LENGTH = 16  # truncation cases use this

SENTENCES = [
    "Hello, world! How are you today?",
    "The QUICK brown fox jumped over the lazy dogs.",
    "unaffable running quickly walked",
    "",
    "   \t\n  ",
    "café naïve résumé Ångström ÉCOLE façade",
    "cafe\u0301 decomposed e\u0301 and n\u0303",
    "Straße İstanbul ΟΔΟΣ σοφός ǅemal",
    "レンガの建物の前を、乳母車を押した女性が歩いています。",
    "山の上に顔の白い牛が2頭います。",
    "我们今天去公园散步吧。你好！",
    "한국어 문장입니다",
    "ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ１２３",
    "emoji 😀 and symbols $100 & 50% #tag @user",
    "ctrl\x00chars\x07here\u200b and\u00a0nbsp\u2028line\u3000ideo",
    "[CLS] special [SEP] tokens [MASK] in text [UNK]",
    "<s> xlm tokens </s> and <mask> here <pad>",
    "x" * 120 + " after a very long word",
    "Don't stop-believing... (really) [yes] {no} 'quotes' \"double\"",
    " ".join(["long sentence number one two three four five six seven eight nine ten"] * 4),
]

# tokenizer_config.json variants for the one vocabulary.
WORDPIECE_CONFIGS = {
    "uncased": {"do_lower_case": True},
    "cased": {"do_lower_case": False},
    "lower_keep_accents": {"do_lower_case": True, "strip_accents": False},
    "cased_strip_accents": {"do_lower_case": False, "strip_accents": True},
    "no_cjk_split": {"do_lower_case": True, "tokenize_chinese_chars": False},
    "never_split": {"do_lower_case": False, "never_split": ["Hello,", "QUICK"]},
    "max_len": {"do_lower_case": True, "model_max_length": 12},
}
LEFT_OUT_CHARS = set("ß牛ø")  # never in the vocabulary: words with them become [UNK]


def corpus(shared):
    return shared_corpus(shared, SENTENCES, jsts_rows=300, tatoeba_rows=3000)


def build_vocab(lines):
    words = collections.Counter()
    chars = set()
    for lower, accents in [(True, None), (False, None), (True, False), (False, True)]:
        basic = BasicTokenizer(do_lower_case=lower, strip_accents=accents)
        for line in lines:
            for w in basic.tokenize(line):
                words[w] += 1
                chars.update(w)
    chars -= LEFT_OUT_CHARS
    vocab = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab += sorted(chars)
    vocab += ["##" + c for c in sorted(chars)]
    vocab += ["##ing", "##ed", "##s", "##ly", "##able", "##aff", "un", "run", "walk", "quick", "hello", "Hello,"]
    frequent = [w for w, n in words.most_common(400) if len(w) > 1 and not (set(w) & LEFT_OUT_CHARS)]
    seen = set(vocab)
    for w in frequent:
        if w not in seen:
            vocab.append(w)
            seen.add(w)
    return vocab


def train_sentencepiece(lines, model_path):
    with tempfile.TemporaryDirectory() as tmp:
        text = pathlib.Path(tmp) / "corpus.txt"
        text.write_text("\n".join(l for l in lines if l.strip()) + "\n", encoding="utf-8")
        prefix = pathlib.Path(tmp) / "m"
        spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(prefix), vocab_size=2000,
                                       model_type="unigram", character_coverage=0.995, num_threads=1,
                                       unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2)
        model_path.write_bytes((prefix.parent / "m.model").read_bytes())


def encode_all(slow, fast, max_length=None):
    rows = []
    for s in SENTENCES:
        kw = {"truncation": True, "max_length": max_length} if max_length else {}
        ids = slow(s, **kw)["input_ids"]
        fast_ids = fast(s, **kw)["input_ids"]
        rows.append({"text": s, "ids": ids, "fast_agrees": ids == fast_ids})
    return rows


def batch_golden(tok):
    texts = [SENTENCES[0], SENTENCES[3], SENTENCES[8], SENTENCES[-1]]
    enc = tok(texts, padding=True, truncation=True, max_length=MAX_LENGTH)
    return {"texts": texts, "max_length": MAX_LENGTH, "input_ids": enc["input_ids"],
            "attention_mask": enc["attention_mask"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(HERE.parent.parent / "shared"))
    args = ap.parse_args()
    lines = corpus(pathlib.Path(args.shared))
    (OUT / "wordpiece").mkdir(parents=True, exist_ok=True)
    (OUT / "xlmr").mkdir(parents=True, exist_ok=True)
    vocab_file = OUT / "wordpiece" / "vocab.txt"
    vocab_file.write_text("\n".join(build_vocab(lines)) + "\n", encoding="utf-8")
    goldens = {"max_length": MAX_LENGTH, "wordpiece": {}, "xlmr": {}}
    for name, cfg in WORDPIECE_CONFIGS.items():
        (OUT / "wordpiece" / f"{name}.json").write_text(json.dumps(cfg, indent=1) + "\n", encoding="utf-8")
        slow = BertTokenizer(vocab_file=str(vocab_file), **cfg)
        fast = BertTokenizerFast(vocab_file=str(vocab_file), **cfg)
        goldens["wordpiece"][name] = {"full": encode_all(slow, fast), "truncated": encode_all(slow, fast, MAX_LENGTH)}
        if name == "uncased":
            goldens["wordpiece"][name]["batch"] = batch_golden(slow)
        if name == "max_len":  # truncation=True without max_length: model_max_length applies
            goldens["wordpiece"][name]["model_max"] = [slow(s, truncation=True)["input_ids"] for s in SENTENCES]
    model = OUT / "xlmr" / "sentencepiece.bpe.model"
    train_sentencepiece(lines, model)
    slow = XLMRobertaTokenizer(vocab_file=str(model))
    fast = XLMRobertaTokenizerFast(vocab_file=str(model))
    goldens["xlmr"] = {"full": encode_all(slow, fast), "truncated": encode_all(slow, fast, MAX_LENGTH),
                       "batch": batch_golden(slow), "vocab_size": slow.vocab_size,
                       "mask_id": slow.mask_token_id}
    (OUT / "goldens.json").write_text(json.dumps(goldens, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    for kind in ("wordpiece", "xlmr"):
        groups = goldens[kind].values() if kind == "wordpiece" else [goldens[kind]]
        rows = [r for g in groups for part in ("full", "truncated") for r in g[part]]
        print(f"{kind}: {len(rows)} encodings, fast tokenizer agrees on {sum(r['fast_agrees'] for r in rows)}")
        for r in rows:
            if not r["fast_agrees"]:
                print("   fast differs:", repr(r["text"][:60]))


if __name__ == "__main__":
    main()
