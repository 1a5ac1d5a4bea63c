//! Errors reported while loading an image or battery RAM.

/// Why an iNES / NES 2.0 image (or a battery-RAM file) could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CartridgeError {
    /// The first four bytes are not `NES\x1A`.
    #[error("not an iNES image: expected magic 4E 45 53 1A, found {found:02X?}")]
    BadMagic { found: Vec<u8> },

    /// The file ends before a part that the header says is there.
    #[error("truncated image: the {part} needs {expected} bytes from offset {offset}, but only {actual} are present")]
    Truncated {
        part: &'static str,
        offset: usize,
        expected: usize,
        actual: usize,
    },

    /// The header declares no PRG ROM at all, so the CPU would have nothing to run.
    #[error("the header declares 0 bytes of PRG ROM")]
    ZeroPrgRom,

    /// A header field holds a value that makes no sense (or a size this crate cannot hold).
    #[error("invalid header field {field}: {reason}")]
    InvalidHeader { field: &'static str, reason: String },

    /// The sizes of the ROM chips do not fit the board (e.g. 48 KiB PRG on NROM).
    #[error("{board} cannot hold {what} of {len} bytes ({expected})")]
    SizeMismatch {
        board: &'static str,
        what: &'static str,
        len: usize,
        expected: &'static str,
    },

    /// No board for this mapper / submapper is implemented.
    #[error("unsupported mapper {mapper} (submapper {submapper})")]
    UnsupportedMapper { mapper: u16, submapper: u8 },

    /// A battery-RAM file whose size differs from the cartridge's battery-backed RAM.
    #[error("battery RAM is {expected} bytes on this cartridge, but {actual} bytes were given")]
    BatteryRamSize { expected: usize, actual: usize },

    /// `load_battery_ram` on a cartridge without battery-backed RAM.
    #[error("this cartridge has no battery-backed RAM")]
    NoBatteryRam,
}
