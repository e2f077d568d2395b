#!/usr/bin/env bash
# Installs the Debian packages ethosu-emu needs, if any are missing (root or sudo); with --with-qemu
# also builds QEMU with the NPU device for whole-firmware runs (scripts/build-qemu.sh).
set -euo pipefail
packages=(cmake g++ clang libclang-rt-14-dev python3 libfmt-dev libtbb-dev libgtest-dev
          libbenchmark-dev libflatbuffers-dev flatbuffers-compiler nlohmann-json3-dev libcli11-dev zlib1g-dev time
          pybind11-dev python3-dev python3-numpy)
# --with-qemu: also what whole-firmware runs need: the test firmware's compiler and QEMU.
with_qemu=0
[[ "${1:-}" == --with-qemu ]] && with_qemu=1 && packages+=(gcc-arm-none-eabi)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# QEMU with the project's NPU device (frontend/qemu): built from Debian's source package into a
# cache outside the clone (about 3 minutes cold on 2 cores; a cache hit only prints the path).
if ((with_qemu)); then "$(dirname "$0")/build-qemu.sh" >/dev/null; fi
