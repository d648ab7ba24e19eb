#!/usr/bin/env python3
"""LoRA goldens for the T5 Studio tests, made with the real ``peft`` + ``transformers``.

Run from the repository root (a few seconds):  .venv/bin/python tests/make_lora_goldens.py

For each adapter below it loads a tiny random base from tests/data/models in fp32, wraps it with
``peft.get_peft_model(LoraConfig(...))`` (A: PEFT's seeded Kaiming-uniform init), fills lora_B with
seeded random values N(0, 0.05^2) (PEFT initialises B to zero, which would make the adapter a no-op;
much larger B makes the tiny random networks so ill-conditioned that PEFT's own fp32 and fp64 logits
differ by more than 1e-5), saves the adapter with
``save_pretrained`` into tests/data/lora/<adapter>/ (PEFT's own files and tensor names) and
RELOADS it with ``PeftModel.from_pretrained`` to compute, on the inputs of the model's parity
golden (tests/data/goldens/<base>.json):
  teacher-forced logits, greedy ids (max_new_tokens 12) and beam ids (every beam config there).
The continued-training golden: the t5v10 q,v,wo adapter trained 10 AdamW steps (lr 1e-3, betas
0.9/0.999, eps 1e-8, weight_decay 0, lora_dropout 0, model.eval()) on the train_adamw batch; the
loss before each step. Output: tests/data/goldens/lora.json.
"""
import json
import os
import shutil

import numpy as np
import peft
import torch
import transformers
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import T5ForConditionalGeneration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
MODELS = os.path.join(DATA, "models")
LORA = os.path.join(DATA, "lora")

ADAPTERS = [
    # name, base, targets, r, alpha, rslora
    ("t5v10-qv-wo", "t5v10-tied-relu", ["q", "v", "wo"], 4, 8, False),
    ("flan-qv-wo", "flan-gated-gelu-bf16", ["q", "v", "wo"], 4, 8, False),
    ("t5v10-all-rslora", "t5v10-tied-relu", "all-linear", 2, 4, True),
]


def f32(x):
    return float(str(np.float32(float(x))))


def tolist32(t):
    a = t.detach().to(torch.float32).numpy()
    return [float(s) for s in map(str, a.reshape(-1))]


def strip_seq(seq, eos=1):
    s = list(seq)[1:]  # drop the decoder start token
    return s[: s.index(eos) + 1] if eos in s else s


def load_base(name):
    return T5ForConditionalGeneration.from_pretrained(os.path.join(MODELS, name), dtype=torch.float32).eval()


def make_adapter(name, base, targets, r, alpha, rslora, seed):
    torch.manual_seed(seed)
    model = get_peft_model(load_base(base), LoraConfig(r=r, lora_alpha=alpha, lora_dropout=0.0, target_modules=targets,
                                                       use_rslora=rslora, task_type="SEQ_2_SEQ_LM"))
    with torch.no_grad():  # A keeps PEFT's Kaiming-uniform init; B gets small random values
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.copy_(torch.randn_like(p) * 0.05)
    out = os.path.join(LORA, name)
    shutil.rmtree(out, ignore_errors=True)
    model.save_pretrained(out)
    os.remove(os.path.join(out, "README.md"))  # PEFT's model card template: not needed by the tests
    cfg = json.load(open(os.path.join(out, "adapter_config.json")))
    cfg["base_model_name_or_path"] = base  # not the absolute path of this machine
    json.dump(cfg, open(os.path.join(out, "adapter_config.json"), "w"), indent=2, sort_keys=True)
    return out


@torch.no_grad()
def adapter_golden(adapter_dir, base):
    g = json.load(open(os.path.join(DATA, "goldens", base + ".json")))
    model = PeftModel.from_pretrained(load_base(base), adapter_dir).eval()
    tf = g["teacher_forced"]
    logits = model(input_ids=torch.tensor(tf["input_ids"]), attention_mask=torch.tensor(tf["attention_mask"]),
                   decoder_input_ids=torch.tensor(tf["decoder_input_ids"])).logits
    greedy = []
    for ids in g["input_ids"]:
        x = torch.tensor([ids])
        out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=12, do_sample=False)
        greedy.append(strip_seq(out[0].tolist()))
    beams = []
    for b in g["beam"]:
        c = b["config"]
        per_input = []
        for ids in g["input_ids"]:
            x = torch.tensor([ids])
            out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), do_sample=False, **c)
            per_input.append([strip_seq(s.tolist()) for s in out])
        beams.append({"config": c, "per_input": per_input})
    return {"base": base, "logits": {"shape": list(logits.shape), "data": tolist32(logits)}, "greedy": greedy,
            "beam": beams}


def train_golden(adapter_dir, base):
    batch = json.load(open(os.path.join(DATA, "goldens", "train_adamw.json")))["batch"]
    torch.manual_seed(0)
    model = PeftModel.from_pretrained(load_base(base), adapter_dir, is_trainable=True)
    model.eval()  # dropout off, grads on
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    x, m, y = (torch.tensor(batch[k]) for k in ("input_ids", "attention_mask", "labels"))
    losses = []
    for _ in range(10):
        opt.zero_grad(set_to_none=True)
        loss = model(input_ids=x, attention_mask=m, labels=y).loss
        loss.backward()
        losses.append(f32(loss.detach()))
        opt.step()
    return {"adapter": os.path.basename(adapter_dir), "base": base, "trainable": sum(p.numel() for p in params),
            "loss_per_step": losses}


def main():
    os.makedirs(LORA, exist_ok=True)
    out = {"generator": "tests/make_lora_goldens.py", "peft_version": peft.__version__,
           "transformers_version": transformers.__version__, "torch_version": torch.__version__, "adapters": {}}
    for seed, (name, base, targets, r, alpha, rslora) in enumerate(ADAPTERS):
        d = make_adapter(name, base, targets, r, alpha, rslora, 100 + seed)
        out["adapters"][name] = adapter_golden(d, base)
    out["train_adamw"] = train_golden(os.path.join(LORA, "t5v10-qv-wo"), "t5v10-tied-relu")
    text = "{\n" + ",\n".join(json.dumps(k) + ":" + json.dumps(v, separators=(",", ":")) for k, v in out.items()) + "\n}\n"
    with open(os.path.join(DATA, "goldens", "lora.json"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
