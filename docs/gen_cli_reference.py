#!/usr/bin/env python3
"""Writes docs/cli-reference.md from the program itself: `t5studio --help`, then `t5studio SUB --help`
for every subcommand that `--help` lists, so the reference can never name a flag the program lacks.

  python3 docs/gen_cli_reference.py build/app/t5studio --out docs/cli-reference.md   # refresh
  python3 docs/gen_cli_reference.py build/app/t5studio --check docs/cli-reference.md # ctest docs_cli_reference

It lives beside the page it writes; only the standard library, so any python3 runs it.
The output must not depend on the machine: the program runs with a fixed locale and terminal width,
and any path of this checkout, the binary or the home folder that a help text shows is replaced.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

HEADER = """# Command-line reference

Generated from the program by `docs/gen_cli_reference.py`; do not edit by hand (ctest
`docs_cli_reference` fails when this page and `t5studio --help` disagree). The guide to the command
line, with examples and exit codes: [cli.md](cli.md).
"""


def run_help(binary, args):
    """What the program prints for ARGS, and its exit code, in an environment fixed for every machine."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "COLUMNS": "100", "TERM": "dumb",
           "HOME": os.environ.get("HOME", "/")}
    if "LD_LIBRARY_PATH" in os.environ:
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    p = subprocess.run([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=60)
    return p.stdout.decode("utf-8", "replace"), p.returncode


def subcommands(top_help):
    """The subcommands in the "Subcommands:" block of `t5studio --help`, with their one-line summaries
    (the same reading as tests/contracts/contracts_cli.py)."""
    block = re.search(r"^Subcommands:\n(.*?)(?:\n\s*\n|\Z)", top_help, re.S | re.M)
    if not block:
        return []
    rows = []
    for line in block.group(1).splitlines():
        if line.strip():
            name, _, summary = line.strip().partition(" ")
            rows.append((name, summary.strip()))
    return rows


def tidy(text, binary):
    """Machine-specific parts out: paths of the binary, this checkout and the home folder; trailing blanks."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for path, name in sorted([(os.path.abspath(binary), "t5studio"), (os.path.dirname(os.path.abspath(binary)), "<BIN>"),
                              (root, "<ROOT>"), (os.path.expanduser("~"), "~")], key=lambda p: -len(p[0])):
        if len(path) > 1:
            text = text.replace(path, name)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def fenced(text):
    return "```text\n" + text + "\n```\n"


def reference(binary):
    top, rc = run_help(binary, ["--help"])
    if rc != 0:
        raise SystemExit("%s --help exited %d:\n%s" % (binary, rc, top))
    subs = subcommands(top)
    if not subs:
        raise SystemExit("%s --help lists no subcommands (no \"Subcommands:\" block)" % binary)
    out = [HEADER, "Subcommands: " + ", ".join("[%s](#%s)" % (s, s) for s, _ in subs) + ".\n",
           "## t5studio\n", "`t5studio --help`: the subcommands, the desktop app's own flags and the exit codes.\n",
           fenced(tidy(top, binary))]
    for name, summary in subs:
        text, rc = run_help(binary, [name, "--help"])
        out.append("## %s\n" % name)
        # A subcommand with flags answers --help with its usage; one without (help, version) does not.
        if rc == 0 and re.search(r"^Usage: \S*t5studio %s\b" % re.escape(name), text, re.M):
            out.append(fenced(tidy(text, binary)))
        else:
            out.append("`t5studio %s` takes no flags: %s.\n" % (name, summary))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", help="the t5studio executable, e.g. build/app/t5studio")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", help="write the reference to this file")
    mode.add_argument("--check", help="fail (exit 1, with the diff) when this file differs from a fresh reference")
    a = ap.parse_args()
    text = reference(a.binary)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    try:
        with open(a.check, encoding="utf-8") as f:
            old = f.read()
    except OSError as e:
        old = ""
        print("cannot read %s: %s" % (a.check, e))
    if old == text:
        print("%s is what the program says" % a.check)
        return 0
    diff = list(difflib.unified_diff(old.splitlines(), text.splitlines(), a.check, "t5studio --help now", lineterm=""))
    print("%s is stale: the program's --help changed (%d diff lines; first 60 below). Refresh it with:\n"
          "  python3 docs/gen_cli_reference.py build/app/t5studio --out docs/cli-reference.md\n"
          "from the repository root, then review `git diff docs/cli-reference.md`.\n" % (a.check, len(diff)))
    print("\n".join(diff[:60]))
    return 1


if __name__ == "__main__":
    sys.exit(main())
