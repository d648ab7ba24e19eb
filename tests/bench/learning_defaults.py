"""How the learning loop's round defaults (t5s/learning.h) were chosen, without the documented test set.

A Python replica of a round (transformers + PEFT LoRA, the same hash held-out slice, replay sample,
step count min(max_steps, epochs * batches), constant lr, AdamW, clip 1, adoption only on a lower
held-out loss) run on assets/demo-model with the pairs learning_curve.py feeds, in the same order and
at the same marks. It is scored on a *dev* set the curve never uses: JGLUE JSTS valid pairs with
3.5 <= label < 4 (189; the test set is valid label >= 4, the first 46). Prints, per mark, the round
(A adopted / R rejected), its held-out losses, and the dev set's loss, greedy chrF and copy share.

usage: .venv/bin/python tests/bench/learning_defaults.py [--targets q,k,v,o,wi,wo] [--r 8] [--alpha 16]
       [--lr 1e-3] [--max-steps 100] [--epochs 3] [--replay 64] [--marks 25,50,100,200,400] [--seed 42]
"""
import argparse
import math
import os
import random
import sys

import torch
from peft import LoraConfig, get_peft_model
from transformers import T5ForConditionalGeneration, T5Tokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from learning_curve import PREFIX, ROOT, chrf, pairs_from  # noqa: E402

BASE = os.path.join(ROOT, "assets", "demo-model")
JSTS = os.path.join(ROOT, "..", "shared", "data", "jglue-jsts")


def pair_key(s, t):  # learning_round.cpp's pair_key: FNV-1a 64 of source \x1f target
    h = 0xcbf29ce484222325
    for c in (s + "\x1f" + t).encode():
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


class Bench:
    def __init__(self):
        self.tok = T5Tokenizer.from_pretrained(BASE)
        valid4 = pairs_from(os.path.join(JSTS, "valid.jsonl"), 4.0)
        self.feed = valid4[46:] + pairs_from(os.path.join(JSTS, "train.jsonl"), 3.5, 4.0)
        self.dev = pairs_from(os.path.join(JSTS, "valid.jsonl"), 3.5, 4.0)

    def batch(self, pairs):
        x = self.tok([PREFIX + s for s, _ in pairs], return_tensors="pt", padding=True, truncation=True, max_length=128)
        y = self.tok([t for _, t in pairs], return_tensors="pt", padding=True, truncation=True, max_length=128).input_ids
        y[y == self.tok.pad_token_id] = -100
        return x, y

    @torch.no_grad()
    def loss(self, m, pairs):
        m.eval()
        total = n = 0
        for i in range(0, len(pairs), 16):
            x, y = self.batch(pairs[i:i + 16])
            k = (y != -100).sum().item()
            total, n = total + m(**x, labels=y).loss.item() * k, n + k
        return total / n

    @torch.no_grad()
    def greedy(self, m, pairs):
        m.eval()
        hyps = []
        for i in range(0, len(pairs), 16):
            x = self.tok([PREFIX + s for s, _ in pairs[i:i + 16]], return_tensors="pt", padding=True)
            hyps += self.tok.batch_decode(m.generate(**x, max_new_tokens=64, num_beams=1, do_sample=False), skip_special_tokens=True)
        norm = lambda s: "".join(s.split())
        return (sum(chrf(h, t) for h, (_, t) in zip(hyps, pairs)) / len(pairs),
                sum(norm(h) == norm(s) for h, (s, _) in zip(hyps, pairs)) / len(pairs))

    def report(self, m, head):
        c, cp = self.greedy(m, self.dev)
        print(f"{head} | dev loss {self.loss(m, self.dev):.3f} chrF {c:.1f} copies {100 * cp:.0f} %", flush=True)


def train_round(b, m, train, a, seed):
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=a.lr, weight_decay=0)
    steps = max(1, min(a.max_steps, math.ceil(a.epochs * math.ceil(len(train) / 8))))
    g, order = torch.Generator().manual_seed(seed), []
    m.train()
    for _ in range(steps):
        if not order:
            order = [train[i] for i in torch.randperm(len(train), generator=g).tolist()]
        x, y = b.batch(order[:8])
        order = order[8:]
        m(**x, labels=y).loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in m.parameters() if p.requires_grad], 1.0)
        opt.step()
        opt.zero_grad()
    return steps


def main():
    ap = argparse.ArgumentParser()
    for name, kind, default in [("targets", str, "q,k,v,o,wi,wo"), ("r", int, 8), ("alpha", float, 16), ("lr", float, 1e-3),
                                ("max-steps", int, 100), ("epochs", float, 3), ("replay", int, 64),
                                ("marks", str, "25,50,100,200,400"), ("seed", int, 42), ("threads", int, 1)]:
        ap.add_argument("--" + name, type=kind, default=default)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    b = Bench()
    m = get_peft_model(T5ForConditionalGeneration.from_pretrained(BASE),
                       LoraConfig(r=a.r, lora_alpha=a.alpha, target_modules=a.targets.split(","), lora_dropout=0.05))
    print(vars(a))
    b.report(m, "  0 base")
    trained = set()
    for rnd, mark in enumerate(map(int, a.marks.split(",")), 1):
        pairs = b.feed[:mark]
        held = [p for p in pairs if (pair_key(*p) & 0xFFFFFFFF) % 5 == 0]
        older = [p for p in pairs if p not in held and p in trained]
        fresh = [p for p in pairs if p not in held and p not in trained]
        random.Random(a.seed).shuffle(older)
        saved = {k: v.clone() for k, v in m.state_dict().items() if "lora" in k}
        before = b.loss(m, held)
        steps = train_round(b, m, fresh + older[:a.replay], a, a.seed + rnd)
        after = b.loss(m, held)
        if after < before:
            trained |= set(fresh)
        else:
            m.load_state_dict(saved, strict=False)
        b.report(m, f"{mark:3d} {'A' if after < before else 'R'} {steps:3d} steps, held-out {before:.3f} -> {after:.3f}")


if __name__ == "__main__":
    sys.exit(main())
