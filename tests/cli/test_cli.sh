#!/usr/bin/env bash
# The t5studio command-line contract: JSON fields, generation flags, and one-line errors with a
# non-zero exit code on bad input. Usage: test_cli.sh T5STUDIO TEST_DATA_DIR WORK_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"

# expect_fail NAME PATTERN CMD...: exit != 0, exactly one stderr line, matching PATTERN, no crash.
expect_fail() {
  local name="$1" pattern="$2"; shift 2
  "$@" >"$work/out" 2>"$work/err"; local rc=$?
  local lines; lines=$(wc -l <"$work/err")
  if [ $rc -eq 0 ]; then bad "$name: exit 0"; return; fi
  if [ $rc -ge 128 ]; then bad "$name: crashed (rc $rc)"; return; fi
  if [ "$lines" -ne 1 ]; then bad "$name: $lines stderr lines: $(cat "$work/err")"; return; fi
  if ! grep -qE -- "$pattern" "$work/err"; then bad "$name: '$(cat "$work/err")' lacks /$pattern/"; return; fi
  ok
}

# --- info / tokenize / score -------------------------------------------------------------
"$bin" info --model "$model" --json >"$work/info.json" && ok || bad "info failed"
[ "$(json "$work/info.json" "d['parameter_count'] > 0 and d['stored_dtype'] == 'F32' and d['architecture']['d_model']")" = 32 ] && ok || bad "info fields"
# int8 on the CPU names its matmul path (AMX / AVX512-VNNI here; FBGEMM on CPUs without VNNI).
"$bin" info --model "$model" --dtype int8 --json >"$work/info8.json" && ok || bad "info int8 failed"
[ "$(json "$work/info8.json" "d['precision'] == 'int8' and d['matmul_kernel'].startswith('int8 ')")" = True ] && ok || bad "info int8 matmul_kernel"
# The kernel policy: the CPU class and each kernel's choice; T5S_CPU_CLASS=avx2 forces the AVX2
# class's kernels (never a class above the CPU's).
[ "$(json "$work/info.json" "d['cpu_class'] in ('x86-64', 'avx2', 'avx512', 'avx512-vnni', 'amx') and sorted(d['kernels']) == ['decode_step', 'fp32_gemm', 'int8_gemm', 'step', 'vocab', 'weight_packing']")" = True ] && ok || bad "info cpu_class / kernels"
T5S_CPU_CLASS=avx2 "$bin" info --model "$model" --dtype int8 --json >"$work/info_avx2.json" && ok || bad "info under T5S_CPU_CLASS=avx2 failed"
[ "$(json "$work/info_avx2.json" "d['cpu_class'] in ('avx2', 'x86-64') and d['cpu_class_detected'] == $(json "$work/info.json" "repr(d['cpu_class_detected'])") and d['matmul_kernel'] == 'int8 FBGEMM' and d['kernels']['int8_gemm'].startswith('FBGEMM')")" = True ] && ok || bad "info T5S_CPU_CLASS=avx2: $(cat "$work/info_avx2.json")"
# Our AVX2 int8 kernel by its switch (8-bit activations: the VNNI kernel's results); FBGEMM without AVX2.
T5S_CPU_CLASS=avx2 T5S_INT8_KERNEL=avx2 "$bin" info --model "$model" --dtype int8 --json >"$work/info_avx2_int8.json" && ok || bad "info under T5S_INT8_KERNEL=avx2 failed"
[ "$(json "$work/info_avx2_int8.json" "d['matmul_kernel'] == {'avx2': 'int8 AVX2', 'x86-64': 'int8 FBGEMM'}[d['cpu_class']] and d['kernels']['int8_gemm'].startswith({'avx2': 'AVX2 (', 'x86-64': 'FBGEMM'}[d['cpu_class']])")" = True ] && ok || bad "info T5S_INT8_KERNEL=avx2: $(cat "$work/info_avx2_int8.json")"

"$bin" tokenize --model "$data/t5-spiece" --text "Hello world!" --text "Hello <extra_id_0>." --json >"$work/tok.json" && ok || bad "tokenize failed"
[ "$(json "$work/tok.json" "d['ids']")" = "[[8774, 296, 55, 1], [8774, 32099, 3, 5, 1]]" ] && ok || bad "tokenize ids: $(cat "$work/tok.json")"
[ "$(json "$work/tok.json" "d['tokens'][1][1]")" = "<extra_id_0>" ] && ok || bad "tokenize tokens"
# A folder with only tokenizer.json (as T5TokenizerFast saves it): the ids of the tokenizers library.
tj="$data/tokenizer_json"
"$bin" tokenize --model "$tj/t5" --text "$(json "$tj/goldens.json" "d['sentences'][3]")" --json >"$work/tokjson.json" \
  && ok || bad "tokenize from tokenizer.json failed"
[ "$(json "$work/tokjson.json" "d['ids'][0]")" = "$(json "$tj/goldens.json" "d['families']['t5']['variants']['saved']['ids'][3]")" ] \
  && ok || bad "tokenize ids from tokenizer.json: $(cat "$work/tokjson.json")"

