#!/usr/bin/env bash
# Our emulator against the peers a user can install from the registries, measured side by side
# in one run (issue 20): Nestopia (Debian's libretro-nestopia, driven by our own minimal libretro
# frontend benches/peers/libretro_bench.c) and tetanes-core (crates.io, driven by
# benches/peers/tetanes-bench). Every emulator pays for its output as a frontend does: 48 kHz
# audio read and a 32-bit picture produced every frame.
#
# For each ROM and each round it runs ours, Nestopia and tetanes one after another (interleaved,
# so a slow spell of a shared machine hits all three alike), each pinned to the same core with
# taskset, WARMUP untimed frames then FRAMES timed ones; it prints a Markdown table of the median
# frames per second and, per peer, the median of each round's ratio ours/peer (see
# paired_ratio). A peer that refuses a ROM (unsupported mapper)
# shows "n/a" for it. Not part of CI: it installs packages and takes minutes.
#
#   bash scripts/bench-peers.sh [--frames N] [--rounds R] [--warmup W] [--cpu C]
#                               [--only] [--csv FILE] [--tetanes-filter pixellate|ntsc] [ROM...]
#
#   --frames N   timed frames per run (default 5000)
#   --rounds R   interleaved rounds per ROM; the table shows the median (default 3)
#   --warmup W   untimed frames before timing in every run (default 60)
#   --cpu C      the core every run is pinned to (default: the last one)
#   ROM...       extra ROMs (your own games), benchmarked after the default set
#   --only       benchmark only the ROMs given, not the default set
#   --csv FILE   also write every single run (rom, round, emulator, fps) to FILE
#   --tetanes-filter F   tetanes' video filter: pixellate (default: a palette lookup to RGBA,
#                the same work as ours and Nestopia's) or ntsc (tetanes' own frontend default)
#
# The default set: AccuracyCoin and nestest (NROM), an MMC1 and an MMC3 Holy Mapperel board
# from the public test ROMs ($NES_TEST_ROMS, default ../shared/test-roms), and spritecans, a
# sprite stress demo that keeps ~55 of the 64 sprites moving every frame (none of the public
# test ROMs does: they show sprites for a few frames at most). spritecans ships in the
# tetanes-core crate this script fetches anyway; it is skipped with a note if not found.
#
# Environment: NES_BIN=path/to/nes uses that build of ours instead of building release here;
# NESTOPIA_CORE=path/to/nestopia_libretro.so another Nestopia core.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

frames=5000
rounds=3
warmup=60
cpu=$(( $(nproc) - 1 ))
only=0
csv=""
tetanes_filter=pixellate
extra_roms=()

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 1
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --frames) frames="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --warmup) warmup="$2"; shift 2 ;;
        --cpu) cpu="$2"; shift 2 ;;
        --only) only=1; shift ;;
        --csv) csv="$2"; shift 2 ;;
        --tetanes-filter) tetanes_filter="$2"; shift 2 ;;
        -h|--help) usage ;;
        --*) echo "bench-peers: unknown option $1" >&2; usage ;;
        *)
            [[ -f "$1" ]] || { echo "bench-peers: no such ROM: $1" >&2; exit 1; }
            extra_roms+=("$(realpath "$1")"); shift ;;
    esac
done
for n in "$frames" "$rounds" "$warmup" "$cpu"; do
    [[ "$n" =~ ^[0-9]+$ ]] || { echo "bench-peers: not a number: $n" >&2; exit 1; }
done
[[ "$frames" -gt 0 && "$rounds" -gt 0 ]] || { echo "bench-peers: --frames and --rounds must be > 0" >&2; exit 1; }
[[ "$tetanes_filter" == pixellate || "$tetanes_filter" == ntsc ]] ||
    { echo "bench-peers: --tetanes-filter is pixellate or ntsc" >&2; exit 1; }

note() { echo "bench-peers: $*" >&2; }

# --- Tools and builds -------------------------------------------------------------------------

# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
nes_bin="${NES_BIN:-}"
if [[ -z "$nes_bin" ]]; then
    ensure_build_tools
