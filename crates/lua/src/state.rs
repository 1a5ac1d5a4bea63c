//! Save-state bytes for `savestate.*`: the console's own versioned snapshots.

use nes::Nes;

/// The console's state as bytes.
pub(crate) fn save(nes: &Nes) -> Result<Vec<u8>, String> {
    Ok(nes.save_state())
}

/// Restore a state made by [`save`] (or read from a slot file).
pub(crate) fn load(nes: &mut Nes, data: &[u8]) -> Result<(), String> {
    nes.load_state(data).map_err(|e| e.to_string())
}
