#!/usr/bin/env bash
# Installs what is missing, builds and runs every test twice: a Release build (gcc), then
# an AddressSanitizer + UBSan build (clang) that also runs each libFuzzer target briefly.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --with-qemu
jobs=${JOBS:-2}

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DETHOSU_QEMU_TESTS=ON -DETHOSU_QEMU="$(scripts/build-qemu.sh --path)"
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETHOSU_SANITIZE=ON -DETHOSU_FUZZ=ON
cmake --build build-asan -j"$jobs"
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --test-dir build-asan --output-on-failure -j"$jobs"
