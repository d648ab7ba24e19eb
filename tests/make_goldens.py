#!/usr/bin/env python3
"""Generate the reference fixtures ("goldens") for the T5 Studio C++ tests.

Everything is produced with the real Hugging Face ``transformers`` library (slow
``T5Tokenizer`` with ``legacy=True``, ``T5ForConditionalGeneration`` /
``MT5ForConditionalGeneration``) from RANDOM weights -- no network, no downloads.

Run from the repository root (takes well under two minutes on 2 CPU cores):

    .venv/bin/python tests/make_goldens.py

It (re)writes, idempotently and deterministically (fixed seeds):

  tests/data/t5-spiece/{spiece.model,LICENSE-NOTE.md}
      copy of the genuine Google T5 SentencePiece model from ../shared.
  tests/data/goldens/tokenizer_t5.json
      T5Tokenizer encode/decode goldens on the genuine model (>= 30 strings).
  tests/data/models/tiny-spm/{spiece.model,LICENSE-NOTE.md}
      tiny unigram SentencePiece model (byte_fallback, nmt_nfkc, T5 id layout)
      trained on a deterministic sample of ../shared/data (Tatoeba + JGLUE).
  tests/data/goldens/tokenizer_tiny.json
      the same tokenizer goldens on the tiny model (exercises byte fallback).
  tests/data/models/<name>/
      tiny random checkpoints (save_pretrained + spiece.model + tokenizer files):
      t5v10-tied-relu, flan-gated-gelu-bf16, unequal-depth-bin,
      sharded-safetensors, sharded-bin, mt5-like-f16.
  tests/data/goldens/<name>.json
      fp32 / eval-mode goldens computed from each checkpoint RELOADED from disk
      (encoder hidden states, teacher-forced logits/loss, greedy, beam, and the
      repetition_penalty / no_repeat_ngram_size / min_new_tokens variants).
  tests/data/goldens/shared_tiny_t5v10.json, shared_tiny_flan_t5.json
      greedy / beam goldens for the independent fixtures in
      ../shared/fixtures/tiny-t5-random.
  tests/data/goldens/train_adamw.json
      20 AdamW steps on one fixed batch (per-step loss, step-0 grad norms).

Floats coming from fp32 tensors are written with the shortest decimal string that
round-trips to the same float32 value (lossless for fp32; parse as double and cast
to float to get the exact value back).
"""

import hashlib
import io
import json
import os
import random
import shutil
import tempfile
import time
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import sentencepiece as spm  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from transformers import (  # noqa: E402
    MT5Config,
    MT5ForConditionalGeneration,
    T5Config,
    T5ForConditionalGeneration,
    T5Tokenizer,
)

transformers.logging.set_verbosity_error()
torch.set_num_threads(1)  # tiny ops: threads only add overhead

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.normpath(os.path.join(REPO, "..", "shared"))
if not os.path.isdir(SHARED):
    SHARED = "/work/shared"
DATA = os.path.join(REPO, "tests", "data")
GOLD = os.path.join(DATA, "goldens")
MODELS = os.path.join(DATA, "models")

GENUINE_SPM = os.path.join(SHARED, "fixtures", "t5-spiece", "spiece.model")
GENUINE_SHA = "d60acb128cf7b7f2536e8f38a5b18a05535c9e14c7a355904270e15b0945ea86"

WRITTEN = []  # paths written, for the summary
NOTES = []  # summary lines


# --------------------------------------------------------------------------- utils
def f32(x):
    """Shortest decimal that round-trips to the float32 value x (as a Python float)."""
    if isinstance(x, torch.Tensor):
        x = x.detach().float().item()
    return float(str(np.float32(x)))


def tolist32(t):
    """Nested lists of floats (float32 shortest repr) from a tensor."""
    a = t.detach().to(torch.float32).cpu().numpy()
    if a.ndim == 0:
        return f32(a)
    flat = [float(s) for s in map(str, a.reshape(-1))]
    out = np.array(flat, dtype=object).reshape(a.shape)
    return out.tolist()


def ids(t):
    return [int(v) for v in t.tolist()]


def atomic_write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    WRITTEN.append(path)


def write_json(path, obj, compact=False):
    if compact:
        # one top-level key per line, values compact
        parts = [
            json.dumps(k, ensure_ascii=False) + ":" + json.dumps(v, ensure_ascii=False, separators=(",", ":"))
            for k, v in obj.items()
        ]
        text = "{\n" + ",\n".join(parts) + "\n}\n"
    else:
        text = json.dumps(obj, ensure_ascii=False, indent=1) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))


def replace_dir(final, build_fn):
    """Build a directory in a temp location, then swap it into place."""
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=".tmp-" + os.path.basename(final) + "-")
    try:
        build_fn(tmp)
        os.chmod(tmp, 0o755)
        for fn in os.listdir(tmp):
            os.chmod(os.path.join(tmp, fn), 0o644)
        if os.path.isdir(final):
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for root, _, files in os.walk(final):
        for fn in files:
            WRITTEN.append(os.path.join(root, fn))


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def make_tokenizer(spm_path):
    return T5Tokenizer(vocab_file=spm_path, legacy=True, extra_ids=100)


