#!/usr/bin/env bash
# GPU benchmark, prepared for a lent GPU machine (about 4-5 minutes on an H200, build included).
#
#   1. builds t5s_bench with CUDA (cmake -DT5S_BUILD_GUI=OFF, Ninja) into build-gpu/;
#   2. int8 first (the CUDA int8 path: int8 activations, int32 products, no dequantised weight) beside
#      fp16, greedy b1/b32 on the t5-base shape -> results-cuda-int8.{md,json};
#   3. the per-dtype device check: T5 Studio greedy at batch 1 and 32, 128 input / 128 new tokens, on a
#      t5-base-shaped and an mT5-base-shaped random model, every dtype (fp32 bf16 fp16 int8):
#      tokens/s and peak GPU memory (torch caching allocator) -> results-issue3.{md,json};
#   4. the CPU suite's workloads on CUDA (t5-base shape; greedy b1/b8/b32, beam 4 b8, sampling
#      8x4, training step) for T5 Studio (fp32 bf16 fp16 int8) and transformers (fp32 bf16 fp16),
#      plus CTranslate2 when its Python package works there -> results-gpu.{md,json}.
#   Results go to tests/bench/out/ and, when $OUT is set (the device tool), to $OUT as well.
#
# What the machine needs: python3 with a CUDA torch and transformers, nvcc, cmake, ninja, g++.
# The Debian -dev packages the project's CMake looks for, given in one of two ways:
#   T5S_DEPS_ROOT=/dir   a root into which the .debs were unpacked (dpkg -x X.deb /dir), or
#   T5S_DEBS=/dir        a folder of .deb files that this script unpacks (default: tests/bench/out/debs)
# Packages (Debian 12): libsentencepiece-dev libsentencepiece0 nlohmann-json3-dev libsqlite3-dev
#   libsqlite3-0 catch2, and pkgconf-bin libpkgconf3 if the machine has no pkg-config.
# Fetch them here with `tests/bench/gpu_bench.sh fetch-debs` (apt-get download into
# tests/bench/out/debs, ~3 MB) and carry that folder:  device run: carry ["tests/bench/out/debs"],
# command "bash tests/bench/gpu_bench.sh".
#
# Knobs: GPU_RUNS (timed runs per workload, default 3), GPU_MODELS (suite models, default base),
# GPU_SKIP_SUITE=1 (the per-dtype check only), GPU_CONFIGURE_ONLY=1 (check the dependencies and stop),
# PYTHON (default python3), T5S_JOBS (compile jobs, default nproc).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bench="$root/tests/bench"
debs_default="$bench/out/debs"
packages=(libsentencepiece-dev libsentencepiece0 nlohmann-json3-dev libsqlite3-dev libsqlite3-0 catch2 pkgconf-bin libpkgconf3)
say() { printf '[gpu_bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [ "${1:-}" = fetch-debs ]; then
  mkdir -p "$debs_default"
  (cd "$debs_default" && apt-get download "${packages[@]}")
  ls -la "$debs_default"
  exit 0
fi

start=$(date +%s)
py="${PYTHON:-python3}"
build="${T5S_GPU_BUILD_DIR:-$root/build-gpu}"
runs="${GPU_RUNS:-3}"

# ---- dependencies from unpacked .debs ----------------------------------------------------------
deps="${T5S_DEPS_ROOT:-}"
debs="${T5S_DEBS:-$debs_default}"
if [ -z "$deps" ] && ls "$debs"/*.deb >/dev/null 2>&1; then
  deps=/tmp/t5s-deps
  mkdir -p "$deps"
  for f in "$debs"/*.deb; do dpkg-deb -x "$f" "$deps" 2>/dev/null || dpkg -x "$f" "$deps"; done
  say "unpacked $(ls "$debs"/*.deb | wc -l) .debs into $deps"
fi
cmake_prefix="$("$py" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')"
export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"  # H100/H200; no .cu files are compiled
if [ -n "$deps" ]; then
  arch_lib="$deps/usr/lib/x86_64-linux-gnu"
  # .pc files say prefix=/usr: relocate copies of them.
  mkdir -p "$deps/t5s-pc"
  for pc in "$arch_lib"/pkgconfig/*.pc "$deps"/usr/share/pkgconfig/*.pc; do
    [ -f "$pc" ] && sed "s|^prefix=.*|prefix=$deps/usr|" "$pc" >"$deps/t5s-pc/$(basename "$pc")"
  done
  export PKG_CONFIG_PATH="$deps/t5s-pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$arch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export CPATH="$deps/usr/include${CPATH:+:$CPATH}"
  export LIBRARY_PATH="$arch_lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
  if ! command -v pkg-config >/dev/null && [ -x "$deps/usr/bin/pkgconf" ]; then
    mkdir -p "$deps/t5s-bin" && ln -sf "$deps/usr/bin/pkgconf" "$deps/t5s-bin/pkg-config"
    export PATH="$deps/t5s-bin:$PATH"
  fi
  cmake_prefix="$cmake_prefix;$deps/usr;$arch_lib/cmake"
fi

# ---- build ---------------------------------------------------------------------------------------
say "configuring $build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DT5S_BUILD_GUI=OFF -DT5S_SANITIZE=OFF \
  -DCMAKE_PREFIX_PATH="$cmake_prefix" >"$build.configure.log" 2>&1 || {
  tail -40 "$build.configure.log" >&2; exit 1; }
grep -q "CUDA code paths: ON" "$build.configure.log" || say "warning: LibTorch without CUDA? (see $build.configure.log)"
if [ "${GPU_CONFIGURE_ONLY:-0}" = 1 ]; then grep -E "sentencepiece|T5 Studio|Found" "$build.configure.log" >&2; exit 0; fi
say "building t5s_bench"
cmake --build "$build" --target t5s_bench -j "${T5S_JOBS:-$(nproc)}" >&2
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >&2 || true
say "build done after $(( $(date +%s) - start )) s"

common=(--device cuda --python "$py" --t5s-bench "$build/tests/t5s_bench" --runs "$runs" --warmup 1 --threads 4 --timeout 240)

# ---- int8 first: the CUDA int8 path (int8 activations, int32 products by at::_int_mm; never
# measured on a GPU yet), its tokens/s and peak memory beside fp16's, before anything else can fail ----
say "int8 on CUDA"
"$py" "$bench/run_bench.py" "${common[@]}" --models base --engines t5studio --dtypes int8,fp16 \
  --workloads greedy_b1,greedy_b32 --input-len 128 --new-tokens 128 --tag cuda-int8 >/dev/null || say "int8 on CUDA failed (see above)"
say "int8 check done after $(( $(date +%s) - start )) s"

# ---- per-dtype check: tokens/s and peak GPU memory, t5-base and mT5-base shapes, 128 tokens ---------
say "per-dtype check"
"$py" "$bench/run_bench.py" "${common[@]}" --models base,mt5base --engines t5studio --dtypes fp32,bf16,fp16,int8 \
  --workloads greedy_b1,greedy_b32 --input-len 128 --new-tokens 128 --tag issue3 >/dev/null
say "per-dtype check done after $(( $(date +%s) - start )) s"

# ---- the CPU suite's workloads on CUDA ---------------------------------------------------------------------
if [ "${GPU_SKIP_SUITE:-0}" != 1 ]; then
  engines=t5studio,transformers
  "$py" -c 'import ctranslate2, sys; sys.exit(0 if ctranslate2.get_cuda_device_count() > 0 else 1)' 2>/dev/null &&
    engines="$engines,ctranslate2"
  say "suite on CUDA: $engines"
  "$py" "$bench/run_bench.py" "${common[@]}" --models "${GPU_MODELS:-base}" --engines "$engines" \
    --dtypes fp32,bf16,fp16,int8 --tag gpu >/dev/null
fi
say "all done after $(( $(date +%s) - start )) s"

for f in results-cuda-int8.md results-cuda-int8.json results-issue3.md results-issue3.json results-gpu.md results-gpu.json; do
  if [ -f "$bench/out/$f" ] && [ -n "${OUT:-}" ]; then cp "$bench/out/$f" "$OUT/"; fi
done
if [ -f "$bench/out/results-cuda-int8.md" ]; then cat "$bench/out/results-cuda-int8.md"; fi
cat "$bench/out/results-issue3.md"
if [ -f "$bench/out/results-gpu.md" ]; then cat "$bench/out/results-gpu.md"; fi
