#!/usr/bin/env bash
# Runs every check and test of the project: formatting, lints, unit tests, the nestest trace
# comparison, the public test-ROM suites and the `nes play` window tests (under Xvfb). Installs
# what it needs first.
#
#   bash scripts/test.sh
#
# The ROM suites look for the test ROMs in $NES_TEST_ROMS, else ../shared/test-roms.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/setup.sh
ensure_build_tools
ensure_window_test_tools

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo test (unit tests, nestest, ROM suites)"
cargo test --workspace --locked
