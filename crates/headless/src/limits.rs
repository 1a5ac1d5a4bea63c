//! Input files: the most each kind may hold, and the bounded read every input goes through.
//!
//! Whatever a path names (a huge file, `/dev/zero`, a FIFO that never ends), the app reads at
//! most the limit of its kind plus one byte, so a wrong path is a clear error at once, never an
//! allocation that runs the machine out of memory. Each limit is what the format can hold where
//! the format bounds it, else a generous figure far above any real file, with the reason.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::capture::RAW9_LEN;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// A kind of input file and the most of it that is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimit {
    /// What the file is, for messages ("ROM file").
    pub what: &'static str,
    /// The largest accepted size in bytes.
    pub max: u64,
    /// Why that is the bound, for messages.
    pub why: &'static str,
}

impl InputLimit {
    pub const fn new(what: &'static str, max: u64, why: &'static str) -> InputLimit {
        InputLimit { what, max, why }
    }
}

/// The largest ROM chip the cartridge crate accepts (its `MAX_ROM_LEN`, 64 MiB): NES 2.0's
/// exponent-multiplier sizes can declare up to 2^63 bytes, which it refuses as corrupt.
const MAX_ROM_CHIP: u64 = 64 * MIB;
/// Room for NES 2.0 miscellaneous ROM chips after CHR ROM: no board here reads them, and real
/// ones are a few KiB.
const MISC_ROM_ALLOWANCE: u64 = MIB;

/// An iNES / NES 2.0 image: the 16-byte header, a 512-byte trainer, PRG and CHR ROM at the most
/// the cartridge crate loads, and misc ROM.
pub const ROM: InputLimit = InputLimit::new(
    "ROM file",
    16 + 512 + 2 * MAX_ROM_CHIP + MISC_ROM_ALLOWANCE,
    "the largest image this emulator loads: header, trainer, 64 MiB each of PRG and CHR ROM \
     and 1 MiB of misc ROM",
);

/// Cartridge RAM a NES 2.0 header can declare: PRG RAM, PRG NVRAM, CHR RAM and CHR NVRAM of
/// up to `64 << 15` bytes (2 MiB) each.
const MAX_CARTRIDGE_RAM: u64 = 4 * (64 << 15);
/// Everything in a state but the cartridge RAM (CPU, PPU with its picture, APU with its pending
/// audio, board registers, nametable RAM): 145 KB measured, bounded here at 1 MiB.
const STATE_FIXED_PART: u64 = MIB;

/// A save state (`nes::Nes::save_state`): the fixed part plus the most cartridge RAM.
pub const SAVE_STATE: InputLimit = InputLimit::new(
    "save state",
    STATE_FIXED_PART + MAX_CARTRIDGE_RAM,
    "the largest state a console makes: 8 MiB of cartridge RAM and the rest",
);

/// A `.pal` file: 64 colours (192 bytes) or 512 (64 x 8 emphasis combinations, 1536 bytes):
/// `nes::Palette::from_pal_bytes`.
pub const PALETTE: InputLimit = InputLimit::new("palette file", 64 * 3 * 8, "a 512-colour .pal");

/// An FM2 movie: about 30 bytes a frame, so a day of input at 60 frames a second is 150 MiB.
pub const MOVIE: InputLimit = InputLimit::new(
    "FM2 movie",
    256 * MIB,
    "a generous bound: a day of input is about 150 MiB",
);

/// A `--input` file of `FRAME:BUTTONS[:HOLD]` lines (about 16 bytes each).
pub const INPUT_SCHEDULE: InputLimit = InputLimit::new(
    "input file",
    16 * MIB,
    "a generous bound: a million presses",
);

/// `nes sweep --input-file`: TOML with a few press lists per ROM.
pub const SWEEP_INPUT_SPEC: InputLimit = InputLimit::new(
    "sweep input file",
    16 * MIB,
    "a generous bound: press lists for a hundred thousand ROMs",
);

