#!/usr/bin/env bash
# Builds the emulator (release) and runs it: `bash scripts/run.sh run ROM --frames 600`.
# Any arguments are passed to the `nes` command (`nes --help` lists them); relative paths are
# taken from the directory you call it from.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/setup.sh"
ensure_build_tools
cargo build --release --locked -p nes-app --manifest-path "$root/Cargo.toml"
exec "$root/target/release/nes" "$@"
