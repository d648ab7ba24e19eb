"""transformers loads the checkpoints T5 Studio's trainer wrote (test_checkpoints.cpp exports) with
no missing/unexpected keys, and its logits equal T5 Studio's within 1e-5; T5Tokenizer loads the
tokenizer files (the fast one where only tokenizer.json is there) and gives the same ids.

    python -m pytest -q tests/trainer/check_hf_load.py --data EXPORT_DIR
One test per logits-*.json export; the exports themselves come from ctest `trainer` (its fixture).
"""
import glob
import json
import os

import torch
from transformers import AutoTokenizer, T5ForConditionalGeneration, T5Tokenizer


def pytest_generate_tests(metafunc):
    if "export" in metafunc.fixturenames:
        folder = os.path.abspath(metafunc.config.getoption("--data") or "")
        exports = sorted(glob.glob(os.path.join(folder, "logits-*.json")))
        # No export is a failure (the trainer wrote none), never an empty pass.
        metafunc.parametrize("export", exports or [os.path.join(folder, "logits-*.json (none found)")],
                             ids=[os.path.basename(p) for p in exports] or ["no-exports"])


def test_transformers_loads_the_checkpoint(export):
    assert os.path.isfile(export), f"no exports found: {export}"
    with open(export, encoding="utf-8") as f:
        ref = json.load(f)
    model_dir = ref["model_dir"]
    model, info = T5ForConditionalGeneration.from_pretrained(model_dir, output_loading_info=True, dtype=torch.float32)
    model.eval()
    problems = {k: v for k, v in info.items() if v}
    assert not problems, f"{model_dir}: loading info {problems}"
    ids = ref["input_ids"]
    width = max(len(r) for r in ids)
    input_ids = torch.tensor([r + [0] * (width - len(r)) for r in ids])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in ids])
    dec = torch.tensor(ref["decoder_input_ids"])
    with torch.no_grad():
        logits = model(input_ids=input_ids, attention_mask=mask, decoder_input_ids=dec).logits
    studio = torch.tensor(ref["logits"]).reshape(ref["shape"])
    diff = (logits - studio).abs().max().item()
    assert diff < 1e-5, f"{os.path.basename(export)}: max |logits diff| {diff:.3g}"
    if os.path.exists(os.path.join(model_dir, "spiece.model")):
        tok = T5Tokenizer.from_pretrained(model_dir, legacy=True)
    else:  # saved from a base that had only tokenizer.json: the fast tokenizer
        tok = AutoTokenizer.from_pretrained(model_dir)
    tok_ids = [tok(t).input_ids for t in ref["texts"]]
    assert tok_ids == ref["token_ids"], f"{os.path.basename(export)}: tokenizer ids {tok_ids} != T5 Studio's {ref['token_ids']}"
