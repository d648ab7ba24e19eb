"""Golden files of the product's contracts: compare what the program says now with what it said when
the golden was written, or (update mode) rewrite the golden.

One golden file per contract under tests/contracts/golden/ (help/*.txt, json/*.json, http/*.json,
files/*.json, history/*.json, app/*.json). A JSON contract is pinned by its SHAPE (shape_of): keys and
value types, recursively, never values that vary from run to run (timings, seeds, scores, ids).
Every volatile part left in a text or a key goes through normalise(), the one place that decides it.
"""
import difflib
import json
import os
import re

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
UPDATE_ENV = "T5S_UPDATE_GOLDENS"
UPDATE_HINT = ("A contract is extended, never renamed or removed. If this change is a deliberate extension, "
               "rewrite the goldens and review their diff:\n"
               "  cd build && T5S_UPDATE_GOLDENS=1 ctest -R '^contracts_' --output-on-failure && git diff tests/contracts/golden")


def normalise(text, places):
    """The one normalisation of volatile parts, applied to every golden text and every JSON key.

    places: {placeholder: absolute path}, e.g. {"<WORK>": work dir, "<ROOT>": repo root}; each path
    (longest first, so a work dir inside the repo stays <WORK>) becomes its placeholder.
    Also replaced: a loopback address's port (127.0.0.1:<PORT>), 40/64-digit hex hashes (<HASH>),
    ISO-8601 timestamps (<TIME>) and release numbers such as 0.1.0 or 2.15.0 (<VERSION>: `version`
    prints the program's and LibTorch's, which change on every release without changing a contract).
    Other numbers stay: in --help texts they are defaults and limits, which are part of the contract;
    values of JSON contracts never reach a golden at all (only their types, see shape_of).
    """
    for placeholder, path in sorted(places.items(), key=lambda kv: -len(kv[1])):
        if path:
            text = text.replace(path, placeholder)
    text = re.sub(r"(127\.0\.0\.1|localhost):\d+", r"\1:<PORT>", text)
    text = re.sub(r"\b[0-9a-f]{64}\b|\b[0-9a-f]{40}\b", "<HASH>", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?", "<TIME>", text)
    text = re.sub(r"(?<![\d.])\d+\.\d+\.\d+(?![\d.])", "<VERSION>", text)
    return text


def _merge(shapes):
    """One shape for the elements of a list: dict keys missing from some elements are marked
    "(optional)"; differing leaf types are joined as "float|int"."""
    uniq = []
    for s in shapes:
        if s not in uniq:
            uniq.append(s)
    if len(uniq) == 1:
        return uniq[0]
    if all(isinstance(s, dict) and "list of" not in s for s in uniq):
        keys = sorted({k for s in uniq for k in s})
        out = {}
        for k in keys:
            present = [s[k] for s in uniq if k in s]
            out[k if len(present) == len(uniq) else k + " (optional)"] = _merge(present)
        return out
    if all(isinstance(s, str) for s in uniq):
        return "|".join(sorted({p for s in uniq for p in s.split("|")}))
    return {"one of": sorted(uniq, key=lambda s: json.dumps(s, sort_keys=True))}


def shape_of(value, places):
    """The type skeleton of a JSON value: "string", "int", "float", "bool", "null"; objects keep their
    (normalised) keys; a list becomes {"list of": the merged shape of its elements} ("empty list" when
    it has none)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        if not value:
            return "empty list"
        return {"list of": _merge([shape_of(v, places) for v in value])}
    return {normalise(k, places): shape_of(v, places) for k, v in sorted(value.items())}


class Goldens:
    """Checks (or, in update mode, writes) each contract of one group and reports the outcome."""

    def __init__(self, group, prefixes, places, update):
        self.group, self.prefixes, self.places, self.update = group, prefixes, places, update
        self.seen, self.failed, self.skipped, self.written = set(), [], [], []

    def text(self, name, text):
        self._compare(name, normalise(text, self.places).rstrip("\n") + "\n")

    def shape(self, name, value, extra=None):
        """The shape of `value` (extra: further plain entries, e.g. a CSV header, stored as they are)."""
        doc = {"shape": shape_of(value, self.places)}
        if extra:
            doc.update({k: json.loads(normalise(json.dumps(v, ensure_ascii=False), self.places)) for k, v in extra.items()})
        self._compare(name, json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")

    def data(self, name, value):
        """A plain JSON document (names, lists of names, codes), normalised as text."""
        text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
        self._compare(name, normalise(text, self.places) + "\n")

    def fail(self, name, why):
        self.seen.add(name)
        self.failed.append(name)
        print("FAIL contract %s: %s" % (name, why), flush=True)

    def skip(self, prefix, reason):
        """Contracts under `prefix` could not be produced here: reported, their goldens left alone."""
        self.skipped.append((prefix, reason))
        print("T5S_SKIP: contracts %s: %s" % (prefix, reason), flush=True)

    def _compare(self, name, now):
        self.seen.add(name)
        path = os.path.join(GOLDEN_DIR, name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old == now:
            return
        if self.update:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(now)
            self.written.append(name)
            return
        self.failed.append(name)
        if old is None:
            print("FAIL contract %s: it has no golden (tests/contracts/golden/%s)." % (name, name), flush=True)
            return
        diff = list(difflib.unified_diff(old.splitlines(), now.splitlines(), "golden/" + name, "now", lineterm="", n=2))
        print("FAIL contract %s differs from its golden; first differing lines:\n  %s" % (name, "\n  ".join(diff[:24])), flush=True)

    def _stale(self):
        """Goldens of this group that no run produced: a contract that disappeared."""
        out = []
        for prefix in self.prefixes:
            folder = os.path.join(GOLDEN_DIR, prefix)
            for root, _, names in os.walk(folder):
                for n in names:
                    rel = os.path.relpath(os.path.join(root, n), GOLDEN_DIR)
                    if rel not in self.seen and not any(rel.startswith(p) for p, _ in self.skipped):
                        out.append(rel)
        return sorted(out)

    def finish(self):
        for rel in self._stale():
            if self.update:
                os.remove(os.path.join(GOLDEN_DIR, rel))
                self.written.append(rel + " (removed)")
            else:
                self.failed.append(rel)
                print("FAIL contract %s: its golden exists but the program no longer produces it" % rel, flush=True)
        if self.written:
            print("updated %d golden(s): %s" % (len(self.written), ", ".join(self.written)))
        print("contracts_%s: %d checked, %d failed, %d skipped group(s)" %
              (self.group, len(self.seen), len(self.failed), len(self.skipped)))
        if self.failed:
            print(UPDATE_HINT)
            return 1
        return 0
