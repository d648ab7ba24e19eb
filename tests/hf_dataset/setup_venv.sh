#!/usr/bin/env bash
# Creates .venv-hf (a venv of its own: `datasets` pulls a huggingface_hub that the project's .venv,
# pinned to transformers 4.x, refuses) with the `datasets` package and pytest (the tests' runner)
# from PyPI when they are missing.
# Prints the venv's path. Exit 0: ready; exit 77: `datasets` cannot be installed here (no network to
# PyPI, no venv module), so the test reports SKIPPED with this script's reason.
# pip's cache is kept, so a second install on the same machine is fast.
set -u
ROOT="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
VENV="${T5S_HF_VENV:-$ROOT/.venv-hf}"
VERSION="${T5S_DATASETS_VERSION:-5.2.0}"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import datasets, pytest" 2>/dev/null; then
    echo "$VENV"
    exit 0
fi
PY="${PYTHON:-python3}"
if ! "$PY" -m venv "$VENV" >&2; then
    echo "cannot create a venv with $PY (python3-venv missing?)" >&2
    exit 77
fi
if ! "$VENV/bin/pip" install --disable-pip-version-check -q "datasets==$VERSION" pytest >&2; then
    echo "pip install datasets==$VERSION pytest failed (no access to PyPI?)" >&2
    exit 77
fi
echo "$VENV"