"$bin" score --model "$model" --source "Tom is a good boy." --target "猫が好きです。" --json >"$work/score.json" && ok || bad "score failed"
[ "$(json "$work/score.json" "d['loss'] > 0 and len(d['target_ids']) == len(d['argmax'])")" = True ] && ok || bad "score fields"
# --adapter DIR (a PEFT LoRA adapter folder): applied on load; greedy ids as peft + transformers give them.
lora="$data/lora/t5v10-qv-wo"
"$bin" score --model "$model" --adapter "$lora" --source "Tom is a good boy." --target "猫が好きです。" --json >"$work/score_lora.json" && ok || bad "score --adapter failed"
[ "$(python3 -c "import json; a=json.load(open('$work/score.json')); b=json.load(open('$work/score_lora.json')); print(abs(a['loss'] - b['loss']) > 1e-3)")" = True ] && ok || bad "score --adapter changed nothing"
"$bin" generate --model "$model" --adapter "$lora" --text "Tom is a good boy." --max-new-tokens 12 --json >"$work/gen_lora.json" && ok || bad "generate --adapter failed"
[ "$(python3 -c "import json; g=json.load(open('$data/goldens/lora.json'))['adapters']['t5v10-qv-wo']['greedy'][0]; d=json.load(open('$work/gen_lora.json')); print(d['results'][0]['candidates'][0]['ids'] == g)")" = True ] && ok || bad "generate --adapter ids differ from peft"
# The history names the adapter a generation used (and none without one).
"$bin" generate --model "$model" --adapter "$lora" --text "Tom is a good boy." --max-new-tokens 4 --history "$work/lora_h.db" >/dev/null \
  && "$bin" generate --model "$model" --text "Tom is a good boy." --max-new-tokens 4 --history "$work/lora_h.db" >/dev/null \
  && ok || bad "generate --adapter --history failed"
"$bin" history --history "$work/lora_h.db" --json >"$work/lora_h.json" && ok || bad "history --json (adapter records) failed"
[ "$(json "$work/lora_h.json" "sorted(g['adapter'] for g in d['generations']) == ['', '$lora']")" = True ] && ok || bad "history adapter field: $(head -c 300 "$work/lora_h.json")"
"$bin" history --history "$work/lora_h.db" | grep -q "+ adapter $lora" && ok || bad "history text does not name the adapter"

# --- embed: sentence-transformers folders ------------------------------------------------------
emb="$data/embedder/bert_wordpiece_cls_dense_norm"
"$bin" embed --embedder "$emb" --text "Hello, world! How are you today?" --text "x" --json >"$work/emb.json" && ok || bad "embed failed"
[ "$(python3 - "$work/emb.json" "$data/embedder/goldens.json" <<'PY'
import json, sys
got = json.load(open(sys.argv[1])); gold = json.load(open(sys.argv[2]))
want = gold["models"]["bert_wordpiece_cls_dense_norm"]["embeddings"]
rows = [want[gold["sentences"].index(t)] for t in ("Hello, world! How are you today?", "x")]
print(got["dim"] == 12 and max(abs(a - b) for g, w in zip(got["embeddings"], rows) for a, b in zip(g, w)) < 1e-4)
PY
)" = True ] && ok || bad "embed values: $(head -c 300 "$work/emb.json")"
cp -r "$data/embedder/bert_xlmr_mean" "$work/mpnet"
python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['model_type']='mpnet'; json.dump(c, open(p,'w'))" "$work/mpnet/config.json"
expect_fail "embed unsupported architecture" "unsupported: model_type 'mpnet'.*mpnet/config.json" "$bin" embed --embedder "$work/mpnet" --text hi
expect_fail "embed missing folder" "nowhere: embedder folder not found" "$bin" embed --embedder "$work/nowhere" --text hi
expect_fail "embed without text" "at least one --text" "$bin" embed --embedder "$emb"

# --- generate ------------------------------------------------------------------------------
golden="$data/goldens/t5v10-tied-relu.json"
"$bin" generate --model "$model" --text "Tom is a good boy." --max-new-tokens 12 --json >"$work/greedy.json" && ok || bad "generate failed"
want=$(python3 -c "import json; print(json.load(open('$golden'))['greedy']['per_input'][0])")
[ "$(json "$work/greedy.json" "d['results'][0]['candidates'][0]['ids']")" = "$want" ] && ok || bad "greedy ids differ from transformers"

"$bin" generate --model "$model" --text "Tom is a good boy." --beams 4 --num-return 4 --max-new-tokens 10 --json >"$work/beam.json" && ok || bad "beam failed"
[ "$(json "$work/beam.json" "len(d['results'][0]['candidates'])")" = 4 ] && ok || bad "beam candidates"

for run in 1 2; do
  "$bin" generate --model "$model" --text "猫が好きです。" --sample --seed 7 --num-return 4 --max-new-tokens 8 --json >"$work/sample$run.json"
done
cmp -s "$work/sample1.json" "$work/sample2.json" && ok || bad "--sample --seed 7 twice differs"

# A random-weight model: most of its byte-fallback pieces form no character (dropped as invalid_text by
# default); --keep-invalid-text leaves this check to --distinct and --no-copy alone.
"$bin" generate --model "$data/models/flan-gated-gelu-bf16" --text "我们走吧。" --sample --seed 7 --num-return 8 --distinct --no-copy \
  --keep-invalid-text --temperature 1.5 --max-new-tokens 6 --json >"$work/distinct.json" && ok || bad "distinct failed"
