#!/usr/bin/env python3
"""Goldens for transformers' logits processors and warpers that T5 Studio implements beyond the
first ones (encoder_no_repeat_ngram_size, encoder_repetition_penalty, bad_words_ids / bad_words,
min_p, typical_p, epsilon_cutoff, eta_cutoff), computed by transformers itself.

Run from the repository root (a few seconds, CPU, no network):

    .venv/bin/python tests/make_processor_goldens.py

It (re)writes tests/data/goldens/processors.json, deterministically (fixed seeds):

  unit      random float32 logits, decoder sequences and encoder inputs; each processor's output
            from transformers' own class (tests/test_processor_goldens.cpp compares exactly).
  generate  token ids of transformers' generate() on tests/data/models/t5v10-tied-relu, greedy and
            beam, with each deterministic processor (and bad_words as text, tokenized as
            transformers' docs show: tokenizer(words, add_special_tokens=False)).
  model_config  a generation_config.json carrying the keys, and generate() with no arguments on a
            folder holding it (the C++ test writes the same file next to a copy of the model).

Floats are float32 values written as doubles (exact); -inf is written as null.
"""

import json
import math
import os
import shutil
import tempfile
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import transformers  # noqa: E402
from transformers import T5ForConditionalGeneration, T5Tokenizer  # noqa: E402
from transformers.generation import logits_process as lp  # noqa: E402

transformers.logging.set_verbosity_error()
torch.set_num_threads(1)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(REPO, "tests", "data", "models", "t5v10-tied-relu")
OUT = os.path.join(REPO, "tests", "data", "goldens", "processors.json")
EOS = 1


def floats(t):
    return [[None if math.isinf(x) and x < 0 else float(np.float32(x)) for x in row] for row in t.tolist()]


def unit_goldens():
    g = torch.Generator().manual_seed(1234)
    rows, vocab = 4, 24
    scores = torch.randn(rows, vocab, generator=g) * 3.0
    sources = torch.randint(2, 10, (rows, 8), generator=g)
    sequences = torch.randint(2, 10, (rows, 5), generator=g)
    sequences[:, 0] = 0  # the decoder start token
    sequences[0, 3:] = sources[0, 2:4]  # tails that repeat source n-grams
    sequences[2, 2:] = sources[2, 1:4]
    cases = []

    def case(name, params, processor):
        out = processor(sequences.clone(), scores.clone())
        cases.append({"processor": name, "params": params, "scores": floats(out)})

    for p in (1.5, 0.5):
        case("encoder_repetition_penalty", {"penalty": p}, lp.EncoderRepetitionPenaltyLogitsProcessor(p, sources))
    for n in (1, 2, 3):
        case("encoder_no_repeat_ngram_size", {"n": n}, lp.EncoderNoRepeatNGramLogitsProcessor(n, sources))
    bad = [[int(sequences[0, 4])], [int(sequences[2, 4]), 5], [EOS], [3, 4, 5, 6, 7, 8, 9], [int(sequences[1, 3]), int(sequences[1, 4]), 7]]
    case("bad_words_ids", {"ids": bad}, lp.NoBadWordsLogitsProcessor(bad, EOS))
    for v in (0.05, 0.3):
        case("min_p", {"p": v}, lp.MinPLogitsWarper(v))
    for v in (0.5, 0.9):
        case("typical_p", {"p": v}, lp.TypicalLogitsWarper(v))
    for v in (0.02, 0.1):
        case("epsilon_cutoff", {"e": v}, lp.EpsilonLogitsWarper(v))
    for v in (0.02, 0.2):
        case("eta_cutoff", {"e": v}, lp.EtaLogitsWarper(v))
    # The whole warper chain as generate() builds it (temperature, top-k, top-p, min-p, typical, epsilon, eta).
    chain = lp.LogitsProcessorList([lp.TemperatureLogitsWarper(0.7), lp.TopKLogitsWarper(12), lp.TopPLogitsWarper(0.95),
                                    lp.MinPLogitsWarper(0.01), lp.TypicalLogitsWarper(0.99), lp.EpsilonLogitsWarper(0.001),
                                    lp.EtaLogitsWarper(0.001)])
    case("warper_chain", {"temperature": 0.7, "top_k": 12, "top_p": 0.95, "min_p": 0.01, "typical_p": 0.99, "epsilon_cutoff": 0.001,
                          "eta_cutoff": 0.001}, chain)
    return {"scores": floats(scores), "sources": sources.tolist(), "sequences": sequences.tolist(), "cases": cases}


