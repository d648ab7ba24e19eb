#!/usr/bin/env bash
# The Debian packages, built and used as a user would: packaging/deb.sh builds t5studio and
# t5studio-cuda (zstd -1: fast), their metadata and file lists are checked (dpkg-deb -I/-c), and
# they are unpacked into a throwaway root (dpkg -x) where the app runs with an empty environment
# (env -i: no LD_LIBRARY_PATH, no venv on PATH) — and the loader is watched (LD_DEBUG) to prove that
# nothing comes from the venv or the build tree: --version, generate on the installed demo model,
# the GUI under Xvfb (screenshots of the Model and Monitor panels, settings and history in the XDG
# folders), then the CUDA package added: still CPU, and the same one-line message without a driver.
# usage: test_package.sh SOURCE_DIR BUILD_DIR WORK_DIR        (exit 77 = skipped, with the reason)
set -u
src="$(cd "$1" && pwd)"; build="$(cd "$2" && pwd)"; work="$(mkdir -p "$3" && cd "$3" && pwd)"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skip() { echo "SKIPPED: $*"; exit 77; }
check() { local name=$1; shift; if "$@"; then ok; else bad "$name"; fi; }

for tool in dpkg-deb dpkg-shlibdeps help2man rsvg-convert; do
  command -v "$tool" >/dev/null || skip "$tool is missing (bash packaging/setup.sh installs the packaging tools)"
done
version="$(sed -n 's/^#define T5S_VERSION "\(.*\)"$/\1/p' "$build/generated/t5s/version.h")"
arch="$(dpkg --print-architecture)"
rm -rf "$work"; mkdir -p "$work"
# The throwaway root lives outside the source and build trees, so a path into them is never "ours".
root="$(mktemp -d "${TMPDIR:-/tmp}/t5studio-root.XXXXXX")"; home="$root.home"
trap 'rm -rf "$root" "$home" "$work/deb"' EXIT   # the big parts; logs and screenshots stay

# --- build -----------------------------------------------------------------------------------
t0=$SECONDS
T5S_DEB_OUT="$work/deb" T5S_DEB_COMPRESS=zstd T5S_DEB_LEVEL=1 bash "$src/packaging/deb.sh" "$build" 2>"$work/deb.log" \
  || { cat "$work/deb.log"; bad "deb.sh failed"; echo "package: $pass passed, $fail failed"; exit 1; }
cat "$work/deb.log"
echo "packages built in $((SECONDS - t0)) s"
app_deb="$work/deb/t5studio_${version}_${arch}.deb"
cuda_deb="$work/deb/t5studio-cuda_${version}_${arch}.deb"
check "t5studio .deb exists" test -s "$app_deb"
check "t5studio-cuda .deb exists" test -s "$cuda_deb"

# --- metadata and file lists -----------------------------------------------------------------
field() { dpkg-deb -f "$1" "$2"; }
check "Package" test "$(field "$app_deb" Package)" = t5studio
check "Version from project(VERSION)" test "$(field "$app_deb" Version)" = "$version"
depends="$(field "$app_deb" Depends)"
for d in libsentencepiece0 libre2-9 libglfw3 libsqlite3-0 libc6 libstdc++6; do
  check "Depends names $d: $depends" grep -q "$d" <<<"$depends"
done
check "Recommends a CJK font" test "$(field "$app_deb" Recommends)" = fonts-noto-cjk
cuda_depends="$(field "$cuda_deb" Depends)"
check "cuda Depends on the same t5studio: $cuda_depends" grep -q "t5studio (= $version)" <<<"$cuda_depends"
check "cuda Depends from dpkg-shlibdeps: $cuda_depends" grep -q "libc6" <<<"$cuda_depends"
dpkg-deb -I "$app_deb" >"$work/app.info" && ok || bad "dpkg-deb -I"
dpkg-deb -c "$app_deb" | awk '{print $NF}' | sed 's|^\./|/|' >"$work/app.files"
dpkg-deb -c "$cuda_deb" | awk '{print $NF}' | sed 's|^\./|/|' >"$work/cuda.files"
for f in /usr/bin/t5studio /usr/lib/t5studio/libtorch_cpu.so /usr/lib/t5studio/libc10.so /usr/lib/t5studio/libgomp.so.1 \
         /usr/share/t5studio/demo-model/config.json /usr/share/t5studio/demo-model/model.safetensors \
         /usr/share/t5studio/demo-model/spiece.model /usr/share/applications/org.t5studio.T5Studio.desktop \
         /usr/share/metainfo/org.t5studio.T5Studio.metainfo.xml /usr/share/icons/hicolor/scalable/apps/t5studio.svg \
         /usr/share/icons/hicolor/48x48/apps/t5studio.png /usr/share/icons/hicolor/256x256/apps/t5studio.png \
         /usr/share/man/man1/t5studio.1.gz /usr/share/doc/t5studio/copyright; do
  check "t5studio contains $f" grep -qx "$f" "$work/app.files"
