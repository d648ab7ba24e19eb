#!/usr/bin/env bash
# Idempotent developer/CI setup for T5 Studio on Debian 12 / Ubuntu.
#   1. Debian packages: compilers, SentencePiece, nlohmann-json, SQLite, Catch2, GLFW, Dear ImGui, Xvfb, CJK fonts.
#   2. A project-local Python venv (.venv) with the PyPI torch wheel (its bundled LibTorch is what we link).
# T5S_SETUP_PROFILE=runtime installs only what building and running the app needs (packaging/run.sh);
# test (the default) adds the test tools (clang for fuzzing, lintian, ...) and the reference libraries
# and peers (transformers, peft, sentence-transformers, CTranslate2, ...) used only by tests/benchmarks.
# Set T5S_SKIP_APT=1 to skip step 1, T5S_SKIP_PIP=1 to skip step 2.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { printf '[setup] %s\n' "$*" >&2; }

profile="${T5S_SETUP_PROFILE:-test}"
case "$profile" in runtime|test) ;; *) say "error: T5S_SETUP_PROFILE must be runtime or test (got '$profile')"; exit 2;; esac
apt_packages=(build-essential cmake ninja-build pkg-config git ccache
  libsentencepiece-dev libgloo-dev nlohmann-json3-dev libsqlite3-dev libcli11-dev libcpp-httplib-dev libstb-dev
  libglfw3-dev libimgui-dev libgl-dev fonts-noto-cjk libcurl4-openssl-dev libssl-dev libre2-dev
  python3 python3-venv python3-pip)
if [ "$profile" = test ]; then
  # Tests (Catch2, Xvfb for the GUI, clang for fuzzing, clang-format for the format gate) and the Debian packages (packaging/deb.sh:
  # dpkg-shlibdeps, help2man for the man page, rsvg-convert for the icons, validators, lintian).
  apt_packages+=(catch2 xvfb xauth clang-14 libclang-rt-14-dev clang-format-14
    dpkg-dev fakeroot help2man librsvg2-bin desktop-file-utils appstream lintian)
fi
requirements="$root/packaging/requirements-runtime.txt"
[ "$profile" = test ] && requirements="$root/packaging/requirements.txt"

if [ "${T5S_SKIP_APT:-0}" != 1 ]; then
  missing=()
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    say "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    say "Debian packages already installed"
  fi
fi

if [ "${T5S_SKIP_PIP:-0}" != 1 ]; then
  venv="$root/.venv"
  if [ ! -x "$venv/bin/python" ]; then
    # Prefer the first python3 on PATH (it has venv built in); fall back to Debian's.
    py=python3; "$py" -m venv --help >/dev/null 2>&1 || py=/usr/bin/python3
    say "creating virtual environment $venv with $($py --version)"
    "$py" -m venv "$venv"
  fi
  # One stamp per profile holds the requirement files it was installed from; a test set-up installs
  # the runtime requirements too, so it writes both stamps. Any edit of a file re-runs pip.
  stamp="$venv/.t5s-requirements-$profile"
  wanted="$(cat "$requirements" "$root/packaging/requirements-runtime.txt")"
  installed="$(cat "$stamp" 2>/dev/null || true)"
  if [ "$installed" != "$wanted" ]; then
    # The torch wheel unpacks to about 6 GB of LibTorch and CUDA libraries: say so before pip
    # fails half-way with "No space left on device".
    need_gb=${T5S_SETUP_NEED_GB:-9}
    free_gb=$(df -Pk "$root" | awk 'NR==2 {print int($4 / 1048576)}')
    if [ "${free_gb:-0}" -lt "$need_gb" ]; then
      say "error: only ${free_gb} GB free on the file system of $root; installing the torch wheel into $venv needs about ${need_gb} GB."
      say "free some space (old build folders, clones) and run this again."
      exit 1
    fi
    say "installing Python packages ($profile: $(basename "$requirements")) into .venv; pip's cache is kept"
    "$venv/bin/python" -m pip install -q --upgrade pip
    "$venv/bin/python" -m pip install -q -r "$requirements"
    printf '%s' "$wanted" > "$stamp"
    if [ "$profile" = test ]; then
      runtime_only="$root/packaging/requirements-runtime.txt"
      cat "$runtime_only" "$runtime_only" > "$venv/.t5s-requirements-runtime"
    fi
  else
    say "Python packages already installed"
  fi
fi
say "done"
