#!/usr/bin/env python3
"""transformers loads the checkpoints T5 Studio's trainer wrote (test_checkpoints.cpp exports) with
no missing/unexpected keys, and its logits equal T5 Studio's within 1e-5; T5Tokenizer loads the
tokenizer files (the fast one where only tokenizer.json is there) and gives the same ids. Usage: check_hf_load.py EXPORT_DIR"""
import glob
import json
import os
import sys

import torch
from transformers import AutoTokenizer, T5ForConditionalGeneration, T5Tokenizer

exports = sorted(glob.glob(os.path.join(sys.argv[1], "logits-*.json")))
ok = True
if not exports:
    print("no exports found in", sys.argv[1])
    sys.exit(1)
for path in exports:
    ref = json.load(open(path, encoding="utf-8"))
    model_dir = ref["model_dir"]
    model, info = T5ForConditionalGeneration.from_pretrained(model_dir, output_loading_info=True, dtype=torch.float32)
    model.eval()
    problems = {k: v for k, v in info.items() if v}
    if problems:
        print(f"FAIL {model_dir}: loading info {problems}")
        ok = False
    ids = ref["input_ids"]
    width = max(len(r) for r in ids)
    input_ids = torch.tensor([r + [0] * (width - len(r)) for r in ids])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in ids])
    dec = torch.tensor(ref["decoder_input_ids"])
    with torch.no_grad():
        logits = model(input_ids=input_ids, attention_mask=mask, decoder_input_ids=dec).logits
    studio = torch.tensor(ref["logits"]).reshape(ref["shape"])
    diff = (logits - studio).abs().max().item()
    if os.path.exists(os.path.join(model_dir, "spiece.model")):
        tok = T5Tokenizer.from_pretrained(model_dir, legacy=True)
    else:  # saved from a base that had only tokenizer.json: the fast tokenizer
        tok = AutoTokenizer.from_pretrained(model_dir)
    tok_ids = [tok(t).input_ids for t in ref["texts"]]
    same_ids = tok_ids == ref["token_ids"]
    status = "ok" if diff < 1e-5 and same_ids else "FAIL"
    print(f"{status} {os.path.basename(path)}: max |logits diff| {diff:.3g}; tokenizer ids equal: {same_ids}")
    ok = ok and status == "ok"
sys.exit(0 if ok else 1)
