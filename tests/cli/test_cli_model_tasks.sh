#!/usr/bin/env bash
# Models know themselves: a fine-tuned model's config.json records its training prefix as its
# default task, which generate applies (and says it did) unless --prefix is given; a config with
# tasks and no default (t5-small's) changes nothing but offers them by --task; the demo model
# paraphrases on its first run; an adapter folder given as --model opens its base with it; `models`
# searches --dir folders a few levels down, labels where each row was found, names folders by
# their full paths and lists adapters with their base.
# Usage: test_cli_model_tasks.sh T5STUDIO TEST_DATA WORK_DIR [PYTHON]
set -u
source "$(dirname "$0")/cli_test_lib.sh" "$1" "$2" "$3"
python="${4:-python3}"
demo="$data/../../assets/demo-model"
export HF_HUB_CACHE="$work/cache"  # an empty cache of our own: `models` lists only what the test puts there
mkdir -p "$HF_HUB_CACHE"
# candidates FILE: each result's candidate texts, one result a line.
candidates() { json "$1" "'\n'.join(' | '.join(c['text'] for c in r['candidates']) for r in d['results'])"; }
gen() { "$bin" generate --max-new-tokens 8 --json "$@"; }

# --- A fine-tuned model remembers its prefix ---------------------------------------------------
printf '{"source": "the cat sat", "target": "a cat was sitting"}\n{"source": "it rains", "target": "rain is falling"}\n' >"$work/pairs.jsonl"
"$bin" train --model "$model" --data "$work/pairs.jsonl" --source-prefix "paraphrase: " --out "$work/run" --steps 2 --batch-size 2 \
  --eval-split 0 >"$work/train.out" 2>"$work/train.err" && ok || bad "train --source-prefix: $(tail -3 "$work/train.err")"
final="$work/run/final"
[ "$(json "$final/config.json" "(d.get('task_specific_params', {}).get('paraphrase', {}).get('prefix'), d.get('t5studio_default_task'))")" \
  = "('paraphrase: ', 'paraphrase')" ] && ok || bad "config.json lacks the training prefix as its default task: $(head -c 400 "$final/config.json")"
if "$python" -c "import transformers" 2>/dev/null; then
  "$python" -c "import sys; from transformers import T5Config; c = T5Config.from_pretrained(sys.argv[1]); assert c.task_specific_params['paraphrase']['prefix'] == 'paraphrase: '" \
    "$final" 2>"$work/py.err" && ok || bad "transformers does not load the saved config.json: $(tail -1 "$work/py.err")"
else
  echo "SKIPPED: transformers check of the saved config.json (no transformers in $python)"
fi
gen --model "$final" --text "the dog runs" --text "it snows" >"$work/default.json" 2>"$work/err" || bad "generate FINETUNED: $(cat "$work/err")"
gen --model "$final" --text "the dog runs" --text "it snows" --prefix "paraphrase: " >"$work/given.json" 2>"$work/err" || bad "generate --prefix: $(cat "$work/err")"
[ -s "$work/default.json" ] && [ "$(candidates "$work/default.json")" = "$(candidates "$work/given.json")" ] && ok \
  || bad "generate FINETUNED differs from --prefix 'paraphrase: ': $(candidates "$work/default.json") vs $(candidates "$work/given.json")"
[ "$(json "$work/default.json" "[r.get('task_prefix') for r in d['results']]")" = "['paraphrase: ', 'paraphrase: ']" ] && ok \
  || bad "the results do not record the default prefix: $(head -c 300 "$work/default.json")"