# ------------------------------------------------------------------ 1. genuine spm
GENUINE_NOTE = """# t5-spiece/spiece.model

The genuine Google T5 SentencePiece model (the vocabulary shipped with t5-small/base/large and
flan-t5-*): 32000 unigram pieces, `<pad>`=0, `</s>`=1, `<unk>`=2, no BOS, normaliser nmt_nfkc.
Hugging Face adds `<extra_id_0..99>` on top (extra_id_0 = 32099, counting down).

- Licence: Apache-2.0 (Google, T5 / text-to-text-transfer-transformer).
- Found as `test/torchtext_unittest/asset/t5_tokenizer_base.model` in the pytorch/text repository
  (BSD-3-Clause).
- sha256 d60acb128cf7b7f2536e8f38a5b18a05535c9e14c7a355904270e15b0945ea86

Copied by `tests/make_goldens.py` from `../shared/fixtures/t5-spiece/spiece.model`.
"""


def step_genuine_spm():
    got = sha256(GENUINE_SPM)
    assert got == GENUINE_SHA, f"unexpected sha256 of {GENUINE_SPM}: {got}"
    with open(GENUINE_SPM, "rb") as f:
        atomic_write_bytes(os.path.join(DATA, "t5-spiece", "spiece.model"), f.read())
    atomic_write_bytes(os.path.join(DATA, "t5-spiece", "LICENSE-NOTE.md"), GENUINE_NOTE.encode())
    return os.path.join(DATA, "t5-spiece", "spiece.model")


# ------------------------------------------------------------- 2. tokenizer goldens
TOKENIZER_TEXTS = [
    "Hello world!",
    "The quick brown fox jumps over the lazy dog.",
    "translate English to German: That is good.",
    "",
    " ",
    "   ",
    "Hello <extra_id_0>.",
    "<extra_id_1>,<extra_id_2>!",
    "The <extra_id_0> walks in <extra_id_1> park",
    "a <extra_id_0> b",
    "a<extra_id_0>b",
    "  <extra_id_5>  spaced  <extra_id_99>  ",
    "<extra_id_0>",
    "multiple   spaces   here",
    "tab\tseparated\tvalues",
    "line one\nline two\n\nline four",
    "  leading and trailing spaces  ",
    "ＡＢＣ１２３！ full-width ｶﾀｶﾅ",
    "literal </s> in the middle",
    "pad <pad> and unk <unk> tokens",
    "</s></s>",
    "emoji 😀🎉 and ❤️ hearts",
    "Café, naïve résumé, Ångström, façade, Straße",
    "3.14159 and 1,234,567 and 2024-01-31 and 42%",
    "https://example.com/path?query=1&x=y#frag",
    "user@example.org wrote: <b>bold</b>",
    "我爱你。今天天气很好。",
    "私は学生です。東京に住んでいます。",
    "カタカナとひらがなと漢字",
    "안녕하세요, 세계!",
    "English 中文 日本語 한국어 mixed",
    "▁ already has ▁ underscores▁here",
    "▁▁▁",
    "\u00a0non-breaking\u00a0space and zero\u200bwidth",
    "ﬁ ligature and ① circled and ㍻ era",
    "Ünïcödé ÇÀPS and lowercase",
    "x" * 40,
    "summarize: Studies have been shown that owning a dog is good for you. "
    "Researchers followed thousands of dog owners for over a decade, measuring "
    "their health, mood and activity levels, and found consistent benefits.",
]

DECODE_CASES_GENUINE = [
    [8774, 32099, 3, 5, 1],
    [32099, 0, 1, 32098, 100, 1],
    [0, 32099, 8, 1782, 32098, 1, 0, 0],
    [1, 1],
    [0, 0, 0],
    [],
    [3, 3, 3],
    [2, 3, 2, 1],
    [100, 1, 200, 32097, 300],
    [8774, 6, 3, 9, 32000, 32050, 1],
]


def tokenizer_goldens(tok, spm_path, name, decode_cases):
    sp = spm.SentencePieceProcessor(model_file=spm_path)
    cases = []
    for text in TOKENIZER_TEXTS:
        input_ids = tok(text).input_ids
        cases.append(
            {
                "text": text,
                "ids": input_ids,
                "tokens": tok.convert_ids_to_tokens(input_ids),
                "decoded_skip": tok.decode(input_ids, skip_special_tokens=True),
                "decoded_keep": tok.decode(input_ids, skip_special_tokens=False),
            }
        )
    dcases = []
    for dc in decode_cases:
        dcases.append(
            {
                "ids": dc,
                "decoded_skip": tok.decode(dc, skip_special_tokens=True),
                "decoded_keep": tok.decode(dc, skip_special_tokens=False),
            }
        )
    sp_size = sp.get_piece_size()
    obj = {
        "generator": "tests/make_goldens.py",
        "transformers_version": transformers.__version__,
        "sentencepiece_version": spm.__version__,
        "tokenizer": "transformers.T5Tokenizer(vocab_file, legacy=True, extra_ids=100) (slow)",
        "spiece_model": os.path.relpath(spm_path, DATA),
        "spiece_sha256": sha256(spm_path),
        "sp_size": sp_size,
        "vocab_size": tok.vocab_size,
        "len_tokenizer": len(tok),
        "pad_id": tok.pad_token_id,
        "eos_id": tok.eos_token_id,
        "unk_id": tok.unk_token_id,
        "extra_id_0": tok.convert_tokens_to_ids("<extra_id_0>"),
        "extra_id_99": tok.convert_tokens_to_ids("<extra_id_99>"),
        "clean_up_tokenization_spaces": bool(tok.clean_up_tokenization_spaces),
        "cases": cases,
        "decode_cases": dcases,
    }
    write_json(os.path.join(GOLD, name), obj)
    return obj


