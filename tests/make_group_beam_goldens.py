#!/usr/bin/env python3
"""Goldens for group (diverse) beam search: num_beam_groups and diversity_penalty.

NEEDS transformers 4.55.x. Group beam search (GenerationMode.GROUP_BEAM_SEARCH: _group_beam_search
with BeamSearchScorer and HammingDiversityLogitsProcessor) is built into transformers up to 4.55;
from 4.56 on, generate() hands it to a Hub `custom_generate` repository (trust_remote_code), which
the project venv (transformers 4.57) would have to download. So these goldens come from a separate,
test-only venv that the test suite never needs (the goldens are committed):

    python3 -m venv .venv-ref
    .venv-ref/bin/pip install 'transformers==4.55.4' torch safetensors sentencepiece
    .venv-ref/bin/python tests/make_group_beam_goldens.py

It writes tests/data/goldens/group_beam.json (deterministic, a few seconds): for the tiny random
checkpoints in tests/data/models, loaded in float32, the sequences and sequences_scores of
generate() under several group settings (the humarin/chatgpt_paraphraser_on_T5_base card's recipe
among them), each input alone and the inputs as one padded batch; and what a model folder whose
generation_config.json holds that recipe generates with no arguments at all.
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
    raise SystemExit(f"needs transformers 4.55.x (group beam search built in), found {transformers.__version__}")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(REPO, "tests", "data", "models")
OUT = os.path.join(REPO, "tests", "data", "goldens", "group_beam.json")

MODEL_NAMES = {"t5v10-tied-relu": T5ForConditionalGeneration, "flan-gated-gelu-bf16": T5ForConditionalGeneration,
               "mt5-like-f16": MT5ForConditionalGeneration}
TEXTS = ["Tom is a good boy.", "paraphrase: The weather is nice today, so we will walk to the park.", "猫が好きです。",
         "我们走吧。"]

# The model card of humarin/chatgpt_paraphraser_on_T5_base (its temperature=0.7 is ignored without
# sampling, as transformers ignores it), shortened to tiny-model lengths.
HUMARIN = dict(num_beams=5, num_beam_groups=5, diversity_penalty=3.0, repetition_penalty=10.0, no_repeat_ngram_size=2,
               num_return_sequences=5, max_new_tokens=16)
SETTINGS = [
    HUMARIN,
    dict(num_beams=4, num_beam_groups=2, diversity_penalty=0.5, num_return_sequences=4, max_new_tokens=10),
    dict(num_beams=6, num_beam_groups=3, diversity_penalty=1.5, num_return_sequences=3, max_new_tokens=10, length_penalty=0.6,
         early_stopping=True),
    dict(num_beams=4, num_beam_groups=4, diversity_penalty=0.7, num_return_sequences=2, max_new_tokens=8, min_new_tokens=3),
    dict(num_beams=6, num_beam_groups=2, diversity_penalty=2.0, num_return_sequences=6, max_new_tokens=30, length_penalty=2.0),
    dict(num_beams=2, num_beam_groups=2, diversity_penalty=1.0, num_return_sequences=1, max_new_tokens=12),
]


def f32(x):
    """The shortest decimal that reads back as the same float32."""
    v = struct.unpack("f", struct.pack("f", x))[0]
    for digits in range(6, 12):
        s = f"{v:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(s)))[0] == v:
            return float(s)
    return v


def strip(seq, eos, start=True):
    s = list(seq[1:] if start else seq)
    return s[: s.index(eos) + 1] if eos in s else s


@torch.no_grad()
def generate(model, ids, eos, **settings):
    batch = max(len(x) for x in ids)
    input_ids = torch.tensor([x + [0] * (batch - len(x)) for x in ids])
    mask = torch.tensor([[1] * len(x) + [0] * (batch - len(x)) for x in ids])
    out = model.generate(input_ids=input_ids, attention_mask=mask, do_sample=False, return_dict_in_generate=True,
                         output_scores=True, **settings)
    n = settings.get("num_return_sequences", model.generation_config.num_return_sequences or 1)
    seqs = [strip(s, eos) for s in out.sequences.tolist()]
    scores = [f32(x) for x in out.sequences_scores.tolist()]
    return [{"sequences": seqs[i * n:(i + 1) * n], "sequences_scores": scores[i * n:(i + 1) * n]} for i in range(len(ids))]


def load(name, path=None):
    klass = MODEL_NAMES[name]
    m = klass.from_pretrained(path or os.path.join(MODELS, name), torch_dtype=torch.float32)
    return m.eval()


def model_goldens(name):
    model = load(name)
    eos = model.config.eos_token_id
    tok = T5Tokenizer.from_pretrained(os.path.join(MODELS, name), legacy=True)
    ids = [tok(t).input_ids for t in TEXTS]
    runs = []
    for s in SETTINGS:
        alone = [generate(model, [x], eos, **s)[0] for x in ids]
        batch = generate(model, ids, eos, **s)
        same = [a["sequences"] == b["sequences"] for a, b in zip(alone, batch)]
        if not all(same):  # a padded batch is not bitwise each input alone in transformers
            print(f"  {name} {s}: batch differs from alone for inputs {[i for i, x in enumerate(same) if not x]}")
        runs.append({"config": s, "per_input": alone, "batch": batch})
    return {"texts": TEXTS, "input_ids": ids, "runs": runs}


def folder_golden(name):
    """A model folder whose generation_config.json carries the recipe; generate() given nothing."""
    keys = dict(HUMARIN, max_length=HUMARIN["max_new_tokens"] + 1)
    del keys["max_new_tokens"]
    keys.update(decoder_start_token_id=0, eos_token_id=1, pad_token_id=0)
    scratch = tempfile.mkdtemp()
    try:
        folder = os.path.join(scratch, "m")
        shutil.copytree(os.path.join(MODELS, name), folder)
        with open(os.path.join(folder, "generation_config.json"), "w") as f:
            json.dump(keys, f)
        model = load(name, folder)
        tok = T5Tokenizer.from_pretrained(folder, legacy=True)
        out = []
        for text in TEXTS:
            ids = tok(text, return_tensors="pt").input_ids
            with torch.no_grad():
                seqs = model.generate(ids)  # everything from generation_config.json
            out.append([strip(s, 1) for s in seqs.tolist()])
        return {"model": name, "generation_config": keys, "texts": TEXTS, "sequences": out}
    finally:
        shutil.rmtree(scratch)


def main():
    data = {"generator": "tests/make_group_beam_goldens.py", "transformers_version": transformers.__version__,
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