fi
nestopia_core="${NESTOPIA_CORE:-/usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so}"
if command -v dpkg-query >/dev/null 2>&1; then
    # gcc for the libretro frontend, util-linux for taskset, and the Nestopia core itself.
    peer_packages=(gcc util-linux)
    [[ -n "${NESTOPIA_CORE:-}" ]] || peer_packages+=(libretro-nestopia)
    apt_install_missing "${peer_packages[@]}"
fi
command -v taskset >/dev/null || { note "taskset not found (util-linux)"; exit 1; }

peers_dir="$root/target/peers"
mkdir -p "$peers_dir"
if [[ -z "$nes_bin" ]]; then
    note "building ours (release)"
    cargo build --release --locked -p nes-app >&2
    nes_bin="$root/target/release/nes"
fi
note "building the libretro frontend"
gcc -O2 -Wall -o "$peers_dir/libretro_bench" benches/peers/libretro_bench.c -ldl >&2
note "building the tetanes-core driver (release, lto)"
tetanes_manifest="$root/benches/peers/tetanes-bench/Cargo.toml"
CARGO_TARGET_DIR="$peers_dir/tetanes" cargo build --release --locked \
    --manifest-path "$tetanes_manifest" >&2
tetanes_bin="$peers_dir/tetanes/release/tetanes-bench"
libretro_bin="$peers_dir/libretro_bench"

# Versions, for the report: a ratio means little without knowing what was compared.
ours_version="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
[[ -z "${NES_BIN:-}" ]] || ours_version="$NES_BIN"
nestopia_version="$(dpkg-query -W -f='${Version}' libretro-nestopia 2>/dev/null || echo unknown)"
[[ -z "${NESTOPIA_CORE:-}" ]] || nestopia_version="$NESTOPIA_CORE"
tetanes_core_dir="$(cargo metadata --format-version 1 --locked --manifest-path "$tetanes_manifest" |
    grep -o '"manifest_path":"[^"]*/tetanes-core-[0-9][^"/]*/Cargo.toml"' | head -n 1 |
    sed 's/^"manifest_path":"//; s#/Cargo.toml"$##')" || true
tetanes_version="${tetanes_core_dir##*/tetanes-core-}"

# --- The ROMs ---------------------------------------------------------------------------------

test_roms="${NES_TEST_ROMS:-$root/../shared/test-roms}"
roms=()
if [[ "$only" -eq 0 ]]; then
    for rel in misc/AccuracyCoin/AccuracyCoin.nes cpu/nestest/nestest.nes \
        mapper/holy-mapperel/M1_P128K_C128K.nes beyond/holy-mapperel/M4_P256K_C256K.nes; do
        if [[ -f "$test_roms/$rel" ]]; then
            roms+=("$test_roms/$rel")
        else
            note "skipping $rel: not under $test_roms (set NES_TEST_ROMS)"
        fi
    done
    if [[ -n "$tetanes_core_dir" && -f "$tetanes_core_dir/test_roms/spritecans.nes" ]]; then
        roms+=("$tetanes_core_dir/test_roms/spritecans.nes")
    else
        note "skipping spritecans.nes: not found in the tetanes-core crate"
    fi
fi
roms+=("${extra_roms[@]}")
[[ ${#roms[@]} -gt 0 ]] || { note "no ROMs to run"; exit 1; }

# The iNES mapper number (flags 6 high nibble, flags 7 high nibble), shown so a "n/a" explains
# itself.
mapper_of() {
    local b
    read -r -a b < <(od -An -tu1 -j6 -N2 "$1")
    echo $(( (b[0] >> 4) | (b[1] & 0xF0) ))
}

# --- Running ----------------------------------------------------------------------------------

# One timed run of emulator $1 on ROM $2, pinned; prints its fps, or nothing when it refused the
# ROM or failed (its first error line goes to stderr).
run_one() {
    local who="$1" rom="$2" out err rc=0
    err="$(mktemp)"
    case "$who" in
        ours)
            out="$(taskset -c "$cpu" "$nes_bin" bench "$rom" --frames "$frames" --runs 1 \
                --warmup "$warmup" --json 2>"$err")" || rc=$?
            out="$(grep -o '"total_fps":[0-9.eE+-]*' <<<"$out" | head -n 1 | cut -d: -f2)" || true
            ;;
        nestopia)
            out="$(taskset -c "$cpu" "$libretro_bin" "$nestopia_core" "$rom" "$frames" "$warmup" \
                2>"$err")" || rc=$?
            out="$(grep -o '"fps":[0-9.eE+-]*' <<<"$out" | head -n 1 | cut -d: -f2)" || true
            ;;
        tetanes)
            out="$(taskset -c "$cpu" "$tetanes_bin" "$rom" "$frames" "$warmup" \
                --filter "$tetanes_filter" 2>"$err")" || rc=$?
            out="$(grep -o '"fps":[0-9.eE+-]*' <<<"$out" | head -n 1 | cut -d: -f2)" || true
            ;;
    esac
    if [[ "$rc" -ne 0 || -z "$out" ]]; then
        note "$who on ${rom##*/}: failed (exit $rc): $(grep -v '^$' "$err" | head -n 1)"
        out=""
    fi
    rm -f "$err"
    echo "$out"
}

