#!/usr/bin/env bash
# Figures for the Debian packages (packaging/README.md): sizes and build times with xz -6 and
# zstd -1, time from `apt-get install ./t5studio_*.deb` to the first generation, and the RSS of the
# installed desktop app idle on the demo model under Xvfb.
# usage: bash packaging/measure_install.sh [BUILD_DIR]
#   T5S_MEASURE_APT=1  install into this system with apt-get (root) and purge it afterwards;
#                      otherwise the packages are unpacked into a temporary root (dpkg -x).
#   T5S_DEB_PACKAGES   as for deb.sh (e.g. t5studio alone: xz -6 of t5studio-cuda's 3 GB is slow)
# The packages stay in BUILD_DIR/deb/measure-{zstd,xz} (e.g. for lintian, which reads xz, not zstd).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
say() { printf '[measure] %s\n' "$*"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

for comp in "zstd 1" "xz 6"; do
  set -- $comp
  t0=$(now_ms)
  T5S_DEB_OUT="$build/deb/measure-$1" T5S_DEB_COMPRESS=$1 T5S_DEB_LEVEL=$2 bash "$root/packaging/deb.sh" "$build" 2>&1 | sed 's/^/  /'
  say "$1 -$2: both packages built in $(( ($(now_ms) - t0) / 1000 )) s"
  for deb in "$build/deb/measure-$1"/*.deb; do
    say "  $(basename "$deb"): $(stat -c %s "$deb" | numfmt --to=iec-i --suffix=B) compressed, Installed-Size $(dpkg-deb -f "$deb" Installed-Size | numfmt --from-unit=1024 --to=iec-i --suffix=B)"
  done
done
app_deb="$(ls "$build"/deb/measure-xz/t5studio_*.deb)"

if [ "${T5S_MEASURE_APT:-0}" = 1 ]; then
  dpkg-query -W t5studio >/dev/null 2>&1 && { say "t5studio is already installed: not touching it"; exit 1; }
  t0=$(now_ms)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$app_deb" >"$work/apt.log" 2>&1
  t1=$(now_ms)
  env -i HOME="$work" PATH=/usr/bin:/bin t5studio generate --model /usr/share/t5studio/demo-model \
    --prefix "translate Chinese to English: " --text "我们走吧。" --max-new-tokens 16 --json >"$work/gen.json"
  t2=$(now_ms)
  say "apt-get install ./$(basename "$app_deb"): $((t1 - t0)) ms; first generation: $((t2 - t1)) ms; total $((t2 - t0)) ms"
  say "  $(cat "$work/gen.json")"
  app=/usr/bin/t5studio
else
  t0=$(now_ms)
  dpkg -x "$app_deb" "$work/root"
  t1=$(now_ms)
  env -i HOME="$work" PATH=/usr/bin:/bin "$work/root/usr/bin/t5studio" generate --model "$work/root/usr/share/t5studio/demo-model" \
    --prefix "translate Chinese to English: " --text "我们走吧。" --max-new-tokens 16 --json >"$work/gen.json"
  t2=$(now_ms)
  say "dpkg -x (no apt, no triggers): $((t1 - t0)) ms; first generation: $((t2 - t1)) ms; total $((t2 - t0)) ms"
  app="$work/root/usr/bin/t5studio"
fi

# Idle RSS: the app as started from the menu (no arguments: the demo model), sampled every 0.5 s for
# 20 s; the model is loaded within the first seconds, so the last samples are the idle figure.
if command -v xvfb-run >/dev/null; then
  mkdir -p "$work/home"
  xvfb-run -a -s "-screen 0 1280x800x24" bash -c 'env -i HOME="$0" PATH=/usr/bin:/bin DISPLAY="$DISPLAY" XAUTHORITY="$XAUTHORITY" "$1" &
    pid=$!; for i in $(seq 40); do sleep 0.5; awk "/VmRSS/ {print \$2}" /proc/$pid/status; done; kill $pid; wait $pid' \
    "$work/home" "$app" >"$work/rss.txt" 2>/dev/null || true
  say "RSS of the installed app idle on the demo model (KiB, every 0.5 s): $(tr '\n' ' ' <"$work/rss.txt")"
  say "  idle (last sample): $(( $(tail -1 "$work/rss.txt") / 1024 )) MiB"
fi

if [ "${T5S_MEASURE_APT:-0}" = 1 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq t5studio >/dev/null 2>&1
  say "t5studio purged again"
fi
