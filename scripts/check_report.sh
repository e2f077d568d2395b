#!/bin/sh
# Opens an HTML report of ethosu-emu in headless Chromium (Debian's `chromium`), with the network
# off, takes a screenshot and fails on any console message of level error or warning (a script
# error, a resource that would not load). Skips, with a message, where Chromium is not installed.
#
#   scripts/check_report.sh [EMU [MODEL [SCREENSHOT.png]]]
#
# EMU defaults to build/frontend/cli/ethosu-emu, MODEL to person_detect on ethos-u55-128 from
# ../shared/vectors (else the bundled example), SCREENSHOT to a temporary file (its path printed).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
emu=${1:-$here/build/frontend/cli/ethosu-emu}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "check_report: skipped: no chromium (apt-get install -y chromium)"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
model=${2:-$here/../shared/vectors/person_detect/ethos-u55-128/model_vela.tflite}
if [ ! -f "$model" ]; then
    model=$work/example.bin
    "$emu" example "$model" >/dev/null
fi
shot=${3:-$(mktemp --suffix=.png)}
"$emu" report "$model" -o "$work/report.html" >/dev/null

# Any request leaving the page would fail: every host resolves to nothing.
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$work/profile" --host-resolver-rules="MAP * ~NOTFOUND" \
    --enable-logging=stderr --v=0 --hide-scrollbars --window-size=1280,2200 \
    --screenshot="$shot" "file://$work/report.html" 2>"$work/log" >/dev/null || {
    cat "$work/log"
    echo "check_report: chromium failed"
    exit 1
}
# Chromium logs every console message as CONSOLE(line); a failed load as net::ERR_.
if grep -E 'CONSOLE|net::ERR_|Uncaught' "$work/log"; then
    echo "check_report: the page logged the messages above"
    exit 1
fi
[ -s "$shot" ] || { echo "check_report: no screenshot"; exit 1; }
echo "check_report: $model: no console messages; screenshot $shot"