# ------------------------------------------------------------------- 3. tiny spm
TINY_NOTE = """# tiny-spm/spiece.model

A tiny SentencePiece unigram model (vocab 400, byte_fallback=True, character_coverage 0.98,
normalization nmt_nfkc, T5 id layout: `<pad>`=0, `</s>`=1, `<unk>`=2, no BOS) trained by
`tests/make_goldens.py` on a deterministic sample (random.Random(20240531)) of:

- Tatoeba English/Mandarin pairs (`../shared/data/tatoeba-cmn-eng/cmn-eng.tsv`):
  CC BY 2.0 FR, attribute Tatoeba (tatoeba.org) and its contributors;
- JGLUE JSTS v1.3 `sentence1` (`../shared/data/jglue-jsts/train.jsonl`): CC BY-SA 4.0,
  credit Yahoo Japan Corporation / JGLUE authors.

As a model derived from that text it is distributed under CC BY-SA 4.0 (compatible with both).
The same file is copied into every tiny model directory under `tests/data/models/`.
"""

TINY_SP_VOCAB = 400


def step_tiny_spm():
    lines = open(os.path.join(SHARED, "data", "tatoeba-cmn-eng", "cmn-eng.tsv"), encoding="utf-8").read().splitlines()
    ja = [
        json.loads(l)["sentence1"]
        for l in open(os.path.join(SHARED, "data", "jglue-jsts", "train.jsonl"), encoding="utf-8")
        if l.strip()
    ]
    rng = random.Random(20240531)
    pairs = rng.sample(lines, 4000)
    jas = rng.sample(ja, 150)
    sents = [p.split("\t")[0] for p in pairs] + [p.split("\t")[1] for p in pairs[:150]] + jas
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sents),
        model_writer=buf,
        model_type="unigram",
        vocab_size=TINY_SP_VOCAB,
        byte_fallback=True,
        character_coverage=0.98,  # unigram trainer requires >= 0.98
        normalization_rule_name="nmt_nfkc",
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        num_threads=1,
        minloglevel=2,
    )
    d = os.path.join(MODELS, "tiny-spm")
    atomic_write_bytes(os.path.join(d, "spiece.model"), buf.getvalue())
    atomic_write_bytes(os.path.join(d, "LICENSE-NOTE.md"), TINY_NOTE.encode())
    return os.path.join(d, "spiece.model")


# ------------------------------------------------------------ 4. tiny checkpoints
# Three inputs (English, Japanese, Chinese) and three label texts for teacher forcing.
MODEL_TEXTS = ["Tom is a good boy.", "猫が好きです。", "我们走吧。"]
LABEL_TEXTS = ["Tom ran.", "I like it.", "Go."]


def round_up(n, m=8):
    return (n + m - 1) // m * m


# Init knobs on top of the HF initialisation (see build_random_model). With tied
# embeddings (T5 v1.0 head) the decoder input embedding leaks straight into the
# logits and greedy decoding just repeats one token; shrinking the embedding and
# boosting the residual-branch outputs breaks that. The </s> row is boosted so
# that some greedy outputs stop early (exercises EOS handling and min_new_tokens).
# The decoder's final LayerNorm is scaled up for the tied models so that their
# (d_model**-0.5-scaled) logits are not nearly uniform.
TIED_INIT = dict(out_scale=8.0, emb_scale=0.5, eos_boost=2.5, final_ln_scale=3.0)
UNTIED_INIT = dict(out_scale=1.0, emb_scale=1.0, eos_boost=2.0, final_ln_scale=1.0)


