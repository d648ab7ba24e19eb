#!/usr/bin/env python3
"""A random-weight sentence-transformers folder of paraphrase-multilingual-MiniLM-L12-v2's shape
(BertModel: 12 layers, hidden 384, 12 heads, intermediate 1536, vocab 250037; XLM-R SentencePiece
tokenizer; mean pooling), cached under tests/bench/out/models/minilm. The tokenizer is the genuine
T5 SentencePiece model (tests/data/t5-spiece, 32k pieces) rewritten into XLM-R's layout (<unk>=0,
<s>=1, </s>=2): the candidates the random t5-small produces are strings of T5 pieces, so they come
back as about as many tokens as they were generated with, as with a real multilingual vocabulary
(a small fixture vocabulary splits them into 3-4x more). The vocabulary size only costs memory.

    .venv/bin/python tests/bench/make_embedder.py [--out DIR]      prints the folder
"""
import argparse
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
T5_SPIECE = os.path.join(ROOT, "tests", "data", "t5-spiece", "spiece.model")


def xlmr_layout_spiece(path):
    """T5's spiece.model (<pad>=0, </s>=1, <unk>=2) with its first three pieces made XLM-R's."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    with open(T5_SPIECE, "rb") as f:
        m.ParseFromString(f.read())
    for i, (piece, kind) in enumerate([("<unk>", pb.ModelProto.SentencePiece.UNKNOWN),
                                       ("<s>", pb.ModelProto.SentencePiece.CONTROL),
                                       ("</s>", pb.ModelProto.SentencePiece.CONTROL)]):
        m.pieces[i].piece = piece
        m.pieces[i].type = kind
        m.pieces[i].score = 0.0
    m.trainer_spec.unk_id, m.trainer_spec.bos_id, m.trainer_spec.eos_id, m.trainer_spec.pad_id = 0, 1, 2, -1
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "out", "models"))
    args = ap.parse_args()
    folder = os.path.join(args.out, "minilm")
    if not os.path.exists(os.path.join(folder, "modules.json")):
        import torch
        from sentence_transformers import SentenceTransformer
        from sentence_transformers import models as st_models
        from transformers import BertConfig, BertModel, XLMRobertaTokenizer

        torch.manual_seed(0)
        config = BertConfig(vocab_size=250037, hidden_size=384, num_hidden_layers=12, num_attention_heads=12,
                            intermediate_size=1536, max_position_embeddings=512, pad_token_id=1, hidden_act="gelu")
        tmp = folder + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        BertModel(config).eval().save_pretrained(tmp + "-hf", safe_serialization=True)
        spm = tmp + "-sentencepiece.bpe.model"
        xlmr_layout_spiece(spm)
        XLMRobertaTokenizer(vocab_file=spm).save_pretrained(tmp + "-hf")
        os.remove(spm)
        transformer = st_models.Transformer(tmp + "-hf", max_seq_length=128)
        st = SentenceTransformer(modules=[transformer, st_models.Pooling(384, "mean")], device="cpu")
        st.save(tmp)
        shutil.rmtree(tmp + "-hf")
        os.rename(tmp, folder)
    print(folder)


if __name__ == "__main__":
    main()
