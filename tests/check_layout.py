#!/usr/bin/env python3
"""The floor plan holds: engine/src keeps at most a handful of loose files (everything else lives in a
folder named for its domain), and no two folders of engine/src include each other, directly or
through others (the folders form layers: docs/architecture.md). In app/, what the CLI and serve
share lives in app/common, which includes neither; serve never includes the CLI (only the `serve`
command in app/cli starts the service).

Only includes of engine/src's own headers ("text/unicode_space.h") count; the public t5s/ headers in
engine/include are the engine's interface, shared by every folder. Exit code 1 with every finding.

    check_layout.py REPO_ROOT      (ctest layout)
"""
import collections
import pathlib
import re
import sys

MAX_ROOT_FILES = 6
SUFFIXES = {".cpp", ".h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_edges(src):
    """{(from_folder, to_folder): [the include lines that make the edge]} over engine/src."""
    edges = collections.defaultdict(list)
    for path in sorted(src.rglob("*")):
        if path.suffix not in SUFFIXES or path.parent == src:
            continue
        here = path.relative_to(src).parts[0]
        for target in INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
            parts = pathlib.PurePosixPath(target).parts
            if len(parts) > 1 and (src / target).is_file() and parts[0] != here:
                edges[(here, parts[0])].append(f"{path.relative_to(src)} includes {target}")
    return edges


def cycle_edges(edges):
    """The edges a->b where a is reachable from b: each lies on an include loop."""
    out = collections.defaultdict(set)
    for a, b in edges:
        out[a].add(b)

    def reaches(start, goal):
        seen, stack = set(), [start]
        while stack:
            node = stack.pop()
            if node == goal:
                return True
            for nxt in out[node] - seen:
                seen.add(nxt)
                stack.append(nxt)
        return False

    return sorted((a, b) for a, b in edges if reaches(b, a))


# app/ folder -> the app/ folders it must not include.
APP_FORBIDDEN = {"common": {"cli", "serve", "desktop"}, "serve": {"cli", "desktop"}, "desktop": {"cli", "serve"}}


def app_violations(app):
    found = []
    for folder, forbidden in APP_FORBIDDEN.items():
        for path in sorted((app / folder).rglob("*")):
            if path.suffix not in SUFFIXES:
                continue
            for target in INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
                if target.split("/")[0] in forbidden and (app / target).is_file():
                    found.append(f"app/{path.relative_to(app)} includes {target} (app/{folder} must not include "
                                 f"{' or '.join(sorted(forbidden))}: move what both need to app/common)")
    return found


def main(root):
    src = root / "engine" / "src"
    problems = []
    loose = sorted(p.name for p in src.iterdir() if p.is_file() and p.suffix in SUFFIXES)
    print(f"engine/src root: {len(loose)} loose source files (at most {MAX_ROOT_FILES})")
    if len(loose) > MAX_ROOT_FILES:
        problems.append(f"engine/src holds {len(loose)} loose files ({', '.join(loose)}): move them into a folder")
    edges = folder_edges(src)
    layers = collections.defaultdict(set)
    for a, b in edges:
        layers[a].add(b)
    for folder in sorted(layers):
        print(f"  {folder} -> {', '.join(sorted(layers[folder]))}")
    for a, b in cycle_edges(edges):
        problems.append(f"include loop: {a}/ -> {b}/ ({'; '.join(edges[(a, b)][:3])}), and {b}/ reaches {a}/ back")
    problems += app_violations(root / "app")
    for p in problems:
        print("FAIL:", p)
    print("layout: ok" if not problems else f"layout: {len(problems)} finding(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()))
