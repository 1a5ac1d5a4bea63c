//! GxROM (mapper 66): one register at $8000-$FFFF, bits 4-5 = 32 KiB PRG bank, bits 0-1 = 8 KiB
//! CHR ROM bank; fixed mirroring. The latch is subject to bus conflicts.

use super::{CpuWrite, Mapper};
use crate::header::RomInfo;
use crate::memory::Memory;
use borsh::{BorshDeserialize, BorshSerialize};

#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct Gxrom;

impl Gxrom {
    pub fn new(info: &RomInfo, mem: &mut Memory) -> Gxrom {
        super::map_fixed_board(info, mem);
        mem.map_prg_32k(0);
        mem.map_chr_8k(0);
        Gxrom
    }
}

impl Mapper for Gxrom {
    fn name(&self, _info: &RomInfo) -> &'static str {
        "GNROM"
    }

    fn cpu_write(&mut self, mem: &mut Memory, write: CpuWrite) {
        if write.addr < 0x8000 {
            return;
        }
        let value = super::with_bus_conflict(mem, write.addr, write.value);
        mem.map_prg_32k(usize::from((value >> 4) & 0x03));
        mem.map_chr_8k(usize::from(value & 0x03));
    }
}

#[cfg(test)]
mod tests {
    use crate::boards::tests::{cart, chr_bank_at, prg_bank_at, prg_tag};

    #[test]
    fn prg_and_chr_banks_with_conflicts() {
        let mut c = cart(66, 0x00, 8, 4);
        assert_eq!(c.info().board_name, "GNROM");
        let offset = (0..8192).find(|&o| prg_tag(0, o) == 0xFF).unwrap();
        c.cpu_write(0x8000 + offset as u16, 0x23, 1);
        assert_eq!(prg_bank_at(&c, 0x8000), 8);
        assert_eq!(prg_bank_at(&c, 0xE000), 11);
        assert_eq!(chr_bank_at(&c, 0x0000), 24);
        // ROM byte $0F: the PRG bits are lost, the CHR bits kept.
        let offset = (0..8192).find(|&o| prg_tag(8, o) == 0x0F).unwrap();
        c.cpu_write(0x8000 + offset as u16, 0x31, 2);
        assert_eq!(prg_bank_at(&c, 0x8000), 0);
        assert_eq!(chr_bank_at(&c, 0x0000), 8);
    }
}
