//! The bodies of the fuzz targets, one module each, shared by two drivers:
//!
//! - `fuzz/` (cargo-fuzz, libFuzzer, nightly): coverage-guided long runs, `scripts/fuzz.sh`;
//! - each module's `#[cfg(test)]` smoke test (stable, part of `cargo test --workspace`): a few
//!   thousand inputs per target, mutated from the seed corpus by [`mutate::Mutator`] from a
//!   fixed seed, so every CI run exercises the same inputs.
//!
//! A target returns normally for every input: bad input must give an error value, never a
//! panic, a hang or an unbounded allocation. A panic is the bug the fuzzer reports.
//!
//! The `nes-fuzz` binary writes the seed corpora for libFuzzer (`nes-fuzz corpus DIR`) and
//! replays an input libFuzzer saved through the same body on the stable toolchain
//! (`nes-fuzz replay TARGET FILE`), so a crash can be debugged without nightly.

pub mod corpus;
pub mod fm2;
pub mod input_spec;
pub mod lua_api;
pub mod mutate;
pub mod palette;
pub mod rom_image;
pub mod save_state;

/// A fuzz target as the drivers see it.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The module's name, which is also the cargo-fuzz binary's and the corpus folder's.
    pub name: &'static str,
    pub run: fn(&[u8]),
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// The longest input worth trying (libFuzzer's `-max_len`, the smoke mutator's cap).
    pub max_len: usize,
}

/// Every target, in the order `scripts/fuzz.sh` runs them.
pub const TARGETS: [Target; 6] = [
    Target {
        name: "rom_image",
        run: rom_image::run,
        seeds: rom_image::seeds,
        max_len: rom_image::MAX_LEN,
    },
    Target {
        name: "save_state",
        run: save_state::run,
        seeds: save_state::seeds,
        // A state of the largest test ROMs' boards with their RAM is well under this.
        max_len: 1 << 20,
    },
    Target {
        name: "fm2",
        run: fm2::run,
        seeds: fm2::seeds,
        max_len: fm2::MAX_LEN,
    },
    Target {
        name: "palette",
        run: palette::run,
        seeds: palette::seeds,
        max_len: palette::MAX_LEN,
    },
    Target {
        name: "input_spec",
        run: input_spec::run,
        seeds: input_spec::seeds,
        max_len: input_spec::MAX_LEN,
    },
    Target {
        name: "lua_api",
        run: lua_api::run,
        seeds: lua_api::seeds,
        // Scripts: a page of Lua is plenty to reach every API function.
        max_len: 64 * 1024,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|target| target.name == name)
}
