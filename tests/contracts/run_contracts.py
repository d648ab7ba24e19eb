#!/usr/bin/env python3
"""The product's contracts against their goldens (tests/contracts/golden/, see docs/contracts.md).

Usage: run_contracts.py GROUP T5STUDIO WORK_DIR [--update]
  GROUP  cli    every --help, every --json shape, the files generate/export/train write, the
                history database's schema and stored settings JSON
         pull   pull --json against the local stand-in Hub (tests/hub/hub_server.py), models --json
                on the cache it filled
         serve  serve's HTTP answers, metric names and labels, error bodies, its --json lines
         app    the desktop app's settings.json (headless under Xvfb; skipped without xvfb-run)
  --update (or T5S_UPDATE_GOLDENS=1) rewrites the goldens instead of comparing: only for a deliberate
  contract extension, reviewed in the golden's diff.
Exit 0 all match, 1 a contract differs or has no golden; a group that cannot run here prints
"T5S_SKIP: ..." (tests/run_skippable.sh turns that into a ctest skip).
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import contracts_app  # noqa: E402
import contracts_cli  # noqa: E402
import contracts_history  # noqa: E402
import contracts_pull  # noqa: E402
import contracts_serve  # noqa: E402
from cli_runner import Cli  # noqa: E402
from golden_store import UPDATE_ENV, Goldens  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "tests", "data")
# The golden folders each group owns (a golden there that no run produced is a removed contract).
PREFIXES = {"cli": ["help", "json", "files", "history"], "pull": ["pull"], "serve": ["http"], "app": ["app"]}


def inputs(work):
    """The test inputs: the tiny models in tests/data, and small files written here."""
    rows = os.path.join(work, "inputs.txt")
    with open(rows, "w", encoding="utf-8") as f:
        f.write('Tom is a good boy.\n{"text": "猫が好きです。"}\n我们走吧。\n')
    pairs = os.path.join(work, "pairs.jsonl")
    with open(pairs, "w", encoding="utf-8") as f:
        for i in range(1, 9):
            f.write('{"source": "the cat number %d is here", "target": "here is cat %d"}\n' % (i, i))
    return {"model": os.path.join(DATA, "models", "t5v10-tied-relu"), "spiece": os.path.join(DATA, "t5-spiece"),
            "embedder": os.path.join(DATA, "embedder", "bert_wordpiece_cls_dense_norm"),
            "embedder_sim": os.path.join(DATA, "embedder", "xlmr_mean_norm"), "lora": os.path.join(DATA, "lora", "t5v10-qv-wo"),
            "sts": os.path.join(DATA, "sts", "jsts-valid-48.jsonl"), "models_dir": os.path.join(DATA, "models"),
            "inputs": rows, "pairs": pairs, "history": os.path.join(work, "history.db")}


def run_cli(cli, d):
    contracts_cli.helps(cli)
    contracts_cli.model_json(cli, d)
    contracts_cli.generate_json(cli, d)
    contracts_cli.merge_json(cli)
    contracts_cli.train_json(cli, d)
    contracts_history.run(cli, d)  # writes d["history"], with decisions: learn reads it
    contracts_cli.learn_json(cli, d)


def main(argv):
    args = [a for a in argv if a != "--update"]
    if len(args) != 3 or args[0] not in PREFIXES:
        sys.exit(__doc__)
    group, binary, work = args[0], os.path.abspath(args[1]), os.path.abspath(args[2])
    update = "--update" in argv or os.environ.get(UPDATE_ENV) == "1"
    shutil.rmtree(work, ignore_errors=True)  # every run starts from nothing: no history or versions left over
    os.makedirs(work)
    places = {"<WORK>": work, "<ROOT>": ROOT, "<BIN_DIR>": os.path.dirname(binary), "<HOME>": os.path.expanduser("~")}
    goldens = Goldens(group, PREFIXES[group], places, update)
    cli, d = Cli(binary, work, goldens), inputs(work)
    {"cli": run_cli, "pull": contracts_pull.run, "serve": contracts_serve.run, "app": contracts_app.run}[group](cli, d)
    return goldens.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
