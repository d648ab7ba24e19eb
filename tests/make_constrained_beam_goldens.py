#!/usr/bin/env python3
"""Goldens for constrained beam search: force_words_ids (phrasal and disjunctive constraints).

NEEDS transformers 4.55.x: constrained beam search (GenerationMode.CONSTRAINED_BEAM_SEARCH:
_constrained_beam_search with ConstrainedBeamSearchScorer, PhrasalConstraint, DisjunctiveConstraint)
is built into transformers up to 4.55; later releases hand it to a Hub `custom_generate` repository.
So, as for tests/make_group_beam_goldens.py, these goldens come from the test-only venv .venv-ref
that the test suite never needs (the goldens are committed):

    .venv-ref/bin/python tests/make_constrained_beam_goldens.py

It writes tests/data/goldens/constrained_beam.json (deterministic, under a minute): for the tiny
random checkpoints in tests/data/models, loaded in float32, the sequences and sequences_scores of
generate() under several constraint settings (phrasal, disjunctive, mixed; constraints of one and of
several tokens; disjunctive alternatives sharing a first piece; with length_penalty, early_stopping,
no_repeat_ngram_size and repetition_penalty), each input alone and the inputs as one padded batch;
which ids the words of one setting's text form stand for; what transformers refuses; and what a
model folder whose generation_config.json holds force_words_ids generates with no arguments.
"""

import json
import os
import shutil
import tempfile
import warnings

import torch

warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import transformers  # noqa: E402
from transformers import T5Tokenizer  # noqa: E402
from transformers.generation.beam_constraints import ConstraintListState, DisjunctiveConstraint, PhrasalConstraint  # noqa: E402

transformers.logging.set_verbosity_error()
torch.set_num_threads(1)

if not transformers.__version__.startswith("4.55."):
    raise SystemExit(f"needs transformers 4.55.x (constrained beam search built in), found {transformers.__version__}")

from make_group_beam_goldens import MODEL_NAMES, MODELS, REPO, TEXTS, generate, load, strip  # noqa: E402

OUT = os.path.join(REPO, "tests", "data", "goldens", "constrained_beam.json")


def words(tok, text):
    """The force_words text form as the engine reads it: constraints comma-separated, a
    constraint's alternatives '|'-separated, each word tokenized as it reads mid-sentence
    (tokenizer(word, add_special_tokens=False), as transformers' docs build force_words_ids)."""
    out = []
    for constraint in text.split(","):
        alternatives = [tok(w.strip(), add_special_tokens=False).input_ids for w in constraint.split("|")]
        out.append(alternatives if len(alternatives) > 1 else alternatives[0])
    return out


# (settings, force_words text): the text's ids are the settings' force_words_ids. The tiny
# vocabulary splits most words: "park" is 3 pieces, "walked" / "walking" share their first 4.
SETTINGS = [
    (dict(num_beams=4, num_return_sequences=2, max_new_tokens=10), "Tom,park"),
    (dict(num_beams=5, num_return_sequences=3, max_new_tokens=14, length_penalty=0.6, early_stopping=True), "walked|walking,the"),
    (dict(num_beams=4, num_return_sequences=4, max_new_tokens=12, no_repeat_ngram_size=2, repetition_penalty=1.5), "Tom|boy,park"),
    (dict(num_beams=3, num_return_sequences=2, max_new_tokens=16, length_penalty=2.0, min_new_tokens=4), "today"),
    (dict(num_beams=2, num_return_sequences=1, max_new_tokens=12), "good|nice|walking"),
    (dict(num_beams=6, num_return_sequences=6, max_new_tokens=9, early_stopping=True), "boy,walked|park,the"),
    # Too short for every constraint: the running beams that hold none are returned all the same.
    (dict(num_beams=4, num_return_sequences=3, max_new_tokens=4), "beautiful,today"),
]

# force_words_ids transformers refuses (generate() raises ValueError), with the reason.
REFUSED = [
    ({"force_words_ids": [[290]], "num_beams": 1}, "num_beams"),
    ({"force_words_ids": [[290]], "num_beams": 4, "do_sample": True}, "do_sample"),
    ({"force_words_ids": [[290]], "num_beams": 4, "num_beam_groups": 2, "diversity_penalty": 1.0}, "num_beam_groups"),
    ({"force_words_ids": [], "num_beams": 4}, "empty"),
    ({"force_words_ids": [[]], "num_beams": 4}, "empty constraint"),
    ({"force_words_ids": [[290, -1]], "num_beams": 4}, "negative id"),
    ({"force_words_ids": [[[259, 294], [259, 294, 329]]], "num_beams": 4}, "an alternative is a prefix of another"),
    ({"force_words_ids": [[[290], [290]]], "num_beams": 4}, "the same alternative twice"),
]


