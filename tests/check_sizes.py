#!/usr/bin/env python3
"""Size gate: no source file in engine/, ui/ or app/ over 600 lines, no function over 80 lines (a screen).

Function lengths come from lizard (PyPI, in the test venv: packaging/requirements.txt): its
`length` is the number of lines from the function's signature to its closing brace. Prints the
largest files and functions either way, then every violation; exit code 1 when there is one.

    .venv/bin/python tests/check_sizes.py [REPO_ROOT]
"""
import pathlib
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
FOLDERS = ("engine", "ui", "app")
SUFFIXES = {".cpp", ".cc", ".h", ".hpp"}


def source_files(root):
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file():
                yield path


def line_count(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    try:
        import lizard
    except ImportError:
        print("check_sizes: lizard is not installed (pip install lizard; packaging/requirements.txt)")
        return 77  # ctest SKIP_RETURN_CODE: reported as skipped, not passed

    files, functions = [], []
    for path in source_files(root):
        rel = path.relative_to(root).as_posix()
        files.append((line_count(path), rel))
        for fn in lizard.analyze_file(str(path)).function_list:
            functions.append((fn.length, f"{rel}:{fn.start_line}", fn.long_name.split("(")[0]))
    if not files:
        print(f"check_sizes: no sources under {', '.join(FOLDERS)} in {root}")
        return 1
    files.sort(reverse=True)
    functions.sort(reverse=True)

    print(f"{len(files)} files, {len(functions)} functions in {', '.join(f + '/' for f in FOLDERS)}")
    print(f"largest files (limit {MAX_FILE_LINES} lines):")
    for n, rel in files[:5]:
        print(f"  {n:5d}  {rel}")
    print(f"longest functions (limit {MAX_FUNCTION_LINES} lines):")
    for n, where, name in functions[:5]:
        print(f"  {n:5d}  {where}  {name}")

    too_big = [(n, rel) for n, rel in files if n > MAX_FILE_LINES]
    too_long = [(n, where, name) for n, where, name in functions if n > MAX_FUNCTION_LINES]
    for n, rel in too_big:
        print(f"FAIL file {rel}: {n} lines > {MAX_FILE_LINES}")
    for n, where, name in too_long:
        print(f"FAIL function {name} at {where}: {n} lines > {MAX_FUNCTION_LINES}")
    if too_big or too_long:
        return 1
    print("OK: every file and function within the limits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
