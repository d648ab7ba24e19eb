#!/usr/bin/env python3
"""The LoRA run of test_trainer, checked with the real libraries.

1. peft.PeftModel.from_pretrained(base, T5 Studio's out/final) gives T5 Studio's logits (max |diff| <= 1e-5).
2. PEFT's merge_and_unload of that adapter equals T5 Studio's out/merged weight by weight (<= 1e-5), and
   out/merged loads in transformers with no missing/unexpected keys and gives the same logits (<= 1e-5).
"""
import json
import sys

import torch
from peft import PeftModel
from transformers import T5ForConditionalGeneration


def logits_of(model, j):
    with torch.no_grad():
        out = model(input_ids=torch.tensor(j["input_ids"][:1]), decoder_input_ids=torch.tensor(j["decoder_input_ids"][:1])).logits
        rows = [out]
        out2 = model(input_ids=torch.tensor(j["input_ids"][1:]), decoder_input_ids=torch.tensor(j["decoder_input_ids"][1:])).logits
        rows.append(out2)
    return rows


def main():
    j = json.load(open(sys.argv[1]))
    mine = torch.tensor(j["logits"]).view(j["shape"])
    # T5 Studio padded the second (shorter) input; compare each row with its own unpadded run.
    peft_model = PeftModel.from_pretrained(
        T5ForConditionalGeneration.from_pretrained(j["base"], dtype=torch.float32).eval(), j["adapter"]).eval()
    worst = 0.0
    for i, ref in enumerate(logits_of(peft_model, j)):
        worst = max(worst, (mine[i] - ref[0]).abs().max().item())
    print(f"PEFT-loaded T5 Studio adapter: max |logit diff| = {worst:.3g}")
    ok = worst <= 1e-5

    merged_ref = peft_model.merge_and_unload().eval()
    merged, info = T5ForConditionalGeneration.from_pretrained(j["merged"], dtype=torch.float32, output_loading_info=True)
    merged.eval()
    missing = [k for k in info["missing_keys"] if k not in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")]
    if missing or info["unexpected_keys"]:
        print("merged checkpoint: missing", missing, "unexpected", info["unexpected_keys"])
        ok = False
    ref_sd = merged_ref.state_dict()
    wworst = max((t - ref_sd[k]).abs().max().item() for k, t in merged.state_dict().items())
    print(f"merged weights vs PEFT merge_and_unload: max |diff| = {wworst:.3g}")
    ok = ok and wworst <= 1e-5
    lworst = 0.0
    for a, b in zip(logits_of(merged, j), logits_of(merged_ref, j)):
        lworst = max(lworst, (a - b).abs().max().item())
    print(f"merged logits (transformers) vs merge_and_unload: max |diff| = {lworst:.3g}")
    ok = ok and lworst <= 1e-5
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
