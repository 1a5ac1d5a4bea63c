#![no_main]
// Body: crates/fuzzing/src/save_state.rs (shared with the stable smoke test).
libfuzzer_sys::fuzz_target!(|data: &[u8]| nes_fuzzing::save_state::run(data));
