#![no_main]
// Body: crates/fuzzing/src/fm2.rs (shared with the stable smoke test).
libfuzzer_sys::fuzz_target!(|data: &[u8]| nes_fuzzing::fm2::run(data));
