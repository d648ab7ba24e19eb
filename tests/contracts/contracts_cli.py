"""The command line's contracts: every --help, and the shape of every --json output, on the tiny
test models (tests/data/models, each call well under a second)."""
import csv
import json
import os
import re

# `help` and `version` take no flags: their golden is what they print.
OWN_OUTPUT = {"help": ["help"], "version": ["version"]}


def subcommands(top_help):
    """The subcommands the program lists in its own `--help` (the "Subcommands:" block)."""
    block = re.search(r"^Subcommands:\n(.*?)(?:\n\s*\n|\Z)", top_help, re.S | re.M)
    return [line.split()[0] for line in block.group(1).splitlines() if line.strip()] if block else []


def helps(cli):
    top = cli.run("help/top.txt", ["--help"])
    if top is None:
        return
    cli.g.text("help/top.txt", top)
    subs = subcommands(top)
    if not subs:
        cli.g.fail("help/top.txt", "no Subcommands: block in t5studio --help")
    for sub in subs:
        out = cli.run("help/%s.txt" % sub, OWN_OUTPUT.get(sub, [sub, "--help"]))
        if out is not None:
            cli.g.text("help/%s.txt" % sub, out)


def model_json(cli, d):
    m = d["model"]
    cli.shape("json/info.json", cli.json("json/info.json", ["info", "--model", m, "--json"]))
    cli.shape("json/tokenize.json", cli.json("json/tokenize.json",
                                             ["tokenize", "--model", d["spiece"], "--text", "Hello world!", "--json"]))
    cli.shape("json/score.json", cli.json("json/score.json", ["score", "--model", m, "--source", "Tom is a good boy.",
                                                               "--target", "A boy.", "--threads", "1", "--json"]))
    cli.shape("json/embed.json", cli.json("json/embed.json", ["embed", "--embedder", d["embedder"], "--text", "hi",
                                                               "--text", "there", "--json"]))
    cli.shape("json/sts.json", cli.json("json/sts.json", ["sts", "--baseline", "chrf", "--data", d["sts"], "--json"]))
    cli.shape("json/models.json", cli.json("json/models.json", ["models", "--dir", d["models_dir"], "--cache-dir",
                                                                 cli.path("hf-cache"), "--json"]))


def generate_json(cli, d):
    m, gen = d["model"], ["generate", "--model", d["model"], "--threads", "1"]
    cli.shape("json/generate_greedy.json", cli.json("json/generate_greedy.json",
                                                    gen + ["--text", "Tom is a good boy.", "--max-new-tokens", "6", "--json"]))
    cli.shape("json/generate_beams.json", cli.json("json/generate_beams.json", gen + [
        "--text", "Tom is a good boy.", "--text", "我们走吧。", "--beams", "3", "--num-return", "2", "--max-new-tokens", "6", "--json"]))
    # Every optional block at once: quality scores (embedder), dropped candidates, protected spans, adapter.
    cli.shape("json/generate_quality.json", cli.json("json/generate_quality.json", gen + [
        "--text", "Tom has 3 cats.", "--sample", "--seed", "3", "--num-return", "3", "--distinct", "--keep-dropped",
        "--embedder", d["embedder_sim"], "--protect", "numbers", "--max-new-tokens", "6", "--json"]))
    cli.shape("json/generate_adapter.json", cli.json("json/generate_adapter.json", gen + [
        "--adapter", d["lora"], "--text", "Tom is a good boy.", "--max-new-tokens", "4", "--json"]))
    rows = cli.json_lines("json/generate_input_rows.json", gen + ["--input", d["inputs"], "--max-new-tokens", "4"])
    cli.shape("json/generate_input_rows.json", rows)
    for f in ("out.jsonl", "labelled.jsonl", "labelled.csv"):
        if os.path.exists(cli.path(f)):
            os.remove(cli.path(f))
    summary = cli.json("json/generate_out_summary.json", gen + ["--input", d["inputs"], "--out", cli.path("out.jsonl"),
                                                                "--max-new-tokens", "4"])
    cli.shape("json/generate_out_summary.json", summary)
    if summary is not None:
        cli.shape("files/generate_out.jsonl.json", cli.parse_lines("files/generate_out.jsonl.json", open(cli.path("out.jsonl")).read()))
    for name in ("labelled.jsonl", "labelled.csv"):
        contract = "files/generate_output_%s.json" % name.split(".")[1]
        if cli.run(contract, gen + ["--input", d["inputs"], "--output", cli.path(name), "--max-new-tokens", "4"]) is not None:
            file_contract(cli, contract, cli.path(name))


def file_contract(cli, contract, path):
    """A written file: JSONL rows by shape; CSV/TSV by header and the fields per row; JSON by shape."""
    text = open(path, encoding="utf-8").read()
    if path.endswith(".jsonl"):
        cli.shape(contract, cli.parse_lines(contract, text))
    elif path.endswith(".json"):
        cli.shape(contract, json.loads(text))
    else:
        rows = list(csv.reader(text.splitlines(), delimiter="\t" if path.endswith(".tsv") else ","))
        cli.g.data(contract, {"header": rows[0] if rows else [], "fields_per_row": sorted({len(r) for r in rows[1:]})})


def merge_json(cli):
    for i in range(2):
        with open(cli.path("part%d.jsonl" % i), "w") as f:
            f.write('{"index": %d, "total_rows": 2}\n' % i)
    if os.path.exists(cli.path("merged.jsonl")):
        os.remove(cli.path("merged.jsonl"))
    cli.shape("json/merge.json", cli.json("json/merge.json", ["merge", "--json", "--out", cli.path("merged.jsonl"),
                                                               cli.path("part0.jsonl"), cli.path("part1.jsonl")]))


def train_json(cli, d):
    """train --json: one shape per event kind (progress, eval, done...), and the run folder's layout."""
    out = cli.path("run")
    lines = cli.json_lines("json/train_events.json", [
        "train", "--json", "--model", d["model"], "--data", d["pairs"], "--out", out, "--steps", "2", "--save-every", "1",
        "--batch-size", "2", "--threads", "1", "--eval-split", "0", "--overwrite"])
    if lines is None:
        return
    by_event = {}
    for line in lines:
        by_event.setdefault(str(line.get("event")), []).append(line)
    cli.shape("json/train_events.json", by_event)
    layout = sorted(os.path.relpath(os.path.join(r, n), out) for r, _, names in os.walk(out) for n in names)
    cli.g.data("files/train_run_layout.json", layout)


def learn_json(cli, d):
    cli.shape("json/learn_round.json", cli.json("json/learn_round.json", [
        "learn", "--model", d["model"], "--history", d["history"], "--adapter-dir", cli.path("learning"), "--max-steps", "2",
        "--batch-size", "2", "--threads", "1", "--json"], ok_codes=(0, 5, 6)))
    # After the round: the list holds its version.
    cli.shape("json/learn_list.json", cli.json("json/learn_list.json", [
        "learn", "--model", d["model"], "--history", d["history"], "--adapter-dir", cli.path("learning"), "--list", "--json"]))
