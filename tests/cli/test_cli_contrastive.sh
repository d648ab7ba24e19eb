#!/usr/bin/env bash
# t5studio generate --penalty-alpha A --top-k K: contrastive search on the command line gives
# transformers' ids (the golden of tests/make_contrastive_goldens.py), not sampling (while --top-k
# alone still implies sampling); a bad value is one line naming the flag.
set -u
source "$(dirname "$0")/cli_test_lib.sh" "$@"
golden="$data/goldens/contrastive.json"
want=$(json "$golden" "[r for r in d['models']['t5v10-tied-relu']['runs'] if r['config'] == {'penalty_alpha': 0.6, 'top_k': 4, 'max_new_tokens': 16}][0]['per_input'][0]['ids']")
text=$(json "$golden" "d['models']['t5v10-tied-relu']['texts'][0]")

"$bin" generate --model "$model" --text "$text" --penalty-alpha 0.6 --top-k 4 --max-new-tokens 16 --json >"$work/c.json" \
  && ok || bad "generate --penalty-alpha failed: $(cat "$work/c.json")"
[ "$(json "$work/c.json" "d['results'][0]['candidates'][0]['ids']")" = "$want" ] && ok || bad "contrastive ids differ from transformers': $(cat "$work/c.json")"
[ "$(json "$work/c.json" "'seed' in d['results'][0]")" = False ] && ok || bad "--top-k with --penalty-alpha sampled"
"$bin" generate --model "$model" --text "$text" --top-k 4 --max-new-tokens 16 --json >"$work/greedy_k.json" \
  && [ "$(json "$work/greedy_k.json" "'seed' in d['results'][0]")" = True ] && ok || bad "--top-k alone no longer samples"
expect_code "negative --penalty-alpha" 1 "penalty_alpha must be >= 0" "$bin" generate --model "$model" --text "$text" --penalty-alpha -1 --top-k 4

finish cli_contrastive
