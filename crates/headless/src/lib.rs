//! The emulator without a window: everything the `nes` command does headless (the run
//! pipeline and its outputs, the test-ROM runner, sweeps, captures, trace and bench), for the
//! command line, the desktop frontend and the workspace test suites. It builds without any
//! window, audio-device or gamepad crate.

pub mod battery;
pub mod bench;
pub mod capture;
mod error;
pub mod hardware;
pub mod limits;
pub mod output;
pub mod power_on;
pub mod run;
pub mod stdout;
pub mod sweep;
pub mod test_roms;
pub mod trace;

use std::path::Path;

pub use error::Error;
use hardware::HardwareChoice;
use nes::Nes;

/// The message of a caught panic (`panic!("...")` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// Lower-case hex digits of `bytes` (hashes in reports and logs).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Loads the ROM at `rom` (within [`limits::ROM`]) and powers `hardware` on with it. Says so
/// on stderr when the cartridge is a known title.
pub fn load_rom(
    rom: &Path,
    power_on: nes::PowerOn,
    hardware: &HardwareChoice,
) -> Result<Nes, Error> {
    let bytes = limits::read_limited(rom, &limits::ROM)?;
    let cart = hardware.cartridge(&bytes).map_err(|source| Error::Rom {
        path: rom.to_path_buf(),
        source,
    })?;
    let nes = hardware.power_on(cart, power_on);
    if let Some(title) = nes.rom_info().known_title {
        eprintln!("Recognised cartridge: {title}");
    }
    Ok(nes)
}
