"""`t5studio export --format hf-dataset` opens in Hugging Face `datasets` with the rows and features
the data file holds, and its card's numbers and plots are the data's.

A small history is made with `generate --history` on the tiny model (sampled candidates, protected
spans on one input, duplicates dropped), exported as a dataset folder, then:
- `datasets.load_dataset(DIR)` gives one train split whose rows are the JSONL export's (`--with-scores`;
  spans as {start, end, label} objects) and whose features are the card's YAML features;
- huggingface_hub reads the card's metadata (configs, dataset_info);
- the card's statistics table (count, missing, mean, min, max), histogram bin counts and
  candidates-per-source table are recomputed from the data file;
- every plot is a valid PNG (chunk CRCs, zlib stream, filters decoded here) whose bars have the
  heights of the card's counts;
- a non-empty folder is refused without --force with one clear line, and replaced with it;
- `generate --input FILE --report DIR` (the history's first run) writes the same sections, checked
  against that run's printed results, and refuses a non-empty DIR;
- a `generate --recipe` run (two steps pooled, on the tiny model): each candidate's route is a
  feature `datasets` loads as [{step, text}, ...]; the card names the recipe and its "Candidates per
  route" table (counts and mean scores) and plot are the data's; the run's --report has the same
  section, checked against its printed results.

    run_in_hf_venv.sh test_hf_dataset.py --t5studio T5STUDIO --model MODEL --work WORKDIR
(python -m pytest in .venv-hf). The tests share the history and the export and run in file order:
the refusals last, as --force replaces the export.
"""
import hashlib
import json
import math
import os
import re
import struct
import subprocess
import zlib

import pytest

BAR_COLOR = (0x4C, 0x72, 0xB0)  # the bars' colour (engine/src/report/bar_chart.h kBarColor)
SCORES = ["score", "similarity", "back_score", "change", "fluency"]


class Runs:
    """Runs t5studio (the binary under test) and remembers the model and work folder."""

    def __init__(self, t5studio, model, work):
        self.bin, self.model, self.work = t5studio, model, work

    def t5(self, *args, expect=0):
        out = subprocess.run([self.bin, *args], capture_output=True, text=True, timeout=600)
        assert out.returncode == expect, f"t5studio {' '.join(args)} exited {out.returncode}: {out.stderr.strip()}"
        return out


RECIPE = {"steps": [{"name": "para", "prefix": "paraphrase: ", "num_beams": 3, "num_return_sequences": 3},
                    {"name": "again", "from": "para", "prefix": "summarize: "}],
          "candidates": ["para", "again"]}


def make_history(runs):
    """The history, the first run's results (from --input, with --report WORK/report) and the
    recipe run's (with --report WORK/recipe_report)."""
    work, t5 = runs.work, runs.t5
    history = os.path.join(work, "h.db")
    inputs = os.path.join(work, "in.txt")
    with open(inputs, "w", encoding="utf-8") as f:
        f.write("Tom is a good boy.\n猫が好きです。\nI like cats.\n")
    gen = ["generate", "--model", runs.model, "--threads", "1", "--history", history, "--max-new-tokens", "6",
           "--keep-invalid-text"]
    run = t5(*gen, "--input", inputs, "--sample", "--seed", "5", "--num-return", "4", "--distinct",
             "--report", os.path.join(work, "report"))
    results = [json.loads(line) for line in run.stdout.splitlines()]
    t5(*gen, "--text", "Tom has 3 cats and 12 dogs.", "--protect", "numbers", "--beams", "3", "--num-return", "2")
    recipe = os.path.join(work, "recipe.json")
    with open(recipe, "w", encoding="utf-8") as f:
        json.dump(RECIPE, f)
    recipe_run = t5(*gen, "--recipe", recipe, "--input", inputs, "--keep-dropped", "--report", os.path.join(work, "recipe_report"))
    recipe_results = [json.loads(line) for line in recipe_run.stdout.splitlines()]
    return history, results, recipe_results


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def spans_as_objects(row):
    row = dict(row)
    for key in ("source_spans", "target_spans"):
        if key in row:
            row[key] = [{"start": a, "end": b, "label": c} for a, b, c in row[key]]
    return row


