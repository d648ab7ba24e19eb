#!/usr/bin/env python3
"""tokenizer.json fixtures and id goldens from the real `tokenizers` library (no network).

Builds transformers' fast tokenizers from files we have and saves what save_pretrained writes:
  t5/     T5TokenizerFast from the genuine T5 spiece.model (tests/data/t5-spiece)
  demo/   T5TokenizerFast from assets/demo-model/spiece.model (a T5 vocabulary with byte pieces)
  bert/   BertTokenizerFast from tests/data/embed/wordpiece/vocab.txt
  xlmr/   XLMRobertaTokenizerFast from tests/data/embed/xlmr/sentencepiece.bpe.model
under tests/data/tokenizer_json/, and goldens.json: for each of them and for variants written as
RFC 6902 JSON patches of the saved tokenizer.json (the layout the Hub's t5-small / flan-t5 files
have, other Metaspace prepend schemes, byte fallback switched on, XLM-R without the whitespace
rules), the ids `tokenizers.Tokenizer` gives for a corpus (CJK, accents, combining characters,
emoji, byte-fallback characters, whitespace runs, special tokens written in the text, long
inputs), plus the slow tokenizer's ids from the original file (the C++ test checks that both
files give the same ids wherever transformers' own two tokenizers agree).

    .venv/bin/python tests/make_tokenizer_json_goldens.py
"""
import copy
import json
import pathlib
import shutil
import tempfile

from tokenizers import Tokenizer
from transformers import (BertTokenizer, BertTokenizerFast, T5Tokenizer, T5TokenizerFast, XLMRobertaTokenizer,
                          XLMRobertaTokenizerFast)

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "data" / "tokenizer_json"
KEEP = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]

SENTENCES = [
    "Hello world",
    "  Hello   world  ",
    " leading space",
    "The QUICK brown fox, jumped! Over (the) lazy dogs...",
    "café naïve résumé Ångström ÉCOLE façade",
    "cafe\u0301 decomposed e\u0301 and n\u0303, a\u0308\u0304 stacked",
    "marks: e\u0301\u0301 a\ufe0f #\u20e3 1\ufe0f\u20e3 \u0301lead tie\u0302\u0301ng vie\u0323\u0302t x\u200dy",
    "مَرْحَبًا بِكُمْ שָׁלוֹם नमस्ते दुनिया สวัสดีครับ 가각 \u1100\u1161\u11a8",
    "crlf\r\n\r\nand\rcr\n\nlf",
    "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ１２３ ｶﾀｶﾅ",
    "レンガの建物の前を、乳母車を押した女性が歩いています。",
    "我们今天去公园散步吧。你好！",
    "한국어 문장입니다",
    "emoji 😀👍🏽 and flags 🇯🇵 family 👨‍👩‍👧",
    "byte fallback: ☃ ✈ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ᚠᛇᚻ ꙮ",
    "tabs\tand\nnewlines\r\n  and   runs    of spaces",
    "\u3000ideographic\u00a0nbsp\u2028line\u200bzero-width",
    "ctrl\x07chars here",
    "<extra_id_0> sentinel <extra_id_1>x<extra_id_99> y",
    "x</s>y <pad> z <unk> end</s>",
    "[CLS] special [SEP] tokens [MASK] in text [UNK]",
    "<s> xlm tokens </s> and <mask> here <pad>",
    "Straße İstanbul ΟΔΟΣ σοφός ǅemal",
    "Don't stop-believing... 'quotes' \"double\" $100 & 50% #tag @user",
    "",
    "   ",
    "x" * 150 + " after a very long word",
    "paraphrase: " + " ".join(["The committee approved the proposal after a long discussion."] * 20),
]