def variants(tok_len):
    base_vocab = round_up(tok_len, 8)
    common = dict(
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        dropout_rate=0.1,
        layer_norm_epsilon=1e-6,
    )
    return [
        dict(
            name="t5v10-tied-relu",
            seed=1014,
            cls="t5",
            save=dict(safe_serialization=True),
            dtype=torch.float32,
            init=TIED_INIT,
            cfg=dict(
                vocab_size=base_vocab, d_model=32, d_kv=8, num_heads=4, d_ff=64,
                num_layers=2, num_decoder_layers=2, feed_forward_proj="relu",
                tie_word_embeddings=True, relative_attention_num_buckets=32,
                relative_attention_max_distance=128, **common),
        ),
        dict(
            name="flan-gated-gelu-bf16",
            seed=2005,
            cls="t5",
            save=dict(safe_serialization=True),
            dtype=torch.bfloat16,
            init=UNTIED_INIT,
            cfg=dict(
                vocab_size=base_vocab, d_model=24, d_kv=8, num_heads=2, d_ff=48,
                num_layers=2, num_decoder_layers=2, feed_forward_proj="gated-gelu",
                tie_word_embeddings=False, relative_attention_num_buckets=8,
                relative_attention_max_distance=16, **common),
        ),
        dict(
            name="unequal-depth-bin",
            seed=3012,
            cls="t5",
            save=dict(safe_serialization=False),
            dtype=torch.float32,
            init=TIED_INIT,
            cfg=dict(
                vocab_size=base_vocab, d_model=16, d_kv=4, num_heads=3, d_ff=32,
                num_layers=3, num_decoder_layers=1, feed_forward_proj="gated-silu",
                tie_word_embeddings=True, relative_attention_num_buckets=16,
                relative_attention_max_distance=20, **common),
        ),
        dict(
            name="sharded-safetensors",
            seed=4005,
            cls="t5",
            save=dict(safe_serialization=True, max_shard_size="24KB"),
            dtype=torch.float32,
            init=UNTIED_INIT,
            cfg=dict(
                vocab_size=base_vocab, d_model=16, d_kv=4, num_heads=2, d_ff=32,
                num_layers=2, num_decoder_layers=2, feed_forward_proj="gated-gelu",
                tie_word_embeddings=False, relative_attention_num_buckets=16,
                relative_attention_max_distance=32, **common),
        ),
        dict(
            name="sharded-bin",
            seed=5003,
            cls="t5",
            save=dict(safe_serialization=False, max_shard_size="16KB"),
            dtype=torch.float32,
            init=TIED_INIT,
            cfg=dict(
                vocab_size=base_vocab, d_model=16, d_kv=4, num_heads=4, d_ff=32,
                num_layers=2, num_decoder_layers=2, feed_forward_proj="relu",
                tie_word_embeddings=True, relative_attention_num_buckets=32,
                relative_attention_max_distance=128, **common),
        ),
        dict(
            name="mt5-like-f16",
            seed=6002,
            cls="mt5",
            save=dict(safe_serialization=True),
            dtype=torch.float16,
            init=UNTIED_INIT,
            cfg=dict(
                vocab_size=tok_len + 60, d_model=32, d_kv=8, num_heads=4, d_ff=64,
                num_layers=2, num_decoder_layers=2, feed_forward_proj="gated-gelu",
                tie_word_embeddings=False, relative_attention_num_buckets=32,
                relative_attention_max_distance=128, **common),
        ),
    ]


def build_random_model(v, seed):
    """HF init, then perturb LayerNorm weights (HF sets them to exactly 1) and boost the
    relative-position biases so that every weight matters, then apply v["init"]."""
    torch.manual_seed(seed)
    if v["cls"] == "mt5":
        model = MT5ForConditionalGeneration(MT5Config(**v["cfg"]))
    else:
        model = T5ForConditionalGeneration(T5Config(**v["cfg"]))
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layer_norm" in name:
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            elif "relative_attention_bias" in name:
                p.copy_(torch.randn(p.shape, generator=g))
            elif name.endswith(".o.weight") or name.endswith(".wo.weight"):
                p.mul_(v["init"]["out_scale"])
        model.decoder.final_layer_norm.weight.mul_(v["init"]["final_ln_scale"])
        model.shared.weight.mul_(v["init"]["emb_scale"])
        model.shared.weight[1].mul_(v["init"]["eos_boost"])
        if not model.config.tie_word_embeddings:
            model.lm_head.weight[1].mul_(v["init"]["eos_boost"])
    model.eval()
    return model


def save_model_dir(final, v, model, spm_path, tok):
    def build(tmp):
        m = model.to(v["dtype"])
        m.save_pretrained(tmp, **v["save"])
        tok.save_pretrained(tmp)
        shutil.copyfile(spm_path, os.path.join(tmp, "spiece.model"))
        shutil.copyfile(os.path.join(MODELS, "tiny-spm", "LICENSE-NOTE.md"), os.path.join(tmp, "LICENSE-NOTE.md"))
        model.to(torch.float32)

    replace_dir(final, build)


def load_fp32(path, cls):
    klass = MT5ForConditionalGeneration if cls == "mt5" else T5ForConditionalGeneration
    try:
        m = klass.from_pretrained(path, dtype=torch.float32)
    except TypeError:
        m = klass.from_pretrained(path, torch_dtype=torch.float32)
    m.eval()
    return m


# -------------------------------------------------------------- 5. model goldens
def strip_seq(seq, eos=1, drop_start=True):
    s = list(seq)
    if drop_start:
        s = s[1:]
    if eos in s:
        s = s[: s.index(eos) + 1]
    return s


def pad_batch(seqs, value):
    L = max(len(s) for s in seqs)
    return torch.tensor([s + [value] * (L - len(s)) for s in seqs], dtype=torch.long)


@torch.no_grad()
def gen(model, input_ids, **kw):
    return model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kw)


