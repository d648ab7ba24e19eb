#!/usr/bin/env python3
"""Goldens for transformers' remaining generation controls: the logits processors sequence_bias,
suppress_tokens, begin_suppress_tokens, forced_bos_token_id, forced_eos_token_id,
exponential_decay_length_penalty and renormalize_logits, and the stopping criteria max_time and
stop_strings (tests/test_generation_controls.cpp compares).

NEEDS transformers 4.55.x: group beam search is built into transformers up to 4.55 (see
tests/make_group_beam_goldens.py), and every case runs greedy, beam and group beam. Run from the
repository root with the test-only venv (a few seconds, CPU, no network):

    .venv-ref/bin/python tests/make_control_goldens.py

It (re)writes tests/data/goldens/controls.json, deterministically:

  unit          random float32 logits and decoder sequences; each processor's output from
                transformers' own class (compared exactly).
  stop_strings  StopStringCriteria on the tiny checkpoint's T5Tokenizer (legacy=True, the
                SentencePiece tokenizer our engine matches): its "clean" string of every token and
                its verdict on every prefix of several decoder sequences, for several stop-string lists.
  generate      token ids of generate() on tests/data/models/t5v10-tied-relu, each input alone, in
                greedy, beam and group beam, for each control; sequences are cut at their own
                length (beam_indices), so a row stopped by a stop string keeps no padding.
  model_config  a generation_config.json carrying the processor keys, and generate() with no
                arguments on a folder holding it.

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
from transformers.generation.stopping_criteria import StopStringCriteria  # noqa: E402

transformers.logging.set_verbosity_error()
torch.set_num_threads(1)

if not transformers.__version__.startswith("4.55."):
    raise SystemExit(f"needs transformers 4.55.x (group beam search built in), found {transformers.__version__}")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(REPO, "tests", "data", "models", "t5v10-tied-relu")
OUT = os.path.join(REPO, "tests", "data", "goldens", "controls.json")
EOS = 1


def floats(t):
    return [[None if math.isinf(x) and x < 0 else float(np.float32(x)) for x in row] for row in t.tolist()]


def unit_goldens():
    g = torch.Generator().manual_seed(4321)
    rows, vocab = 4, 24
    scores = torch.randn(rows, vocab, generator=g) * 3.0
    scores[0, EOS] = -abs(float(scores[0, EOS]))  # the decay penalty on a negative and a positive </s> score
    scores[1, EOS] = abs(float(scores[1, EOS]))
    sequences = torch.randint(2, 10, (rows, 5), generator=g)
    sequences[:, 0] = 0  # the decoder start token
    sequences[1, 3:] = torch.tensor([4, 6])
    sequences[2, 2:] = torch.tensor([4, 6, 8])
    cases = []

    def case(name, params, processor, length=5):
        seqs = sequences[:, :length].clone()
        out = processor(seqs, scores.clone())
        assert not torch.equal(out, scores), f"{name} {params} changes nothing: not a test"
        cases.append({"processor": name, "params": params, "length": length, "scores": floats(out)})

    bias = [[[5], -2.0], [[4, 6], 1.5], [[3], 0.25], [[4, 6, 8], -0.75], [[6, 8], 3.0], [[9, 9, 9, 9, 9, 9, 9], 1.0]]
    case("sequence_bias", {"sequence_bias": bias}, lp.SequenceBiasLogitsProcessor(bias))
    bias2 = [[[7], 0.1], [[8], -0.3], [[2, 7], 0.2]]
    case("sequence_bias", {"sequence_bias": bias2}, lp.SequenceBiasLogitsProcessor(bias2))
    case("suppress_tokens", {"tokens": [3, 7, 30]}, lp.SuppressTokensLogitsProcessor([3, 7, 30]))
    case("begin_suppress_tokens", {"tokens": [2, 5], "begin_index": 5}, lp.SuppressTokensAtBeginLogitsProcessor([2, 5], 5))
    case("forced_bos_token_id", {"id": 7}, lp.ForcedBOSTokenLogitsProcessor(7), length=1)
    case("forced_eos_token_id", {"ids": [1], "max_length": 6}, lp.ForcedEOSTokenLogitsProcessor(6, [1]))
    case("forced_eos_token_id", {"ids": [1, 5], "max_length": 6}, lp.ForcedEOSTokenLogitsProcessor(6, [1, 5]))
    # Factors a float32 holds exactly: the engine's field is a float, transformers' a Python float.
    for start, factor in ((0, 1.5), (2, 0.75), (1, 2.0)):
        case("exponential_decay_length_penalty", {"start_index": start, "decay_factor": factor},
             lp.ExponentialDecayLengthPenalty((start, factor), EOS, 1))
    case("renormalize_logits", {}, lp.LogitNormalization())
    # The processors together, in generate()'s order (the decoder start token alone: input length 1).
    chain = lp.LogitsProcessorList([lp.SequenceBiasLogitsProcessor(bias), lp.ExponentialDecayLengthPenalty((1, 1.5), EOS, 1),
                                    lp.SuppressTokensLogitsProcessor([3, 7]), lp.SuppressTokensAtBeginLogitsProcessor([2], 5),
                                    lp.LogitNormalization()])
    case("chain", {"sequence_bias": bias, "exponential_decay_length_penalty": [1, 1.5], "suppress_tokens": [3, 7],
                   "begin_suppress_tokens": [2], "renormalize_logits": True}, chain)
    return {"scores": floats(scores), "sequences": sequences.tolist(), "cases": cases}


def stop_string_goldens(tok):
    tokens, indices = StopStringCriteria.clean_tokenizer_vocab(tok)
    clean = dict(zip(indices, tokens))
    texts = ["Tom is a good boy.", "猫が好きです。", "is is is stop it", "a\nb stopper st op"]
    sequences = [[0] + tok(t).input_ids for t in texts]
    g = torch.Generator().manual_seed(7)
    sequences += [[0] + torch.randint(0, 504, (12,), generator=g).tolist() for _ in range(3)]  # ids past the tokenizer's too
    sequences += [[0, 443, 130, 130, 291, 129, 129, 129, 129, 129, 194], [0, 347, 347, 368, 368, 368, 368, 486, 486, 413]]
    lists = [["good"], [".", "is a"], ["oy."], ["a"], ["s is", "stop"], ["~~~", "れれれ", "<extra_id_1", "b~"], ["op", "\x7f"], [" "]]
    verdicts = []
    for stops in lists:
        criteria = StopStringCriteria(tok, stops)
        per_seq = []
        for seq in sequences:
            per_seq.append([bool(criteria(torch.tensor([seq[:n]]), None)[0]) for n in range(1, len(seq) + 1)])
        verdicts.append({"stop_strings": stops, "per_sequence": per_seq})
    assert any(any(any(v) for v in x["per_sequence"]) for x in verdicts)
    return {"clean_tokens": [clean[i] for i in range(len(clean))], "sequences": sequences, "cases": verdicts}


MODES = {
    "greedy": {"max_new_tokens": 12},
    "beam": {"max_new_tokens": 10, "num_beams": 4, "num_return_sequences": 4},
    "group_beam": {"max_new_tokens": 10, "num_beams": 4, "num_beam_groups": 2, "diversity_penalty": 0.5, "num_return_sequences": 4},
}


def generated(model, ids, tok, **kwargs):
    """generate()'s rows without the decoder start token, cut after </s>, else at their own length
    (beam_indices: a row a stop string ended is padded to the longest)."""
    out = model.generate(torch.tensor([ids]), return_dict_in_generate=True, output_scores=True, tokenizer=tok, **kwargs)
    rows = []
    for r, row in enumerate(out.sequences.tolist()):
        row = row[1:]
        if EOS in row:
            row = row[: row.index(EOS) + 1]
        elif getattr(out, "beam_indices", None) is not None:
            row = row[: int((out.beam_indices[r] >= 0).sum())]
        rows.append(row)
    return rows


def generate_goldens(model, tok, inputs):
    settings = [
        {"sequence_bias": [[[129], -3.0], [[443, 291], 4.0], [[130, 130], -5.0], [[291, 129, 129], 2.5]]},
        {"suppress_tokens": [129, 130, 486]},
        {"begin_suppress_tokens": [121, 443, 1, 347, 24]},
        {"forced_bos_token_id": 308},
        {"forced_bos_token_id": 308, "begin_suppress_tokens": [130, 1]},
        {"forced_eos_token_id": 1},
        {"forced_eos_token_id": [260, 1]},
        {"exponential_decay_length_penalty": [2, 1.5]},
        {"exponential_decay_length_penalty": [0, 2.0]},
        {"sequence_bias": [[[129], -3.0], [[130], 2.0]], "suppress_tokens": [486], "renormalize_logits": True},
        {"stop_strings": ["~~~", "れれれ", "<extra_id_1", "b~"]},
        {"stop_strings": ["~", "れ", "\x7f", "<", "g", " ", "v"]},
        {"max_time": 1e-9},
    ]
    cases = []
    for options in settings:
        for mode, base in MODES.items():
            kwargs = dict(base, **options)
            per_input, plain = [], []
            for ids in inputs:
                per_input.append(generated(model, ids, tok, **kwargs))
                plain.append(generated(model, ids, tok, **base))
            changed = per_input != plain
            print(f"  {mode:10s} {json.dumps(options)}: {'changed' if changed else 'UNCHANGED'}")
            cases.append({"mode": mode, "settings": kwargs, "changed": changed, "per_input": per_input})
    for options in settings:
        assert any(c["changed"] for c in cases if all(c["settings"].get(k) == v for k, v in options.items())), options
    return {"cases": cases}


def model_config_golden(model_dir, inputs):
    config = json.load(open(os.path.join(model_dir, "generation_config.json")))
    config.update({"max_length": 13, "sequence_bias": [[[129], -3.0], [[443, 291], 4.0]], "suppress_tokens": [486],
                   "begin_suppress_tokens": [121, 24], "forced_eos_token_id": 1, "exponential_decay_length_penalty": [3, 1.5],
                   "renormalize_logits": True})
    with tempfile.TemporaryDirectory() as tmp:
        for name in os.listdir(model_dir):
            shutil.copy(os.path.join(model_dir, name), tmp)
        json.dump(config, open(os.path.join(tmp, "generation_config.json"), "w"))
        model = T5ForConditionalGeneration.from_pretrained(tmp).eval()
        per_input = [model.generate(torch.tensor([ids]))[0].tolist()[1:] for ids in inputs]
    return {"generation_config": config, "per_input": per_input}


def main():
    torch.manual_seed(0)
    model = T5ForConditionalGeneration.from_pretrained(MODEL, torch_dtype=torch.float32).eval()
    tok = T5Tokenizer.from_pretrained(MODEL, legacy=True)
    texts = ["Tom is a good boy.", "猫が好きです。", "我们走吧。", "gggg is is is vvv"]
    inputs = [tok(t).input_ids for t in texts]
    # Sources this random model answers with repeats (see tests/make_processor_goldens.py).
    inputs += [[443, 291, 129, 129, 1], [121, 486, 11, 486, 486, 413, 129, 291, 1]]
    with torch.no_grad():
        golden = {
            "generator": "tests/make_control_goldens.py",
            "transformers_version": transformers.__version__,
            "torch_version": torch.__version__,
            "unit": unit_goldens(),
            "stop_strings": stop_string_goldens(tok),
            "model": "t5v10-tied-relu",
            "texts": texts,
            "input_ids": inputs,
            "generate": generate_goldens(model, tok, inputs),
            "model_config": model_config_golden(MODEL, inputs),
        }
    with open(OUT, "w") as f:
        json.dump(golden, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", os.path.relpath(OUT, REPO))


if __name__ == "__main__":
    main()
