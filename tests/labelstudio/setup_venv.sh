#!/usr/bin/env bash
# Creates .venv-ls (a venv of its own: label-studio pins Django and friends) with the label-studio
# package and pytest (the tests' runner) from PyPI when missing. Exit 0: ready; exit 77: label-studio
# cannot be installed here (no network to PyPI, no venv module) — the e2e test reports SKIPPED with
# this script's reason.
# pip's cache is kept, so a second install on the same machine is fast.
set -u
ROOT="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
VENV="${T5S_LS_VENV:-$ROOT/.venv-ls}"
VERSION="${T5S_LS_VERSION:-1.23.2}"
if [ -x "$VENV/bin/label-studio" ] && "$VENV/bin/python" -c "import label_studio, pytest" 2>/dev/null; then
    echo "$VENV"
    exit 0
fi
PY="${PYTHON:-python3}"
if ! "$PY" -m venv "$VENV" >&2; then
    echo "cannot create a venv with $PY (python3-venv missing?)" >&2
    exit 77
fi
if ! "$VENV/bin/pip" install --disable-pip-version-check -q "label-studio==$VERSION" pytest >&2; then
    echo "pip install label-studio==$VERSION pytest failed (no access to PyPI?)" >&2
    exit 77
fi
echo "$VENV"
