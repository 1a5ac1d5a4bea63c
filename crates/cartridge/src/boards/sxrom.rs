//! The SxROM boards (mapper 1): an MMC1 (`mmc1.rs`) and how each board wires it (NESdev
//! "SxROM", "SOROM", "SUROM", "SXROM").
//!
//! The MMC1's PRG lines address the ROM (SEROM/SHROM leave them unconnected: 32 KiB wired
//! straight to the CPU). Boards use the CHR bank lines that CHR RAM does not need: SNROM's
//! bit 4 disables PRG RAM, SOROM's bit 3 picks one of two 8 KiB RAMs, SXROM's bits 2-3 one of
//! four, and SUROM/SXROM's bit 4 selects the 256 KiB half of a 512 KiB PRG ROM. Those lines
//! come from whichever CHR register PPU A12 currently selects (in 4 KiB mode), exactly as the
//! chip outputs them, so the CPU's view of these boards can follow the PPU.

use super::mmc1::Mmc1;
use super::{A12Edge, CpuWrite, Mapper, StateCheck};
use crate::header::RomInfo;
use crate::memory::Memory;
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

/// What the board does with the spare CHR bank bits for RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
enum RamBanking {
    /// One 8 KiB RAM (or none).
    Single,
    /// SOROM: bit 3 selects one of two 8 KiB RAMs.
    Sorom,
    /// SXROM: bits 2-3 select one of four 8 KiB RAMs.
    Sxrom,
}

/// How the board connects the MMC1, deduced from the ROM's header; fixed at load time.
#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
struct Wiring {
    ram_banking: RamBanking,
    /// SNROM: CHR bit 4 disables PRG RAM.
    chr_bit4_disables_ram: bool,
    /// SUROM/SXROM: CHR bit 4 is PRG A18.
    outer_prg_bank: bool,
    /// SEROM/SHROM: 32 KiB PRG wired straight to the CPU, ignoring the PRG bank register.
    unbanked_prg: bool,
    /// CHR bank bits the board uses for something other than CHR (RAM bank/disable, PRG
    /// A18). A12 changes only matter when the two CHR registers differ in these bits.
    spare_bits: u8,
}

