#![no_main]
// Body: crates/fuzzing/src/palette.rs (shared with the stable smoke test).
libfuzzer_sys::fuzz_target!(|data: &[u8]| nes_fuzzing::palette::run(data));