@torch.no_grad()
def greedy_with_score(model, ii, max_new_tokens=12):
    out = model.generate(
        input_ids=ii, attention_mask=torch.ones_like(ii), max_new_tokens=max_new_tokens,
        do_sample=False, num_beams=1, return_dict_in_generate=True, output_scores=True,
    )
    seq = out.sequences[0].tolist()
    total = 0.0
    for step, sc in enumerate(out.scores):
        lp = torch.log_softmax(sc[0].float(), dim=-1)
        total += float(lp[seq[step + 1]])
    return strip_seq(seq), total


@torch.no_grad()
def beam(model, ii, num_beams, num_return_sequences, max_new_tokens, length_penalty, early_stopping):
    out = model.generate(
        input_ids=ii, attention_mask=torch.ones_like(ii), max_new_tokens=max_new_tokens,
        do_sample=False, num_beams=num_beams, num_return_sequences=num_return_sequences,
        length_penalty=length_penalty, early_stopping=early_stopping,
        return_dict_in_generate=True, output_scores=True,
    )
    seqs = [strip_seq(s) for s in out.sequences.tolist()]
    scores = [f32(x) for x in out.sequences_scores.tolist()]
    return seqs, scores


@torch.no_grad()
def sum_logprob(model, ii, seq):
    """Teacher-forced sum of log-softmax(raw logits) of seq (start token excluded)."""
    dec = torch.tensor([[0] + seq[:-1]]) if seq else None
    if not seq:
        return 0.0
    logits = model(input_ids=ii, attention_mask=torch.ones_like(ii), decoder_input_ids=dec).logits[0]
    lp = torch.log_softmax(logits.float(), dim=-1)
    return f32(sum(float(lp[i, t]) for i, t in enumerate(seq)))


BEAM_CFGS = [
    dict(num_beams=4, num_return_sequences=4, max_new_tokens=10, length_penalty=1.0, early_stopping=False),
    dict(num_beams=3, num_return_sequences=2, max_new_tokens=10, length_penalty=0.6, early_stopping=True),
]


def decode_suite(model, inputs):
    """All decoding goldens for a list of 1-D id lists (each run alone)."""
    res = {"greedy": [], "greedy_scores": [], "beam": [[] for _ in BEAM_CFGS],
           "repetition_penalty": [], "no_repeat_ngram": [], "min_new_tokens": []}
    for x in inputs:
        ii = torch.tensor([x])
        g, s = greedy_with_score(model, ii)
        res["greedy"].append(g)
        res["greedy_scores"].append(f32(s))
        for bi, bc in enumerate(BEAM_CFGS):
            seqs, scores = beam(model, ii, **bc)
            res["beam"][bi].append({"sequences": seqs, "sequences_scores": scores,
                                    "sum_logprobs": [sum_logprob(model, ii, q) for q in seqs]})
        common = dict(max_new_tokens=12, do_sample=False, num_beams=1)
        res["repetition_penalty"].append(strip_seq(gen(model, ii, repetition_penalty=1.5, **common)[0].tolist()))
        res["no_repeat_ngram"].append(strip_seq(gen(model, ii, no_repeat_ngram_size=2, **common)[0].tolist()))
        res["min_new_tokens"].append(strip_seq(gen(model, ii, min_new_tokens=8, **common)[0].tolist()))
    return res


def quality(res):
    """Return (ok, reasons, soft_score) for the non-degeneracy requirements."""
    reasons = []
    greedy = res["greedy"]
    if any(len(g) == 0 or g[0] == 1 for g in greedy):
        reasons.append("greedy emits </s> first")
    toks = set(t for g in greedy for t in g if t != 1)
    if len(toks) <= 1:
        reasons.append("greedy is a single repeated token")
    if len(set(map(tuple, greedy))) < len(greedy):
        reasons.append("greedy identical across inputs")
    for bcfg in res["beam"]:
        for b in bcfg:
            sc = b["sequences_scores"]
            if any(abs(sc[i] - sc[i + 1]) < 2e-3 for i in range(len(sc) - 1)):  # 2x margin
                reasons.append("beam score gap < 2e-3")
            if len(set(map(tuple, b["sequences"]))) < len(b["sequences"]):
                reasons.append("duplicate beam sequences")
    if all(a == b for a, b in zip(res["repetition_penalty"], greedy)):
        reasons.append("repetition_penalty never differs")
    if all(a == b for a, b in zip(res["no_repeat_ngram"], greedy)):
        reasons.append("no_repeat_ngram never differs")
    soft = 0
    if any(g[-1] == 1 for g in greedy):
        soft += 1  # some greedy output stops on </s>
    if any(a != b for a, b in zip(res["min_new_tokens"], greedy)):
        soft += 1  # min_new_tokens has an effect
    return not reasons, sorted(set(reasons)), soft


