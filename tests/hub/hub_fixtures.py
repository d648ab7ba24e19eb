"""Fixture repositories for the local Hub server (tests/hub/hub_server.py), built in a folder.

    tiny-t5     tests/data/models/t5v10-tied-relu as the Hub would hold it, plus files a pull must
                leave alone (pytorch_model.bin beside model.safetensors, tf_model.h5, onnx/)
    t5-medium   a random T5 of a few MB (transformers), tokenizer of tiny-t5: resume / drop / corrupt
    st-xlmr     tests/data/embedder/xlmr_mean_norm: a sentence-transformers folder
    llama       a config.json T5 Studio cannot run, with weights that must never be fetched
A big variant (bench): make_t5(folder, d_model, d_ff, layers) with larger sizes.
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
TINY = os.path.join(DATA, "models", "t5v10-tied-relu")
TOKENIZER_FILES = ("spiece.model", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")


def make_t5(folder, d_model, d_ff, layers, seed=0):
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config.from_pretrained(TINY)
    config.d_model, config.d_ff, config.num_layers, config.num_decoder_layers = d_model, d_ff, layers, layers
    config.d_kv = d_model // config.num_heads
    torch.manual_seed(seed)
    model = T5ForConditionalGeneration(config)
    model.save_pretrained(folder, safe_serialization=True)
    for f in TOKENIZER_FILES:
        shutil.copy(os.path.join(TINY, f), folder)
    return folder


def build(root):
    """Creates the fixture repositories under root; returns {repo_id: folder}."""
    import torch
    from safetensors.torch import load_file

    repos = {}
    tiny = os.path.join(root, "tiny-t5")
    if not os.path.isdir(tiny):
        shutil.copytree(TINY, tiny)
        torch.save(load_file(os.path.join(TINY, "model.safetensors")), os.path.join(tiny, "pytorch_model.bin"))
        with open(os.path.join(tiny, "tf_model.h5"), "wb") as f:
            f.write(os.urandom(50000))
        os.makedirs(os.path.join(tiny, "onnx"))
        with open(os.path.join(tiny, "onnx", "encoder_model.onnx"), "wb") as f:
            f.write(os.urandom(50000))
        with open(os.path.join(tiny, "README.md"), "w") as f:
            f.write("---\nlicense: apache-2.0\n---\n# tiny-t5 (test fixture)\n")
    repos["t5s-test/tiny-t5"] = tiny
    repos["t5s-test/gated-t5"] = tiny
    medium = os.path.join(root, "t5-medium")
    if not os.path.isdir(medium):
        make_t5(medium, d_model=256, d_ff=1024, layers=2)
    repos["t5s-test/t5-medium"] = medium
    st = os.path.join(root, "st-xlmr")
    if not os.path.isdir(st):
        shutil.copytree(os.path.join(DATA, "embedder", "xlmr_mean_norm"), st)
    repos["t5s-test/st-xlmr"] = st
    llama = os.path.join(root, "llama")
    if not os.path.isdir(llama):
        os.makedirs(llama)
        with open(os.path.join(llama, "config.json"), "w") as f:
            f.write('{"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64}\n')
        with open(os.path.join(llama, "model.safetensors"), "wb") as f:
            f.write(os.urandom(200000))
    repos["t5s-test/llama"] = llama
    return repos
