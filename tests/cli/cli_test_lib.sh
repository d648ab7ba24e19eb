# What the CLI contract scripts share (sourced, after `set -u`): their arguments, the tiny model,
# the pass/fail counters and the checks. Usage in a script: source cli_test_lib.sh "$@"; ...; finish NAME
bin="$1"; data="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
model="$data/models/t5v10-tied-relu"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
py() { python3 - "$@"; }
# json FILE EXPR: EXPR evaluated with d = the file's JSON.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# expect_code NAME CODE PATTERN CMD...: exit CODE, exactly one stderr line matching PATTERN.
expect_code() {
  local name="$1" code="$2" pattern="$3"; shift 3
  "$@" >"$work/out" 2>"$work/err"; local rc=$?
  if [ $rc -ne "$code" ]; then bad "$name: exit $rc, want $code ($(head -c 300 "$work/err"))"; return; fi
  if [ "$(wc -l <"$work/err")" -ne 1 ]; then bad "$name: not one stderr line: $(cat "$work/err")"; return; fi
  grep -qE -- "$pattern" "$work/err" && ok || bad "$name: '$(cat "$work/err")' lacks /$pattern/"
}

# finish NAME: the summary line ctest shows, and the script's status.
finish() {
  echo "$1: $pass passed, $fail failed"
  [ $fail -eq 0 ]
}