@torch.no_grad()
def model_goldens(model, tok, cfg_json):
    inputs = [tok(t).input_ids for t in MODEL_TEXTS]
    labels = [tok(t).input_ids for t in LABEL_TEXTS]
    enc_ids = pad_batch(inputs, 0)
    attn = (torch.arange(enc_ids.shape[1])[None, :] < torch.tensor([len(x) for x in inputs])[:, None]).long()
    enc = model.get_encoder()(input_ids=enc_ids, attention_mask=attn).last_hidden_state

    lab = pad_batch(labels, -100)
    dec_in = model._shift_right(lab)
    out = model(input_ids=enc_ids, attention_mask=attn, labels=lab)
    # sanity: explicit decoder_input_ids give the same logits
    out2 = model(input_ids=enc_ids, attention_mask=attn, decoder_input_ids=dec_in)
    assert torch.equal(out.logits, out2.logits)
    loss_rows = []
    for x, y in zip(inputs, labels):
        o = model(input_ids=torch.tensor([x]), labels=torch.tensor([y]))
        loss_rows.append(f32(o.loss))

    suite = decode_suite(model, inputs)
    bo = model.generate(input_ids=enc_ids, attention_mask=attn, max_new_tokens=12, do_sample=False, num_beams=1)
    greedy_batch = [strip_seq(s) for s in bo.tolist()]

    obj = {
        "generator": "tests/make_goldens.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "compute_dtype": "float32",
        "texts": MODEL_TEXTS,
        "input_ids": inputs,
        "tokens": [tok.convert_ids_to_tokens(x) for x in inputs],
        "encoder": {
            "input_ids": enc_ids.tolist(),
            "attention_mask": attn.tolist(),
            "hidden": tolist32(enc),
        },
        "teacher_forced": {
            "input_ids": enc_ids.tolist(),
            "attention_mask": attn.tolist(),
            "label_texts": LABEL_TEXTS,
            "labels": lab.tolist(),
            "decoder_input_ids": dec_in.tolist(),
            "logits": tolist32(out.logits),
            "loss": f32(out.loss),
            "loss_per_row": loss_rows,
            "argmax": out.logits.argmax(-1).tolist(),
        },
        "greedy": {
            "max_new_tokens": 12,
            "per_input": suite["greedy"],
            "batch_padded": greedy_batch,
        },
        "greedy_scores": suite["greedy_scores"],
        "beam": [dict(config=bc, per_input=suite["beam"][i]) for i, bc in enumerate(BEAM_CFGS)],
        "repetition_penalty": {"repetition_penalty": 1.5, "max_new_tokens": 12, "per_input": suite["repetition_penalty"]},
        "no_repeat_ngram": {"no_repeat_ngram_size": 2, "max_new_tokens": 12, "per_input": suite["no_repeat_ngram"]},
        "min_new_tokens": {"min_new_tokens": 8, "max_new_tokens": 12, "per_input": suite["min_new_tokens"]},
        "config": cfg_json,
    }
    return obj, suite


@torch.no_grad()
def quick_check(model, inputs):
    """Cheap greedy-only pre-check: no </s> first, some variety, and some input stops
    on </s> within the first 8 new tokens (so min_new_tokens=8 has an effect)."""
    gs = [gen(model, torch.tensor([x]), max_new_tokens=12, do_sample=False, num_beams=1)[0].tolist()[1:] for x in inputs]
    if any(g[0] == 1 for g in gs):
        return False
    if len(set(t for g in gs for t in g)) < 5:
        return False
    return any(1 in g[1:8] for g in gs)


def pick_seed(v, inputs):
    """Use the preset seed if it passes all checks, else search onwards."""
    fallback = None
    for attempt in range(60):
        seed = v["seed"] + attempt
        # judge the dtype-rounded weights, i.e. what the goldens will see
        probe = build_random_model(v, seed).to(v["dtype"]).to(torch.float32).eval()
        quick = quick_check(probe, inputs)
        if not quick and fallback is not None:
            continue
        ok, _, soft = quality(decode_suite(probe, inputs))
        if ok and quick and soft == 2:
            return seed, attempt + 1
        if ok and fallback is None:
            fallback = seed
    if fallback is None:
        raise SystemExit(f"{v['name']}: no seed satisfied the quality checks")
    return fallback, 60


def step_models(tiny_spm, tok):
    results = {}
    inputs = [tok(t).input_ids for t in MODEL_TEXTS]
    for v in variants(len(tok)):
        t0 = time.time()
        seed, attempts = pick_seed(v, inputs)
        model = build_random_model(v, seed)
        final = os.path.join(MODELS, v["name"])
        save_model_dir(final, v, model, tiny_spm, tok)
        reloaded = load_fp32(final, v["cls"])
        with open(os.path.join(final, "config.json"), encoding="utf-8") as f:
            cfg_json = json.load(f)
        obj, suite = model_goldens(reloaded, tok, cfg_json)
        obj["variant"] = v["name"]
        obj["init_seed"] = seed
        ok, reasons, soft = quality(suite)
        assert ok, (v["name"], reasons)
        write_json(os.path.join(GOLD, v["name"] + ".json"), obj, compact=True)
        results[v["name"]] = (obj, suite, time.time() - t0, os.listdir(final))
        print(f"[model] {v['name']}: seed {seed} ({attempts} seed(s) tried), {time.time() - t0:.1f}s", flush=True)
        if attempts > 1:
            NOTES.append(f"{v['name']}: preset seed {v['seed']} failed the checks, used {seed}; update the table")
    return results