# --prefix "" turns it off: the same as a copy of the model without its tasks.
gen --model "$final" --text "the dog runs" --prefix "" >"$work/off.json" 2>"$work/err" || bad "generate --prefix '': $(cat "$work/err")"
mkdir -p "$work/untasked" && cp "$final"/* "$work/untasked/"
"$python" -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c.pop('task_specific_params'); c.pop('t5studio_default_task'); json.dump(c, open(p,'w'))" \
  "$work/untasked/config.json"
gen --model "$work/untasked" --text "the dog runs" >"$work/raw.json" 2>"$work/err" || bad "generate untasked: $(cat "$work/err")"
[ "$(candidates "$work/off.json")" = "$(candidates "$work/raw.json")" ] && [ "$(json "$work/off.json" "'task_prefix' in d['results'][0]")" = False ] \
  && ok || bad "--prefix '' does not turn the default off: $(candidates "$work/off.json") vs $(candidates "$work/raw.json")"
# info says which prefix is in effect and where it comes from.
"$bin" info --model "$final" --json >"$work/info.json" 2>"$work/err" || bad "info: $(cat "$work/err")"
[ "$(json "$work/info.json" "(d['task_prefix']['prefix'], 'config.json' in d['task_prefix']['source'], [t['name'] for t in d['tasks'] if t['default']])")" \
  = "('paraphrase: ', True, ['paraphrase'])" ] && ok || bad "info --json: $(json "$work/info.json" "(d.get('tasks'), d.get('task_prefix'))")"
"$bin" info --model "$final" 2>&1 | grep -q '^prefix .*"paraphrase: " by default, from config.json' && ok || bad "info's text names no default prefix"
# The history records the prefix used (its settings JSON, which every front end writes).
gen --model "$final" --text "the dog runs" --history "$work/h.db" >/dev/null 2>"$work/err" || bad "generate --history: $(cat "$work/err")"
[ "$("$python" -c "import json,sqlite3,sys; print(json.loads(sqlite3.connect(sys.argv[1]).execute('select settings_json from generations').fetchone()[0])['task_prefix'])" \
  "$work/h.db" 2>&1)" = "paraphrase: " ] && ok || bad "the history does not record the default prefix"

# serve starts from the model's defaults too: /v1/settings shows the prefix, /augment applies it.
cat >"$work/serve_check.py" <<'PY'
import json, subprocess, sys, time, urllib.request
bin_, model, text, want = sys.argv[1:5]
proc = subprocess.Popen([bin_, "serve", "--model", model, "--host", "127.0.0.1", "--port", "0", "--threads", "1"],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    base = "http://" + json.loads(proc.stdout.readline())["listening"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # /ready answers 200 once the model is loaded
        try:
            if urllib.request.urlopen(base + "/ready", timeout=5).status == 200: break
        except OSError:
            time.sleep(0.2)
    settings = json.load(urllib.request.urlopen(base + "/v1/settings", timeout=10))
    req = urllib.request.Request(base + "/augment", data=json.dumps({"text": text, "max_new_tokens": 8}).encode(),
                                 headers={"Content-Type": "application/json"})
    got = [c["text"] for c in json.load(urllib.request.urlopen(req, timeout=60))["results"][0]["candidates"]]
    print(settings.get("task_prefix") == "paraphrase: " and " | ".join(got) == want)
finally:
    proc.terminate()
    proc.wait(timeout=30)
PY
[ "$("$python" "$work/serve_check.py" "$bin" "$final" "the dog runs" "$(json "$work/given.json" "' | '.join(c['text'] for c in d['results'][0]['candidates'])")" 2>&1)" = True ] \
  && ok || bad "serve does not start from the model's default prefix"

# --- Several tasks, none marked (t5-small's config): no prefix by default, tasks by name ------
mkdir -p "$work/multi" && cp "$model"/* "$work/multi/"
"$python" -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['task_specific_params'] = {'summarization': {'prefix': 'summarize: ', 'max_length': 200}, 'translation_en_to_de': {'prefix': 'translate English to German: '}}; json.dump(c, open(p,'w'))" \
  "$work/multi/config.json"
gen --model "$work/multi" --text "the dog runs" >"$work/m.json" 2>"$work/err" || bad "generate multi: $(cat "$work/err")"
gen --model "$work/multi" --text "the dog runs" --prefix "" >"$work/m0.json" 2>"$work/err" || bad "generate multi --prefix '': $(cat "$work/err")"
[ "$(candidates "$work/m.json")" = "$(candidates "$work/m0.json")" ] && [ "$(json "$work/m.json" "'task_prefix' in d['results'][0]")" = False ] \
  && ok || bad "a config with unmarked tasks changed generate's default"
gen --model "$work/multi" --text "the dog runs" --task translation_en_to_de >"$work/mt.json" 2>"$work/err" || bad "--task: $(cat "$work/err")"
gen --model "$work/multi" --text "the dog runs" --prefix "translate English to German: " >"$work/mp.json" 2>"$work/err" || bad "--prefix: $(cat "$work/err")"
[ "$(candidates "$work/mt.json")" = "$(candidates "$work/mp.json")" ] && [ "$(json "$work/mt.json" "d['results'][0]['task_prefix']")" = "translate English to German: " ] \
  && ok || bad "--task NAME is not its prefix"
expect_code "--task unknown" 1 "no task 'nope'.*summarization, translation_en_to_de" gen --model "$work/multi" --text x --task nope
expect_code "--task with --prefix" 2 "--task NAME or --prefix TEXT, not both" gen --model "$work/multi" --text x --task summarization --prefix "a: "
"$bin" info --model "$work/multi" --json >"$work/mi.json" 2>/dev/null
[ "$(json "$work/mi.json" "(d['task_prefix'], sorted(t['name'] for t in d['tasks']))")" = "(None, ['summarization', 'translation_en_to_de'])" ] \
  && ok || bad "info on unmarked tasks: $(json "$work/mi.json" "(d.get('tasks'), d.get('task_prefix'))")"
cp "$work/multi/config.json" "$work/multi/config.bak"
"$python" -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['t5studio_default_task'] = 'missing'; json.dump(c, open(p,'w'))" "$work/multi/config.json"
expect_code "default naming no task" 1 "config.json: 't5studio_default_task' names 'missing'" gen --model "$work/multi" --text x
mv "$work/multi/config.bak" "$work/multi/config.json"

# --- The demo model's first run (packaging/run.sh's flags): as with its paraphrase prefix ---------
scored() { json "$1" "[(c['text'], round(c['score'], 4)) for c in d['results'][0]['candidates']]"; }
first_run=(--sample --num-return 4 --distinct --seed 1 --max-new-tokens 24 --json)
"$bin" generate --model "$demo" --text "猫が好きです。" "${first_run[@]}" >"$work/demo.json" 2>"$work/err" || bad "generate demo: $(cat "$work/err")"
"$bin" generate --model "$demo" --text "猫が好きです。" "${first_run[@]}" --prefix "paraphrase: " >"$work/demo_p.json" 2>"$work/err" \
  || bad "generate demo --prefix: $(cat "$work/err")"
[ -s "$work/demo.json" ] && [ "$(scored "$work/demo.json")" = "$(scored "$work/demo_p.json")" ] \
  && [ "$(json "$work/demo.json" "d['results'][0].get('task_prefix')")" = "paraphrase: " ] && ok || bad "the demo model does not default to paraphrase"
gen --model "$demo" --text "我们走吧。" --task translate_chinese_to_english >"$work/demo_t.json" 2>"$work/err" \
  && [ "$(json "$work/demo_t.json" "d['results'][0]['task_prefix']")" = "translate Chinese to English: " ] && ok || bad "demo --task: $(cat "$work/err")"

# --- An adapter folder given as --model opens its base with it ---------------------------------
"$bin" train --model "$model" --data "$work/pairs.jsonl" --lora --out "$work/lora" --steps 2 --batch-size 2 --eval-split 0 \
  >/dev/null 2>"$work/lora.err" && ok || bad "train --lora: $(tail -3 "$work/lora.err")"
adapter="$work/lora/final"
gen --model "$model" --adapter "$adapter" --text "the dog runs" >"$work/a_pair.json" 2>"$work/err" || bad "--model BASE --adapter: $(cat "$work/err")"
gen --model "$adapter" --text "the dog runs" >"$work/a_self.json" 2>"$work/err" && ok || bad "generate --model ADAPTER: $(cat "$work/err")"
[ -s "$work/a_self.json" ] && [ "$(candidates "$work/a_self.json")" = "$(candidates "$work/a_pair.json")" ] && ok || bad "--model ADAPTER is not BASE + adapter"
# base_model_name_or_path as ORG/NAME: resolved through the Hugging Face cache.
snap="$HF_HUB_CACHE/models--t5s-test--tiny-base/snapshots/0123456789abcdef0123456789abcdef01234567"
mkdir -p "$snap" "$HF_HUB_CACHE/models--t5s-test--tiny-base/refs" && cp "$model"/* "$snap/"
echo 0123456789abcdef0123456789abcdef01234567 >"$HF_HUB_CACHE/models--t5s-test--tiny-base/refs/main"
mkdir -p "$work/hub_adapter" && cp "$adapter"/* "$work/hub_adapter/"
"$python" -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['base_model_name_or_path'] = sys.argv[2]; json.dump(c, open(p,'w'))" \
  "$work/hub_adapter/adapter_config.json" t5s-test/tiny-base
gen --model "$work/hub_adapter" --text "the dog runs" >"$work/a_hub.json" 2>"$work/err" && [ "$(candidates "$work/a_hub.json")" = "$(candidates "$work/a_pair.json")" ] \
  && ok || bad "--model ADAPTER with an ORG/NAME base in the cache: $(cat "$work/err")"
# A base that is nowhere: one line naming it and --adapter.
mkdir -p "$work/lost_adapter" && cp "$adapter"/* "$work/lost_adapter/"
"$python" -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['base_model_name_or_path'] = 'nobody/missing-base'; json.dump(c, open(p,'w'))" \
  "$work/lost_adapter/adapter_config.json"
expect_code "adapter, base missing" 1 "lost_adapter is a LoRA adapter \(base nobody/missing-base.*t5studio pull nobody/missing-base.*--adapter" \
  gen --model "$work/lost_adapter" --text x
# The app's --model takes an adapter folder too; a base that is nowhere is refused before any window opens.
"$bin" --model "$work/lost_adapter" >/dev/null 2>"$work/app.err"; rc=$?
[ $rc -eq 2 ] && head -1 "$work/app.err" | grep -q "lost_adapter is a LoRA adapter (base nobody/missing-base" && ok \
  || bad "app --model ADAPTER with its base missing: exit $rc, $(head -1 "$work/app.err")"
expect_code "adapter to a command without --adapter" 2 "is a LoRA adapter \(base .*\): give --model " "$bin" info --model "$adapter"
expect_code "adapter as --model and --adapter" 2 "--adapter is given too" gen --model "$adapter" --adapter "$adapter" --text x

# --- models --dir A --dir B ----------------------------------------------------------------------
mkdir -p "$work/A/projects/p1" "$work/B"
cp -r "$work/run" "$work/A/projects/p1/run"      # A/projects/p1/run/final: four levels down
cp -r "$adapter" "$work/B/my-adapter"
"$bin" models --dir "$work/A" --dir "$work/B" --json >"$work/models.json" 2>"$work/err" || bad "models --dir: $(cat "$work/err")"
A="$(cd "$work/A" && pwd)"; B="$(cd "$work/B" && pwd)"
[ "$(json "$work/models.json" "sorted((m['name'], m['found_in']) for m in d['models'] if m['found_in'] != 'cache' and m['name'].endswith('/final'))")" \
  = "[('$A/projects/p1/run/final', '$work/A')]" ] && ok || bad "models --dir: the nested model, by its full path, found in A: $(json "$work/models.json" "[(m['name'], m['found_in']) for m in d['models']]")"
[ "$(json "$work/models.json" "[(m['kind'], m['base']['name'], m['base']['dir'] is not None, m['found_in']) for m in d['models'] if m['name'] == '$B/my-adapter']")" \
  = "[('adapter', '$model', True, '$work/B')]" ] && ok || bad "models --dir: the adapter with its base: $(json "$work/models.json" "[m for m in d['models'] if m['kind'] == 'adapter']")"
[ "$(json "$work/models.json" "[m['found_in'] for m in d['models'] if m['name'] == 't5s-test/tiny-base']")" = "['cache']" ] && ok \
  || bad "models: the cache's model is not labelled cache"
# --cache-dir: an adapter's ORG/NAME base is looked up in that cache, not in $HF_HUB_CACHE's.
mkdir -p "$work/C" && cp -r "$work/hub_adapter" "$work/C/hub-adapter"
HF_HUB_CACHE="$work/no-cache" "$bin" models --cache-dir "$HF_HUB_CACHE" --dir "$work/C" --json >"$work/models_c.json" 2>"$work/err" \
  || bad "models --cache-dir --dir: $(cat "$work/err")"
[ "$(json "$work/models_c.json" "[m['base']['dir'] is not None for m in d['models'] if m['kind'] == 'adapter']")" = "[True]" ] && ok \
  || bad "models --cache-dir: the adapter's base t5s-test/tiny-base is in that cache: $(cat "$work/models_c.json")"
"$bin" models --dir "$work/A" --dir "$work/B" >"$work/models.txt" 2>&1
grep -qE "^$A/projects/p1/run/final +--dir " "$work/models.txt" && grep -q "LoRA adapter for $model" "$work/models.txt" \
  && grep -q "in the Hugging Face cache .*, [0-9]* in --dir folders" "$work/models.txt" && ok || bad "models text: $(cat "$work/models.txt")"

finish cli_model_tasks