HUB_T5 = [  # the layout of the tokenizer.json files on the Hub (t5-small, flan-t5-*, mt5-*)
    {"op": "move", "from": "/normalizer/normalizers/0", "path": "/normalizer"},
    {"op": "replace", "path": "/pre_tokenizer", "value": {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}]}},
    {"op": "replace", "path": "/decoder", "value": {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}},
]
ALWAYS = [{"op": "replace", "path": "/pre_tokenizer/prepend_scheme", "value": "always"},
          {"op": "replace", "path": "/decoder/prepend_scheme", "value": "always"}]
FIRST = [{"op": "replace", "path": "/pre_tokenizer/prepend_scheme", "value": "first"},
         {"op": "replace", "path": "/decoder/prepend_scheme", "value": "first"}]
VARIANTS = {
    "t5": {"saved": [], "hub": HUB_T5, "always": ALWAYS, "first": FIRST},
    "demo": {"saved": [], "always": ALWAYS,
             "byte_fallback": ALWAYS + [{"op": "replace", "path": "/model/byte_fallback", "value": True}]},
    "bert": {"saved": []},
    "xlmr": {"saved": [], "no_space_rules": [{"op": "move", "from": "/normalizer/normalizers/0", "path": "/normalizer"}]},
}


def pointer(doc, path):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
    node = doc
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    return node, (int(parts[-1]) if isinstance(node, list) else parts[-1])


def apply_patch(doc, ops):
    """RFC 6902 for the ops used above (what nlohmann::json::patch does in the C++ test)."""
    doc = copy.deepcopy(doc)
    for op in ops:
        if op["op"] == "move":
            node, key = pointer(doc, op["from"])
            op = {"op": "add", "path": op["path"], "value": node.pop(key)}
        node, key = pointer(doc, op["path"])
        if op["op"] == "remove":
            del node[key]
        else:
            node[key] = op["value"]
    return doc


def save(name, fast):
    with tempfile.TemporaryDirectory() as tmp:
        fast.save_pretrained(tmp)
        (OUT / name).mkdir(parents=True, exist_ok=True)
        for f in KEEP:
            shutil.copy(pathlib.Path(tmp) / f, OUT / name / f)


def family_goldens(name, slow):
    base = json.loads((OUT / name / "tokenizer.json").read_text(encoding="utf-8"))
    slow_ids = [slow(s)["input_ids"] for s in SENTENCES]
    out = {"slow": slow_ids, "variants": {}}
    for variant, ops in VARIANTS[name].items():
        tok = Tokenizer.from_str(json.dumps(apply_patch(base, ops)))
        ids = [tok.encode(s).ids for s in SENTENCES]
        out["variants"][variant] = {"patch": ops, "ids": ids}
        agree = sum(a == b for a, b in zip(ids, slow_ids))
        print(f"{name}/{variant}: {len(ids)} texts, slow tokenizer agrees on {agree}")
    return out


def main():
    t5_model = ROOT / "tests" / "data" / "t5-spiece" / "spiece.model"
    demo_model = ROOT / "assets" / "demo-model" / "spiece.model"
    vocab = ROOT / "tests" / "data" / "embed" / "wordpiece" / "vocab.txt"
    xlmr_model = ROOT / "tests" / "data" / "embed" / "xlmr" / "sentencepiece.bpe.model"
    save("t5", T5TokenizerFast(vocab_file=str(t5_model)))
    save("demo", T5TokenizerFast(vocab_file=str(demo_model)))
    save("bert", BertTokenizerFast(vocab_file=str(vocab)))
    save("xlmr", XLMRobertaTokenizerFast(vocab_file=str(xlmr_model)))
    goldens = {"sentences": SENTENCES, "families": {
        "t5": family_goldens("t5", T5Tokenizer(vocab_file=str(t5_model), legacy=True)),
        "demo": family_goldens("demo", T5Tokenizer(vocab_file=str(demo_model), legacy=True)),
        "bert": family_goldens("bert", BertTokenizer(vocab_file=str(vocab))),
        "xlmr": family_goldens("xlmr", XLMRobertaTokenizer(vocab_file=str(xlmr_model))),
    }}
    (OUT / "goldens.json").write_text(json.dumps(goldens, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
