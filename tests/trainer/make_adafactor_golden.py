#!/usr/bin/env python3
"""Adafactor golden for test_trainer: transformers.optimization.Adafactor on the train_adamw batch.

Writes tests/trainer/goldens/train_adafactor.json. Same protocol as tests/make_goldens.py's AdamW
section: fp32, model.eval() (dropout off) with grads, loss before each update, no clipping.
Run with the project venv: .venv/bin/python tests/trainer/make_adafactor_golden.py
"""
import json
import os

import torch
import transformers
from transformers import T5ForConditionalGeneration
from transformers.optimization import Adafactor

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
batch = json.load(open(os.path.join(DATA, "goldens", "train_adamw.json")))["batch"]
input_ids = torch.tensor(batch["input_ids"])
attn = torch.tensor(batch["attention_mask"])
labels = torch.tensor(batch["labels"])

SETTINGS = [
    ("t5v10-tied-relu", dict(lr=None, scale_parameter=True, relative_step=True, warmup_init=False, beta1=None, weight_decay=0.0)),
    ("flan-gated-gelu-bf16", dict(lr=1e-3, scale_parameter=False, relative_step=False, warmup_init=False, beta1=None, weight_decay=0.0)),
    ("t5v10-tied-relu", dict(lr=None, scale_parameter=True, relative_step=True, warmup_init=True, beta1=0.9, weight_decay=0.01)),
]
runs = []
for name, s in SETTINGS:
    torch.manual_seed(0)
    model = T5ForConditionalGeneration.from_pretrained(os.path.join(DATA, "models", name), dtype=torch.float32)
    model.eval()
    opt = Adafactor(list(model.parameters()), **s)
    losses = []
    for _ in range(10):
        opt.zero_grad(set_to_none=True)
        loss = model(input_ids=input_ids, attention_mask=attn, labels=labels).loss
        loss.backward()
        losses.append(float(loss))
        opt.step()
    named = dict(model.named_parameters())
    keys = ["shared.weight", "encoder.block.0.layer.0.SelfAttention.q.weight",
            "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
            "decoder.block.1.layer.2.layer_norm.weight", "decoder.final_layer_norm.weight"]
    runs.append({"model": name, "settings": s, "loss_per_step": losses,
                 "final_param_sums": {k: float(named[k].double().sum()) for k in keys}})
out = {"generator": "tests/trainer/make_adafactor_golden.py", "transformers_version": transformers.__version__,
       "torch_version": torch.__version__, "runs": runs}
os.makedirs(os.path.join(HERE, "goldens"), exist_ok=True)
with open(os.path.join(HERE, "goldens", "train_adafactor.json"), "w") as f:
    json.dump(out, f, indent=1)
print(json.dumps([(r["model"], r["loss_per_step"][-1]) for r in runs]))
