#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds qemu-system-arm (MPS2/MPS3 boards only) from Debian's qemu 7.2 source package with
# ethosu-emu's NPU device (frontend/qemu/), into a cache outside the repository, and prints the
# binary's path. The cache key hashes the source package's version, the patches, the device files
# and this script: a cache hit only prints the path.
#
# Usage: scripts/build-qemu.sh [--path] [-j N]
#   --path  print the cached binary's path if it is built (exit 0), else exit 1; builds nothing
#   -j N    parallel jobs for ninja (default 2; use 1 while another build runs)
# Environment:
#   QEMU_DSC            Debian's qemu_*.dsc to build (its tarballs beside it); default: the one
#                       in the cache, else `apt-get source --download-only qemu` (deb-src needed)
#   XDG_CACHE_HOME      cache root (default ~/.cache): ethosu-emu/qemu-<hash>/bin/qemu-system-arm
#   ETHOSU_QEMU_KEEP_BUILD=1  keep the source and build trees (ethosu-emu/qemu-<hash>.build)
#
# QEMU's code (frontend/qemu/, the patches) is GPL-2.0-or-later and links nothing of ethosu-emu;
# the NPU runs in a separate process (ethosu-emu device-server) reached over a UNIX socket.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
qemu_dir="$repo/frontend/qemu"
# The Debian version the patches were written against; apt-get source tries it first.
debian_version="1:7.2+dfsg-7+deb12u18"

path_only=0
jobs=2
while [ $# -gt 0 ]; do
    case "$1" in
        --path) path_only=1 ;;
        -j) jobs="$2"; shift ;;
        -j*) jobs="${1#-j}" ;;
        -h|--help) sed -n '3,20p' "$0"; exit 0 ;;
        *) echo "build-qemu: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

cache="${XDG_CACHE_HOME:-$HOME/.cache}/ethosu-emu"
source_cache="$cache/qemu-source"

# The source package: $QEMU_DSC, else the newest in the cache.
find_dsc() {
    if [ -n "${QEMU_DSC:-}" ]; then
        [ -f "$QEMU_DSC" ] || { echo "build-qemu: QEMU_DSC=$QEMU_DSC not found" >&2; return 1; }
        echo "$QEMU_DSC"
        return 0
    fi
    local found
    found="$(ls -1 "$source_cache"/qemu_7.2*.dsc 2>/dev/null | sort -V | tail -1 || true)"
    [ -n "$found" ] || return 1
    echo "$found"
}

