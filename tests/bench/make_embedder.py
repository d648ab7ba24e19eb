#!/usr/bin/env python3
"""A random-weight sentence-transformers folder of paraphrase-multilingual-MiniLM-L12-v2's shape
(BertModel: 12 layers, hidden 384, 12 heads, intermediate 1536, vocab 250037; XLM-R SentencePiece
tokenizer; mean pooling), cached under tests/bench/out/models/minilm. The tokenizer is the test
fixture's small XLM-R SentencePiece model (tests/data/embedder/bert_xlmr_mean): token counts, and
so the time, are of the same order as with the real one; the vocabulary size only costs memory.

    .venv/bin/python tests/bench/make_embedder.py [--out DIR]      prints the folder
"""
import argparse
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SPM = os.path.join(ROOT, "tests", "data", "embedder", "bert_xlmr_mean", "sentencepiece.bpe.model")


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
        XLMRobertaTokenizer(vocab_file=SPM).save_pretrained(tmp + "-hf")
        transformer = st_models.Transformer(tmp + "-hf", max_seq_length=128)
        st = SentenceTransformer(modules=[transformer, st_models.Pooling(384, "mean")], device="cpu")
        st.save(tmp)
        shutil.rmtree(tmp + "-hf")
        os.rename(tmp, folder)
    print(folder)


if __name__ == "__main__":
    main()
