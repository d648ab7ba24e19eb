"""The LoRA run of test_trainer, checked with the real libraries.

1. peft.PeftModel.from_pretrained(base, T5 Studio's out/final) gives T5 Studio's logits (max |diff| <= 1e-5).
2. PEFT's merge_and_unload of that adapter equals T5 Studio's out/merged weight by weight (<= 1e-5), and
   out/merged loads in transformers with no missing/unexpected keys and gives the same logits (<= 1e-5).

    python -m pytest -q tests/trainer/check_lora_peft.py --data LORA_RUN_JSON
"""
import json

import pytest
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


@pytest.fixture(scope="module")
def run(data_path):
    with open(data_path) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def peft_model(run):
    return PeftModel.from_pretrained(
        T5ForConditionalGeneration.from_pretrained(run["base"], dtype=torch.float32).eval(), run["adapter"]).eval()


def test_peft_loads_the_adapter(run, peft_model, measured):
    mine = torch.tensor(run["logits"]).view(run["shape"])
    # T5 Studio padded the second (shorter) input; compare each row with its own unpadded run.
    worst = 0.0
    for i, ref in enumerate(logits_of(peft_model, run)):
        worst = max(worst, (mine[i] - ref[0]).abs().max().item())
    measured(f"PEFT-loaded T5 Studio adapter: max |logit diff| = {worst:.3g}")
    assert worst <= 1e-5, f"PEFT-loaded T5 Studio adapter: max |logit diff| = {worst:.3g}"


def test_merged_checkpoint_is_pefts_merge(run, peft_model, measured):
    merged_ref = peft_model.merge_and_unload().eval()
    merged, info = T5ForConditionalGeneration.from_pretrained(run["merged"], dtype=torch.float32, output_loading_info=True)
    merged.eval()
    missing = [k for k in info["missing_keys"] if k not in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")]
    assert not missing and not info["unexpected_keys"], f"merged checkpoint: missing {missing}, unexpected {info['unexpected_keys']}"
    ref_sd = merged_ref.state_dict()
    wworst = max((t - ref_sd[k]).abs().max().item() for k, t in merged.state_dict().items())
    measured(f"merged weights vs PEFT merge_and_unload: max |diff| = {wworst:.3g}")
    assert wworst <= 1e-5, f"merged weights vs PEFT merge_and_unload: max |diff| = {wworst:.3g}"
    lworst = 0.0
    for a, b in zip(logits_of(merged, run), logits_of(merged_ref, run)):
        lworst = max(lworst, (a - b).abs().max().item())
    measured(f"merged logits (transformers) vs merge_and_unload: max |diff| = {lworst:.3g}")
    assert lworst <= 1e-5, f"merged logits (transformers) vs merge_and_unload: max |diff| = {lworst:.3g}"