[ "$(json "$work/distinct.json" "(lambda c: len(c) == 8 and len({x['text'] for x in c}) == 8 and all(x['text'] != '我们走吧。' for x in c))(d['results'][0]['candidates'])")" = True ] \
  && ok || bad "--distinct --no-copy: $(cat "$work/distinct.json")"

printf 'Tom is a good boy.\n\n{"text": "猫が好きです。"}\n我们走吧。\n' >"$work/inputs.txt"
"$bin" generate --model "$model" --input "$work/inputs.txt" --batch-size 2 --max-new-tokens 5 >"$work/out.jsonl" && ok || bad "--input failed"
[ "$(wc -l <"$work/out.jsonl")" = 3 ] && ok || bad "--input: expected 3 JSONL lines"
[ "$(python3 -c "import json; print(json.loads(open('$work/out.jsonl').readlines()[1])['input'])")" = "猫が好きです。" ] && ok || bad "--input JSONL text field"

for dtype in bf16 int8; do
  "$bin" generate --model "$model" --text "Tom is a good boy." --dtype $dtype --max-new-tokens 4 --json >"$work/$dtype.json" 2>/dev/null && ok || bad "--dtype $dtype failed"
done

# --- history: generate --history, decide, export exactly the accepted/edited pairs -----------
if "$bin" --help | grep -q "history "; then
  "$bin" generate --model "$model" --text "Tom is a good boy." --text "我们走吧。" --beams 2 --num-return 2 --max-new-tokens 5 \
    --history "$work/h.db" >/dev/null && ok || bad "generate --history failed"
  "$bin" history --history "$work/h.db" --accept 1:0 --edit 2:1=我们去吧 --reject 2:0 >/dev/null && ok || bad "history decisions"
  "$bin" export --history "$work/h.db" --format jsonl --out "$work/train.jsonl" --accepted-only 2>/dev/null && ok || bad "export"
  [ "$(python3 -c "import json; print(sorted((r['source'], r['state']) for r in map(json.loads, open('$work/train.jsonl'))))")" = \
    "[('Tom is a good boy.', 'accepted'), ('我们走吧。', 'edited')]" ] && ok || bad "export content: $(cat "$work/train.jsonl")"
  [ "$(python3 -c "import json; print([json.loads(l)['target'] for l in open('$work/train.jsonl')][-1])")" = "我们去吧" ] && ok || bad "edited text exported"
  expect_fail "export refuses to overwrite" "already exists" "$bin" export --history "$work/h.db" --format csv --out "$work/train.jsonl"
  if "$bin" --help | grep -q "train "; then  # accepted/edited pairs from the history as training data
    "$bin" train --model "$model" --data-history "$work/h.db" --out "$work/hist-run" --steps 2 --batch-size 2 >/dev/null 2>"$work/train.err" \
      && ok || bad "train --data-history: $(tail -2 "$work/train.err")"
    [ "$(wc -l <"$work/hist-run/history-pairs.jsonl")" = 2 ] && ok || bad "train --data-history: expected the 2 accepted/edited pairs"
    [ -f "$work/hist-run/final/model.safetensors" ] && ok || bad "train --data-history: no final checkpoint"
    # train --history records the run and its curve (the app's Past runs); --resume continues the same record.
    "$bin" train --model "$model" --data-history "$work/h.db" --history "$work/h.db" --out "$work/rec-run" --steps 2 --batch-size 2 \
      --save-every 1 >/dev/null 2>"$work/rec.err" && ok || bad "train --history: $(tail -2 "$work/rec.err")"
    "$bin" train --model "$model" --data "$work/rec-run/history-pairs.jsonl" --history "$work/h.db" --out "$work/rec-run" --steps 3 \
      --batch-size 2 --resume >/dev/null 2>"$work/rec2.err" && ok || bad "train --history --resume: $(tail -2 "$work/rec2.err")"
    grep -q "continuing recorded run 1" "$work/rec2.err" && ok || bad "train --resume --history: not the same record: $(head -3 "$work/rec2.err")"
    "$bin" history --history "$work/h.db" --runs --json >"$work/runs.json" && ok || bad "history --runs"
    python3 - "$work/runs.json" <<'PY' && ok || bad "history --runs content: $(head -c 400 "$work/runs.json")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 1, runs
r = runs[0]
assert r["status"] == "completed" and r["steps"] == 3 and r["total_steps"] == 3, r
assert [p["step"] for p in r["points"]] == [1, 2, 3], r["points"]
assert all(p["loss"] > 0 for p in r["points"]) and r["final_dir"].endswith("rec-run/final"), r
PY
    "$bin" history --history "$work/h.db" --runs | grep -q "run 1  completed" && ok || bad "history --runs text"
  fi
  head -c 3000 /dev/urandom >"$work/corrupt.db"
  expect_fail "corrupt history" "corrupt.db" "$bin" history --history "$work/corrupt.db"
  # A real history whose last page header was overwritten: refused at open, never listed or exported as empty rows.
  cp "$work/h.db" "$work/damaged.db"
  psize=$(od -An -tu1 -j16 -N2 "$work/damaged.db" | awk '{print $1 * 256 + $2}')
  head -c 8 /dev/zero | dd of="$work/damaged.db" bs=1 seek=$(( ($(stat -c %s "$work/damaged.db") / psize - 1) * psize )) conv=notrunc status=none
  expect_fail "damaged history" "damaged.db is damaged" "$bin" history --history "$work/damaged.db"
  expect_fail "damaged history export" "damaged.db is damaged" "$bin" export --history "$work/damaged.db" --format jsonl --out "$work/damaged.jsonl"
  [ ! -e "$work/damaged.jsonl" ] && ok || bad "export of a damaged history left a file"
