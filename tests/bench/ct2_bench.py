#!/usr/bin/env python3
"""CTranslate2 driver: a Translator (intra_threads = --threads, inter_threads = 1) on the converted
checkpoint; runs each workload --warmup + --runs times and prints one JSON object (see
bench_common.py). dtype: fp32 | int8 | bf16 | fp16 -> compute_type float32 | int8 | bfloat16 | float16."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402

args = bc.driver_args(__doc__)
import ctranslate2  # noqa: E402

COMPUTE = {"fp32": "float32", "int8": "int8", "bf16": "bfloat16", "fp16": "float16"}
device = "cuda" if args.device.startswith("cuda") else "cpu"


def vocabulary():
    path = os.path.join(args.model, "shared_vocabulary.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    with open(os.path.join(args.model, "shared_vocabulary.txt")) as f:
        return [line.rstrip("\n") for line in f]


def main():
    if COMPUTE.get(args.dtype) not in ctranslate2.get_supported_compute_types(device):
        sys.exit(f"ct2_bench: compute_type {COMPUTE.get(args.dtype)} not supported on this {device}")
    vocab = vocabulary()
    result = {"engine": "ctranslate2", "engine_version": ctranslate2.__version__, "dtype": args.dtype,
              "compute_type": COMPUTE[args.dtype], "device": device, "threads": args.threads, "workloads": {}}
    result["rss_before_load_bytes"] = bc.current_rss()
    t = bc.now()
    tr = ctranslate2.Translator(args.model, device=device, compute_type=COMPUTE[args.dtype],
                                intra_threads=args.threads, inter_threads=1)
    result["load_s"] = bc.now() - t

    def tokens(rows):
        return [[vocab[i] for i in r] for r in rows]

    tr.translate_batch(tokens([bc.source_ids(0, args.input_len)]), beam_size=1, max_decoding_length=1)
    result["first_token_s"] = bc.now() - t
    result["process_start_to_first_token_s"] = bc.seconds_since_process_start()
    result["rss_after_load_bytes"] = bc.current_rss()
    result["rss_after_load"] = bc.rss_breakdown()
    result["peak_rss_load_bytes"] = process_peak = bc.peak_rss()
    n = args.new_tokens

    for wl in args.workload_list:
        if wl["kind"] == "train":
            continue
        src = tokens([bc.source_ids(i, args.input_len) for i in range(wl["batch"])])
        kw = dict(max_batch_size=0, min_decoding_length=n, max_decoding_length=n, return_scores=False)
        if wl["kind"] == "beam":
            kw.update(beam_size=wl["beams"], num_hypotheses=1)
        elif wl["kind"] == "sample":
            kw.update(beam_size=1, num_hypotheses=wl["candidates"], sampling_topk=bc.sampling_top_k(),
                      sampling_temperature=1.0)
        else:
            kw.update(beam_size=1, num_hypotheses=1)
        bc.reset_peak_rss()
        runs, lo, hi, count = [], 1 << 30, 0, 0
        for i in range(args.warmup + args.runs):
            if wl["kind"] == "sample":
                ctranslate2.set_random_seed(i)
            t = bc.now()
            out = tr.translate_batch(src, **kw)
            dt = bc.now() - t
            lens = [len(h) for r in out for h in r.hypotheses]
            if i >= args.warmup:
                runs.append(dt)
                lo, hi, count = min(lo, min(lens)), max(hi, max(lens)), sum(lens)
        result["workloads"][wl["name"]] = {"runs_s": runs, "tokens": count, "new_tokens_min": lo,
                                           "new_tokens_max": hi, "peak_rss_bytes": bc.peak_rss()}
        process_peak = max(process_peak, bc.peak_rss())
    result["peak_rss_bytes"] = max(process_peak, bc.peak_rss())
    bc.emit(result)


main()