/// `nes sweep --roms LIST`: one path a line.
pub const ROM_LIST: InputLimit = InputLimit::new(
    "ROM list",
    16 * MIB,
    "a generous bound: a hundred thousand paths",
);

/// An earlier sweep's `sweep.json` (`--compare`): about 1 KiB a ROM.
pub const SWEEP_REPORT: InputLimit = InputLimit::new(
    "sweep report",
    256 * MIB,
    "a generous bound: the report of a quarter of a million ROMs",
);

/// A `.raw9` capture: exactly one 256x240 picture of 16-bit pixels.
pub const RAW9: InputLimit = InputLimit::new("raw9 picture", RAW9_LEN as u64, "one picture");

/// The test-ROM manifest, its known-failure list and AccuracyCoin's results table (TOML).
pub const MANIFEST: InputLimit = InputLimit::new(
    "test-ROM manifest file",
    16 * MIB,
    "a generous bound: the shared manifest is about 100 KiB",
);

/// A nestest-format log the `nestest-log` protocol compares against (nestest.log: 8,991 lines,
/// under 1 MiB).
pub const NESTEST_LOG: InputLimit = InputLimit::new(
    "nestest log",
    64 * MIB,
    "a generous bound: nestest.log is under 1 MiB",
);

/// `nes play`'s settings file.
pub const CONFIG: InputLimit = InputLimit::new(
    "settings file",
    MIB,
    "a generous bound: the default file is a few KiB",
);

/// The dynamic loader's cache, searched for a library's name before the window opens.
pub const LOADER_CACHE: InputLimit = InputLimit::new(
    "loader cache",
    64 * MIB,
    "a generous bound: real caches are under 1 MiB",
);

/// A battery save for a cartridge with `battery_len` bytes of battery RAM: the file is exactly
/// that RAM.
pub const fn battery_save(battery_len: usize) -> InputLimit {
    InputLimit::new(
        "battery save",
        battery_len as u64,
        "the cartridge's battery RAM",
    )
}

/// Why an input could not be read: an I/O error, or more bytes than its kind holds (kind
/// `FileTooLarge`). Shown as `cannot read PATH: REASON`.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {}: {source}", .path.display())]
pub struct ReadError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl ReadError {
    /// The file does not exist.
    pub fn is_not_found(&self) -> bool {
        self.source.kind() == std::io::ErrorKind::NotFound
    }
}

/// Read the file at `path`, at most `limit.max` bytes of it: more is an error that says so,
/// found after reading `limit.max + 1` bytes at the most (a regular file's size is checked
/// before reading).
pub fn read_limited(path: &Path, limit: &InputLimit) -> Result<Vec<u8>, ReadError> {
    let fail = |source| ReadError {
        path: path.to_path_buf(),
        source,
    };
    let too_large = |found: String| {
        fail(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "{} too large: {found}over the {} bytes accepted ({})",
                limit.what, limit.max, limit.why
            ),
        ))
    };
    let file = File::open(path).map_err(fail)?;
    let known_len = file
        .metadata()
        .ok()
        .filter(|meta| meta.is_file())
        .map(|meta| meta.len());
    if let Some(len) = known_len.filter(|&len| len > limit.max) {
        return Err(too_large(format!("{len} bytes, ")));
    }
    let capacity = known_len.unwrap_or(0).min(limit.max) as usize;
    let mut bytes = Vec::with_capacity(capacity);
    file.take(limit.max + 1)
        .read_to_end(&mut bytes)
        .map_err(fail)?;
    if bytes.len() as u64 > limit.max {
        return Err(too_large(String::new()));
    }
    Ok(bytes)
}

