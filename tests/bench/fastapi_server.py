#!/usr/bin/env python3
"""Peer (c) of serve_bench.py: a FastAPI + transformers paraphrase server written the usual way,
one model.generate() per request (a sync endpoint: FastAPI runs it on its thread pool).

  python tests/bench/fastapi_server.py --model DIR --port P --threads T
"""
import argparse

import torch
import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel
from transformers import AutoTokenizer, T5ForConditionalGeneration

ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True)
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--threads", type=int, default=1)
args = ap.parse_args()
torch.set_num_threads(args.threads)
tokenizer = AutoTokenizer.from_pretrained(args.model)
model = T5ForConditionalGeneration.from_pretrained(args.model).eval()
app = FastAPI()


class Augment(BaseModel):
    text: str
    num_return_sequences: int = 1
    max_new_tokens: int = 32
    min_new_tokens: int = 0
    temperature: float = 1.0
    top_p: float = 1.0
    do_sample: bool = False


@app.post("/augment")
def augment(req: Augment):
    inputs = tokenizer(req.text, return_tensors="pt")
    with torch.inference_mode():
        out = model.generate(**inputs, max_new_tokens=req.max_new_tokens, min_new_tokens=req.min_new_tokens,
                             num_return_sequences=req.num_return_sequences, do_sample=req.do_sample,
                             temperature=req.temperature, top_p=req.top_p)
    ids = out[:, 1:].tolist()
    return {"results": [{"input": req.text, "candidates": [{"text": tokenizer.decode(i, skip_special_tokens=True), "ids": i}
                                                           for i in ids]}]}


@app.get("/ready")
def ready():
    return {"ready": True}


uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
