#!/usr/bin/env bash
# Debian packages of an existing build (run packaging/build.sh first):
#   t5studio       /usr/bin/t5studio, LibTorch's CPU libraries in /usr/lib/t5studio, the demo model
#                  in /usr/share/t5studio, desktop entry, icons, AppStream metainfo, man page
#   t5studio-cuda  libtorch_cuda and the CUDA libraries the lazy loader opens (/usr/lib/t5studio)
# usage: bash packaging/deb.sh [BUILD_DIR]            (default ./build; packages go to BUILD_DIR/deb)
# Environment:
#   T5S_DEB_OUT=DIR              where the .deb files (and the staging folders) go
#   T5S_DEB_COMPRESS=xz|zstd|gzip|none and T5S_DEB_LEVEL=N   (default: xz -6 for t5studio, the
#                                smallest download; gzip -6 for t5studio-cuda, whose 3 GB would take
#                                half an hour of xz on 2 cores. Lintian reads xz and gzip, not zstd;
#                                the package test uses zstd -1, several times faster than either)
#   T5S_DEB_PACKAGES="t5studio t5studio-cuda"   which ones to build
#   T5S_DEB_LINTIAN=1            run lintian on each package (fails on errors)
#   T5S_DEB_KEEP_STAGE=1         keep the staging folders
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-${T5S_BUILD_DIR:-$root/build}}" && pwd)"
out="${T5S_DEB_OUT:-$build/deb}"
mkdir -p "$out" && out="$(cd "$out" && pwd)"   # dpkg-shlibdeps runs elsewhere: absolute paths
level="${T5S_DEB_LEVEL:-6}"
packages="${T5S_DEB_PACKAGES:-t5studio t5studio-cuda}"
say() { printf '[deb] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ -x "$build/app/t5studio" ] || die "no $build/app/t5studio: build first (bash packaging/build.sh)"
version_header="$build/generated/t5s/version.h"
[ -f "$version_header" ] || die "no $version_header: reconfigure the build with this source tree"
version="$(sed -n 's/^#define T5S_VERSION "\(.*\)"$/\1/p' "$version_header")"
[ -n "$version" ] || die "cannot read T5S_VERSION from $version_header"
arch="$(dpkg --print-architecture)"
for tool in dpkg-deb dpkg-shlibdeps help2man rsvg-convert; do
  command -v "$tool" >/dev/null || die "$tool not found (bash packaging/setup.sh installs it: dpkg-dev, help2man, librsvg2-bin)"
done
mkdir -p "$out"

# The app's private libraries resolve each other: tell dpkg-shlibdeps where they are and keep it
# from asking for Debian packages that provide them (they are in the package itself).
shlib_depends() {  # STAGE_DIR -> "libc6 (>= 2.34), ..." for every ELF file in it
  local stage=$1 work files
  work="$(mktemp -d)"
  mkdir -p "$work/debian"
  printf 'Source: t5studio\n\nPackage: t5studio\nArchitecture: any\n' >"$work/debian/control"
  # Libraries that link the NVIDIA driver itself (libcuda.so.1: libcaffe2_nvrtc) are left out: the
  # driver is the machine's (non-free, any version), never a dependency of ours.
  mapfile -t files < <(find "$stage" -type f \( -name '*.so*' -o -path '*/bin/*' \) -exec sh -c \
    'head -c4 "$1" | grep -q ELF && ! readelf -d "$1" | grep "libcuda[.]so[.]1" >/dev/null && echo "$1"' _ {} \;)
  (cd "$work" && dpkg-shlibdeps -O --ignore-missing-info -l"$stage/usr/lib/t5studio" \
     -S"$stage" "${files[@]/#/-e}" 2>"$work/warnings") | sed -n 's/^shlibs:Depends=//p'
  # Not shown: the private libraries have no shlibs info and no versioned names (by design), and
  # the wheel's libraries link libdl/librt/libpthread/libutil without using them (not ours to fix);
  # t5studio-cuda's libraries need libtorch_cpu/libc10, which t5studio provides (Depends on it).
  grep -v "no dependency information\|binaries to analyze should already be\|symbol .* used by .* found in none\|can't extract name and version\|could avoid a useless dependency\|cannot find library lib\(torch_cpu\|c10\)[.]so needed\|probably a plugin\|other similar warnings" \
    "$work/warnings" >&2 || true
  rm -rf "$work"
}

write_docs() {  # STAGE PACKAGE: copyright and a changelog, as Debian policy wants for every package
  local doc="$1/usr/share/doc/$2"
  mkdir -p "$doc"
  install -m 644 "$root/packaging/debian/copyright" "$doc/copyright"
  printf '%s (%s) unstable; urgency=medium\n\n  * Built from the T5 Studio source tree (%s).\n\n -- %s  %s\n' \
    "$2" "$version" "$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)" \
    "$maintainer" "$(date -uR ${SOURCE_DATE_EPOCH:+-d @$SOURCE_DATE_EPOCH})" | gzip -9n >"$doc/changelog.gz"
}

desktop_extras() {  # STAGE: PNG icons rendered from the SVG, the man page from --help
  local stage=$1 svg="$root/packaging/desktop/t5studio.svg" size dir
  for size in 16 24 32 48 64 128 256 512; do
    dir="$stage/usr/share/icons/hicolor/${size}x${size}/apps"
    mkdir -p "$dir"
    rsvg-convert -w "$size" -h "$size" "$svg" -o "$dir/t5studio.png"
  done
  mkdir -p "$stage/usr/share/man/man1"
  # Runs the staged binary: it finds its libraries through its RPATH, like the installed one.
  env -u LD_LIBRARY_PATH help2man --no-info --section 1 --source "T5 Studio $version" \
    --name "paraphrase text and fine-tune T5 models (desktop app and command line)" \
    "$stage/usr/bin/t5studio" | sed "s|$stage/usr/bin/||g" | gzip -9n >"$stage/usr/share/man/man1/t5studio.1.gz"
}

strip_libraries() {  # STAGE: the wheel ships some libraries (libtorch_cpu) with a full symbol table
  local f
  while IFS= read -r f; do
    # grep without -q reads to the end: readelf must not die of SIGPIPE (pipefail).
    readelf -S "$f" 2>/dev/null | grep ' \.symtab' >/dev/null || continue
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$f"
  done < <(find "$1/usr/lib/t5studio" -type f -name '*.so*')
}

maintainer="T5 Studio maintainers <maintainers@t5studio.invalid>"
build_package() {  # NAME
  local name=$1 stage="$out/stage/$1" depends extra_depends description recommends="" t0=$SECONDS compress
  compress="${T5S_DEB_COMPRESS:-$([ "$name" = t5studio ] && echo xz || echo gzip)}"
  rm -rf "$stage"
  mkdir -p "$stage/DEBIAN"
  DESTDIR="$stage" cmake --install "$build" --prefix /usr --component "$name" --strip >/dev/null
  strip_libraries "$stage"
  if [ "$name" = t5studio ]; then
    desktop_extras "$stage"
    recommends="Recommends: fonts-noto-cjk"
    extra_depends=""
    description="Paraphrase text and fine-tune T5 models locally
 T5 Studio is a desktop application and command-line tool for paraphrasing
 (text augmentation) and local fine-tuning with T5-family encoder-decoder
 models (t5, flan-t5, mT5, Japanese and Chinese T5). It loads Hugging Face
 checkpoint folders unchanged and runs on the CPU; install t5studio-cuda
 for NVIDIA GPUs. A small demo model is included."
  else
    [ -n "$(ls -A "$stage/usr/lib/t5studio" 2>/dev/null)" ] || die "the build's LibTorch has no CUDA: nothing for $name"
    extra_depends="t5studio (= $version), "
    description="NVIDIA GPU support for T5 Studio
 LibTorch's CUDA half (libtorch_cuda) and the CUDA libraries it uses
 (cuBLAS, cuDNN, NCCL, ...), loaded by T5 Studio on demand when an NVIDIA
 driver is present. Not needed on machines without an NVIDIA GPU."
  fi
  write_docs "$stage" "$name"
  depends="$extra_depends$(shlib_depends "$stage")"
  find "$stage" -type d -exec chmod 755 {} +
  cat >"$stage/DEBIAN/control" <<EOF
Package: $name
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: ${depends%, }
${recommends:+$recommends
}Section: science
Priority: optional
Description: $description
EOF
  local deb="$out/${name}_${version}_${arch}.deb"
  dpkg-deb --root-owner-group -Z"$compress" -z"$level" -b "$stage" "$deb" >/dev/null
  say "$(basename "$deb"): $(du -h "$deb" | cut -f1) compressed ($compress -$level), $(($(du -sk --exclude=DEBIAN "$stage" | cut -f1) / 1024)) MiB installed, $((SECONDS - t0)) s"
  if [ "${T5S_DEB_LINTIAN:-0}" = 1 ]; then
    command -v lintian >/dev/null || die "lintian not found"
    lintian --tag-display-limit 0 "$deb" >&2 || die "lintian reports errors for $(basename "$deb")"
  fi
  [ "${T5S_DEB_KEEP_STAGE:-0}" = 1 ] || rm -rf "$stage"
}

for p in $packages; do
  case "$p" in t5studio|t5studio-cuda) build_package "$p" ;; *) die "unknown package '$p'" ;; esac
done
rmdir "$out/stage" 2>/dev/null || true
