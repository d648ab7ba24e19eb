#!/usr/bin/env python3
"""Goldens for contrastive search: penalty_alpha with top_k > 1, no sampling, one beam.

NEEDS transformers 4.55.x. Contrastive search (GenerationMode.CONTRASTIVE_SEARCH: _contrastive_search
and _ranking_fast) is built into transformers up to 4.55; later versions hand it to a Hub
`custom_generate` repository (trust_remote_code). So these goldens come from the separate, test-only
venv of tests/make_group_beam_goldens.py (the goldens are committed; the suite never needs it):

    .venv-ref/bin/python tests/make_contrastive_goldens.py

It writes tests/data/goldens/contrastive.json (deterministic, a few seconds): for the tiny random
checkpoints in tests/data/models, loaded in float32, the token ids generate() returns under several
penalty_alpha / top_k settings (with min_new_tokens, repetition_penalty, no_repeat_ngram_size, stop_strings; top_k 1
and penalty_alpha 0, which transformers decodes greedily), each input alone and the inputs as one
padded batch of different lengths, with each sequence's score: the sum over its tokens of the
log-softmax of the processed logits (output_scores) at the token taken, which is what the engine
reports for a greedy candidate; and what a model folder whose generation_config.json holds
penalty_alpha without top_k (transformers' default top_k, 50) generates with no arguments at all.
"""

import json
import os
import shutil
import struct
import tempfile
import warnings

import torch

warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import transformers  # noqa: E402
from transformers import MT5ForConditionalGeneration, T5ForConditionalGeneration, T5Tokenizer  # noqa: E402

transformers.logging.set_verbosity_error()
torch.set_num_threads(1)

if not transformers.__version__.startswith("4.55."):
    raise SystemExit(f"needs transformers 4.55.x (contrastive search built in), found {transformers.__version__}")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(REPO, "tests", "data", "models")
OUT = os.path.join(REPO, "tests", "data", "goldens", "contrastive.json")

MODEL_NAMES = {"t5v10-tied-relu": T5ForConditionalGeneration, "flan-gated-gelu-bf16": T5ForConditionalGeneration,
               "mt5-like-f16": MT5ForConditionalGeneration}
TEXTS = ["Tom is a good boy.", "paraphrase: The weather is nice today, so we will walk to the park.", "猫が好きです。",
         "我们走吧。", "x"]

SETTINGS = [
    dict(penalty_alpha=0.6, top_k=4, max_new_tokens=16),  # the paper's and transformers' docs' recipe
    dict(penalty_alpha=0.5, top_k=2, max_new_tokens=12),
    dict(penalty_alpha=0.3, top_k=6, max_new_tokens=20, min_new_tokens=6),
    dict(penalty_alpha=0.8, top_k=3, max_new_tokens=10, repetition_penalty=1.5),
    dict(penalty_alpha=0.6, top_k=5, max_new_tokens=14, no_repeat_ngram_size=2),
    dict(penalty_alpha=1.0, top_k=3, max_new_tokens=9),  # the degeneration penalty alone
    dict(penalty_alpha=0.6, top_k=4, max_new_tokens=16, stop_strings=["g", "you", "不"]),  # StopStringCriteria
    dict(penalty_alpha=0.6, top_k=1, max_new_tokens=10),  # top_k 1: transformers decodes greedily
    dict(penalty_alpha=0.0, top_k=4, max_new_tokens=10),  # penalty_alpha 0: greedy too
]
FOLDER_KEYS = dict(penalty_alpha=0.6, max_length=13, repetition_penalty=1.2)  # top_k absent: transformers' 50


def f32(x):
    """The shortest decimal that reads back as the same float32."""
    v = struct.unpack("f", struct.pack("f", x))[0]
    for digits in range(6, 12):
        s = f"{v:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(s)))[0] == v:
            return float(s)
    return v


def strip(seq, eos, pad=0):
    """The generated ids up to </s>; in a batch, a row a stop string ended is padded after it: cut."""
    s = list(seq[1:])
    if eos in s:
        return s[: s.index(eos) + 1]
    while s and s[-1] == pad:
        s.pop()
    return s


@torch.no_grad()
def generate(model, ids, eos, tok, **settings):
    if "stop_strings" in settings:
        settings = dict(settings, tokenizer=tok)  # StopStringCriteria reads the token texts
    batch = max(len(x) for x in ids)
    input_ids = torch.tensor([x + [0] * (batch - len(x)) for x in ids])
    mask = torch.tensor([[1] * len(x) + [0] * (batch - len(x)) for x in ids])
    out = model.generate(input_ids=input_ids, attention_mask=mask, do_sample=False, return_dict_in_generate=True,
                         output_scores=True, **settings)
    results = []
    for row, seq in enumerate(out.sequences.tolist()):
        ids_out = strip(seq, eos)
        score = sum(torch.log_softmax(out.scores[t][row].double(), -1)[tok].item() for t, tok in enumerate(ids_out))
        results.append({"ids": ids_out, "score": f32(score)})
    return results


def load(name, path=None):
    m = MODEL_NAMES[name].from_pretrained(path or os.path.join(MODELS, name), torch_dtype=torch.float32)
    return m.eval()


def model_goldens(name):
    model = load(name)
    eos = model.config.eos_token_id
    tok = T5Tokenizer.from_pretrained(os.path.join(MODELS, name), legacy=True)
    ids = [tok(t).input_ids for t in TEXTS]
    runs = []
    for s in SETTINGS:
        alone = [generate(model, [x], eos, tok, **s)[0] for x in ids]
        batch = generate(model, ids, eos, tok, **s)
        same = [a["ids"] == b["ids"] for a, b in zip(alone, batch)]
        if not all(same):  # a padded batch is not bitwise each input alone in transformers
            print(f"  {name} {s}: batch differs from alone for inputs {[i for i, x in enumerate(same) if not x]}")
        runs.append({"config": s, "per_input": alone, "batch": batch})
    return {"texts": TEXTS, "input_ids": ids, "runs": runs}


def folder_golden(name):
    """A model folder whose generation_config.json carries penalty_alpha; generate() given nothing."""
    keys = dict(FOLDER_KEYS, decoder_start_token_id=0, eos_token_id=1, pad_token_id=0)
    scratch = tempfile.mkdtemp()
    try:
        folder = os.path.join(scratch, "m")
        shutil.copytree(os.path.join(MODELS, name), folder)
        with open(os.path.join(folder, "generation_config.json"), "w") as f:
            json.dump(keys, f)
        model = load(name, folder)
        assert model.generation_config.top_k == 50 and model.generation_config.get_generation_mode() == "contrastive_search"
        tok = T5Tokenizer.from_pretrained(folder, legacy=True)
        out = []
        for text in TEXTS:
            ids = tok(text, return_tensors="pt").input_ids
            with torch.no_grad():
                seqs = model.generate(ids)  # everything from generation_config.json
            out.append(strip(seqs[0].tolist(), 1))
        return {"model": name, "generation_config": keys, "texts": TEXTS, "sequences": out}
    finally:
        shutil.rmtree(scratch)


def main():
    data = {"generator": "tests/make_contrastive_goldens.py", "transformers_version": transformers.__version__,
            "torch_version": torch.__version__.split("+")[0], "models": {}}
    for name in MODEL_NAMES:
        print(name)
        data["models"][name] = model_goldens(name)
    data["model_folder"] = folder_golden("t5v10-tied-relu")
    with open(OUT, "w") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", os.path.relpath(OUT, REPO))


if __name__ == "__main__":
    main()
