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

# The Python package (crates/python, its own Cargo workspace: see its Cargo.toml): formatting,
# clippy and its Rust unit tests as above, then built into a virtual environment with maturin
# (release profile) and tested with pytest (Console, the Gymnasium environments with check_env,
# the vector environments, Ray on a local cluster, and frame numbering against the release
# `nes`).
echo "== Python package: cargo fmt --check, cargo clippy"
ensure_python_env
export PYO3_PYTHON="$PWD/$PYTHON_ENV/bin/python"
python_target="$PWD/target/python"
cargo fmt --manifest-path crates/python/Cargo.toml -- --check
CARGO_TARGET_DIR="$python_target" \
  cargo clippy --manifest-path crates/python/Cargo.toml --all-targets --locked -- -D warnings
echo "== Python package: cargo test (its Rust unit tests)"
CARGO_TARGET_DIR="$python_target" \
  cargo test --manifest-path crates/python/Cargo.toml --lib --locked
echo "== Python package: maturin develop --release, pytest"
(
  export VIRTUAL_ENV="$PWD/$PYTHON_ENV" CARGO_TARGET_DIR="$python_target"
  cd crates/python
  "$VIRTUAL_ENV/bin/maturin" develop --release --locked
  "$VIRTUAL_ENV/bin/python" -m pytest -q tests
)
