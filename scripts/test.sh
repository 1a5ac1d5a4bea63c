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

# Every test that needs the test ROMs must fail, not pass vacuously, when CI is set and the
# ROMs are missing. Checked on the ones that read the ROMs directly (the binaries are built).
echo "== ROM-dependent tests refuse to skip under CI"
no_roms="$(mktemp -d)"
for test in "-p nes-cpu --test nestest" "-p nes-cartridge --lib holy_mapperel" \
    "-p nes-headless --lib shared_manifest_parses" "-p nes-workspace-tests --test rom_suites" \
    "-p nes-fuzzing --lib rom_image::tests::smoke"; do
    # shellcheck disable=SC2086
    if NES_TEST_ROMS="$no_roms" CI=true cargo test --locked -q $test >/dev/null 2>&1; then
        echo "error: 'cargo test $test' passed under CI without the test ROMs"
        exit 1
    fi
done
rmdir "$no_roms"

echo "== cargo test, LuaJIT build of the Lua host"
cargo test -p nes-lua --no-default-features --features luajit --locked