fi

# --- bad input: one line naming the file and the problem, exit != 0 ------------------------
cp -r "$model" "$work/m"
expect_fail "missing dir" "nope: model directory not found" "$bin" info --model "$work/nope"
expect_fail "missing tokenizer" "no spiece.model or tokenizer.json" "$bin" tokenize --model "$work" --text hi
mk() { rm -rf "$work/$1"; cp -r "$model" "$work/$1"; }
mk nocfg; rm "$work/nocfg/config.json"
expect_fail "missing config" "nocfg/config.json: cannot open" "$bin" info --model "$work/nocfg"
mk ffn; python3 - "$work/ffn/config.json" <<'PY'
import json, sys; p = sys.argv[1]; c = json.load(open(p)); c["feed_forward_proj"] = "gated-wobble-x"; json.dump(c, open(p, "w"))
PY
expect_fail "unknown feed_forward_proj" "config.json: feed_forward_proj 'gated-wobble-x' is not valid" "$bin" info --model "$work/ffn"
mk shape; python3 - "$work/shape/config.json" <<'PY'
import json, sys; p = sys.argv[1]; c = json.load(open(p)); c["d_model"] = 40; json.dump(c, open(p, "w"))
PY
expect_fail "shape mismatch" "model.safetensors: tensor '.*' has shape \[.*\] but config.json implies" "$bin" info --model "$work/shape"
mk layers; python3 - "$work/layers/config.json" <<'PY'
import json, sys; p = sys.argv[1]; c = json.load(open(p)); c["num_layers"] = 5; json.dump(c, open(p, "w"))
PY
expect_fail "missing tensor" "model.safetensors: missing tensor 'encoder.block.2" "$bin" info --model "$work/layers"
mk trunc; truncate -s 20000 "$work/trunc/model.safetensors"
expect_fail "truncated safetensors" "model.safetensors: truncated: tensor" "$bin" info --model "$work/trunc"
st() {  # st NAME HEADER-LENGTH HEADER: a hand-made safetensors file
  mk "$1"; python3 - "$work/$1/model.safetensors" "$2" "$3" <<'PY'
import struct, sys; p, n, h = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
n = len(h) if n < 0 else n
open(p, "wb").write(struct.pack("<Q", n) + h + b"\0" * 16)
PY
}
st beyond 99999999 '{}'
expect_fail "header beyond file" "model.safetensors: header length 99999999 goes beyond the end of the file" "$bin" info --model "$work/beyond"
st badjson -1 '{"a": [1, '
expect_fail "bad JSON header" "model.safetensors: bad JSON header" "$bin" info --model "$work/badjson"
st dtype -1 '{"shared.weight":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}}'
expect_fail "unknown dtype" "model.safetensors: tensor 'shared.weight' has unknown dtype 'Q4'" "$bin" info --model "$work/dtype"
expect_fail "invalid UTF-8 text" "invalid UTF-8 at byte 2" "$bin" generate --model "$model" --text $'ab\xff'
printf '{"text": "fine"}\n{"text": broken\n' >"$work/bad.jsonl"
expect_fail "malformed JSONL row" "bad.jsonl:2: malformed JSON line" "$bin" generate --model "$model" --input "$work/bad.jsonl"
expect_fail "missing input file" "missing.txt: cannot open input file" "$bin" generate --model "$model" --input "$work/missing.txt"
expect_fail "top_p 0" "top_p must be in \(0, 1\]" "$bin" generate --model "$model" --text hi --sample --top-p 0
expect_fail "top_p > 1" "top_p must be in \(0, 1\]" "$bin" generate --model "$model" --text hi --top-p 1.5
expect_fail "temperature 0 sampling" "temperature must be > 0" "$bin" generate --model "$model" --text hi --sample --temperature 0
expect_fail "num_return > beams" "num_return_sequences \(4\) must be <= num_beams \(2\)" "$bin" generate --model "$model" --text hi --beams 2 --num-return 4
expect_fail "unknown dtype flag" "unknown dtype 'fp8'" "$bin" generate --model "$model" --text hi --dtype fp8
if ! nvidia-smi >/dev/null 2>&1; then
  expect_fail "cuda without GPU" "no CUDA GPU is available" "$bin" generate --model "$model" --text hi --device cuda
fi
expect_fail "fp16 on cpu" "fp16 runs on CUDA only" "$bin" generate --model "$model" --text hi --device cpu --dtype fp16
expect_fail "unknown flag" "unknown flag --bogus" "$bin" generate --model "$model" --text hi --bogus
expect_fail "unknown subcommand" "unknown subcommand" "$bin" frobnicate
expect_fail "adapter without adapter_config.json" "$work: no adapter_config.json in the adapter folder" "$bin" score --model "$model" --adapter "$work" --source a --target b
expect_fail "adapter for another base" "lora_A.weight has shape \[4, 24\] but the base model needs \[4, 32\]" "$bin" generate --model "$model" --adapter "$data/lora/flan-qv-wo" --text hi

# --- hardening (each class of the black-box sweep; exact exit codes) ------------------
expect_code "threads 100000" 2 "--threads must be in \[0, 1024\] \(got 100000\)" \
  "$bin" generate --model "$model" --text hi --threads 100000
