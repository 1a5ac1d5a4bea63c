#![no_main]
// Body: crates/fuzzing/src/lua_api.rs (shared with the stable smoke test).
libfuzzer_sys::fuzz_target!(|data: &[u8]| nes_fuzzing::lua_api::run(data));
