//! Color Dreams (mapper 11): one register at $8000-$FFFF, bits 0-1 = 32 KiB PRG bank, bits
//! 4-7 = 8 KiB CHR ROM bank; fixed mirroring. The latch is subject to bus conflicts.

use super::{CpuWrite, Mapper};
use crate::header::RomInfo;
use crate::memory::Memory;
use borsh::{BorshDeserialize, BorshSerialize};

#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct ColorDreams;

impl ColorDreams {
    pub fn new(info: &RomInfo, mem: &mut Memory) -> ColorDreams {
        super::map_fixed_board(info, mem);
        mem.map_prg_32k(0);
        mem.map_chr_8k(0);
        ColorDreams
    }
}

impl Mapper for ColorDreams {
    fn name(&self, _info: &RomInfo) -> &'static str {
        "COLOR DREAMS"
    }

    fn cpu_write(&mut self, mem: &mut Memory, write: CpuWrite) {
        if write.addr < 0x8000 {
            return;
        }
        let value = super::with_bus_conflict(mem, write.addr, write.value);
        mem.map_prg_32k(usize::from(value & 0x03));
        mem.map_chr_8k(usize::from(value >> 4));
    }
}

#[cfg(test)]
mod tests {
    use crate::boards::tests::{cart, chr_bank_at, nametable_layout, prg_bank_at, prg_tag};

    #[test]
    fn prg_and_chr_banks() {
        let mut c = cart(11, 0x01, 4, 8);
        assert_eq!(c.info().board_name, "COLOR DREAMS");
        assert_eq!(nametable_layout(&c), [0, 1, 0, 1]);
        // Find an address in bank 0 whose ROM byte is $FF so no bits are lost to the conflict.
        let offset = (0..8192).find(|&o| prg_tag(0, o) == 0xFF).unwrap();
        let addr = 0x8000 + offset as u16;
        c.cpu_write(addr, 0x31, 1);
        assert_eq!(prg_bank_at(&c, 0x8000), 4);
        assert_eq!(chr_bank_at(&c, 0x0000), 24);
        assert_eq!(chr_bank_at(&c, 0x1C00), 31);
        // Now in bank 4 (32 KiB bank 1); a ROM byte of 0 swallows the whole value.
        let offset = (0..8192).find(|&o| prg_tag(4, o) == 0x00).unwrap();
        c.cpu_write(0x8000 + offset as u16, 0x72, 2);
        assert_eq!(prg_bank_at(&c, 0x8000), 0);
        assert_eq!(chr_bank_at(&c, 0x0000), 0);
    }
}