# ----------------------------------------------------- 6. shared tiny fixtures
@torch.no_grad()
def step_shared():
    base = os.path.join(SHARED, "fixtures", "tiny-t5-random")
    out = {}
    for name in ["tiny_t5v10", "tiny_flan_t5"]:
        cfg = T5Config.from_json_file(os.path.join(base, name + "_config.json"))
        model = T5ForConditionalGeneration(cfg)
        sd = load_file(os.path.join(base, name + ".safetensors"))
        missing, unexpected = model.load_state_dict(sd, strict=False)
        allowed = {"encoder.embed_tokens.weight", "decoder.embed_tokens.weight"}
        if cfg.tie_word_embeddings:
            allowed.add("lm_head.weight")
        assert set(missing) <= allowed, missing
        assert not unexpected, unexpected
        model.tie_weights()
        model.float().eval()
        ref = json.load(open(os.path.join(base, name + "_logits.json")))
        enc = torch.tensor(ref["enc_sequences"])
        dec = torch.tensor(ref["dec_sequences"])
        o = model(input_ids=enc, decoder_input_ids=dec)
        d_logits = float((o.logits.double() - torch.tensor(ref["logits"], dtype=torch.float64)).abs().max())
        d_hidden = float((o.encoder_last_hidden_state.double() - torch.tensor(ref["enc_hidden"], dtype=torch.float64)).abs().max())
        assert d_logits < 1e-4 and d_hidden < 1e-4, (name, d_logits, d_hidden)
        greedy, beams, gaps = [], [], []
        for x in ref["enc_sequences"]:
            ii = torch.tensor([x])
            greedy.append(strip_seq(gen(model, ii, max_new_tokens=8, do_sample=False, num_beams=1)[0].tolist()))
            seqs, scores = beam(model, ii, num_beams=4, num_return_sequences=4, max_new_tokens=6,
                                length_penalty=1.0, early_stopping=False)
            beams.append({"sequences": seqs, "sequences_scores": scores})
            gaps.append(min(abs(scores[i] - scores[i + 1]) for i in range(len(scores) - 1)))
        obj = {
            "generator": "tests/make_goldens.py",
            "transformers_version": transformers.__version__,
            "source": f"../shared/fixtures/tiny-t5-random/{name}.safetensors + {name}_config.json",
            "compute_dtype": "float32",
            "check_vs_float64_reference": {"max_abs_logits": d_logits, "max_abs_enc_hidden": d_hidden},
            "enc_sequences": ref["enc_sequences"],
            "greedy": {"max_new_tokens": 8, "per_input": greedy},
            "beam": {"config": dict(num_beams=4, num_return_sequences=4, max_new_tokens=6,
                                    length_penalty=1.0, early_stopping=False), "per_input": beams},
        }
        write_json(os.path.join(GOLD, f"shared_{name}.json"), obj, compact=True)
        out[name] = (greedy, beams, gaps, d_logits)
    return out


# ------------------------------------------------------------- 7. training parity
TRAIN_SRC = ["Tom is a good boy.", "猫が好きです。", "我们走吧。", "I like green tea."]
TRAIN_TGT = ["我爱你。", "I like cats.", "Let's go.", "我喜欢绿茶。"]


