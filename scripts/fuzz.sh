#!/usr/bin/env bash
# Long fuzz runs: libFuzzer (cargo-fuzz, nightly toolchain) on the targets in fuzz/, whose
# bodies live in crates/fuzzing (the stable smoke tests in `cargo test` run the same bodies on
# a few thousand fixed inputs; CI never needs nightly). Not part of CI.
#
#   bash scripts/fuzz.sh [TARGET...]              fuzz each target (default: all six) in turn
#   bash scripts/fuzz.sh replay TARGET FILE...    replay saved inputs through the stable build
#
# Targets: rom_image save_state fm2 palette input_spec lua_api (`nes-fuzz list`).
#
# Fuzzing a target:
#   1. writes its seed corpus (the module's seeds(): synthetic inputs, and test ROMs from
#      $NES_TEST_ROMS or ../shared/test-roms where the target uses them) into
#      fuzz/corpus/TARGET/, beside what earlier runs added there;
#   2. runs `cargo +nightly fuzz run -a TARGET fuzz/corpus/TARGET` for FUZZ_SECONDS with
#      -rss_limit_mb=2048 (a leak or runaway allocation fails), -timeout=10 (one input taking
#      10 s is a hang) and the target's -max_len (`nes-fuzz max-len TARGET`: 1 MiB for ROM
#      images and save states, 64 KiB for movies and scripts, 4 KiB for palettes and input
#      specs). -a keeps debug assertions and overflow checks on, as in the smoke tests.
#      AddressSanitizer (with its leak check at exit) is on unless FUZZ_SANITIZER=none, which
#      is several times faster on these all-safe-Rust bodies but no longer checks for leaks.
#   3. logs to fuzz/logs/TARGET.log; a failing input is saved as
#      fuzz/artifacts/TARGET/{crash,timeout,leak,oom}-HASH and the next target still runs.
# At the end it prints, per target, the executions, the seconds and the outcome; the exit
# status is 1 if any target failed.
#
# Environment: FUZZ_SECONDS (default 600) per target; FUZZ_SANITIZER (address, none);
# FUZZ_NICE (default 10: the machine is shared); FUZZ_ARGS (more libFuzzer flags).
#
# Replaying (`replay TARGET FILE...`) runs the body on each file with the stable toolchain's
# test profile (optimised, overflow checks on): a panic shows its message and backtrace
# (RUST_BACKTRACE=1), and the exit status says whether the input still fails.
set -euo pipefail
cd "$(dirname "$0")/.."

nes_fuzz() {
    cargo run --quiet --locked --profile test -p nes-fuzzing --bin nes-fuzz -- "$@"
}

if [[ "${1:-}" == "replay" ]]; then
    shift
    RUST_BACKTRACE="${RUST_BACKTRACE:-1}" nes_fuzz replay "$@"
    exit
fi

seconds="${FUZZ_SECONDS:-600}"
sanitizer="${FUZZ_SANITIZER:-address}"
niceness="${FUZZ_NICE:-10}"
if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <(nes_fuzz list)
fi

mkdir -p fuzz/corpus fuzz/logs
nes_fuzz corpus fuzz/corpus "${targets[@]}"

summary=()
failed=0
for target in "${targets[@]}"; do
    max_len="$(nes_fuzz max-len "$target")"
    log="fuzz/logs/$target.log"
    echo "== $target: ${seconds} s, -max_len=$max_len, sanitizer $sanitizer (log: $log)"
    status=0
    # shellcheck disable=SC2086
    (cd fuzz && nice -n "$niceness" cargo +nightly fuzz run -a -s "$sanitizer" "$target" \
        "corpus/$target" -- -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -max_len="$max_len" -print_final_stats=1 ${FUZZ_ARGS:-}) >"$log" 2>&1 || status=$?
    runs="$(awk '/^stat::number_of_executed_units:/ {print $NF}' "$log" | tail -n 1)"
    speed="$(awk '/^stat::average_exec_per_sec:/ {print $NF}' "$log" | tail -n 1)"
    if [[ $status -eq 0 ]]; then
        outcome="no failure"
    else
        failed=1
        artifact="$(grep -o 'fuzz/artifacts/[^ ]*' "$log" | head -n 1 || true)"
        outcome="FAILED (exit $status) ${artifact:-see $log}"
        tail -n 40 "$log"
    fi
    summary+=("$(printf '%-11s %12s executions %8s exec/s  %s' "$target" "${runs:-?}" \
        "${speed:-?}" "$outcome")")
done

echo "== summary (${seconds} s per target)"
printf '%s\n' "${summary[@]}"
exit "$failed"