expect_code "lora base precision int4" 2 "--lora-base-precision must be fp32, bf16, fp16 or int8, not 'int4'" \
  "$bin" train --model "$model" --data "$work/inputs.txt" --out "$work/lb" --lora --lora-base-precision int4
expect_code "lora base precision without lora" 1 "--lora-base-precision needs --lora or --adapter" \
  "$bin" train --model "$model" --data "$work/inputs.txt" --out "$work/lb" --lora-base-precision bf16
expect_code "info threads 100000" 2 "--threads must be in \[0, 1024\] \(got 100000\)" "$bin" info --model "$model" --threads 100000
expect_code "beams overflow" 2 "--beams must be in \[-2147483648, 2147483647\] \(got 99999999999\)" "$bin" generate --model "$model" --text hi --beams 99999999999
expect_code "temperature overflow" 2 "--temperature must be a finite number \(got 1e999\)" "$bin" generate --model "$model" --text hi --temperature 1e999
expect_code "max-new-tokens 99999999" 4 "generation would need about .* GB but only .* are free" \
  "$bin" generate --model "$model" --text "Tom is a good boy." --max-new-tokens 99999999
python3 -c "print('word ' * 20000)" >"$work/100k.txt"
expect_code "100 KB text" 1 "input 1 is [0-9]+ tokens, more than the source limit of 512 \(the default\); shorten it or raise --max-source-tokens" \
  "$bin" generate --model "$model" --text "$(cat "$work/100k.txt")"
expect_code "score 100 KB source" 1 "input 1 is [0-9]+ tokens, more than the source limit of 512 \(the default\)" \
  "$bin" score --model "$model" --source "$(cat "$work/100k.txt")" --target hi
expect_code "score 100 KB target" 1 "the target is [0-9]+ tokens, more than the limit of 512" \
  "$bin" score --model "$model" --source hi --target "$(cat "$work/100k.txt")"
python3 -c "print('x' * 1048576)" >"$work/1mb.txt"
expect_code "1 MB input line" 1 "more than the source limit" "$bin" generate --model "$model" --input "$work/1mb.txt"
"$bin" generate --model "$model" --text "$(python3 -c "print('word ' * 150)")" --max-source-tokens 2000 --max-new-tokens 2 --json >/dev/null \
  && ok || bad "--max-source-tokens 2000 should accept a 600-word input"
expect_code "input is a directory" 1 "$work: is a directory, not an input file" "$bin" generate --model "$model" --input "$work"
: >"$work/empty.txt"
expect_code "empty input file" 1 "empty.txt: no inputs" "$bin" generate --model "$model" --input "$work/empty.txt"
if "$bin" --help | grep -q "^  train"; then
  expect_code "train --steps 0" 2 "--steps must be >= 1 \(got 0\)" "$bin" train --model "$model" --data "$work/inputs.txt" --out "$work/t0" --steps 0
fi
# config.json: sizes checked against the tensors before anything is allocated; wrong types name the key.
cfg() {  # cfg NAME PYTHON-EXPR-ON-c: a copy of the model whose config.json is edited
  mk "$1"
  python3 - "$work/$1/config.json" "$2" <<'PY'
import json, sys; p = sys.argv[1]; c = json.load(open(p)); exec(sys.argv[2]); json.dump(c, open(p, "w"))
PY
}
cfg layers12 'c["num_layers"] = 10**12'
expect_code "num_layers 10^12" 1 "config.json: 'num_layers' is 1000000000000, more than the largest size T5 Studio accepts" \
  timeout 60 "$bin" info --model "$work/layers12"
cfg layers7 'c["num_layers"] = 10**7'
expect_code "num_layers 10^7" 1 "model.safetensors: missing tensor 'encoder.block.2.layer.0.SelfAttention.q.weight' \(config.json num_layers is 10000000 but the checkpoint has 2" \
  timeout 60 "$bin" info --model "$work/layers7"
cfg declayers 'c["num_decoder_layers"] = 10**7'
expect_code "num_decoder_layers 10^7" 1 "num_decoder_layers is 10000000 but the checkpoint has" timeout 60 "$bin" info --model "$work/declayers"
cfg dmodel 'c["d_model"] = 10**9'
expect_code "d_model 10^9" 1 "tensor 'shared.weight' has shape .* but config.json implies" timeout 60 "$bin" info --model "$work/dmodel"
cfg nulllayers 'c["num_layers"] = None'
expect_code "num_layers null" 1 "config.json: 'num_layers' must be a positive integer, got null" "$bin" info --model "$work/nulllayers"
cfg strheads 'c["num_heads"] = "8"'
expect_code "num_heads string" 1 "config.json: 'num_heads' must be a positive integer, got a string" "$bin" info --model "$work/strheads"
cfg bigvocab 'c["vocab_size"] = 10**400'
expect_code "400-digit vocab_size" 1 "config.json: 'vocab_size' holds a number too large to read" "$bin" info --model "$work/bigvocab"
cfg tiestr 'c["tie_word_embeddings"] = "yes"'
expect_code "tie_word_embeddings string" 1 "config.json: 'tie_word_embeddings' must be true or false" "$bin" info --model "$work/tiestr"
# safetensors: what the reference library rejects, we reject (tests/data/safetensors_cases has them all).
mk trailing; printf 'x' >>"$work/trailing/model.safetensors"
expect_code "byte after the data" 1 "model.safetensors: the tensors cover [0-9]+ data bytes but the file holds [0-9]+" \
  "$bin" info --model "$work/trailing"