# ---- the card's Markdown tables ------------------------------------------------------------------
def table_after(card, heading):
    """Rows (lists of cells) of the first table after `heading`."""
    start = card.index(heading)
    rows = []
    for line in card[start:].splitlines()[1:]:
        if line.startswith("|"):
            if not re.match(r"^\|(-+\|)+$", line):
                rows.append([c.strip() for c in line.strip("|").split(" | ")])
        elif rows:
            break
    return rows[1:]  # without the header


def yaml_header(card):
    import yaml
    assert card.startswith("---\n"), "card starts with a YAML header"
    return yaml.safe_load(card.split("---\n")[1])


# ---- PNG ---------------------------------------------------------------------------------------
def decode_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA non-interlaced PNG; checks CRCs."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path + ": PNG signature"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
        assert zlib.crc32(kind + body) == crc, f"{path}: CRC of {kind}"
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
        if kind == b"IEND":
            break
    width, height, depth, color, _, _, interlace = ihdr
    assert depth == 8 and color in (2, 6) and interlace == 0, f"{path}: 8-bit RGB(A), not interlaced"
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            else: assert f == 0, f"{path}: filter type {f}"
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def bar_heights(path):
    """Heights of the bar-coloured runs of columns, left to right."""
    width, height, rows = decode_png(path)
    bars, in_bar = [], False
    for x in range(width):
        column = sum(1 for y in range(height) if rows[y][x] == BAR_COLOR)
        if column and not in_bar:
            bars.append(0)
        if column:
            bars[-1] = max(bars[-1], column)
        in_bar = column > 0
    return bars


def assert_bars(path, counts):
    """The plot's non-zero bars are proportional to the non-zero counts (within a pixel)."""
    heights = bar_heights(path)
    nonzero = [c for c in counts if c > 0]
    assert len(heights) == len(nonzero), f"{path}: {len(heights)} bars for counts {counts}"
    top = max(heights)
    for h, c in zip(heights, nonzero):
        assert abs(h - c / max(nonzero) * top) <= 1.0, f"{path}: bar {h}px for count {c} (max {max(nonzero)} = {top}px)"


def quantile(values, q):
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def assert_statistics(md, folder, candidates, per_source):
    """The statistics, histogram and candidates-per-source sections of `md` (a card or a run
    report) against the candidates (dicts with the scores) and each source's candidate count."""
    stats = {r[0]: r for r in table_after(md, "## Score statistics")}
    for name in SCORES:
        values = [r[name] for r in candidates if r[name] is not None]
        row = stats[name]
        assert int(row[1]) == len(values) and int(row[2]) == len(candidates) - len(values), f"{name} count/missing {row}"
        if not values:
            assert f"### Histogram: {name}" not in md, f"no histogram for {name} without values"
            continue
        mean, lo, q1, med, q3, hi = (float(v) for v in row[3:9])
        assert abs(mean - sum(values) / len(values)) <= 1e-9 * max(1, abs(mean)), f"{name} mean"
        assert lo == min(values) and hi == max(values), f"{name} min/max"
        for got, q in ((q1, 0.25), (med, 0.5), (q3, 0.75)):
            assert abs(got - quantile(values, q)) <= 1e-9 * max(1, abs(got)), f"{name} quantile {q}"
        bins = table_after(md, f"### Histogram: {name}")
        edges = [float(b[0]) for b in bins] + [float(bins[-1][1])]
        counts = [int(b[2]) for b in bins]
        expected = [sum(1 for v in values if edges[i] <= v < edges[i + 1] or (i == len(bins) - 1 and v == edges[-1]))
                    for i in range(len(bins))]
        assert counts == expected, f"{name} bins {counts} != {expected}"
        assert f"![{name} histogram](plots/{name}.png)" in md, f"{name} plot linked"
        assert_bars(os.path.join(folder, "plots", name + ".png"), counts)
    by_k = {int(k): int(n) for k, n in table_after(md, "## Candidates per source")}
    expected = {k: sum(1 for n in per_source if n == k) for k in range(max(per_source) + 1)}
    assert by_k == expected, f"candidates per source {by_k} != {expected}"
    assert_bars(os.path.join(folder, "plots", "candidates_per_source.png"), [by_k[k] for k in sorted(by_k)])


