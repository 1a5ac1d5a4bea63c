#![no_main]
// Body: crates/fuzzing/src/rom_image.rs (shared with the stable smoke test).
libfuzzer_sys::fuzz_target!(|data: &[u8]| nes_fuzzing::rom_image::run(data));
