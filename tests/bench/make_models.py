#!/usr/bin/env python3
"""Random-weight benchmark checkpoints, made once and cached under tests/bench/out/models/.

  small   t5-small shape: d_model 512, 6+6 layers, 8 heads, d_ff 2048, relu, tied head, vocab 32128
  base    t5-base shape:  d_model 768, 12+12 layers, 12 heads, d_ff 3072, relu, tied head, vocab 32128
  large   t5-large shape: d_model 1024, 24+24 layers, 16 heads, d_ff 4096, relu, tied head, vocab 32128
  mt5base mT5-base shape: d_model 768, 12+12 layers, 12 heads, d_ff 2048, gated-gelu, untied, vocab 250112
          (also accepted as mt5-base; the untied 250112 x 768 head is most of a decoding step's reads)

Each model is written in Hugging Face format (config.json + model.safetensors via
save_pretrained) with the genuine T5 spiece.model (tests/data/t5-spiece) so every tokenizer
works (mT5 too: the benchmarks feed ids below 32000, so a 32k piece model serves its 250k vocabulary), and, with --ct2, converted once for CTranslate2 (float32 on disk; int8 / bfloat16 are
chosen at load time with compute_type).

  python tests/bench/make_models.py [--models small,base] [--ct2] [--out DIR]
Prints one JSON line per model: {"name", "hf": dir, "ct2": dir or null}.
"""
import argparse
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SPIECE = os.path.join(ROOT, "tests", "data", "t5-spiece", "spiece.model")

SHAPES = {
    "small": dict(d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6, num_heads=8,
                  feed_forward_proj="relu", tie_word_embeddings=True, vocab_size=32128, model_type="t5"),
    "base": dict(d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_decoder_layers=12, num_heads=12,
                 feed_forward_proj="relu", tie_word_embeddings=True, vocab_size=32128, model_type="t5"),
    "large": dict(d_model=1024, d_kv=64, d_ff=4096, num_layers=24, num_decoder_layers=24, num_heads=16,
                  feed_forward_proj="relu", tie_word_embeddings=True, vocab_size=32128, model_type="t5"),
    "mt5base": dict(d_model=768, d_kv=64, d_ff=2048, num_layers=12, num_decoder_layers=12, num_heads=12,
                    feed_forward_proj="gated-gelu", tie_word_embeddings=False, vocab_size=250112, model_type="mt5"),
}
ALIASES = {"mt5-base": "mt5base", "t5-small": "small", "t5-base": "base", "t5-large": "large"}


def canonical(name):
    """The SHAPES key for a model name or one of its aliases (mt5-base -> mt5base)."""
    return ALIASES.get(name, name)


def write_tokenizer(model_dir):
    """spiece.model + tokenizer_config.json etc., so AutoTokenizer (and the CTranslate2 converter) load it."""
    import transformers
    shutil.copy(SPIECE, os.path.join(model_dir, "spiece.model"))
    try:
        transformers.T5Tokenizer(vocab_file=SPIECE, legacy=True).save_pretrained(model_dir)
    except Exception as e:  # the engines under test only need spiece.model
        print(f"[make_models] tokenizer files not written: {e}", file=sys.stderr)


def make_hf(name, out_dir):
    """Writes the HF checkpoint into out_dir (atomically: a temp dir renamed at the end)."""
    hf_dir = os.path.join(out_dir, name)
    if os.path.exists(os.path.join(hf_dir, "model.safetensors")):
        if not os.path.exists(os.path.join(hf_dir, "spiece.model")):
            write_tokenizer(hf_dir)  # an mT5 folder made before mT5 got one
        return hf_dir
    import torch
    import transformers

    shape = dict(SHAPES[name])
    model_type = shape.pop("model_type")
    cfg_cls = transformers.MT5Config if model_type == "mt5" else transformers.T5Config
    model_cls = transformers.MT5ForConditionalGeneration if model_type == "mt5" else transformers.T5ForConditionalGeneration
    config = cfg_cls(decoder_start_token_id=0, eos_token_id=1, pad_token_id=0, dropout_rate=0.1, **shape)
    torch.manual_seed(0)
    # Random init is much faster on a GPU when there is one (mT5-base has 580M parameters).
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = model_cls(config).eval()
    tmp = hf_dir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    write_tokenizer(tmp)
    shutil.rmtree(hf_dir, ignore_errors=True)
    os.rename(tmp, hf_dir)
    print(f"[make_models] wrote {hf_dir}", file=sys.stderr)
    return hf_dir


def make_ct2(name, hf_dir, out_dir):
    ct2_dir = os.path.join(out_dir, name + "-ct2")
    if os.path.exists(os.path.join(ct2_dir, "model.bin")):
        return ct2_dir
    try:
        import ctranslate2
    except ImportError:
        print("[make_models] ctranslate2 is not installed: no CTranslate2 model", file=sys.stderr)
        return None

    tmp = ct2_dir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    # Stored in float32; compute_type=int8 / bfloat16 quantises at load, like T5 Studio's --dtype.
    ctranslate2.converters.TransformersConverter(hf_dir).convert(tmp, quantization=None, force=True)
    shutil.rmtree(ct2_dir, ignore_errors=True)
    os.rename(tmp, ct2_dir)
    print(f"[make_models] converted {ct2_dir}", file=sys.stderr)
    return ct2_dir


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="small", help="comma list of: " + ",".join(SHAPES))
    ap.add_argument("--ct2", action="store_true", help="also convert for CTranslate2")
    ap.add_argument("--out", default=os.path.join(HERE, "out", "models"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for given in [m for m in args.models.split(",") if m]:
        name = canonical(given)
        if name not in SHAPES:
            sys.exit(f"unknown model '{given}' (expected one of {', '.join(SHAPES)}, or {', '.join(ALIASES)})")
        hf_dir = make_hf(name, args.out)
        ct2_dir = make_ct2(name, hf_dir, args.out) if args.ct2 else None
        print(json.dumps({"name": given, "hf": hf_dir, "ct2": ct2_dir}))


if __name__ == "__main__":
    main()
