#!/usr/bin/env python3
"""Tiny random sentence-transformers models and embedding goldens for t5s::Embedder (no network).

Writes under tests/data/embedder/ one folder per supported shape, saved by
SentenceTransformer.save (modules.json, sentence_bert_config.json, 1_Pooling, 2_Dense, ...):
  bert_xlmr_mean        BertModel + XLM-R SentencePiece tokenizer + mean pooling
                        (paraphrase-multilingual-MiniLM-L12-v2's shape)
  xlmr_mean_norm        XLMRobertaModel + mean pooling + Normalize
                        (paraphrase-multilingual-mpnet-base-v2 / multilingual-e5's shape)
  bert_wordpiece_cls_dense_norm
                        BertModel + WordPiece + CLS pooling + Dense(Tanh) + Normalize (LaBSE's shape)
  bert_wordpiece_max    BertModel + WordPiece (cased) + max pooling
  bert_wordpiece_hub    bert_wordpiece_max as the Hub ships such folders (all-MiniLM-L6-v2):
                        tokenizer.json only (no vocab.txt), and the int64 buffer
                        embeddings.position_ids in model.safetensors
and goldens.json: per model, the token ids from the model's own (HF) tokenizer and the embeddings
from SentenceTransformer.encode, for mixed English / Chinese / Japanese sentences, one of them
longer than max_seq_length (truncation).

    .venv/bin/python tests/make_embedder_goldens.py [--shared ../shared] [--hub-only]

--hub-only rewrites bert_wordpiece_hub and its goldens from the bert_wordpiece_max folder alone.
"""
import argparse
import json
import pathlib
import shutil
import tempfile

from golden_corpus import shared_corpus

import sentencepiece as spm
import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers import models as st_models
from safetensors.torch import load_file, save_file
from transformers import (AutoTokenizer, BertConfig, BertModel, BertTokenizer, XLMRobertaConfig, XLMRobertaModel,
                          XLMRobertaTokenizer)

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "data" / "embedder"
MAX_SEQ_LENGTH = 24
HIDDEN = 32

SENTENCES = [
    "Hello, world! How are you today?",
    "The QUICK brown fox jumped over the lazy dogs.",
    "café naïve résumé",
    "レンガの建物の前を、乳母車を押した女性が歩いています。",
    "山の上に顔の白い牛が2頭います。",
    "我们今天去公园散步吧。你好！",
    "Tom は 東京 に住んでいます and likes 北京烤鸭.",
    "x",
    "",
    " ".join(["long sentence number one two three four five six seven eight nine ten"] * 3),
]


def corpus(shared):
    return shared_corpus(shared, [s for s in SENTENCES if s.strip()], jsts_rows=200, tatoeba_rows=2000)


def train_sentencepiece(lines, model_path):
    """A small unigram model in XLM-R's layout (<unk>=0, <s>=1, </s>=2); rare characters stay <unk>."""
    with tempfile.TemporaryDirectory() as tmp:
        text = pathlib.Path(tmp) / "corpus.txt"
        text.write_text("\n".join(lines) + "\n", encoding="utf-8")
        prefix = pathlib.Path(tmp) / "m"
        spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(prefix), vocab_size=700,
                                       model_type="unigram", character_coverage=0.98, num_threads=1,
                                       unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2)
        model_path.write_bytes((prefix.parent / "m.model").read_bytes())


def small_config(cls, vocab_size, hidden=HIDDEN, **kw):
    return cls(vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=2, num_attention_heads=4,
               intermediate_size=2 * hidden, max_position_embeddings=64, hidden_act="gelu", **kw)


def save_transformer(tmp, name, model, tokenizer):
    path = pathlib.Path(tmp) / name
    model.save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return st_models.Transformer(str(path), max_seq_length=MAX_SEQ_LENGTH)


def build(tmp, spm_model, vocab_txt):
    torch.manual_seed(11)
    xlmr_tok = XLMRobertaTokenizer(vocab_file=str(spm_model))
    bert_tok = BertTokenizer(vocab_file=str(vocab_txt), do_lower_case=True)
    cased_tok = BertTokenizer(vocab_file=str(vocab_txt), do_lower_case=False)
    out = {}

    t = save_transformer(tmp, "a", BertModel(small_config(BertConfig, len(xlmr_tok), pad_token_id=1)), xlmr_tok)
    out["bert_xlmr_mean"] = [t, st_models.Pooling(HIDDEN, "mean")]

    cfg = small_config(XLMRobertaConfig, len(xlmr_tok), pad_token_id=1, bos_token_id=0, eos_token_id=2,
                       type_vocab_size=1)
    t = save_transformer(tmp, "b", XLMRobertaModel(cfg), xlmr_tok)
    out["xlmr_mean_norm"] = [t, st_models.Pooling(HIDDEN, "mean"), st_models.Normalize()]

    # WordPiece vocabularies are large for a fixture: these two are narrower.
    t = save_transformer(tmp, "c", BertModel(small_config(BertConfig, len(bert_tok), 16)), bert_tok)
    dense = st_models.Dense(16, 12, bias=True, activation_function=torch.nn.Tanh())
    out["bert_wordpiece_cls_dense_norm"] = [t, st_models.Pooling(16, "cls"), dense, st_models.Normalize()]

    t = save_transformer(tmp, "d", BertModel(small_config(BertConfig, len(cased_tok), 16)), cased_tok)
    out["bert_wordpiece_max"] = [t, st_models.Pooling(16, "max")]
    return out


CLASSIC_TYPES = {"Transformer": "sentence_transformers.models.Transformer",
                 "Pooling": "sentence_transformers.models.Pooling",
                 "Dense": "sentence_transformers.models.Dense",
                 "Normalize": "sentence_transformers.models.Normalize"}
