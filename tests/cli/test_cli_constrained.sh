#!/usr/bin/env bash
# t5studio generate --force-words "w1,w2|w3" --beams K: constrained beam search on the command line
# gives transformers' ids (the golden of tests/make_constrained_beam_goldens.py, whose words form
# stands for its force_words_ids), as does --force-words-ids JSON; a refusal is one line naming the
# field (exit 1: bad input).
set -u
source "$(dirname "$0")/cli_test_lib.sh" "$@"
golden="$data/goldens/constrained_beam.json"
run="d['models']['t5v10-tied-relu']['runs'][1]"
want=$(json "$golden" "[c for c in $run['per_input'][0]['sequences']]")
words=$(json "$golden" "$run['force_words']")
ids=$(json "$golden" "json.dumps($run['config']['force_words_ids'])")
text=$(json "$golden" "d['models']['t5v10-tied-relu']['texts'][0]")
common=(--model "$model" --text "$text" --beams 5 --num-return 3 --max-new-tokens 14 --length-penalty 0.6 --early-stopping --json)

"$bin" generate "${common[@]}" --force-words "$words" >"$work/words.json" && ok || bad "generate --force-words failed: $(cat "$work/words.json")"
[ "$(json "$work/words.json" "[c['ids'] for c in d['results'][0]['candidates']]")" = "$want" ] && ok \
  || bad "--force-words ids differ from transformers': $(cat "$work/words.json")"
"$bin" generate "${common[@]}" --force-words-ids "$ids" >"$work/ids.json" && ok || bad "generate --force-words-ids failed: $(cat "$work/ids.json")"
[ "$(json "$work/ids.json" "[c['ids'] for c in d['results'][0]['candidates']]")" = "$want" ] && ok \
  || bad "--force-words-ids ids differ from transformers': $(cat "$work/ids.json")"
expect_code "--force-words without beams" 1 "force_words" "$bin" generate --model "$model" --text "$text" --force-words park
expect_code "--force-words-ids prefix alternatives" 1 "force_words_ids" "$bin" generate --model "$model" --text "$text" --beams 2 \
  --force-words-ids '[[[5, 6], [5]]]'

finish cli_constrained