/// [`read_limited`] for a text file: the bytes must be UTF-8.
pub fn read_text_limited(path: &Path, limit: &InputLimit) -> Result<String, ReadError> {
    let bytes = read_limited(path, limit)?;
    String::from_utf8(bytes).map_err(|_| ReadError {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: InputLimit = InputLimit::new("test file", 4, "a test");

    #[test]
    fn files_within_the_limit_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("four");
        std::fs::write(&path, b"1234").unwrap();
        assert_eq!(read_limited(&path, &SMALL).unwrap(), b"1234");
        assert_eq!(read_text_limited(&path, &SMALL).unwrap(), "1234");
    }

    #[test]
    fn a_larger_file_is_refused_by_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("five");
        std::fs::write(&path, b"12345").unwrap();
        let err = read_limited(&path, &SMALL).unwrap_err();
        assert_eq!(err.source.kind(), std::io::ErrorKind::FileTooLarge);
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read {}: test file too large: 5 bytes, over the 4 bytes accepted (a test)",
                path.display()
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_stream_is_refused_after_the_limit() {
        let err = read_limited(Path::new("/dev/zero"), &ROM).unwrap_err();
        assert_eq!(err.source.kind(), std::io::ErrorKind::FileTooLarge);
        let message = err.to_string();
        assert!(
            message.starts_with("cannot read /dev/zero: ROM file too large: over the"),
            "{message}"
        );
    }

    #[test]
    fn missing_files_and_bad_text_are_read_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read_limited(&dir.path().join("none"), &SMALL).unwrap_err();
        assert!(missing.is_not_found());
        let path = dir.path().join("latin1");
        std::fs::write(&path, [0xE9]).unwrap();
        let err = read_text_limited(&path, &SMALL).unwrap_err();
        assert!(err.to_string().ends_with("valid UTF-8"), "{err}");
    }

    #[test]
    fn the_palette_bound_is_the_largest_palette_accepted() {
        assert!(nes::Palette::from_pal_bytes(&vec![0; PALETTE.max as usize]).is_ok());
        assert!(nes::Palette::from_pal_bytes(&vec![0; PALETTE.max as usize + 3]).is_err());
    }

    /// An NES 2.0 image declaring the most cartridge RAM a header can (2 MiB each of PRG RAM,
    /// PRG NVRAM, CHR RAM and CHR NVRAM), four-screen mirroring and a trainer.
    fn biggest_ram_image(mapper: u16) -> Vec<u8> {
        let mut image = vec![0u8; 16];
        image[..4].copy_from_slice(b"NES\x1A");
        image[4] = 2; // 32 KiB of PRG ROM
        image[5] = 0; // CHR RAM
        image[6] = ((mapper as u8 & 0x0F) << 4) | 0x08 | 0x04 | 0x02;
        image[7] = (mapper as u8 & 0xF0) | 0x08;
        image[8] = (mapper >> 8) as u8 & 0x0F;
        image[10] = 0xFF;
        image[11] = 0xFF;
        image.extend_from_slice(&[0xEA; 512]);
        let mut prg = vec![0xEA; 0x8000];
        prg[0x7FFC..0x7FFE].copy_from_slice(&[0x00, 0x80]);
        image.extend_from_slice(&prg);
        image
    }

    #[test]
    fn the_largest_state_any_board_makes_fits_the_state_bound() {
        let mut boards = 0;
        let mut largest = 0;
        for mapper in 0..512u16 {
            let Ok(mut nes) = nes::Nes::from_ines(&biggest_ram_image(mapper)) else {
                continue;
            };
            boards += 1;
            // Pending audio is part of a state: keep it at its largest.
            nes.set_audio_sample_rate(192_000);
            nes.run_frame();
            largest = largest.max(nes.save_state().len());
        }
        assert!(boards >= 5, "only {boards} boards loaded");
        assert!(
            largest as u64 <= SAVE_STATE.max,
            "a {largest}-byte state is over the {} bound",
            SAVE_STATE.max
        );
        // The bound is not wildly above what consoles make.
        assert!(largest as u64 > MAX_CARTRIDGE_RAM, "{largest}");
    }
}
