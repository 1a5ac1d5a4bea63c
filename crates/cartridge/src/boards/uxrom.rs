//! UxROM (mapper 2): a 16 KiB PRG bank at $8000 chosen by any write to $8000-$FFFF, the last
//! 16 KiB fixed at $C000, 8 KiB CHR RAM, fixed mirroring.
//!
//! Bus conflicts: UNROM/UOROM drive the latch while the ROM is enabled, so the value stored is
//! the written value AND the ROM byte. NES 2.0 submapper 1 declares a board without them.

use super::{CpuWrite, Mapper};
use crate::header::RomInfo;
use crate::memory::Memory;
use borsh::{BorshDeserialize, BorshSerialize};

/// The board's whole value is its wiring: the bank register lives in the bank tables.
#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct Uxrom {
    bus_conflicts: bool,
}

impl Uxrom {
    pub fn new(info: &RomInfo, mem: &mut Memory) -> Uxrom {
        super::map_fixed_board(info, mem);
        let banks_16k = (mem.prg_rom_banks_8k() / 2).max(1);
        mem.map_prg_16k(0, 0);
        mem.map_prg_16k(1, banks_16k - 1);
        mem.map_chr_8k(0);
        Uxrom {
            bus_conflicts: info.submapper != 1,
        }
    }
}

impl Mapper for Uxrom {
    fn name(&self, info: &RomInfo) -> &'static str {
        if info.prg_rom_len > 128 * 1024 {
            "UOROM"
        } else {
            "UNROM"
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
        mem.map_prg_16k(0, usize::from(value));
    }
}

#[cfg(test)]
mod tests {
    use crate::boards::tests::{cart, image_nes2, prg_bank_at, prg_tag};
    use crate::Cartridge;

    #[test]
    fn switches_8000_and_fixes_last_bank() {
        let mut c = cart(2, 0x01, 8, 0);
        assert_eq!(c.info().board_name, "UNROM");
        assert_eq!(prg_bank_at(&c, 0x8000), 0);
        assert_eq!(prg_bank_at(&c, 0xC000), 14);
        assert_eq!(prg_bank_at(&c, 0xE000), 15);
        // Write to a ROM byte whose bits cover the bank number so the conflict is harmless.
        let addr = 0xC0FF; // prg_tag(14, 0xFF) = 42 + 255 = 0x29
        c.cpu_write(addr, 0x03 & prg_tag(14, 0xFF), 1);
        assert_eq!(prg_bank_at(&c, 0x8000), 2 * (0x03 & 0x29) as usize);
        assert_eq!(prg_bank_at(&c, 0xC000), 14, "last bank stays fixed");
        c.ppu_write(0x0100, 0xAB, || 0);
        assert_eq!(c.ppu_read(0x0100, || 0), 0xAB);
    }

    #[test]
    fn bus_conflict_ands_with_rom() {
        // 256 KiB so that 4 bits of bank number matter. ROM byte at $E000 in bank 31 = 93 = 0x5D.
        let mut c = cart(2, 0, 16, 0);
        assert_eq!(c.cpu_peek(0xE000), Some(prg_tag(31, 0)));
        c.cpu_write(0xE000, 0x0F, 1);
        let expected_16k = usize::from(0x0F & prg_tag(31, 0));
        assert_eq!(prg_bank_at(&c, 0x8000), expected_16k * 2);
        // Submapper 1: no bus conflicts.
        let mut c = Cartridge::from_ines(&image_nes2(2, 1, 0, 16, 0, 0, 7)).unwrap();
        c.cpu_write(0xE000, 0x0F, 1);
        assert_eq!(prg_bank_at(&c, 0x8000), 30);
    }

    #[test]
    fn a_state_needs_this_cartridges_bus_conflicts_and_a_selectable_bank() {
        use crate::boards::tests::{reload_edited, table_entry};
        use crate::boards::Board;
        let mut c = cart(2, 0, 8, 0);
        c.cpu_write(0x8000, 5, 0);
        assert_eq!(reload_edited(&c, |_, _| {}), Ok(()));
        let refusal = reload_edited(&c, |board, _| {
            if let Board::Uxrom(uxrom) = board {
                uxrom.bus_conflicts = false;
            }
        });
        assert_eq!(
            refusal,
            Err("the UNROM board's bus conflicts do not match this cartridge's".to_string())
        );
        // $C000 is fixed to the last bank: a state with another bank there is forged.
        let refusal = reload_edited(&c, |_, bytes| {
            let switched = table_entry(bytes, 4).to_vec();
            table_entry(bytes, 6).copy_from_slice(&switched);
        });
        assert_eq!(
            refusal,
            Err(
                "the cartridge bank tables are not a mapping the UNROM board can select"
                    .to_string()
            )
        );
    }
}
