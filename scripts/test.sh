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

echo "== cargo clippy, LuaJIT build of the Lua host"
cargo clippy -p nes-lua --no-default-features --features luajit --all-targets --locked -- -D warnings

# The release binary, for the tests that must see the release profile (script errors
# unwinding through Rust: crates/app/tests/lua_errors_release.rs).
echo "== cargo build --release -p nes-app"
cargo build --release -p nes-app --locked
export NES_RELEASE_BIN="$PWD/target/release/nes"

echo "== cargo test (unit tests, nestest, ROM suites, FCEUX parity)"
cargo test --workspace --locked

echo "== cargo test, LuaJIT build of the Lua host"
cargo test -p nes-lua --no-default-features --features luajit --locked
