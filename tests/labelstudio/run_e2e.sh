#!/usr/bin/env bash
# ctest entry `labelstudio_e2e` (label "labelstudio"): makes .venv-ls (setup_venv.sh) and runs the
# end-to-end test in it. Exit 77 (SKIPPED, with the reason) only when label-studio cannot be installed.
# usage: run_e2e.sh T5STUDIO BASE_MODEL JSTS_VALID WORKDIR
set -u
here="$(cd "$(dirname "$0")" && pwd)"
venv="$("$here/setup_venv.sh")"
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "SKIP: label-studio cannot be installed here (setup_venv.sh exit $rc)"
    exit 77
fi
exec "$venv/bin/python" "$here/test_labelstudio_e2e.py" "$@"
