#!/usr/bin/env bash
# Records tests/fceux/movies/probe-recorded-by-fceux.fm2 in FCEUX 2.6.5: a movie FCEUX itself
# wrote, for the parity suite's "recorded in FCEUX, played here" case (tests/fceux/README.md).
# FCEUX runs in a virtual X screen at normal speed, tests/fceux/record-in-fceux.lua records
# from power-on (with a reset and a power cycle), and xdotool holds FCEUX's default keys for
# the first pad (F = A, D = B, S = Select, Return = Start, arrows) while it does. The timing
# of the key presses varies from run to run: the movie is recorded once and committed.
#
#   apt-get install -y fceux xvfb xauth xdotool
#   bash scripts/fceux-record-movie.sh
# After recording, record its reference log: python3 scripts/fceux-reference.py probe-recorded-by-fceux
set -euo pipefail
cd "$(dirname "$0")/.."
fceux=$(command -v fceux || echo /usr/games/fceux)
work=$(mktemp -d)
trap 'kill "${xvfb:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
cp tests/fceux/record-in-fceux.lua "$work/"
mkdir "$work/home"
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 800x600x24 >/dev/null 2>&1 &
xvfb=$!
sleep 1
HOME="$work/home" DISPLAY="$display" "$fceux" --sound 0 --newppu 0 \
  --loadlua "$work/record-in-fceux.lua" tests/fceux/roms/probe.nes >/dev/null 2>&1 &
fceux_pid=$!
sleep 2
window=$(DISPLAY="$display" xdotool search --name FCEUX | head -n 1)
DISPLAY="$display" xdotool windowfocus "$window" 2>/dev/null || true
for key in f Return Right f d s Up Down Left f Return d; do
  DISPLAY="$display" xdotool keydown "$key"
  sleep 0.25
  DISPLAY="$display" xdotool keyup "$key"
  sleep 0.2
done
wait "$fceux_pid"
mv "$work/probe-recorded-by-fceux.fm2" tests/fceux/movies/
grep -c '^|' tests/fceux/movies/probe-recorded-by-fceux.fm2 | sed 's/^/lines: /'
