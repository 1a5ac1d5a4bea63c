#!/usr/bin/env bash
# Long soak of the Lua host: runs tests/lua/soak_hooks.lua (hooks on every RAM write, a new
# savestate object every frame, an overlay, input) on a ROM for FRAMES frames with the release
# binary, sampling the process's resident memory every few seconds. Memory must stay flat:
# the script prints the last and the largest RSS and the growth after the first tenth.
# Not part of CI (a million frames take about half an hour: the script runs about 600 frames/s).
#
#   bash scripts/soak.sh [ROM] [FRAMES]     (default: AccuracyCoin from the test ROMs, 1000000)
#   NES_BIN=path/to/nes bash scripts/soak.sh (a binary already built; else it builds release)
set -euo pipefail
cd "$(dirname "$0")/.."
roms="${NES_TEST_ROMS:-../shared/test-roms}"
rom="${1:-$roms/misc/AccuracyCoin/AccuracyCoin.nes}"
frames="${2:-1000000}"
bin="${NES_BIN:-target/release/nes}"
[[ -n "${NES_BIN:-}" ]] || cargo build --release -p nes-app --locked
log="$(mktemp)"
SOAK_REPORT_EVERY=$((frames / 10)) "$bin" run "$rom" --lua tests/lua/soak_hooks.lua \
    --frames "$frames" >"$log" 2>&1 &
pid=$!
samples=()
while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [[ -n "$rss" ]] && samples+=("$rss")
    sleep 5
done
wait "$pid"
cat "$log"
rm -f "$log"
printf '%s\n' "${samples[@]}" | awk '
    { rss[NR] = $1; if ($1 > max) max = $1 }
    END {
        tenth = int(NR / 10) + 1
        printf "RSS samples: %d; after the first tenth: %d KiB; last: %d KiB; largest: %d KiB; growth: %d KiB\n",
            NR, rss[tenth], rss[NR], max, rss[NR] - rss[tenth]
    }'