# generation_config.json: its defaults apply where no flag is given; flags win; bad values name file and key.
mk gencfg
printf '{"num_beams": 4, "num_return_sequences": 3, "max_length": 5, "eos_token_id": 1}\n' >"$work/gencfg/generation_config.json"
"$bin" generate --model "$work/gencfg" --text "Tom is a good boy." --json >"$work/gencfg.json" && ok || bad "generate with generation_config.json failed"
[ "$(json "$work/gencfg.json" "(lambda c: len(c) == 3 and all(len(x['ids']) <= 4 for x in c))(d['results'][0]['candidates'])")" = True ] \
  && ok || bad "generation_config.json defaults not applied: $(cat "$work/gencfg.json")"
"$bin" generate --model "$work/gencfg" --text "Tom is a good boy." --beams 1 --num-return 1 --json >"$work/gencfg1.json" && ok || bad "flags over generation_config failed"
[ "$(json "$work/gencfg1.json" "len(d['results'][0]['candidates'])")" = 1 ] && ok || bad "flags must win over generation_config.json"
"$bin" info --model "$work/gencfg" --json >"$work/gencfg_info.json" && ok || bad "info with generation_config failed"
[ "$(json "$work/gencfg_info.json" "d['generation_config']['num_beams'] == 4 and d['generation_config']['max_new_tokens'] == 4")" = True ] \
  && ok || bad "info generation_config: $(cat "$work/gencfg_info.json")"
printf '{"num_beams": "four"}\n' >"$work/gencfg/generation_config.json"
expect_code "generation_config bad type" 1 "generation_config.json: 'num_beams' must be an integer" \
  "$bin" generate --model "$work/gencfg" --text hi
printf '{"eos_token_id": 999999}\n' >"$work/gencfg/generation_config.json"
expect_code "generation_config id outside vocab" 1 "generation_config.json: 'eos_token_id' 999999 is outside the vocabulary" \
  "$bin" info --model "$work/gencfg"
# A model card's group beam recipe in generation_config.json runs with no flags and gives transformers 4.55's ids
# (tests/data/goldens/group_beam.json, "model_folder").
mk gencfg_groups
json "$data/goldens/group_beam.json" "json.dumps(d['model_folder']['generation_config'])" >"$work/gencfg_groups/generation_config.json"
"$bin" generate --model "$work/gencfg_groups" --text "Tom is a good boy." --json >"$work/gencfg_groups.json" 2>"$work/gencfg_groups.err" \
  && [ ! -s "$work/gencfg_groups.err" ] && ok || bad "group beam generation_config.json: $(cat "$work/gencfg_groups.err")"
[ "$(json "$work/gencfg_groups.json" "[c['ids'] for c in d['results'][0]['candidates']]")" = \
  "$(json "$data/goldens/group_beam.json" "d['model_folder']['sequences'][0]")" ] && ok || bad "group beam from generation_config.json differs from transformers'"
# Nothing in generation_config.json is ignored in silence: a key not applied is a warning naming it (exit 0,
# stderr, "warnings" in --json); bookkeeping, transformers' neutral values and the keys applied are no warning.
mk gencfgx
printf '{"num_beams": 2, "guidance_scale": 1.5, "token_healing": true, "remove_invalid_values": true, "dola_layers": "high",
  "watermarking_config": {"greenlist_ratio": 0.25}, "forced_decoder_ids": [[1, 5]], "suppress_tokens": [5],
  "sequence_bias": [[[5], -1.0]], "renormalize_logits": true, "bad_words_ids": [[5]], "encoder_no_repeat_ngram_size": 3,
  "length_penalty": 1.0, "_from_model_config": true, "transformers_version": "4.40.0",
  "pad_token_id": 0, "temperature": 1.0, "epsilon_cutoff": 0.0}\n' >"$work/gencfgx/generation_config.json"
"$bin" generate --model "$work/gencfgx" --text "Tom is a good boy." --max-new-tokens 4 --json >"$work/gencfgx.json" 2>"$work/gencfgx.err" \
  && ok || bad "generate with unsupported generation_config keys failed: $(cat "$work/gencfgx.err")"