def route_name(candidate):
    route = candidate.get("route")
    return " > ".join(leg["step"] for leg in route) if route else "(no recipe)"


def assert_routes(md, folder, candidates):
    """The "Candidates per route" section of `md` against the candidates (dicts with their scores
    and "route" when a recipe made them): counts, mean scores, and the plot's bars."""
    table = table_after(md, "## Candidates per route")
    counts = {}
    for c in candidates:
        counts[route_name(c)] = counts.get(route_name(c), 0) + 1
    assert {r[0]: int(r[1]) for r in table} == counts, f"candidates per route {table} != {counts}"
    assert [int(r[1]) for r in table] == sorted((int(r[1]) for r in table), reverse=True), "routes most first"
    for row in table:
        mine = [c for c in candidates if route_name(c) == row[0]]
        for name, cell in zip(SCORES, row[2:]):
            values = [c[name] for c in mine if c.get(name) is not None]
            if not values:
                assert cell == "-", f"{row[0]} mean {name}: {cell} without values"
            else:
                mean = sum(values) / len(values)
                assert abs(float(cell) - mean) <= 1e-9 * max(1, abs(mean)), f"{row[0]} mean {name} {cell} != {mean}"
    assert "![candidates per route](plots/candidates_per_route.png)" in md, "per-route plot linked"
    assert_bars(os.path.join(folder, "plots", "candidates_per_route.png"), [int(r[1]) for r in table])


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


@pytest.fixture(scope="module")
def runs(t5studio, model_dir, work_dir):
    return Runs(t5studio, model_dir, work_dir)


@pytest.fixture(scope="module")
def made(runs):
    """(history, the --input run's results, the recipe run's results)."""
    return make_history(runs)


@pytest.fixture(scope="module")
def export(runs, made):
    """The history exported as a dataset folder: (folder, the --json summary, its data rows)."""
    out = os.path.join(runs.work, "ds")
    summary = json.loads(runs.t5("export", "--history", made[0], "--format", "hf-dataset", "--out", out, "--json").stdout)
    return out, summary, read_jsonl(os.path.join(out, "data", "train.jsonl"))


@pytest.fixture(scope="module")
def loaded(runs, export):
    """`datasets.load_dataset` of the export (its own cache: never an earlier run's) and the card's YAML header."""
    import datasets
    out = export[0]
    meta = yaml_header(read_text(os.path.join(out, "README.md")))
    return datasets.load_dataset(out, cache_dir=os.path.join(runs.work, "hf_cache")), meta


def test_export_files_and_rows(export):
    out, summary, rows = export
    files = summary["files"]
    assert files[0] == "data/train.jsonl" and files[-1] == "README.md", f"files {files}"
    for f in files:
        assert os.path.isfile(os.path.join(out, f)), f"{f} written"
    assert len(rows) == summary["rows_written"] > 0, f"{len(rows)} rows, summary {summary['rows_written']}"
    assert any("source_spans" in r for r in rows), "the protected spans reached the data"
    routed = [r for r in rows if "route" in r]
    assert len({route_name(r) for r in routed}) >= 2, f"two routes reached the data: {[route_name(r) for r in routed]}"


def test_rows_are_the_jsonl_export(runs, made, export):
    """The same rows as the JSONL export with scores (spans as objects)."""
    plain = os.path.join(runs.work, "plain.jsonl")
    runs.t5("export", "--history", made[0], "--format", "jsonl", "--with-scores", "--out", plain)
    assert [spans_as_objects(r) for r in read_jsonl(plain)] == export[2], "hf-dataset rows == jsonl --with-scores rows"


