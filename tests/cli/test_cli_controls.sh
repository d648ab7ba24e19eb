#!/usr/bin/env bash
# t5studio generate --stop-strings / --suppress-tokens: transformers' ids (the goldens of
# tests/make_control_goldens.py) from the command line; bad values are one line naming the setting.
set -u
source "$(dirname "$0")/cli_test_lib.sh" "$@"
golden="$data/goldens/controls.json"
text=$(json "$golden" "d['texts'][0]")
want() {  # the golden greedy ids of input 0 for settings holding KEY
  json "$golden" "[c for c in d['generate']['cases'] if c['mode'] == 'greedy' and '$1' in c['settings']][0]['per_input'][0][0]"
}

"$bin" generate --model "$model" --text "$text" --max-new-tokens 12 --stop-strings '["~~~", "れれれ", "<extra_id_1", "b~"]' \
  --json >"$work/stop.json" && ok || bad "generate --stop-strings failed: $(cat "$work/stop.json")"
[ "$(json "$work/stop.json" "d['results'][0]['candidates'][0]['ids']")" = "$(want stop_strings)" ] \
  && ok || bad "--stop-strings ids differ from transformers': $(cat "$work/stop.json")"
"$bin" generate --model "$model" --text "$text" --max-new-tokens 12 --suppress-tokens '[129, 130, 486]' \
  --json >"$work/suppress.json" && ok || bad "generate --suppress-tokens failed: $(cat "$work/suppress.json")"
[ "$(json "$work/suppress.json" "d['results'][0]['candidates'][0]['ids']")" = "$(want suppress_tokens)" ] \
  && ok || bad "--suppress-tokens ids differ from transformers': $(cat "$work/suppress.json")"
expect_code "stop string no token can end" 1 "stop_strings" "$bin" generate --model "$model" --text "$text" --stop-strings '["😀"]'
expect_code "negative suppressed id" 1 "suppress" "$bin" generate --model "$model" --text "$text" --suppress-tokens '[1, -2]'

finish cli_controls