# Median of the numbers given (the mean of the middle two for an even count); empty if none.
median() {
    [[ $# -gt 0 ]] || return 0
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR % 2) printf "%.1f", v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The median over the rounds of each round's ours/peer ratio: "$1" ours' values, "$2" the
# peer's, one per round in the same order. The three runs of a round follow one another, so a
# machine whose speed drifts between rounds moves this less than a ratio of the medians.
paired_ratio() {
    # shellcheck disable=SC2206 # each holds the rounds' values separated by spaces
    local -a ours=($1) peer=($2) ratios=()
    if [[ ${#peer[@]} -eq 0 || ${#ours[@]} -ne ${#peer[@]} ]]; then
        echo "n/a"
        return
    fi
    for i in "${!ours[@]}"; do
        ratios+=("$(awk -v a="${ours[$i]}" -v b="${peer[$i]}" 'BEGIN { printf "%.6f", a / b }')")
    done
    printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

[[ -z "$csv" ]] || echo "rom,round,emulator,fps" >"$csv"
emulators=(ours nestopia tetanes)
rows=()
for rom in "${roms[@]}"; do
    declare -A fps=([ours]="" [nestopia]="" [tetanes]="")
    declare -A refused=([ours]=0 [nestopia]=0 [tetanes]=0)
    for ((round = 1; round <= rounds; round++)); do
        for who in "${emulators[@]}"; do
            # An emulator that refused a ROM once will refuse it again: save the other rounds.
            [[ "${refused[$who]}" -eq 0 ]] || continue
            value="$(run_one "$who" "$rom")"
            if [[ -z "$value" ]]; then
                refused[$who]=1
            else
                fps[$who]+="$value "
                note "${rom##*/} round $round: $who $(printf "%.1f" "$value") fps"
            fi
            [[ -z "$csv" ]] || echo "${rom##*/},$round,$who,$value" >>"$csv"
        done
    done
    # Word splitting on purpose: each holds the rounds' values separated by spaces.
    # shellcheck disable=SC2086
    {
        m_ours="$(median ${fps[ours]})"
        m_nestopia="$(median ${fps[nestopia]})"
        m_tetanes="$(median ${fps[tetanes]})"
    }
    rows+=("| ${rom##*/} | $(mapper_of "$rom") | ${m_ours:-n/a} | ${m_nestopia:-n/a} | ${m_tetanes:-n/a} | $(paired_ratio "${fps[ours]}" "${fps[nestopia]}") | $(paired_ratio "${fps[ours]}" "${fps[tetanes]}") |")
    unset fps refused
done

echo "Median frames per second over $rounds interleaved rounds, and the median of each round's own ratio ours/peer; $frames timed frames after $warmup warm-up frames per run, every run pinned to CPU $cpu; 48 kHz audio read and a 32-bit picture produced every frame."
echo "ours: $ours_version; Nestopia: libretro-nestopia $nestopia_version; tetanes-core: ${tetanes_version:-unknown} (filter $tetanes_filter)."
echo
echo "| ROM | mapper | ours fps | Nestopia fps | tetanes fps | ours/Nestopia | ours/tetanes |"
echo "|---|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