# Folders rewritten in the layout of the models published on the Hub (sentence-transformers 2.x:
# pooling_mode_* flags, max_seq_length in sentence_bert_config.json; LaBSE keeps its transformer
# in 0_Transformer/), to test the loader on both layouts.
CLASSIC = {"bert_xlmr_mean": "", "bert_wordpiece_cls_dense_norm": "0_Transformer"}
TRANSFORMER_FILES = ["config.json", "model.safetensors", "sentencepiece.bpe.model", "vocab.txt",
                     "special_tokens_map.json", "tokenizer_config.json", "sentence_bert_config.json"]


def write_json(path, obj):
    path.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")


def rewrite_classic(folder, transformer_path):
    modules = json.loads((folder / "modules.json").read_text())
    for m in modules:
        m["type"] = CLASSIC_TYPES[m["type"].rsplit(".", 1)[1]]
        if m["idx"] == 0:
            m["path"] = transformer_path
    write_json(folder / "modules.json", modules)
    write_json(folder / "sentence_bert_config.json", {"max_seq_length": MAX_SEQ_LENGTH, "do_lower_case": False})
    pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    write_json(folder / "1_Pooling" / "config.json", {
        "word_embedding_dimension": pooling["embedding_dimension"],
        "pooling_mode_cls_token": pooling["pooling_mode"] == "cls",
        "pooling_mode_mean_tokens": pooling["pooling_mode"] == "mean",
        "pooling_mode_max_tokens": pooling["pooling_mode"] == "max",
        "pooling_mode_mean_sqrt_len_tokens": False})
    dense = folder / "2_Dense" / "config.json"
    if dense.exists():
        d = json.loads(dense.read_text())
        write_json(dense, {k: d[k] for k in ("in_features", "out_features", "bias", "activation_function")})
    if transformer_path:
        (folder / transformer_path).mkdir()
        for name in TRANSFORMER_FILES:
            if (folder / name).exists():
                (folder / name).rename(folder / transformer_path / name)


def golden_entry(st, layout):
    tok = st.tokenizer
    emb = st.encode(SENTENCES, batch_size=4, convert_to_numpy=True)
    return {
        "tokenizer": type(tok).__name__,
        "layout": layout,
        "ids": [tok(s, truncation=True, max_length=st.max_seq_length)["input_ids"] for s in SENTENCES],
        "embeddings": [[round(float(v), 7) for v in row] for row in emb],
    }


def write_hub_copy(goldens, src_name="bert_wordpiece_max", name="bert_wordpiece_hub"):
    """`src_name` in the Hub's shape: the fast tokenizer's tokenizer.json in place of vocab.txt,
    and embeddings.position_ids (int64, as BertEmbeddings registers it) in model.safetensors."""
    src, dst = OUT / src_name, OUT / name
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    AutoTokenizer.from_pretrained(str(src)).save_pretrained(str(dst))
    (dst / "vocab.txt").unlink()
    tensors = load_file(dst / "model.safetensors")
    positions = json.loads((dst / "config.json").read_text())["max_position_embeddings"]
    tensors["embeddings.position_ids"] = torch.arange(positions, dtype=torch.int64).unsqueeze(0)
    save_file(tensors, dst / "model.safetensors", metadata={"format": "pt"})
    st = SentenceTransformer(str(dst), device="cpu")
    assert type(st.tokenizer).__name__ == "BertTokenizerFast"
    goldens["models"][name] = golden_entry(st, "Hub: tokenizer.json only, int64 position_ids")
    print(name, sorted(p.name for p in dst.rglob("*") if p.is_file()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(HERE.parent.parent / "shared"))
    ap.add_argument("--hub-only", action="store_true")
    args = ap.parse_args()
    if args.hub_only:
        goldens = json.loads((OUT / "goldens.json").read_text(encoding="utf-8"))
        write_hub_copy(goldens)
        (OUT / "goldens.json").write_text(json.dumps(goldens, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    vocab_txt = HERE / "data" / "embed" / "wordpiece" / "vocab.txt"
    goldens = {"sentences": SENTENCES, "max_seq_length": MAX_SEQ_LENGTH, "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        spm_model = pathlib.Path(tmp) / "sentencepiece.bpe.model"
        train_sentencepiece(corpus(pathlib.Path(args.shared)), spm_model)
        for name, modules in build(tmp, spm_model, vocab_txt).items():
            st = SentenceTransformer(modules=modules, device="cpu")
            st.eval()
            folder = OUT / name
            shutil.rmtree(folder, ignore_errors=True)
            st.save(str(folder))
            # The C++ loader reads vocab.txt / sentencepiece.bpe.model; tokenizer.json is not needed.
            (folder / "tokenizer.json").unlink(missing_ok=True)
            (folder / "README.md").unlink(missing_ok=True)
            before = st.encode(SENTENCES, batch_size=4, convert_to_numpy=True)
            if name in CLASSIC:
                rewrite_classic(folder, CLASSIC[name])
            reloaded = SentenceTransformer(str(folder), device="cpu")
            goldens["models"][name] = golden_entry(reloaded, "classic" if name in CLASSIC else "sentence-transformers 5")
            emb = goldens["models"][name]["embeddings"]
            assert abs(torch.tensor(emb) - torch.tensor(before)).max() < 1e-6, f"{name}: the saved folder does not reproduce the model"
            tok = reloaded.tokenizer
            print(name, type(tok).__name__, len(emb), sorted(p.name for p in folder.rglob("*") if p.is_file()))
    write_hub_copy(goldens)
    (OUT / "goldens.json").write_text(json.dumps(goldens, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
