#!/usr/bin/env bash
# Installs what is missing, builds ethosu-emu (Release) and runs it on the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2 --target ethosu-emu
emu=build/frontend/cli/ethosu-emu
$emu example build/example.bin
$emu info build/example.bin
$emu disasm build/example.bin
# A ramp input; the output is each 2x2 average plus 3.
python3 -c "import sys; sys.stdout.buffer.write(bytes((i * 7) % 256 for i in range(4096)))" > build/example.in0.bin
$emu run build/example.bin --input build/example.in0.bin --output-prefix build/example --json
