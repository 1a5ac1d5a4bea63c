//! Save-state bytes for `savestate.*`, built on the console's own save states.

use nes::Nes;

/// The console's state as bytes.
pub(crate) fn save(_nes: &Nes) -> Result<Vec<u8>, String> {
    Err("save states are not available in this build".to_string())
}

/// Restore a state made by [`save`].
pub(crate) fn load(_nes: &mut Nes, _data: &[u8]) -> Result<(), String> {
    Err("save states are not available in this build".to_string())
}
