#![no_main]
// Body: crates/fuzzing/src/input_spec.rs (shared with the stable smoke test).
libfuzzer_sys::fuzz_target!(|data: &[u8]| nes_fuzzing::input_spec::run(data));
