//! The FM2 header `--record` writes: FCEUX 2.6.5's for a power-on movie with two gamepads.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use nes::PowerOnRam;
use nes_movie::fm2::{Movie, MovieFrame, MovieHeader};
use sha1::{Digest, Sha1};

use crate::hex;

/// A fresh FM2 `guid` (8-4-4-4-12 hex digits), derived from the ROM hash, the time and the
/// process id so two recordings never share one.
fn new_guid(rom_md5: &[u8; 16]) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut hash = Sha1::new();
    hash.update(rom_md5);
    hash.update(nanos.to_le_bytes());
    hash.update(std::process::id().to_le_bytes());
    let digits = hex(&hash.finalize()[..16]).to_uppercase();
    format!(
        "{}-{}-{}-{}-{}",
        &digits[..8],
        &digits[8..12],
        &digits[12..16],
        &digits[16..20],
        &digits[20..32]
    )
}

/// This program's version as an FM2 `emuVersion` integer (FCEUX writes 2.2.3 as 22030;
/// here major * 10000 + minor * 100 + patch).
fn emu_version() -> u32 {
    let mut parts = env!("CARGO_PKG_VERSION")
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    next() * 10_000 + next() * 100 + next()
}

/// The movie of a run of `rom` from power-on with `power_on_ram`, its input from `origin`.
pub fn recorded_movie(
    rom: &Path,
    md5: [u8; 16],
    origin: &str,
    power_on_ram: PowerOnRam,
    pal: bool,
    frames: Vec<MovieFrame>,
) -> Movie {
    let mut header = MovieHeader::new();
    // FCEUX's FM2 knows PAL and NTSC timing; a Dendy recording says NTSC.
    header.pal = pal;
    header.emu_version = emu_version();
    header.rerecord_count = 0;
    header.rom_filename = rom
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    header.rom_checksum = Some(md5);
    header.guid = new_guid(&md5);
    let (option, seed) = power_on_ram.fceux_option();
    header.ram_init_option = Some(option);
    header.ram_init_seed = Some(seed);
    header.comments.push(format!(
        "recorded by nes {} from {origin}",
        env!("CARGO_PKG_VERSION")
    ));
    Movie { header, frames }
}
