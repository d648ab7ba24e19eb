#!/usr/bin/env bash
# ctest entry `labelstudio_spans` (label "labelstudio"): makes .venv-ls (setup_venv.sh) and imports our
# Label Studio exports into a real Label Studio. Exit 77 (SKIPPED, with the reason) only when
# label-studio cannot be installed.
# usage: run_spans.sh T5STUDIO MODEL WORKDIR
set -u
here="$(cd "$(dirname "$0")" && pwd)"
venv="$("$here/setup_venv.sh")"
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "SKIP: label-studio cannot be installed here (setup_venv.sh exit $rc)"
    exit 77
fi
exec "$venv/bin/python" "$here/test_labelstudio_spans.py" "$@"