# Constraint-list states after a sequence (decoder start token 0 first). The last two walk a
# disjunctive constraint whose alternatives share a prefix: transformers' stateful copies of it
# share the walked list, which the copies' banks show.
STATES = [
    ([[5, 6, 7], [8]], [0, 4, 5, 6]),
    ([[5, 6, 7], [8]], [0, 5, 6, 9, 8]),
    ([[5, 6, 7], [8]], [0, 8, 5, 6, 7, 2]),
    ([[[5, 6], [9]], [5, 7]], [0, 5]),
    ([[[5, 6], [9]], [5, 7]], [0, 9, 5, 7]),
    ([[[1, 2, 3], [1, 2, 4]], [7]], [0, 1, 2]),
    ([[[3, 3, 9], [3, 9]]], [0, 3]),
    ([[[3, 3, 9], [3, 9]], [4, 4]], [0, 4, 3, 4]),
]


def constraint_objects(force_words_ids):
    return [DisjunctiveConstraint(w) if isinstance(w[0], list) else PhrasalConstraint(w) for w in force_words_ids]


def state_goldens():
    """bank, completed and advance() after reset(tokens); then, as step_sentence_constraint does,
    a stateful copy per advancing token with that token added, and the copies' banks read after all."""
    out = []
    for force_words_ids, tokens in STATES:
        state = ConstraintListState(constraint_objects(force_words_ids))
        state.reset(tokens)
        entry = {"force_words_ids": force_words_ids, "tokens": tokens, "completed": state.completed, "bank": state.get_bank(),
                 "advance": state.advance() or []}
        copies = []
        for token in entry["advance"]:
            copy = state.copy(stateful=True)
            copy.add(token)
            copies.append(copy)
        entry["copy_banks"] = [c.get_bank() for c in copies]
        out.append(entry)
    return out


def model_goldens(name):
    model = load(name)
    eos = model.config.eos_token_id
    tok = T5Tokenizer.from_pretrained(os.path.join(MODELS, name), legacy=True)
    ids = [tok(t).input_ids for t in TEXTS]
    runs = []
    for settings, text in SETTINGS:
        s = dict(settings, force_words_ids=words(tok, text))
        alone = [generate(model, [x], eos, **s)[0] for x in ids]
        batch = generate(model, ids, eos, **s)
        same = [a["sequences"] == b["sequences"] for a, b in zip(alone, batch)]
        if not all(same):  # a padded batch is not bitwise each input alone in transformers
            print(f"  {name} {s}: batch differs from alone for inputs {[i for i, x in enumerate(same) if not x]}")
        runs.append({"config": s, "force_words": text, "per_input": alone, "batch": batch})
    return {"texts": TEXTS, "input_ids": ids, "runs": runs}


def max_time_golden(name):
    """max_time so short that it is up after the first step: transformers' stopping criteria end
    every row at once, and its finalize pads the running beams, shorter than max_length, with </s>."""
    model = load(name)
    tok = T5Tokenizer.from_pretrained(os.path.join(MODELS, name), legacy=True)
    ids = [tok(t).input_ids for t in TEXTS]
    settings = dict(num_beams=4, num_return_sequences=2, max_new_tokens=10, force_words_ids=words(tok, "Tom,park"), max_time=1e-9)
    return {"model": name, "config": settings, "input_ids": ids, "batch": generate(model, ids, model.config.eos_token_id, **settings)}


def refusals(name):
    model = load(name)
    ids = torch.tensor([[290, 1]])
    out = []
    for settings, why in REFUSED:
        try:
            model.generate(input_ids=ids, max_new_tokens=4, **settings)
        except (ValueError, IndexError):
            out.append({"config": settings, "why": why})
            continue
        raise SystemExit(f"transformers accepted {settings}, expected a refusal ({why})")
    return out


def folder_golden(name):
    """A model folder whose generation_config.json carries force_words_ids; generate() given nothing."""
    tok = T5Tokenizer.from_pretrained(os.path.join(MODELS, name), legacy=True)
    keys = dict(num_beams=4, num_return_sequences=2, max_length=13, force_words_ids=words(tok, "walked|walking,Tom"),
                decoder_start_token_id=0, eos_token_id=1, pad_token_id=0)
    scratch = tempfile.mkdtemp()
    try:
        folder = os.path.join(scratch, "m")
        shutil.copytree(os.path.join(MODELS, name), folder)
        with open(os.path.join(folder, "generation_config.json"), "w") as f:
            json.dump(keys, f)
        model = load(name, folder)
        out = []
        for text in TEXTS:
            input_ids = tok(text, return_tensors="pt").input_ids
            with torch.no_grad():
                seqs = model.generate(input_ids)  # everything from generation_config.json
            out.append([strip(s, 1) for s in seqs.tolist()])
        return {"model": name, "generation_config": keys, "texts": TEXTS, "sequences": out}
    finally:
        shutil.rmtree(scratch)


def main():
    data = {"generator": "tests/make_constrained_beam_goldens.py", "transformers_version": transformers.__version__,
            "torch_version": torch.__version__.split("+")[0], "models": {}}
    for name in MODEL_NAMES:
        print(name)
        data["models"][name] = model_goldens(name)
    data["states"] = state_goldens()
    data["max_time"] = max_time_golden("t5v10-tied-relu")
    data["refused"] = refusals("t5v10-tied-relu")
    data["model_folder"] = folder_golden("t5v10-tied-relu")
    with open(OUT, "w") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", os.path.relpath(OUT, REPO))


if __name__ == "__main__":
    main()
