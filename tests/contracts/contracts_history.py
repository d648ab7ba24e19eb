"""The history's contracts: the database schema and the settings JSON it stores (what `generate
--history` writes), `history --json` in each mode, and `export` in each format (header/columns and
the row shape)."""
import json
import os
import sqlite3

from contracts_cli import file_contract

EXPORTS = [  # (contract, file name, extra flags)
    ("files/export_jsonl.json", "export.jsonl", []),
    ("files/export_csv.json", "export.csv", []),
    ("files/export_tsv.json", "export.tsv", []),
    ("files/export_csv_scores_labels.json", "export_sl.csv", ["--with-scores", "--with-labels"]),
    ("files/export_tsv_scores_labels.json", "export_sl.tsv", ["--with-scores", "--with-labels"]),
    ("files/export_labelstudio.json", "export_ls.json", ["--format", "labelstudio"]),
]


def make_history(cli, d):
    """Three generations (plain beams; adapter + protected spans; quality scores), decisions on them,
    and one recorded training run. Returns the database path, or None."""
    db = cli.path("history.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    gen = ["generate", "--model", d["model"], "--threads", "1", "--history", db, "--max-new-tokens", "5"]
    steps = [gen + ["--text", "Tom is a good boy.", "--text", "我们走吧。", "--beams", "2", "--num-return", "2"],
             gen + ["--adapter", d["lora"], "--text", "Tom has 3 cats.", "--protect", "numbers"],
             gen + ["--embedder", d["embedder_sim"], "--text", "The cat sat.", "--sample", "--seed", "2", "--num-return", "2"]]
    for args in steps:
        if cli.run("history/schema.json", args) is None:
            return None
    return db


def history_json(cli, d, db):
    cli.shape("json/history_decisions.json", cli.json("json/history_decisions.json", [
        "history", "--history", db, "--accept", "1:0", "--edit", "2:1=我们去吧", "--reject", "2:0", "--json"]))
    cli.shape("json/history_list.json", cli.json("json/history_list.json", ["history", "--history", db, "--json"]))
    run_dir = cli.path("hist-run")
    if cli.run("json/history_runs.json", ["train", "--model", d["model"], "--data-history", db, "--history", db, "--out",
                                          run_dir, "--steps", "2", "--batch-size", "2", "--threads", "1", "--overwrite"]) is not None:
        cli.shape("json/history_runs.json", cli.json("json/history_runs.json", ["history", "--history", db, "--runs", "--json"]))


def exports(cli, db):
    for contract, name, flags in EXPORTS:
        path = cli.path(name)
        fmt = [] if "--format" in flags else ["--format", name.rsplit(".", 1)[1]]
        summary = cli.json(contract, ["export", "--history", db, "--out", path, "--force", "--json"] + fmt + flags)
        if summary is None:
            continue
        if name == "export.jsonl":
            cli.shape("json/export_summary.json", summary)
        file_contract(cli, contract, path)


def schema(cli, db):
    """PRAGMA table_info of every table, and the shape of every *_json column's stored documents."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        layout, stored = {}, {}
        for t in tables:
            cols = con.execute("PRAGMA table_info(%s)" % t).fetchall()  # cid, name, type, notnull, default, pk
            layout[t] = [{"name": c[1], "type": c[2], "notnull": c[3], "default": c[4], "pk": c[5]} for c in cols]
            for c in cols:
                if c[1].endswith("_json"):
                    docs = [json.loads(v) for (v,) in con.execute("SELECT %s FROM %s" % (c[1], t)) if v]
                    stored["%s.%s" % (t, c[1])] = docs
    finally:
        con.close()
    cli.g.data("history/schema.json", layout)
    for column, docs in sorted(stored.items()):
        cli.shape("history/stored_%s.json" % column, docs)


def run(cli, d):
    db = make_history(cli, d)
    if db is None:
        return
    history_json(cli, d, db)
    exports(cli, db)
    schema(cli, db)