def step_train(tok):
    src = [tok(t).input_ids for t in TRAIN_SRC]
    tgt = [tok(t).input_ids for t in TRAIN_TGT]
    input_ids = pad_batch(src, 0)
    attn = (input_ids != 0).long()
    for i, s in enumerate(src):
        assert int(attn[i].sum()) == len(s)
    labels = pad_batch(tgt, -100)
    runs = {}
    for name in ["t5v10-tied-relu", "flan-gated-gelu-bf16"]:
        torch.manual_seed(0)
        model = load_fp32(os.path.join(MODELS, name), "t5")
        model.eval()  # dropout off, grads still on
        params = list(model.parameters())  # the tied shared weight appears once
        named = dict(model.named_parameters())
        opt = torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
        losses, norms = [], []
        step0 = None
        for step in range(20):
            opt.zero_grad(set_to_none=True)
            loss = model(input_ids=input_ids, attention_mask=attn, labels=labels).loss
            loss.backward()
            gn = torch.sqrt(sum((p.grad.double() ** 2).sum() for p in params if p.grad is not None))
            losses.append(f32(loss))
            norms.append(float(gn))
            if step == 0:
                keys = ["shared.weight", "encoder.block.0.layer.0.SelfAttention.q.weight",
                        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
                        "decoder.block.0.layer.1.EncDecAttention.k.weight",
                        "decoder.final_layer_norm.weight"]
                if not model.config.tie_word_embeddings:
                    keys.append("lm_head.weight")
                step0 = {
                    "total": float(gn),
                    "per_param": {k: float(named[k].grad.double().norm()) for k in keys},
                }
            opt.step()
        runs[name] = {
            "config": {"tie_word_embeddings": model.config.tie_word_embeddings,
                       "feed_forward_proj": model.config.feed_forward_proj},
            "num_parameters": sum(p.numel() for p in params),
            "loss_per_step": losses,
            "grad_norm_per_step": norms,
            "step0_grad_norm": step0,
        }
    obj = {
        "generator": "tests/make_goldens.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "description": "fp32, model.eval() (dropout off) with grads; torch.optim.AdamW(lr=1e-3, "
                       "betas=(0.9,0.999), eps=1e-8, weight_decay=0.0); no clipping; 20 steps on one "
                       "fixed batch; loss_per_step[i] is the HF loss (mean over labels != -100) BEFORE "
                       "update i; grad norms are L2 over all parameters (tied shared weight counted once), "
                       "computed in float64 from fp32 grads.",
        "optimizer": {"name": "AdamW", "lr": 1e-3, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0},
        "steps": 20,
        "batch": {
            "source_texts": TRAIN_SRC,
            "target_texts": TRAIN_TGT,
            "input_ids": input_ids.tolist(),
            "attention_mask": attn.tolist(),
            "labels": labels.tolist(),
        },
        "models": runs,
    }
    write_json(os.path.join(GOLD, "train_adamw.json"), obj, compact=True)
    return runs


# ------------------------------------------------------------------------ main
def main():
    t0 = time.time()
    os.makedirs(GOLD, exist_ok=True)
    os.makedirs(MODELS, exist_ok=True)
    genuine = step_genuine_spm()
    tok_g = make_tokenizer(genuine)
    tg = tokenizer_goldens(tok_g, genuine, "tokenizer_t5.json", DECODE_CASES_GENUINE)
    tiny = step_tiny_spm()
    tok = make_tokenizer(tiny)
    sp_tiny = spm.SentencePieceProcessor(model_file=tiny).get_piece_size()
    n = len(tok)
    # tiny spm: ids 3..258 are the byte pieces <0x00>..<0xFF> (id = 3 + byte), 259 is "▁";
    # 234,139,180 = the UTF-8 bytes of 爱.
    tiny_decode = [[259, 234, 139, 180, 1], [234, 139, 1], [234, n - 1, 139, 180, 1],
                   [n - 1, 0, 1, n - 2, 100, 1], [1, 1], [0, 0], [], [2, 259, 2, 1],
                   [100, 1, 200, n - 3, 300], [290, 282, 268, 259, 291, 266, 266, 272, 302, 266, 279, 260, 1]]
    tokenizer_goldens(tok, tiny, "tokenizer_tiny.json", tiny_decode)
    print(f"[tokenizer] genuine sp_size={tg['sp_size']} len={tg['len_tokenizer']}; tiny sp_size={sp_tiny} len={n}")

    results = step_models(tiny, tok)
    shared = step_shared()
    train = step_train(tok)

    # ---------------------------------------------------------------- summary
    print("\n=== models ===")
    for name, (obj, suite, dt, files) in results.items():
        c = obj["config"]
        print(f"{name}: seed={obj['init_seed']} vocab={c['vocab_size']} d_model={c['d_model']} d_kv={c['d_kv']} "
              f"heads={c['num_heads']} d_ff={c['d_ff']} layers={c['num_layers']}/{c['num_decoder_layers']} "
              f"ffn={c['feed_forward_proj']} tied={c.get('tie_word_embeddings', True)} dtype={c.get('dtype', c.get('torch_dtype'))} "
              f"({dt:.1f}s) files={sorted(files)}")
        for i in range(3):
            g = suite["greedy"][i]
            flags = []
            if suite["repetition_penalty"][i] != g:
                flags.append("rep_penalty differs")
            if suite["no_repeat_ngram"][i] != g:
                flags.append("no_repeat differs")
            if suite["min_new_tokens"][i] != g:
                flags.append("min_new differs")
            print(f"   in{i} greedy={g} score={suite['greedy_scores'][i]:.4f} [{', '.join(flags)}]")
            print(f"       rep={suite['repetition_penalty'][i]} nrng={suite['no_repeat_ngram'][i]} min8={suite['min_new_tokens'][i]}")
            b = suite["beam"][0][i]
            print(f"       beam4 scores={[round(s, 4) for s in b['sequences_scores']]} lens={[len(s) for s in b['sequences']]}")
        if obj["greedy"]["batch_padded"] != obj["greedy"]["per_input"]:
            print("   NOTE: padded-batch greedy differs from per-input greedy")
    print("\n=== shared fixtures ===")
    for name, (greedy, beams, gaps, dl) in shared.items():
        print(f"{name}: greedy={greedy} beam-min-gap={[f'{g:.2e}' for g in gaps]} max|logits-ref64|={dl:.2e}")
    print("\n=== training ===")
    for name, r in train.items():
        print(f"{name}: loss {r['loss_per_step'][0]:.4f} -> {r['loss_per_step'][-1]:.4f}; step0 |g|={r['step0_grad_norm']['total']:.4f}")
    print("\n=== files ===")
    total = 0
    for p in sorted(set(WRITTEN)):
        if os.path.exists(p):
            sz = os.path.getsize(p)
            total += sz
            print(f"{sz:>9}  {os.path.relpath(p, REPO)}")
    for n in NOTES:
        print("NOTE:", n)
    print(f"total {total} bytes written ({total / 1e6:.2f} MB); {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
