#!/usr/bin/env bash
# kill -9 trials: `nes run` writing a RAM log, a WAV and a save state is killed with SIGKILL
# at random moments, again and again, into one folder. After every kill each output must be
# the complete file of an earlier run (never torn, never missing), and the next run into the
# folder must leave none of our temporary files (`.NAME.nes-tmp-PID-XXXXXX`) behind.
#
# Usage: scripts/kill-trials.sh [TRIALS (default 100)] [FRAMES per run (default 1200)]
# The binary is $NES_BIN, else target/release/nes, else target/debug/nes (build one first).
# Prints one line per failed check and a closing `N passed, N failed` line; exit status 1 when
# a check failed.
set -euo pipefail

trials=${1:-100}
frames=${2:-1200}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${NES_BIN:-}
if [[ -z $bin ]]; then
    for candidate in "$root/target/release/nes" "$root/target/debug/nes"; do
        if [[ -x $candidate ]]; then
            bin=$candidate
            break
        fi
    done
fi
if [[ -z $bin || ! -x $bin ]]; then
    echo "no nes binary: build one (cargo build --release -p nes-app) or set NES_BIN" >&2
    exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$work/out"
mkdir "$out"

# A 32 KiB NROM program that writes a counter to RAM and the APU every frame, so the RAM log
# and the audio change as the run goes.
python3 - "$work/game.nes" <<'PY'
import sys
prg = bytearray([0xEA] * 0x8000)
code = [
    0xA9, 0x0F, 0x8D, 0x15, 0x40,  # LDA #$0F ; STA $4015   (channels on)
    0xA9, 0xBF, 0x8D, 0x00, 0x40,  # LDA #$BF ; STA $4000   (pulse 1 volume)
    0xE6, 0x00,                    # loop: INC $00
    0xA5, 0x00, 0x8D, 0x02, 0x40,  # LDA $00 ; STA $4002     (pulse 1 period)
    0x4C, 0x0A, 0x80,              # JMP loop
]
prg[: len(code)] = bytes(code)
prg[0x7FFC:0x7FFE] = bytes([0x00, 0x80])
header = bytes([0x4E, 0x45, 0x53, 0x1A, 2, 1, 0x01, 0] + [0] * 8)
open(sys.argv[1], "wb").write(header + bytes(prg) + bytes(0x2000))
PY

run() {
    "$bin" run "$work/game.nes" --frames "$frames" \
        --ram-log "$out/ram.log" --wav "$out/audio.wav" --save-state "$out/game.state" \
        >/dev/null 2>&1
}
# Ours, and (to show the old behaviour with an older binary) the `tempfile` crate's default
# `.tmpXXXXXX` names earlier builds used.
temporaries() {
    find "$out" -maxdepth 1 \( -name '.*.nes-tmp-*' -o -name '.tmp??????' \) | wc -l
}

# The reference run: the run is deterministic, so every complete file equals these.
run
for name in ram.log audio.wav game.state; do
    cp "$out/$name" "$work/$name.expected"
done
start=$(date +%s%N)
run
run_ms=$((($(date +%s%N) - start) / 1000000))
echo "binary: $bin; one run of $frames frames takes ${run_ms} ms; $trials trials"

passed=0
failed=0
killed_with_temporaries=0
check() { # NAME STATUS(0 = good) MESSAGE
    if [[ $2 == 0 ]]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "trial $trial: $3"
    fi
}
for ((trial = 1; trial <= trials; trial++)); do
    # Kill anywhere from start-up to just past the end of a run (the final writes included).
    delay_ms=$((RANDOM % (run_ms + run_ms / 4 + 1)))
    "$bin" run "$work/game.nes" --frames "$frames" \
        --ram-log "$out/ram.log" --wav "$out/audio.wav" --save-state "$out/game.state" \
        >/dev/null 2>&1 &
    pid=$!
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    for name in ram.log audio.wav game.state; do
        if [[ ! -e $out/$name ]]; then
            check "$name" 1 "$name missing after a kill at ${delay_ms} ms"
        else
            cmp -s "$out/$name" "$work/$name.expected"
            check "$name" $? "$name torn after a kill at ${delay_ms} ms"
        fi
    done
    if (($(temporaries) > 0)); then
        killed_with_temporaries=$((killed_with_temporaries + 1))
    fi
    # Every few trials, a complete run into the folder: it must clean up what kills left.
    if ((trial % 5 == 0)); then
        run
        left=$(temporaries)
        check cleanup "$left" "$left temporary files left after a complete run"
    fi
done
run
left=$(temporaries)
check cleanup "$left" "$left temporary files left after the last complete run"
echo "kills that left a temporary file (removed by the next run): $killed_with_temporaries of $trials"
echo "$passed passed, $failed failed"
((failed == 0))