impl Wiring {
    fn of(info: &RomInfo) -> Wiring {
        let prg_ram_total = info.prg_ram_len + info.prg_nvram_len;
        let has_chr_ram = info.chr_rom_len == 0;
        let big_prg = info.prg_rom_len > 256 * 1024;
        let ram_banking = if prg_ram_total >= 32 * 1024 {
            RamBanking::Sxrom
        } else if prg_ram_total >= 16 * 1024 {
            RamBanking::Sorom
        } else {
            RamBanking::Single
        };
        let chr_bit4_disables_ram =
            has_chr_ram && !big_prg && ram_banking == RamBanking::Single && prg_ram_total > 0;
        Wiring {
            ram_banking,
            chr_bit4_disables_ram,
            outer_prg_bank: big_prg,
            unbanked_prg: info.submapper == 5 || info.prg_rom_len <= 32 * 1024,
            spare_bits: (if chr_bit4_disables_ram || big_prg {
                0x10
            } else {
                0
            }) | match ram_banking {
                RamBanking::Single => 0,
                RamBanking::Sorom => 0x08,
                RamBanking::Sxrom => 0x0C,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct Sxrom {
    pub(super) chip: Mmc1,
    wiring: Wiring,
}

impl Sxrom {
    pub fn new(info: &RomInfo, mem: &mut Memory) -> Sxrom {
        let board = Sxrom {
            chip: Mmc1::POWER_ON,
            wiring: Wiring::of(info),
        };
        // The PPU has driven nothing yet: A12 low.
        board.apply(mem, false);
        board
    }

    /// Recomputes every bank table from the chip's outputs while PPU A12 is `ppu_a12`.
    fn apply(&self, mem: &mut Memory, ppu_a12: bool) {
        let chip = &self.chip;
        let wiring = &self.wiring;
        let spare = chip.chr_register_for(ppu_a12);

        // PRG ROM, in 16 KiB banks; SUROM's outer bit adds 256 KiB (16 banks).
        if wiring.unbanked_prg {
            mem.map_prg_32k(0);
        } else {
            let outer = if wiring.outer_prg_bank {
                usize::from(spare & 0x10)
            } else {
                0
            };
            mem.map_prg_16k(0, outer + chip.prg_bank_16k(false));
            mem.map_prg_16k(1, outer + chip.prg_bank_16k(true));
        }

        // CHR: 8 KiB mode ignores bit 0 of CHR bank 0 and all of CHR bank 1. Bank numbers wrap
        // at the CHR size, so with 8 KiB of CHR RAM only bit 0 (4 KiB mode) matters.
        let [chr_bank_0, chr_bank_1] = chip.chr_banks();
        if chip.chr_4k_mode() {
            mem.map_chr_4k(0, usize::from(chr_bank_0));
            mem.map_chr_4k(1, usize::from(chr_bank_1));
        } else {
            mem.map_chr_8k(usize::from(chr_bank_0 >> 1));
        }

        // PRG RAM: the chip's enable (MMC1B), and SNROM's CHR bit 4 disables it too.
        let enabled =
            chip.prg_ram_enabled() && !(wiring.chr_bit4_disables_ram && spare & 0x10 != 0);
        if enabled {
            let ram_bank = match wiring.ram_banking {
                RamBanking::Single => 0,
                RamBanking::Sorom => usize::from((spare >> 3) & 1),
                RamBanking::Sxrom => usize::from((spare >> 2) & 3),
            };
            mem.map_prg_ram(ram_bank, true);
        } else {
            mem.unmap_prg_ram();
        }

        mem.set_mirroring(chip.mirroring());
    }
}

impl Mapper for Sxrom {
    fn name(&self, info: &RomInfo) -> &'static str {
        let wiring = &self.wiring;
        if wiring.unbanked_prg {
            "SEROM"
        } else if wiring.ram_banking == RamBanking::Sxrom {
            "SXROM"
        } else if wiring.outer_prg_bank {
            "SUROM"
        } else if wiring.ram_banking == RamBanking::Sorom {
            "SOROM"
        } else if info.chr_rom_len == 0 {
            if wiring.chr_bit4_disables_ram {
                "SNROM"
            } else {
                "SGROM"
            }
        } else if info.chr_rom_len <= 64 * 1024 {
            "SJROM"
        } else {
            "SKROM"
        }
    }

    fn cpu_write(&mut self, mem: &mut Memory, write: CpuWrite) {
        if self.chip.write(write.addr, write.value, write.cpu_cycle) {
            self.apply(mem, write.ppu_a12);
        }
    }

    /// Only boards using spare CHR lines care where A12 is.
    fn watches_a12(&self) -> bool {
        self.wiring.spare_bits != 0
    }

    #[inline]
    fn ppu_a12_changed(&mut self, mem: &mut Memory, edge: A12Edge) {
        if self.cpu_mapping_follows_a12() {
            self.apply(mem, edge.is_high());
        }
    }

    #[inline]
    fn cpu_mapping_follows_a12(&self) -> bool {
        self.chip.chr_lines_follow_a12(self.wiring.spare_bits)
    }

    /// The wiring must be this cartridge's, the chip's registers in range, and the tables
    /// what they give with A12 where the state has it.
    fn validate_state(
        self,
        fresh: Sxrom,
        mut check: StateCheck<'_>,
    ) -> Result<Sxrom, InvalidState> {
        if self.wiring != fresh.wiring {
            return Err(InvalidState::impossible(
                "the MMC1 board wiring does not match this cartridge's",
            ));
        }
        self.chip.validate_state()?;
        self.apply(&mut check.scratch, check.ppu_a12);
        check.registers_give_tables()?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use crate::boards::mmc1::tests::load;
    use crate::boards::tests::{cart, image_nes2, prg_bank_at, reload_edited};
    use crate::boards::Board;
    use crate::Cartridge;

    #[test]
    fn snrom_chr_bit4_disables_ram() {
        let mut c = cart(1, 0, 8, 0);
        assert_eq!(c.info().board_name, "SNROM");
        let mut cycle = 0;
        c.cpu_write(0x7000, 0x33, 1);
        load(&mut c, 0xA000, 0x10, &mut cycle);
        assert_eq!(c.cpu_read(0x7000), None);
        load(&mut c, 0xA000, 0x00, &mut cycle);
        assert_eq!(c.cpu_read(0x7000), Some(0x33));
        // In 4 KiB mode the line follows PPU A12: CHR bank 1 drives it while A12 is high.
        load(&mut c, 0x8000, 0x1C, &mut cycle);
        load(&mut c, 0xC000, 0x10, &mut cycle);
        assert_eq!(c.cpu_read(0x7000), Some(0x33));
        c.ppu_address_changed(0x1000, || 0);
        assert_eq!(c.cpu_read(0x7000), None);
        c.ppu_address_changed(0x2000, || 0);
        assert_eq!(c.cpu_read(0x7000), Some(0x33));
        // Only now, with the registers disagreeing in bit 4, must the console keep the PPU in
        // step cycle by cycle; agreeing registers or 8 KiB mode make A12 irrelevant.
        assert!(c.cpu_mapping_follows_a12());
        load(&mut c, 0xC000, 0x00, &mut cycle);
        assert!(!c.cpu_mapping_follows_a12(), "registers agree");
        load(&mut c, 0xC000, 0x10, &mut cycle);
        load(&mut c, 0x8000, 0x0C, &mut cycle);
        assert!(!c.cpu_mapping_follows_a12(), "8 KiB CHR mode");
        // A CHR-ROM board (SKROM) does not react to bit 4.
        let mut c = cart(1, 0, 8, 16);
        load(&mut c, 0xA000, 0x10, &mut cycle);
        assert!(c.cpu_read(0x7000).is_some());
    }

    #[test]
    fn a_register_write_while_a12_is_high_maps_with_chr_bank_1() {
        let mut c = cart(1, 0, 8, 0);
        let mut cycle = 0;
        c.cpu_write(0x7000, 0x33, 1);
        load(&mut c, 0x8000, 0x1C, &mut cycle);
        c.ppu_address_changed(0x1000, || 0);
        assert_eq!(c.cpu_read(0x7000), Some(0x33), "the registers agree");
        load(&mut c, 0xC000, 0x10, &mut cycle);
        assert_eq!(c.cpu_read(0x7000), None, "CHR bank 1 drives bit 4 now");
        // A state keeps A12 with the registers: saved high, it loads high.
        let mut state = Vec::new();
        c.save_state(&mut state).unwrap();
        let mut fresh = cart(1, 0, 8, 0);
        let loaded = fresh.read_state(&mut &state[..]).unwrap();
        fresh.restore_state(loaded);
        assert_eq!(fresh.cpu_read(0x7000), None);
        fresh.ppu_address_changed(0x0000, || 0);
        assert_eq!(fresh.cpu_read(0x7000), Some(0x33));
    }

    #[test]
    fn nes2_without_prg_ram_is_open_bus() {
        let c = Cartridge::from_ines(&image_nes2(1, 0, 0, 8, 0, 0, 7)).unwrap();
        assert_eq!(c.info().board_name, "SGROM");
        assert_eq!(c.cpu_peek(0x6000), None);
    }

    #[test]
    fn surom_outer_bank() {
        // 512 KiB PRG, 8 KiB CHR RAM, 8 KiB battery RAM.
        let mut c = Cartridge::from_ines(&image_nes2(1, 0, 0x02, 32, 0, 0x70, 0x07)).unwrap();
        assert_eq!(c.info().board_name, "SUROM");
        assert_eq!(
            prg_bank_at(&c, 0xC000),
            30,
            "power-on: last bank of the first 256 KiB"
        );
        let mut cycle = 0;
        load(&mut c, 0xE000, 0x02, &mut cycle);
        load(&mut c, 0xA000, 0x10, &mut cycle);
        assert_eq!(prg_bank_at(&c, 0x8000), 32 + 4);
        assert_eq!(
            prg_bank_at(&c, 0xC000),
            62,
            "the fixed bank follows the outer bank"
        );
        assert!(
            c.cpu_read(0x6000).is_some(),
            "SUROM's bit 4 does not disable RAM"
        );
        load(&mut c, 0x8000, 0x00, &mut cycle); // 32 KiB mode
        assert_eq!(prg_bank_at(&c, 0x8000), 32 + 4);
        assert_eq!(prg_bank_at(&c, 0xC000), 32 + 6);
        load(&mut c, 0xA000, 0x00, &mut cycle);
        assert_eq!(prg_bank_at(&c, 0x8000), 4);
    }

    #[test]
    fn sorom_ram_banking() {
        // 256 KiB PRG, CHR RAM, 8 KiB RAM + 8 KiB battery RAM.
        let mut c = Cartridge::from_ines(&image_nes2(1, 0, 0x02, 16, 0, 0x77, 0x07)).unwrap();
        assert_eq!(c.info().board_name, "SOROM");
        let mut cycle = 0;
        c.cpu_write(0x6000, 0xA0, 1);
        load(&mut c, 0xA000, 0x08, &mut cycle);
        assert_eq!(c.cpu_read(0x6000), Some(0));
        c.cpu_write(0x6000, 0xB1, cycle + 10);
        load(&mut c, 0xA000, 0x00, &mut cycle);
        assert_eq!(c.cpu_read(0x6000), Some(0xA0));
        // The battery-backed chip is the second one.
        let battery = c.battery_ram().unwrap();
        assert_eq!((battery.len(), battery[0]), (8192, 0xB1));
    }

    #[test]
    fn sxrom_ram_banking_and_outer_bank() {
        let mut c = Cartridge::from_ines(&image_nes2(1, 0, 0x02, 32, 0, 0x90, 0x07)).unwrap();
        assert_eq!(c.info().board_name, "SXROM");
        assert_eq!(c.info().prg_nvram_len, 32768);
        let mut cycle = 0;
        for bank in 0..4u8 {
            load(&mut c, 0xA000, bank << 2, &mut cycle);
            c.cpu_write(0x7FFF, 0x40 + bank, cycle + 10);
        }
        for bank in 0..4u8 {
            load(&mut c, 0xA000, bank << 2, &mut cycle);
            assert_eq!(c.cpu_read(0x7FFF), Some(0x40 + bank));
        }
        load(&mut c, 0xA000, 0x1C, &mut cycle);
        assert_eq!(c.cpu_read(0x7FFF), Some(0x43));
        assert_eq!(prg_bank_at(&c, 0xC000), 62);
        let battery = c.battery_ram().unwrap();
        assert_eq!(battery.len(), 32768);
        assert_eq!(battery[3 * 8192 + 0x1FFF], 0x43);
    }

    #[test]
    fn serom_ignores_prg_bank() {
        let mut c = cart(1, 0, 2, 2);
        assert_eq!(c.info().board_name, "SEROM");
        let mut cycle = 0;
        load(&mut c, 0xE000, 0x01, &mut cycle);
        assert_eq!(prg_bank_at(&c, 0x8000), 0);
        assert_eq!(prg_bank_at(&c, 0xC000), 2);
    }

    #[test]
    fn wiring_other_than_this_cartridges_in_a_state_is_refused() {
        let c = cart(1, 0, 8, 0);
        assert_eq!(reload_edited(&c, |_, _| {}), Ok(()));
        let refusal = reload_edited(&c, |board, _| {
            if let Board::Sxrom(sxrom) = board {
                sxrom.wiring.unbanked_prg = true;
            }
        });
        assert_eq!(
            refusal,
            Err("the MMC1 board wiring does not match this cartridge's".to_string())
        );
    }
}
