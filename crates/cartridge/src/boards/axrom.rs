//! AxROM (mapper 7): a 32 KiB PRG bank (bits 0-2) and the one-screen nametable page (bit 4)
//! chosen by any write to $8000-$FFFF; 8 KiB CHR RAM.
//!
//! Bus conflicts exist on AMROM and on AOROM unless its ROM has the extra enable wired; ANROM
//! does not have them, and retail AOROM games run without them (NESdev "AxROM"), so they are
//! modelled only when NES 2.0 submapper 2 declares them.

use super::{CpuWrite, Mapper};
use crate::header::{Mirroring, RomInfo};
use crate::memory::Memory;
use borsh::{BorshDeserialize, BorshSerialize};

/// The board's whole value is its wiring: the latch lives in the bank tables.
#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct Axrom {
    bus_conflicts: bool,
}

impl Axrom {
    pub fn new(info: &RomInfo, mem: &mut Memory) -> Axrom {
        mem.map_prg_ram(0, true);
        mem.map_prg_32k(0);
        mem.map_chr_8k(0);
        mem.set_mirroring(Mirroring::SingleScreenLower);
        Axrom {
            bus_conflicts: info.submapper == 2,
        }
    }
}

impl Mapper for Axrom {
    fn name(&self, info: &RomInfo) -> &'static str {
        if info.prg_rom_len > 128 * 1024 {
            "AOROM"
        } else {
            "ANROM"
        }
    }

    fn cpu_write(&mut self, mem: &mut Memory, write: CpuWrite) {
        if write.addr < 0x8000 {
            return;
        }
        let value = if self.bus_conflicts {
            super::with_bus_conflict(mem, write.addr, write.value)
        } else {
            write.value
        };
        mem.map_prg_32k(usize::from(value & 0x07));
        mem.set_mirroring(if value & 0x10 != 0 {
            Mirroring::SingleScreenUpper
        } else {
            Mirroring::SingleScreenLower
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::boards::tests::{cart, image_nes2, nametable_layout, prg_bank_at};
    use crate::Cartridge;

    #[test]
    fn prg_bank_and_one_screen_select() {
        let mut c = cart(7, 0, 16, 0);
        assert_eq!(c.info().board_name, "AOROM");
        assert_eq!(prg_bank_at(&c, 0x8000), 0);
        assert_eq!(nametable_layout(&c), [0; 4]);
        c.cpu_write(0x8000, 0x15, 1);
        assert_eq!(prg_bank_at(&c, 0x8000), 20);
        assert_eq!(prg_bank_at(&c, 0xE000), 23);
        assert_eq!(nametable_layout(&c), [1; 4]);
        c.ppu_write(0x2000, 0x42, || 0);
        assert_eq!(
            c.ppu_read(0x2C00, || 0),
            0x42,
            "one screen: all four nametables are one page"
        );
        c.cpu_write(0x8000, 0x07, 2);
        assert_eq!(nametable_layout(&c), [0; 4]);
        assert_ne!(
            c.ppu_read(0x2000, || 0),
            0x42,
            "lower page is a different 1 KiB"
        );
        assert_eq!(prg_bank_at(&c, 0x8000), 28);
    }

    #[test]
    fn submapper_2_has_bus_conflicts() {
        let mut c = Cartridge::from_ines(&image_nes2(7, 2, 0, 8, 0, 0, 7)).unwrap();
        // $8000 of bank 0 holds 0: every write becomes 0.
        c.cpu_write(0x8000, 0x13, 1);
        assert_eq!(prg_bank_at(&c, 0x8000), 0);
        assert_eq!(nametable_layout(&c), [0; 4]);
    }
}