for key in guidance_scale token_healing remove_invalid_values dola_layers watermarking_config forced_decoder_ids; do
  grep -q "^t5studio generate: warning: .*generation_config.json: '$key' .* is not applied" "$work/gencfgx.err" && ok || bad "no stderr warning for $key: $(cat "$work/gencfgx.err")"
  [ "$(json "$work/gencfgx.json" "any(\"'$key'\" in w for w in d['warnings'])")" = True ] && ok || bad "--json warnings lack $key: $(cat "$work/gencfgx.json")"
done
[ "$(wc -l <"$work/gencfgx.err")" -eq 6 ] && ok || bad "bookkeeping, neutral or applied keys warned about: $(cat "$work/gencfgx.err")"
"$bin" info --model "$work/gencfgx" --json >"$work/gencfgx_info.json" 2>/dev/null && ok || bad "info with unsupported keys failed"
[ "$(json "$work/gencfgx_info.json" "d['settings']['num_beams'] == {'value': 2, 'source': 'generation_config.json'} and d['settings']['top_k']['source'] == 'built-in default' and d['settings']['encoder_no_repeat_ngram_size'] == {'value': 3, 'source': 'generation_config.json'} and len(d['warnings']) == 6")" = True ] \
  && ok || bad "info settings and their sources: $(head -c 600 "$work/gencfgx_info.json")"
"$bin" generate --model "$model" --text "Tom is a good boy." --max-new-tokens 4 --json >"$work/nowarn.json" 2>"$work/nowarn.err" && ok || bad "plain generate failed"
[ ! -s "$work/nowarn.err" ] && [ "$(json "$work/nowarn.json" "'warnings' in d")" = False ] && ok || bad "warnings without a cause: $(cat "$work/nowarn.err")"

# transformers' spellings of the flags: the same results; --max-length counts the decoder start token.
"$bin" generate --model "$model" --text "Tom is a good boy." --beams 3 --num-return 2 --max-new-tokens 6 --json >"$work/hf_ours.json" && ok || bad "beams failed"
"$bin" generate --model "$model" --text "Tom is a good boy." --num-beams 3 --num-return-sequences 2 --max-length 7 --json >"$work/hf_theirs.json" \
  && ok || bad "transformers' flag spellings refused"
[ "$(json "$work/hf_ours.json" "[c['ids'] for c in d['results'][0]['candidates']]")" = "$(json "$work/hf_theirs.json" "[c['ids'] for c in d['results'][0]['candidates']]")" ] \
  && ok || bad "--num-beams/--num-return-sequences/--max-length differ from --beams/--num-return/--max-new-tokens"
# --keep-invalid-text: this seed's sample is byte pieces of no valid UTF-8, which would be dropped,
# and two empty candidate lists would compare equal without comparing anything.
"$bin" generate --model "$model" --text "Tom is a good boy." --sample --seed 3 --min-new-tokens 2 --max-new-tokens 6 --keep-invalid-text --json >"$work/hf_s1.json" && ok || bad "sample failed"
"$bin" generate --model "$model" --text "Tom is a good boy." --do-sample --seed 3 --min-length 3 --max-new-tokens 6 --keep-invalid-text --json >"$work/hf_s2.json" && ok || bad "--do-sample failed"
[ "$(json "$work/hf_s1.json" "len(d['results'][0]['candidates'][0]['ids']) >= 3")" = True ] && ok || bad "sample gave no candidate of 2+ new tokens: $(cat "$work/hf_s1.json")"
[ "$(json "$work/hf_s1.json" "d['results'][0]['candidates'][0]['ids']")" = "$(json "$work/hf_s2.json" "d['results'][0]['candidates'][0]['ids']")" ] \
  && ok || bad "--do-sample/--min-length differ from --sample/--min-new-tokens"
expect_code "--max-length with --max-new-tokens" 2 "give --max-new-tokens or --max-length, not both" \
  "$bin" generate --model "$model" --text hi --max-length 5 --max-new-tokens 4
expect_code "--max-length 1 (no new token)" 2 "^t5studio generate: --max-length must be in \[2, 2147483647\] \(got 1\)" "$bin" generate --model "$model" --text hi --max-length 1
expect_code "an alias is named as typed" 2 "^t5studio generate: --num-beams expects an integer" "$bin" generate --model "$model" --text hi --num-beams x
expect_code "a switch alias given a value" 2 "^t5studio generate: --do-sample takes no value" "$bin" generate --model "$model" --text hi --do-sample=1
expect_fail "three candidates without sampling say how" "num_return_sequences \(3\) must be <= num_beams \(1\) without sampling: for 3 candidates add --sample, or give --beams 3" \
  "$bin" generate --model "$model" --text hi --num-return 3
expect_fail "the hint names the flags typed" "add --sample, or give --num-beams 3" \
  "$bin" generate --model "$model" --text hi --num-return-sequences 3 --num-beams 1

# --- help, suggestions, flag syntax (CLI11) --------------------------------------------------------
# Every subcommand answers --help with exit 0, listing each flag of the contract with a description.
declare -A contract_flags=(
  [info]="model dtype device threads measure-batch json"
  [tokenize]="model text no-eos json"
  [score]="model source target max-source-tokens dtype device threads json"
  [generate]="model text input max-new-tokens min-new-tokens beams num-return length-penalty temperature top-k top-p
    repetition-penalty no-repeat-ngram seed dtype device batch-size threads max-rounds history prefix max-source-tokens shard
    shards out output output-format force json sample distinct no-copy early-stopping shard-from-env
    num-beams do-sample num-return-sequences max-length min-length"
  [merge]="out rows"
  [history]="history search model accepted-only limit after runs accept reject edit undo redo delete json"
  [export]="history format out accepted-only dedupe include-originals search model force json"
  [train]="model init-config data eval-data out steps epochs batch-size grad-accum lr optimizer schedule warmup weight-decay
    max-grad-norm dropout precision max-source-len max-target-len eval-every save-every seed on-bad-row log source-field
    target-field source-prefix eval-split keep-last patience vocab-size threads device samples log-every max-eval-pairs
    extra-data max-time data-history history dist-timeout grad-checkpointing resume overwrite no-group-by-length plan-only save-bf16"
)
"$bin" --help >"$work/help_top.txt" 2>&1 && ok || bad "--help failed"
"$bin" help >"$work/help_cmd.txt" 2>&1 && ok || bad "help failed"
cmp -s "$work/help_top.txt" "$work/help_cmd.txt" && ok || bad "help and --help differ"
for sub in "${!contract_flags[@]}"; do
  grep -qE "^  $sub +[a-z]" "$work/help_top.txt" && ok || bad "--help does not list '$sub' with its summary"
  "$bin" $sub --help >"$work/help_$sub.txt" 2>"$work/help.err"; rc=$?
  [ $rc -eq 0 ] && [ ! -s "$work/help.err" ] && ok || bad "$sub --help: exit $rc, stderr '$(cat "$work/help.err")'"
  grep -q "t5studio $sub" "$work/help_$sub.txt" && ok || bad "$sub --help lacks its usage line"
  for flag in ${contract_flags[$sub]}; do
    grep -qE -- "^ +--$flag( [^ ]+)? {2,}[^ ]" "$work/help_$sub.txt" || bad "$sub --help: --$flag missing or without a description"
  done
  ok
  # A flag too long for the name column has its description on the next line, indented past the column.
  awk '/^ +--[a-z0-9-]+( [^ ]+)? *$/ { pending = $0; next } pending != "" && !/^                    +[^ -]/ { bad = 1 } { pending = "" }
       END { exit (bad || pending != "") }' "$work/help_$sub.txt" && ok || bad "$sub --help: a flag without a description"
  "$bin" help $sub >"$work/help_cmd_$sub.txt" && cmp -s "$work/help_$sub.txt" "$work/help_cmd_$sub.txt" \
    && ok || bad "help $sub differs from $sub --help"
done
grep -qE "^ +parts PART" "$work/help_merge.txt" && ok || bad "merge --help does not show the PART arguments"
"$bin" generate --model "$model" --text hi -h >"$work/help_h.txt" && cmp -s "$work/help_h.txt" "$work/help_generate.txt" \
  && ok || bad "generate -h differs from --help"
expect_code "help of an unknown subcommand" 2 "unknown subcommand 'frobnicate'" "$bin" help frobnicate
expect_code "unknown flag suggestion" 2 "^t5studio generate: unknown flag --num-beam; did you mean --beams\?$" \
  "$bin" generate --model "$model" --text hi --num-beam 4
expect_code "unknown flag suggestion (=value)" 2 "unknown flag --max-new-token; did you mean --max-new-tokens\?" \
  "$bin" generate --model "$model" --text hi --max-new-token=4
expect_code "unknown flag without a near one" 2 "unknown flag --frobnicate \(t5studio generate --help lists the flags\)" \
  "$bin" generate --model "$model" --text hi --frobnicate
expect_code "unknown subcommand suggestion" 2 "unknown subcommand 'genrate'; did you mean 'generate'\?" "$bin" genrate --text hi
expect_code "switch given a value" 2 "--json takes no value" "$bin" info --model "$model" --json=1
expect_code "flag without its value" 2 "--model needs a value" "$bin" info --model
expect_code "stray argument" 2 "unexpected argument 'extra'" "$bin" info --model "$model" extra
# --name=value and --name value alike; a value may start with '-' (negative numbers, texts).
"$bin" generate --model="$model" --text=-hi --max-new-tokens=3 --json >"$work/eq.json" && ok || bad "--name=value failed"
"$bin" generate --model "$model" --text -hi --max-new-tokens 3 --json >"$work/sp.json" && ok || bad "--name value failed"
cmp -s "$work/eq.json" "$work/sp.json" && ok || bad "--name=value and --name value differ"
[ "$(json "$work/eq.json" "d['results'][0]['input']")" = "-hi" ] && ok || bad "--text=-hi: input is not '-hi'"
"$bin" generate --model "$model" --text hi --sample --seed -1 --max-new-tokens 2 --json >/dev/null && ok || bad "--seed -1 rejected"
"$bin" generate --model "$model" --text hi --beams 2 --length-penalty -0.5 --max-new-tokens 2 --json >/dev/null \
  && ok || bad "--length-penalty -0.5 rejected"
# Repeatable flags keep every value, in order; a single-valued flag given twice keeps the last.
"$bin" tokenize --model "$data/t5-spiece" --text a --text=b --text c --json >"$work/rep.json" && ok || bad "repeated --text failed"
[ "$(json "$work/rep.json" "len(d['ids'])")" = 3 ] && ok || bad "repeated --text: expected 3 rows"
# (greedy on this input stops by itself after 4 tokens, so 2 tokens means the second flag counted)
"$bin" generate --model "$model" --text "Tom is a good boy." --max-new-tokens 50 --max-new-tokens 2 --json >"$work/last.json" \
  && ok || bad "repeated flag failed"
[ "$(json "$work/last.json" "len(d['results'][0]['candidates'][0]['ids'])")" = 2 ] && ok || bad "repeated --max-new-tokens: the last must win"

# --- version: one place (project(VERSION) in CMakeLists.txt), printed by --version and `version` --
want_version=$(sed -n 's/^project(t5studio VERSION \([0-9.]*\).*/\1/p' "$data/../../CMakeLists.txt")
for flag in --version version; do
  out=$("$bin" $flag 2>&1) && ok || bad "$flag failed"
  [ "$(head -1 <<<"$out")" = "t5studio $want_version" ] && ok || bad "$flag printed '$out', want 't5studio $want_version'"
done

finish "cli"