done
check "t5studio has no libtorch_cuda" bash -c "! grep -q libtorch_cuda '$work/app.files'"
for f in /usr/lib/t5studio/libtorch_cuda.so /usr/lib/t5studio/libc10_cuda.so /usr/lib/t5studio/libcudnn.so.9 \
         /usr/share/doc/t5studio-cuda/copyright; do
  check "t5studio-cuda contains $f" grep -qx "$f" "$work/cuda.files"
done
check "t5studio-cuda has a cuBLAS" grep -q '/usr/lib/t5studio/libcublas\.so' "$work/cuda.files"
overlap="$(comm -12 <(grep -v '/$' "$work/app.files" | sort) <(grep -v '/$' "$work/cuda.files" | sort))"
check "no file in both packages: $overlap" test -z "$overlap"

# --- unpack into a throwaway root ------------------------------------------------------------
mkdir -p "$home"
dpkg -x "$app_deb" "$root" && ok || bad "dpkg -x t5studio"
app="$root/usr/bin/t5studio"
if command -v desktop-file-validate >/dev/null; then
  check "desktop-file-validate: $(desktop-file-validate "$root/usr/share/applications/org.t5studio.T5Studio.desktop" 2>&1)" \
    desktop-file-validate "$root/usr/share/applications/org.t5studio.T5Studio.desktop"
else echo "desktop entry not validated: desktop-file-validate is missing (desktop-file-utils)"; fi
if command -v appstreamcli >/dev/null; then
  check "appstreamcli validate" appstreamcli validate --no-net --explain "$root/usr/share/metainfo/org.t5studio.T5Studio.metainfo.xml"
else echo "metainfo not validated: appstreamcli is missing (appstream)"; fi
# The installed app: no environment but HOME and PATH, so no LD_LIBRARY_PATH, no venv, no display.
run_app() { env -i HOME="$home" PATH=/usr/bin:/bin "$@"; }
# Every library the loader opened, by path: none may come from the venv or the build tree.
foreign_libraries() {  # LD_DEBUG log -> the offending lines
  grep -E "calling init: |trying file=" "$1" | grep -E "\.venv|site-packages|$src/|$build/" | head -5
}
check "RPATH is \$ORIGIN/../lib/t5studio" test "$(readelf -d "$app" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')" = '$ORIGIN/../lib/t5studio'
run_app ldd "$app" >"$work/ldd.txt" 2>&1
check "ldd: all found" bash -c "! grep -q 'not found' '$work/ldd.txt'"
check "ldd: libtorch_cpu from the root" grep -q "libtorch_cpu.so => $root/usr/bin/../lib/t5studio/libtorch_cpu.so" "$work/ldd.txt"
check "ldd: nothing from the venv or build tree" bash -c "! grep -E '\.venv|site-packages|$src/|$build/' '$work/ldd.txt'"

run_app "$app" --version >"$work/version.txt" 2>&1
check "--version prints $version: $(head -1 "$work/version.txt")" test "$(head -1 "$work/version.txt")" = "t5studio $version"

demo="$root/usr/share/t5studio/demo-model"
t0=$(date +%s%N)
run_app LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/ld-generate" "$app" generate --model "$demo" \
  --prefix "translate Chinese to English: " --text "我们走吧。" --max-new-tokens 16 --json >"$work/generate.json" 2>"$work/generate.err"
rc=$?
echo "installed generate on the demo model: $(( ($(date +%s%N) - t0) / 1000000 )) ms (rc $rc): $(cat "$work/generate.json")"
check "generate on the installed demo model" python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['results'][0]['candidates'][0]['text']" "$work/generate.json"
cat "$work"/ld-generate.* >"$work/generate.ld-debug.log" 2>/dev/null; rm -f "$work"/ld-generate.*
offending="$(foreign_libraries "$work/generate.ld-debug.log")"
check "generate loads nothing from the venv/build tree: $offending" test -z "$offending"
check "generate loads libtorch_cpu from the root" grep -qE "calling init: $root/usr/(bin/\.\./)?lib/t5studio/libtorch_cpu\.so" "$work/generate.ld-debug.log"
check "CPU run without t5studio-cuda maps no libtorch_cuda" bash -c "! grep -q 'libtorch_cuda' '$work/generate.ld-debug.log'"

