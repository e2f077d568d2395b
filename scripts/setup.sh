#!/usr/bin/env bash
# Installs the Debian packages ethosu-emu needs, if any are missing (root or sudo).
set -euo pipefail
packages=(cmake g++ clang libclang-rt-14-dev python3 libfmt-dev libtbb-dev libgtest-dev
          libbenchmark-dev libflatbuffers-dev flatbuffers-compiler nlohmann-json3-dev libcli11-dev zlib1g-dev time
          pybind11-dev python3-dev python3-numpy)
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
