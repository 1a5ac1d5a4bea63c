//! Mapper 34: two unrelated boards share the number.
//!
//! * BNROM: any write to $8000-$FFFF selects a 32 KiB PRG bank; 8 KiB CHR RAM; fixed
//!   mirroring; bus conflicts.
//! * NINA-001 (AVE): registers at $7FFD (32 KiB PRG bank, bit 0), $7FFE (4 KiB CHR bank at
//!   $0000) and $7FFF (4 KiB CHR bank at $1000). They overlay the 8 KiB PRG RAM, which stores
//!   the written values too.
//!
//! NESdev's practice: NES 2.0 submapper 1 is NINA-001 and 2 is BNROM; without a submapper, CHR
//! ROM larger than 8 KiB means NINA-001.

use super::{CpuWrite, Mapper, StateCheck};
use crate::header::RomInfo;
use crate::memory::Memory;
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

pub(crate) fn is_nina001(info: &RomInfo) -> bool {
    match info.submapper {
        1 => true,
        2 => false,
        _ => info.chr_rom_len > 8 * 1024,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct Bnrom;

impl Bnrom {
    pub fn new(info: &RomInfo, mem: &mut Memory) -> Bnrom {
        super::map_fixed_board(info, mem);
        mem.map_prg_32k(0);
        mem.map_chr_8k(0);
        Bnrom
    }
}

impl Mapper for Bnrom {
    fn name(&self, _info: &RomInfo) -> &'static str {
        "BNROM"
    }

    fn cpu_write(&mut self, mem: &mut Memory, write: CpuWrite) {
        if write.addr < 0x8000 {
            return;
        }
        let value = super::with_bus_conflict(mem, write.addr, write.value);
        mem.map_prg_32k(usize::from(value));
    }
}

#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct Nina001;

impl Nina001 {
    pub fn new(info: &RomInfo, mem: &mut Memory) -> Nina001 {
        super::map_fixed_board(info, mem);
        mem.map_prg_32k(0);
        mem.map_chr_4k(0, 0);
        mem.map_chr_4k(1, 1);
        Nina001
    }

    /// Writes `value` to register `addr` ($7FFD-$7FFF) in `mem`'s tables.
    fn write_register(mem: &mut Memory, addr: u16, value: u8) {
        match addr {
            0x7FFD => mem.map_prg_32k(usize::from(value & 0x01)),
            0x7FFE => mem.map_chr_4k(0, usize::from(value & 0x0F)),
            0x7FFF => mem.map_chr_4k(1, usize::from(value & 0x0F)),
            _ => {}
        }
    }
}

impl Mapper for Nina001 {
    fn name(&self, _info: &RomInfo) -> &'static str {
        "NINA-001"
    }

    fn cpu_write(&mut self, mem: &mut Memory, write: CpuWrite) {
        Nina001::write_register(mem, write.addr, write.value);
    }

    /// Three registers select separate windows, and they live in the tables: the tables must
    /// be the power-on ones or what some values of the three give.
    fn validate_state(
        self,
        _fresh: Nina001,
        mut check: StateCheck<'_>,
    ) -> Result<Nina001, InvalidState> {
        let mut reachable = check.reached();
        'search: for prg in 0..2 {
            Nina001::write_register(&mut check.scratch, 0x7FFD, prg);
            for chr_low in 0..16 {
                Nina001::write_register(&mut check.scratch, 0x7FFE, chr_low);
                for chr_high in 0..16 {
                    Nina001::write_register(&mut check.scratch, 0x7FFF, chr_high);
                    if reachable || check.reached() {
                        reachable = true;
                        break 'search;
                    }
                }
            }
        }
        check.selectable(reachable)?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use crate::boards::tests::{cart, chr_bank_at, image_nes2, prg_bank_at, prg_tag};
    use crate::Cartridge;

    #[test]
    fn bnrom_switches_32k_with_conflicts() {
        let mut c = cart(34, 0x00, 8, 0);
        assert_eq!(c.info().board_name, "BNROM");
        let offset = (0..8192).find(|&o| prg_tag(0, o) == 0xFF).unwrap();
        c.cpu_write(0x8000 + offset as u16, 0x03, 1);
        assert_eq!(prg_bank_at(&c, 0x8000), 12);
        let offset = (0..8192).find(|&o| prg_tag(12, o) == 0x01).unwrap();
        c.cpu_write(0x8000 + offset as u16, 0x02, 2);
        assert_eq!(prg_bank_at(&c, 0x8000), 0, "2 AND 1 = 0");
        // Writes below $8000 do nothing but fill RAM.
        c.cpu_write(0x7FFD, 1, 3);
        assert_eq!(prg_bank_at(&c, 0x8000), 0);
        assert_eq!(c.cpu_read(0x7FFD), Some(1));
    }

    #[test]
    fn nina001_registers_in_ram_space() {
        let mut c = cart(34, 0x00, 4, 8);
        assert_eq!(c.info().board_name, "NINA-001");
        assert_eq!(chr_bank_at(&c, 0x1000), 4);
        c.cpu_write(0x7FFD, 0x01, 1);
        c.cpu_write(0x7FFE, 0x05, 2);
        c.cpu_write(0x7FFF, 0x0E, 3);
        assert_eq!(prg_bank_at(&c, 0x8000), 4);
        assert_eq!(chr_bank_at(&c, 0x0000), 20);
        assert_eq!(chr_bank_at(&c, 0x1000), 56);
        assert_eq!(
            c.cpu_read(0x7FFE),
            Some(0x05),
            "the RAM underneath keeps the value"
        );
        // Writes to ROM space do nothing on NINA-001.
        c.cpu_write(0x8000, 0x00, 4);
        assert_eq!(prg_bank_at(&c, 0x8000), 4);
        // Submapper 1 forces NINA-001 even with small CHR; 2 forces BNROM.
        let c = Cartridge::from_ines(&image_nes2(34, 1, 0, 4, 1, 7, 0)).unwrap();
        assert_eq!(c.info().board_name, "NINA-001");
        let c = Cartridge::from_ines(&image_nes2(34, 2, 0, 4, 2, 0, 0)).unwrap();
        assert_eq!(c.info().board_name, "BNROM");
    }
}
