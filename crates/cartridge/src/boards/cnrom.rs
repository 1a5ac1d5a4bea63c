//! CNROM (mapper 3): fixed 16/32 KiB PRG, an 8 KiB CHR ROM bank chosen by any write to
//! $8000-$FFFF, fixed mirroring. Bus conflicts unless NES 2.0 submapper 1 says otherwise.

use super::{CpuWrite, Mapper};
use crate::header::RomInfo;
use crate::memory::Memory;
use borsh::{BorshDeserialize, BorshSerialize};

/// The board's whole value is its wiring: the bank register lives in the bank tables.
#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct Cnrom {
    bus_conflicts: bool,
}

impl Cnrom {
    pub fn new(info: &RomInfo, mem: &mut Memory) -> Cnrom {
        super::map_fixed_board(info, mem);
        mem.map_prg_32k(0);
        mem.map_chr_8k(0);
        Cnrom {
            bus_conflicts: info.submapper != 1,
        }
    }
}

impl Mapper for Cnrom {
    fn name(&self, _info: &RomInfo) -> &'static str {
        "CNROM"
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
        mem.map_chr_8k(usize::from(value));
    }
}

#[cfg(test)]
mod tests {
    use crate::boards::tests::{cart, chr_bank_at, nametable_layout, prg_bank_at};

    #[test]
    fn switches_chr_with_conflicts() {
        let mut c = cart(3, 0x00, 2, 4);
        assert_eq!(c.info().board_name, "CNROM");
        assert_eq!(nametable_layout(&c), [0, 0, 1, 1], "horizontal mirroring");
        assert_eq!(chr_bank_at(&c, 0x0000), 0);
        // $8003 holds prg_tag(0, 3) = 3: writing 3 there selects bank 3 cleanly.
        c.cpu_write(0x8003, 3, 1);
        assert_eq!(chr_bank_at(&c, 0x0000), 24);
        assert_eq!(chr_bank_at(&c, 0x1C00), 31);
        // $8002 holds 2: the write of 1 is ANDed to 0.
        c.cpu_write(0x8002, 1, 2);
        assert_eq!(chr_bank_at(&c, 0x0000), 0);
        assert_eq!(prg_bank_at(&c, 0xE000), 3);
    }
}