# t5studio-cuda absent: an explicit CUDA request says what to install, in one line.
run_app "$app" generate --model "$demo" --text x --device cuda --max-new-tokens 2 >/dev/null 2>"$work/nocuda.err"
rc=$?
check "--device cuda without t5studio-cuda: rc 1 (got $rc)" test $rc = 1
check "one line naming t5studio-cuda: $(cat "$work/nocuda.err")" test "$(wc -l <"$work/nocuda.err")" = 1 -a -n "$(grep t5studio-cuda "$work/nocuda.err")"

# --- the GUI under Xvfb, as started from the menu (no arguments): the demo model, XDG folders --
gui() {  # NAME EXTRA_ENV... : runs the installed app on a small script, screenshots in $work/NAME
  local name=$1; shift
  mkdir -p "$work/$name"
  printf '%s\n' "frames 3" "wait_model 120" "frames 10" "screenshot model Model" "frames 10" \
    "screenshot monitor Monitor" "screenshot window" "log done" >"$work/$name.script"
  xvfb-run -a -s "-screen 0 1280x800x24" bash -c 'exec env -i HOME="$0" PATH=/usr/bin:/bin DISPLAY="$DISPLAY" \
      XAUTHORITY="$XAUTHORITY" "$@"' "$home" "$@" "$app" --test-script "$work/$name.script" \
      --screenshot-dir "$work/$name" --size 1280x800 >"$work/$name.log" 2>&1
}
if ! command -v xvfb-run >/dev/null; then
  echo "GUI part skipped: xvfb-run is missing (bash packaging/setup.sh installs xvfb)"
else
  gui gui_cpu LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/ld-gui"
  rc=$?
  cat "$work"/ld-gui.* >"$work/gui.ld-debug.log" 2>/dev/null; rm -f "$work"/ld-gui.*
  check "GUI script passed (rc $rc): $(tail -3 "$work/gui_cpu.log")" test $rc = 0
  check "GUI screenshot of the Model panel" test -s "$work/gui_cpu/model.png"
  check "GUI screenshot of the Monitor panel" test -s "$work/gui_cpu/monitor.png"
  check "GUI settings in ~/.config/t5studio" test -s "$home/.config/t5studio/settings.json"
  check "GUI history in ~/.local/share/t5studio" test -s "$home/.local/share/t5studio/history.db"
  check "GUI opened the installed demo model" grep -q "$demo" "$home/.config/t5studio/settings.json"
  offending="$(foreign_libraries "$work/gui.ld-debug.log")"
  check "GUI loads nothing from the venv/build tree: $offending" test -z "$offending"
  echo "screenshots: $work/gui_cpu/"
  # $XDG_CONFIG_HOME / $XDG_DATA_HOME win over ~/.config and ~/.local/share.
  gui gui_xdg XDG_CONFIG_HOME="$work/xdg-config" XDG_DATA_HOME="$work/xdg-data"
  check "GUI with XDG_* set (rc $?)" test -s "$work/xdg-config/t5studio/settings.json" -a -s "$work/xdg-data/t5studio/history.db"
fi

# --- add t5studio-cuda: no driver here -> CPU, and the same one line as from the build tree ----
dpkg -x "$cuda_deb" "$root" && ok || bad "dpkg -x t5studio-cuda"
run_app "$app" generate --model "$demo" --text "我们走吧。" --max-new-tokens 4 --json >"$work/generate2.json" 2>&1
check "with t5studio-cuda, no driver: generate runs on the CPU" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$work/generate2.json"
if [ -e /proc/driver/nvidia/version ] || [ -e /dev/nvidiactl ]; then
  echo "an NVIDIA driver is present: the no-driver message check does not apply here"
else
  run_app LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/ld-cuda" "$app" generate --model "$demo" --text x --device cuda \
    --max-new-tokens 2 >/dev/null 2>"$work/cuda.err"
  rc=$?
  cat "$work"/ld-cuda.* >"$work/cuda.ld-debug.log" 2>/dev/null; rm -f "$work"/ld-cuda.*
  env -u LD_LIBRARY_PATH "$build/app/t5studio" generate --model "$demo" --text x --device cuda --max-new-tokens 2 \
    >/dev/null 2>"$work/cuda-build-tree.err"
  check "--device cuda without a driver: rc 1 (got $rc)" test $rc = 1
  check "same one line as the build tree: '$(cat "$work/cuda.err")' vs '$(cat "$work/cuda-build-tree.err")'" \
    cmp -s "$work/cuda.err" "$work/cuda-build-tree.err"
  check "libtorch_cuda loaded from the root's t5studio-cuda" grep -qE "calling init: $root/usr/(bin/\.\./)?lib/t5studio/libtorch_cuda\.so" "$work/cuda.ld-debug.log"
  offending="$(foreign_libraries "$work/cuda.ld-debug.log")"
  check "CUDA load uses nothing from the venv/build tree: $offending" test -z "$offending"
fi

echo "package: $pass passed, $fail failed"
[ $fail = 0 ]