def new_ids(out):
    """generate()'s rows without the decoder start token, cut after </s> (beam rows are padded)."""
    rows = []
    for row in out.tolist():
        row = row[1:]
        if EOS in row:
            row = row[: row.index(EOS) + 1]
        rows.append(row)
    return rows


def generate_goldens(model, tok, inputs):
    base = {"max_new_tokens": 12}
    beam = {"max_new_tokens": 10, "num_beams": 4, "num_return_sequences": 4}
    words = "be,~,g"
    word_ids = tok(words.split(","), add_special_tokens=False).input_ids
    settings = [
        ("greedy", {"encoder_no_repeat_ngram_size": 1}),
        ("greedy", {"encoder_no_repeat_ngram_size": 2, "min_new_tokens": 8}),
        ("beam", {"encoder_no_repeat_ngram_size": 2, "min_new_tokens": 6}),
        ("greedy", {"bad_words_ids": [[121], [129, 129], [443, 291], [1]]}),
        ("beam", {"bad_words_ids": [[121], [129, 129], [443, 291], [1]]}),
        ("beam", {"bad_words": words}),
        # transformers gathers the unexpanded encoder ids, so with beams only the first rows are
        # penalised: greedy only (one row per input) is the same computation.
        ("greedy", {"encoder_repetition_penalty": 1.5}),
        ("greedy", {"encoder_repetition_penalty": 0.5}),
        ("greedy", {"encoder_repetition_penalty": 0.5, "encoder_no_repeat_ngram_size": 2, "repetition_penalty": 1.5,
                    "no_repeat_ngram_size": 2, "bad_words_ids": [[130]], "min_new_tokens": 3}),
    ]
    cases = []
    for mode, options in settings:
        kwargs = dict(base if mode == "greedy" else beam)
        hf = {k: v for k, v in options.items() if k != "bad_words"}
        if "bad_words" in options:
            hf["bad_words_ids"] = word_ids
        kwargs.update(hf)
        plain = {k: v for k, v in kwargs.items() if k not in ("encoder_no_repeat_ngram_size", "bad_words_ids", "encoder_repetition_penalty")}
        per_input, changed = [], False
        for ids in inputs:
            t = torch.tensor([ids])
            out = new_ids(model.generate(t, **kwargs))
            changed = changed or out != new_ids(model.generate(t, **plain))
            per_input.append(out)
        assert changed, f"{mode} {options} changes no output: not a test"
        cases.append({"mode": mode, "settings": {**{k: v for k, v in kwargs.items()}, **options}, "per_input": per_input})
    return {"bad_words": words, "bad_words_ids": word_ids, "cases": cases}


def model_config_golden(model_dir, inputs):
    config = json.load(open(os.path.join(model_dir, "generation_config.json")))
    config.update({"max_length": 13, "encoder_no_repeat_ngram_size": 2, "bad_words_ids": [[129, 129]], "encoder_repetition_penalty": 0.5})
    with tempfile.TemporaryDirectory() as tmp:
        for name in os.listdir(model_dir):
            shutil.copy(os.path.join(model_dir, name), tmp)
        json.dump(config, open(os.path.join(tmp, "generation_config.json"), "w"))
        model = T5ForConditionalGeneration.from_pretrained(tmp).eval()
        per_input = [new_ids(model.generate(torch.tensor([ids]))) for ids in inputs]
    return {"generation_config": config, "per_input": per_input}


def main():
    torch.manual_seed(0)
    model = T5ForConditionalGeneration.from_pretrained(MODEL).eval()
    tok = T5Tokenizer.from_pretrained(MODEL, legacy=True)
    texts = ["Tom is a good boy.", "猫が好きです。", "我们走吧。", "gggg is is is vvv"]
    inputs = [tok(t).input_ids for t in texts]
    # Sources holding n-grams of this random model's outputs (it copies nothing from text): without
    # them the encoder processors would change no output.
    inputs += [[129, 129, 129, 1], [443, 291, 129, 129, 1], [121, 486, 11, 486, 486, 413, 129, 291, 1]]
    with torch.no_grad():
        golden = {
            "generator": "tests/make_processor_goldens.py",
            "transformers_version": transformers.__version__,
            "torch_version": torch.__version__,
            "unit": unit_goldens(),
            "model": "t5v10-tied-relu",
            "texts": texts,
            "input_ids": inputs,
            "generate": generate_goldens(model, tok, inputs),
            "model_config": model_config_golden(MODEL, inputs),
        }
    with open(OUT, "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    print("wrote", os.path.relpath(OUT, REPO))


if __name__ == "__main__":
    main()