def test_datasets_loads_rows_and_features(export, loaded):
    """datasets opens it with those rows and the card's features; the Hub's library reads the card's metadata."""
    import datasets
    from huggingface_hub import DatasetCard
    out, _, rows = export
    ds, meta = loaded
    assert list(ds.keys()) == ["train"], f"splits {list(ds.keys())}"
    train = ds["train"]
    declared = datasets.Features._from_yaml_list(meta["dataset_info"]["features"])
    assert train.features == declared, f"features {train.features} != card's {declared}"
    assert list(train.features) == list(rows[0].keys()) + [k for k in declared if k not in rows[0]], "column order"
    assert train.features["similarity"] == datasets.Value("float64"), "a score never computed is still float64"
    assert len(train) == len(rows), f"{len(train)} rows loaded, {len(rows)} written"
    for got, row in zip(train, rows):
        assert got == {k: row.get(k) for k in declared}, f"row {got} != {row}"
    assert meta["dataset_info"]["splits"][0]["num_examples"] == len(rows), "num_examples"
    assert train.features["route"] == datasets.List(datasets.Features({"step": datasets.Value("string"), "text": datasets.Value("string")})) \
        if hasattr(datasets, "List") else "route" in train.features, f"route feature {train.features['route']}"
    hub_card = DatasetCard.load(os.path.join(out, "README.md"))
    assert hub_card.data.to_dict()["configs"][0]["data_files"][0]["path"] == "data/train.jsonl", "hub card configs"


def test_card_numbers_are_the_data(runs, made, export):
    out, _, rows = export
    card = read_text(os.path.join(out, "README.md"))
    per_generation = {}
    for r in rows:
        per_generation.setdefault(r["generation_id"], 0)
        per_generation[r["generation_id"]] += r["kind"] == "candidate"
    candidates = [r for r in rows if r["kind"] == "candidate"]
    assert_statistics(card, out, candidates, list(per_generation.values()))
    assert_routes(card, out, candidates)
    recipes = table_after(card, "### Recipes")
    recipe_file = os.path.join(runs.work, "recipe.json")
    with open(recipe_file, "rb") as f:
        recipe_sha = hashlib.sha256(f.read()).hexdigest()
    assert recipes == [[f"{recipe_file} (sha256:{recipe_sha})", str(len(made[2]))]], f"recipes {recipes}"
    kept = {r[0]: int(r[1]) for r in table_after(card, "### Kept and dropped")}
    assert kept["rows written"] == len(rows) and kept["candidate rows written"] == len(candidates), f"kept {kept}"


def test_run_reports(runs, made):
    """generate --report: the same sections for that run's results (and the recipe run's routes)."""
    _, run, recipe_run = made
    report = os.path.join(runs.work, "report")
    md = read_text(os.path.join(report, "README.md"))
    run_candidates = [c for r in run for c in r["candidates"]]
    assert len(run) == 3 and run_candidates, f"the run's results: {len(run)} inputs"
    assert_statistics(md, report, run_candidates, [len(r["candidates"]) for r in run])
    recipe_report = os.path.join(runs.work, "recipe_report")
    recipe_md = read_text(os.path.join(recipe_report, "README.md"))
    recipe_candidates = [c for r in recipe_run for c in r["candidates"]]
    assert_statistics(recipe_md, recipe_report, recipe_candidates, [len(r["candidates"]) for r in recipe_run])
    assert_routes(recipe_md, recipe_report, recipe_candidates)
    assert "## Candidates per route" not in md, "no per-route section without a recipe"


def test_non_empty_folders_refused(runs, made, export):
    """A non-empty folder: refused with one line, replaced with --force; --report refuses one too."""
    out = export[0]
    refused = runs.t5("export", "--history", made[0], "--format", "hf-dataset", "--out", out, expect=1)
    message = refused.stderr.strip()
    assert "\n" not in message and "is not empty" in message and out in message, f"refusal message {message!r}"
    runs.t5("export", "--history", made[0], "--format", "hf-dataset", "--out", out, "--force", "--accepted-only")
    assert read_jsonl(os.path.join(out, "data", "train.jsonl")) == [], "--force replaced the data (nothing accepted)"
    again = runs.t5("generate", "--model", runs.model, "--input", os.path.join(runs.work, "in.txt"), "--report",
                    os.path.join(runs.work, "report"), expect=1)
    assert "report folder" in again.stderr and "is not empty" in again.stderr, f"--report refusal {again.stderr!r}"