# Installs what a minimal arm-softmmu build needs, when missing (root or sudo).
install_build_deps() {
    local packages=(gcc make ninja-build meson pkg-config python3 libglib2.0-dev libfdt-dev
                    libpixman-1-dev zlib1g-dev dpkg-dev xz-utils patch)
    local missing=() p sudo_cmd=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if ((${#missing[@]})); then
        echo "build-qemu: installing ${missing[*]}" >&2
        [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
        "${sudo_cmd[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
            --no-install-recommends "${missing[@]}" >&2
    fi
}

# apt's source entries: the machine's Debian sources again as deb-src, when none serves qemu.
add_deb_src() {
    local sudo_cmd=() list=/etc/apt/sources.list.d/ethosu-emu-deb-src.sources
    [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
    [ -n "$(apt-cache showsrc qemu 2>/dev/null)" ] && return 0
    "${sudo_cmd[@]}" apt-get update -qq >&2
    [ -n "$(apt-cache showsrc qemu 2>/dev/null)" ] && return 0
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | "${sudo_cmd[@]}" tee "$list" >/dev/null
    else
        echo "build-qemu: no deb-src for qemu and no /etc/apt/sources.list.d/debian.sources to derive one" >&2
        return 1
    fi
    echo "build-qemu: added $list (deb-src) for Debian's qemu source" >&2
    "${sudo_cmd[@]}" apt-get update -qq >&2
}

# Downloads Debian's qemu source package into the cache (set-up): the version the patches were
# written for, else the archive's (the patches may then not apply).
download_source() {
    mkdir -p "$source_cache"
    echo "build-qemu: downloading Debian's qemu source package into $source_cache" >&2
    add_deb_src || exit 1
    (cd "$source_cache" &&
        { apt-get source --download-only "qemu=$debian_version" >&2 ||
          apt-get source --download-only qemu >&2; }) ||
        { echo "build-qemu: apt-get source qemu failed (is deb-src in the apt sources?)" >&2; exit 1; }
}

# Copies a source package (.dsc and the files it lists) into the cache, so that later runs
# (and --path) find it without QEMU_DSC.
cache_source() {
    local dsc="$1" dir f
    dir="$(dirname "$dsc")"
    [ "$(cd "$dir" && pwd)" = "$(mkdir -p "$source_cache" && cd "$source_cache" && pwd)" ] && return 0
    cp "$dsc" "$source_cache/"
    for f in $(awk '/^Files:/{on=1; next} /^[^ ]/{on=0} on{print $3}' "$dsc"); do
        cp "$dir/$f" "$source_cache/"
    done
}

dsc_version() {
    sed -n 's/^Version: //p' "$1" | head -1
}

# The cache key: the source version, the patches, the device files and this script.
cache_key() {
    local version="$1"
    {
        echo "debian qemu $version"
        (cd "$repo" && find frontend/qemu/hw frontend/qemu/include frontend/qemu/configs \
            frontend/qemu/patches -type f | LC_ALL=C sort | while read -r f; do
                echo "$f"; cat "$f"; done)
        cat "$repo/scripts/build-qemu.sh"
    } | sha256sum | cut -c1-16
}

dsc="$(find_dsc || true)"
if [ "$path_only" = 1 ]; then
    [ -n "$dsc" ] || exit 1
    bin="$cache/qemu-$(cache_key "$(dsc_version "$dsc")")/bin/qemu-system-arm"
    [ -x "$bin" ] || exit 1
    echo "$bin"
    exit 0
fi

if [ -n "$dsc" ]; then
    bin="$cache/qemu-$(cache_key "$(dsc_version "$dsc")")/bin/qemu-system-arm"
    if [ -x "$bin" ]; then
        echo "$bin"
        exit 0
    fi
fi

install_build_deps
if [ -z "$dsc" ]; then
    download_source
    dsc="$(find_dsc)" || { echo "build-qemu: no qemu 7.2 source package" >&2; exit 1; }
fi
cache_source "$dsc"
version="$(dsc_version "$dsc")"
key="$(cache_key "$version")"
out="$cache/qemu-$key"
bin="$out/bin/qemu-system-arm"
work="$cache/qemu-$key.build"
echo "build-qemu: building qemu $version with ethosu-npu ($key) in $work" >&2

rm -rf "$work"
mkdir -p "$work"
start=$(date +%s)
dpkg-source -x "$dsc" "$work/src" >"$work/dpkg-source.log" 2>&1 ||
    { cat "$work/dpkg-source.log" >&2; exit 1; }
src="$work/src"
cp -r "$qemu_dir/hw" "$qemu_dir/include" "$qemu_dir/configs" "$src/"
for p in "$qemu_dir"/patches/*.patch; do
    patch -d "$src" -p1 --forward --quiet <"$p" ||
        { echo "build-qemu: $(basename "$p") does not apply to qemu $version" >&2; exit 1; }
done

mkdir -p "$work/build"
(cd "$work/build" &&
    "$src/configure" \
        --meson=/usr/bin/meson \
        --target-list=arm-softmmu \
        --without-default-features \
        --without-default-devices \
        --with-devices-arm=ethosu-mps \
        --enable-fdt=system \
        --disable-docs --disable-tools --disable-user --disable-install-blobs \
        --with-git-submodules=ignore \
        --with-pkgversion="ethosu-emu $key, Debian $version" \
        >"$work/configure.log" 2>&1) ||
    { tail -30 "$work/configure.log" >&2; exit 1; }
ninja -C "$work/build" -j "$jobs" qemu-system-arm >"$work/build.log" 2>&1 ||
    { grep -B2 -A8 "error" "$work/build.log" | head -60 >&2; tail -5 "$work/build.log" >&2; exit 1; }

mkdir -p "$out/bin.tmp"
cp "$work/build/qemu-system-arm" "$out/bin.tmp/"
strip "$out/bin.tmp/qemu-system-arm" 2>/dev/null || true
rm -rf "$out/bin"
mv "$out/bin.tmp" "$out/bin"
echo "build-qemu: built in $(( $(date +%s) - start )) s" >&2
[ "${ETHOSU_QEMU_KEEP_BUILD:-}" = 1 ] || rm -rf "$work"
echo "$bin"
