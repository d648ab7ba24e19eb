#!/usr/bin/env bash
# ctest entries labelled "labelstudio": makes .venv-ls (setup_venv.sh) and runs one of this folder's
# pytest files in it with the remaining arguments (--t5studio PATH ..., see tests/conftest.py).
# Exit 77 (SKIPPED, with the reason) only when label-studio cannot be installed.
# usage: run_in_ls_venv.sh TEST_FILE.py --t5studio PATH --model DIR [--data PATH] --work DIR
set -u
here="$(cd "$(dirname "$0")" && pwd)"
script="${1:?usage: run_in_ls_venv.sh TEST_SCRIPT.py ARGS...}"
shift
venv="$("$here/setup_venv.sh")"
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "SKIP: label-studio cannot be installed here (setup_venv.sh exit $rc)"
    exit 77
fi
exec "$venv/bin/python" -m pytest -q "$here/$script" "$@"
