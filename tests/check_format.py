#!/usr/bin/env python3
"""Format gate: every C++ file in engine/, app/, ui/ and tests/ is as clang-format 14 writes it with
the repository's .clang-format. Tables laid out one row per line sit between `// clang-format off`
and `// clang-format on`. Only version 14 is asked: another version formats some constructs
differently, so without it the check is skipped (exit 77), not passed.

    python3 tests/check_format.py [REPO_ROOT]          # the check
    python3 tests/check_format.py [REPO_ROOT] --fix    # rewrites the files that differ
"""
import pathlib
import shutil
import subprocess
import sys

FOLDERS = ("engine", "app", "ui", "tests")
SUFFIXES = {".cpp", ".cc", ".h", ".hpp"}
SKIPPED_PARTS = {"build", ".venv", "out", "__pycache__"}


def clang_format_14():
    for name in ("clang-format-14", "clang-format"):
        exe = shutil.which(name)
        if exe:
            version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
            if "version 14." in version:
                return exe
    return None


def source_files(root):
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            rel = path.relative_to(root)
            if path.suffix in SUFFIXES and path.is_file() and not SKIPPED_PARTS & set(rel.parts):
                yield path


def main():
    fix = "--fix" in sys.argv[1:]
    args = [a for a in sys.argv[1:] if a != "--fix"]
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parent.parent)
    exe = clang_format_14()
    if not exe:
        print("check_format: clang-format 14 is not installed (Debian: apt-get install clang-format-14)")
        return 77  # ctest SKIP_RETURN_CODE: reported as skipped, not passed
    files = list(source_files(root))
    differ = []
    for path in files:
        formatted = subprocess.run([exe, "--style=file", str(path)], capture_output=True, cwd=root, check=True).stdout
        if formatted != path.read_bytes():
            differ.append(path.relative_to(root))
            if fix:
                path.write_bytes(formatted)
    for rel in differ:
        print(f"{'fixed' if fix else 'FAIL not formatted'}: {rel}")
    if differ and not fix:
        print(f"{len(differ)} file(s) differ from clang-format 14; fix them with: python3 tests/check_format.py --fix")
        return 1
    print(f"OK: {len(files)} files formatted")
    return 0

if __name__ == "__main__":
    sys.exit(main())
