//! NROM (mapper 0): 16 or 32 KiB PRG ROM (16 KiB repeats at $C000), 8 KiB CHR ROM or RAM,
//! mirroring fixed by solder pads. No registers.

use super::Mapper;
use crate::error::CartridgeError;
use crate::header::RomInfo;
use crate::memory::Memory;
use borsh::{BorshDeserialize, BorshSerialize};

#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct Nrom;

impl Mapper for Nrom {
    fn name(&self, _info: &RomInfo) -> &'static str {
        "NROM"
    }
}

impl Nrom {
    pub fn new(info: &RomInfo, mem: &mut Memory) -> Result<Nrom, CartridgeError> {
        if info.prg_rom_len > 32 * 1024 {
            return Err(CartridgeError::SizeMismatch {
                board: "NROM",
                what: "PRG ROM",
                len: info.prg_rom_len,
                expected: "at most 32768 bytes",
            });
        }
        if info.chr_rom_len > 8 * 1024 {
            return Err(CartridgeError::SizeMismatch {
                board: "NROM",
                what: "CHR ROM",
                len: info.chr_rom_len,
                expected: "at most 8192 bytes",
            });
        }
        super::map_fixed_board(info, mem);
        mem.map_prg_32k(0);
        mem.map_chr_8k(0);
        Ok(Nrom)
    }
}

#[cfg(test)]
mod tests {
    use crate::boards::tests::{cart, prg_tag};

    #[test]
    fn sixteen_k_mirrors_and_chr_ram_or_rom() {
        let mut c = cart(0, 0x01, 1, 0);
        assert_eq!(c.cpu_read(0x8000), Some(prg_tag(0, 0)));
        assert_eq!(
            c.cpu_read(0xC000),
            Some(prg_tag(0, 0)),
            "16 KiB PRG repeats at $C000"
        );
        assert_eq!(c.cpu_read(0xFFFF), c.cpu_read(0xBFFF));
        assert_eq!(c.info().board_name, "NROM");
        c.cpu_write(0x8000, 0x55, 10);
        assert_eq!(
            c.cpu_read(0x8000),
            Some(prg_tag(0, 0)),
            "ROM ignores writes"
        );
        c.ppu_write(0x1234, 0x99, || 0);
        assert_eq!(c.ppu_read(0x1234, || 0), 0x99, "CHR RAM is writable");
        // Vertical mirroring: $2000 = $2800, $2400 = $2C00.
        c.ppu_write(0x2005, 1, || 0);
        c.ppu_write(0x2405, 2, || 0);
        assert_eq!((c.ppu_read(0x2805, || 0), c.ppu_read(0x2C05, || 0)), (1, 2));

        let mut c = cart(0, 0x00, 2, 1);
        assert_eq!(
            c.cpu_read(0xC000),
            Some(prg_tag(2, 0)),
            "32 KiB: second half at $C000"
        );
        let before = c.ppu_read(0x0010, || 0);
        c.ppu_write(0x0010, before ^ 0xFF, || 0);
        assert_eq!(c.ppu_read(0x0010, || 0), before, "CHR ROM is read-only");
        // Horizontal mirroring: $2000 = $2400.
        c.ppu_write(0x2001, 5, || 0);
        assert_eq!(c.ppu_read(0x2401, || 0), 5);
        assert_ne!(c.ppu_read(0x2801, || 0), 5);
    }

    #[test]
    fn oversized_chips_are_rejected() {
        use crate::boards::tests::image;
        use crate::{Cartridge, CartridgeError};
        let err = Cartridge::from_ines(&image(0, 0, 3, 1)).unwrap_err();
        assert!(matches!(
            err,
            CartridgeError::SizeMismatch {
                what: "PRG ROM",
                len: 49152,
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            "NROM cannot hold PRG ROM of 49152 bytes (at most 32768 bytes)"
        );
        let err = Cartridge::from_ines(&image(0, 0, 2, 2)).unwrap_err();
        assert!(matches!(
            err,
            CartridgeError::SizeMismatch {
                what: "CHR ROM",
                ..
            }
        ));
    }
}
