//! Nintendo MMC1 (mapper 1) on the SxROM boards (NESdev "MMC1", "SxROM", "SOROM", "SUROM",
//! "SXROM").
//!
//! The CPU loads the five 5-bit registers one bit at a time through a serial shift register at
//! $8000-$FFFF; address bits 13-14 of the fifth write pick the register (control, CHR bank 0,
//! CHR bank 1, PRG bank). A write with bit 7 set clears the shift register and forces PRG mode 3.
//! The chip only latches a write when the CPU did not write on the previous cycle, so the second
//! write of a read-modify-write instruction is ignored.
//!
//! Boards use the CHR bank lines that CHR RAM does not need: SNROM's bit 4 disables PRG RAM,
//! SOROM's bit 3 picks one of two 8 KiB RAMs, SXROM's bits 2-3 one of four, and SUROM/SXROM's
//! bit 4 selects the 256 KiB half of a 512 KiB PRG ROM. Those lines come from whichever CHR
//! register the PPU's A12 currently selects (in 4 KiB mode), exactly as the chip outputs them.

use crate::header::{Mirroring, RomInfo};
use crate::memory::Memory;
use borsh::{BorshDeserialize, BorshSerialize};

/// What the board does with the spare CHR bank bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
enum RamBanking {
    /// One 8 KiB RAM (or none).
    Single,
    /// SOROM: bit 3 selects one of two 8 KiB RAMs.
    Sorom,
    /// SXROM: bits 2-3 select one of four 8 KiB RAMs.
    Sxrom,
}

#[derive(Debug, Clone, BorshSerialize, BorshDeserialize)]
pub(crate) struct Mmc1 {
    shift: u8,
    shift_count: u8,
    control: u8,
    chr_bank_0: u8,
    chr_bank_1: u8,
    prg_bank: u8,
    /// CPU cycle of the latest write to $8000-$FFFF (ignored ones included: the chip waits for
    /// a cycle without a write before it latches again).
    last_write_cycle: u64,
    /// PPU A12 as last seen (selects the CHR register that drives the spare lines in 4 KiB mode).
    a12_high: bool,
    // Board wiring, fixed at load time.
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

/// How an SxROM board connects the MMC1, deduced from the ROM's header.
struct Wiring {
    unbanked_prg: bool,
    big_prg: bool,
    has_chr_ram: bool,
    ram_banking: RamBanking,
    chr_bit4_disables_ram: bool,
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
        Wiring {
            unbanked_prg: info.submapper == 5 || info.prg_rom_len <= 32 * 1024,
            big_prg,
            has_chr_ram,
            ram_banking,
            chr_bit4_disables_ram: has_chr_ram
                && !big_prg
                && ram_banking == RamBanking::Single
                && prg_ram_total > 0,
        }
    }
}

/// The SxROM board an MMC1 image needs.
pub(crate) fn board_name(info: &RomInfo) -> &'static str {
    let wiring = Wiring::of(info);
    if wiring.unbanked_prg {
        "SEROM"
    } else if wiring.ram_banking == RamBanking::Sxrom {
        "SXROM"
    } else if wiring.big_prg {
        "SUROM"
    } else if wiring.ram_banking == RamBanking::Sorom {
        "SOROM"
    } else if wiring.has_chr_ram {
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

const NEVER: u64 = u64::MAX - 1;

impl Mmc1 {
    pub fn new(info: &RomInfo, mem: &mut Memory) -> Mmc1 {
        let Wiring {
            unbanked_prg,
            big_prg,
            ram_banking,
            chr_bit4_disables_ram,
            ..
        } = Wiring::of(info);
        let mmc1 = Mmc1 {
            shift: 0,
            shift_count: 0,
            control: 0x0C,
            chr_bank_0: 0,
            chr_bank_1: 0,
            prg_bank: 0,
            last_write_cycle: NEVER,
            a12_high: false,
            ram_banking,
            chr_bit4_disables_ram,
            outer_prg_bank: big_prg,
            unbanked_prg,
            spare_bits: (if chr_bit4_disables_ram || big_prg {
                0x10
            } else {
                0
            }) | match ram_banking {
                RamBanking::Single => 0,
                RamBanking::Sorom => 0x08,
                RamBanking::Sxrom => 0x0C,
            },
        };
        mmc1.apply(mem);
        mmc1
    }

    /// Checks an MMC1 decoded from a save state against `fresh`, the one this cartridge powers
    /// on with: the board wiring is the same, the registers are 5-bit, and the shift register
    /// holds no more bits than its count says, a count below 5 (at 5 it is emptied into a
    /// register; more would shift past the byte).
    pub fn validate_state(&self, fresh: &Mmc1) -> Result<(), String> {
        let wiring = |board: &Mmc1| {
            (
                board.ram_banking,
                board.chr_bit4_disables_ram,
                board.outer_prg_bank,
                board.unbanked_prg,
                board.spare_bits,
            )
        };
        if wiring(self) != wiring(fresh) {
            return Err("the MMC1 board wiring does not match this cartridge's".to_string());
        }
        if self.shift_count > 4 {
            return Err(format!(
                "MMC1 shift count {} is out of range 0..=4",
                self.shift_count
            ));
        }
        if self.shift >> self.shift_count != 0 {
            return Err(format!(
                "MMC1 shift register ${:02X} holds more than its {} bits",
                self.shift, self.shift_count
            ));
        }
        for (name, value) in [
            ("control", self.control),
            ("CHR bank 0", self.chr_bank_0),
            ("CHR bank 1", self.chr_bank_1),
            ("PRG bank", self.prg_bank),
        ] {
            if value > 0x1F {
                return Err(format!("MMC1 {name} {value} is out of range 0..=31"));
            }
        }
        Ok(())
    }

    /// Whether PPU A12 can ever change this board's mapping.
    pub fn watches_a12(&self) -> bool {
        self.spare_bits != 0
    }

    pub fn cpu_write(&mut self, mem: &mut Memory, addr: u16, value: u8, cpu_cycle: u64) {
        if addr < 0x8000 {
            return;
        }
        let back_to_back = cpu_cycle == self.last_write_cycle.wrapping_add(1);
        self.last_write_cycle = cpu_cycle;
        if back_to_back {
            return;
        }
        if value & 0x80 != 0 {
            self.shift = 0;
            self.shift_count = 0;
            self.control |= 0x0C;
            self.apply(mem);
            return;
        }
        // Bits arrive LSB first.
        self.shift |= (value & 1) << self.shift_count;
        self.shift_count += 1;
        if self.shift_count < 5 {
            return;
        }
        let data = self.shift;
        self.shift = 0;
        self.shift_count = 0;
        match (addr >> 13) & 3 {
            0 => self.control = data,
            1 => self.chr_bank_0 = data,
            2 => self.chr_bank_1 = data,
            _ => self.prg_bank = data,
        }
        self.apply(mem);
    }

    #[inline]
    pub fn ppu_address_changed(&mut self, mem: &mut Memory, addr: u16) {
        let high = addr & 0x1000 != 0;
        if high != self.a12_high {
            self.a12_high = high;
            if self.cpu_mapping_follows_a12() {
                self.apply(mem);
            }
        }
    }

    /// Whether A12 changes the CPU-side mapping with the registers as they are: only 4 KiB
    /// CHR mode lets A12 pick a different register for the spare lines, and only registers
    /// that disagree in those lines change anything (games keep them equal). Changes only
    /// with a register write.
    pub fn cpu_mapping_follows_a12(&self) -> bool {
        self.control & 0x10 != 0 && (self.chr_bank_0 ^ self.chr_bank_1) & self.spare_bits != 0
    }

    /// The CHR register whose upper bits the chip currently outputs.
    fn spare_line_register(&self) -> u8 {
        if self.control & 0x10 != 0 && self.a12_high {
            self.chr_bank_1
        } else {
            self.chr_bank_0
        }
    }

    /// Recomputes every bank table from the registers.
    pub fn apply(&self, mem: &mut Memory) {
        let spare = self.spare_line_register();

        // PRG ROM, in 16 KiB banks; SUROM's outer bit adds 256 KiB (16 banks).
        let outer = if self.outer_prg_bank {
            usize::from(spare & 0x10)
        } else {
            0
        };
        let bank = usize::from(self.prg_bank & 0x0F);
        if self.unbanked_prg {
            mem.map_prg_32k(0);
        } else {
            match (self.control >> 2) & 3 {
                0 | 1 => {
                    mem.map_prg_16k(0, outer + (bank & !1));
                    mem.map_prg_16k(1, outer + (bank | 1));
                }
                2 => {
                    mem.map_prg_16k(0, outer);
                    mem.map_prg_16k(1, outer + bank);
                }
                _ => {
                    mem.map_prg_16k(0, outer + bank);
                    mem.map_prg_16k(1, outer + 0x0F);
                }
            }
        }

        // CHR: 8 KiB mode ignores bit 0 of CHR bank 0 and all of CHR bank 1. Bank numbers wrap
        // at the CHR size, so with 8 KiB of CHR RAM only bit 0 (4 KiB mode) matters.
        if self.control & 0x10 != 0 {
            mem.map_chr_4k(0, usize::from(self.chr_bank_0));
            mem.map_chr_4k(1, usize::from(self.chr_bank_1));
        } else {
            mem.map_chr_8k(usize::from(self.chr_bank_0 >> 1));
        }

        // PRG RAM: MMC1B's PRG bit 4 disables it; SNROM's CHR bit 4 disables it too.
        let enabled =
            self.prg_bank & 0x10 == 0 && !(self.chr_bit4_disables_ram && spare & 0x10 != 0);
        if enabled {
            let ram_bank = match self.ram_banking {
                RamBanking::Single => 0,
                RamBanking::Sorom => usize::from((spare >> 3) & 1),
                RamBanking::Sxrom => usize::from((spare >> 2) & 3),
            };
            mem.map_prg_ram(ram_bank, true);
        } else {
            mem.unmap_prg_ram();
        }

        mem.set_mirroring(match self.control & 3 {
            0 => Mirroring::SingleScreenLower,
            1 => Mirroring::SingleScreenUpper,
            2 => Mirroring::Vertical,
            _ => Mirroring::Horizontal,
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::boards::tests::{cart, chr_bank_at, image_nes2, nametable_layout, prg_bank_at};
    use crate::Cartridge;

    /// Loads a 5-bit register the way games do: five writes on cycles far apart.
    fn load(c: &mut Cartridge, addr: u16, value: u8, cycle: &mut u64) {
        for bit in 0..5 {
            *cycle += 10;
            c.cpu_write(addr, (value >> bit) & 1, *cycle);
        }
    }

    #[test]
    fn power_on_is_prg_mode_3() {
        let c = cart(1, 0, 8, 16);
        assert_eq!(c.info().board_name, "SKROM");
        assert_eq!(prg_bank_at(&c, 0x8000), 0);
        assert_eq!(prg_bank_at(&c, 0xC000), 14, "last 16 KiB fixed at $C000");
        assert_eq!(
            c.cpu_peek(0x6000),
            Some(0),
            "iNES 1.0: 8 KiB PRG RAM is always there"
        );
    }

    #[test]
    fn shift_register_needs_five_writes_and_uses_the_fifth_address() {
        let mut c = cart(1, 0, 8, 16);
        let mut cycle = 0;
        // Four writes to $E000, the fifth to $A000: the value goes to CHR bank 0.
        for (i, bit) in [1u8, 1, 0, 0, 0].iter().enumerate() {
            cycle += 10;
            let addr = if i == 4 { 0xA000 } else { 0xE000 };
            c.cpu_write(addr, *bit, cycle);
            if i < 4 {
                assert_eq!(
                    prg_bank_at(&c, 0x8000),
                    0,
                    "nothing changes before the fifth write"
                );
            }
        }
        assert_eq!(prg_bank_at(&c, 0x8000), 0);
        assert_eq!(
            chr_bank_at(&c, 0x0000),
            8,
            "8 KiB mode: bank 3 >> 1 = 8 KiB bank 1"
        );
    }

    #[test]
    fn reset_bit_clears_shift_register_and_sets_mode_3() {
        let mut c = cart(1, 0, 8, 16);
        let mut cycle = 0;
        load(&mut c, 0x8000, 0x02, &mut cycle); // vertical, PRG mode 0 (32 KiB)
        load(&mut c, 0xE000, 0x04, &mut cycle);
        assert_eq!(prg_bank_at(&c, 0x8000), 8);
        assert_eq!(prg_bank_at(&c, 0xC000), 10);
        // Two stray bits, then a reset: the partial value is forgotten and mode 3 is back.
        cycle += 10;
        c.cpu_write(0xE000, 1, cycle);
        cycle += 10;
        c.cpu_write(0xE000, 1, cycle);
        cycle += 10;
        c.cpu_write(0x8000, 0x80, cycle);
        assert_eq!(prg_bank_at(&c, 0x8000), 8, "mode 3: bank 4 at $8000");
        assert_eq!(prg_bank_at(&c, 0xC000), 14, "mode 3: last bank at $C000");
        assert_eq!(
            nametable_layout(&c),
            [0, 1, 0, 1],
            "reset keeps the mirroring bits"
        );
        load(&mut c, 0xE000, 0x01, &mut cycle);
        assert_eq!(
            prg_bank_at(&c, 0x8000),
            2,
            "a fresh 5-bit value after the reset"
        );
    }

    #[test]
    fn write_on_the_cycle_after_a_write_is_ignored() {
        let mut c = cart(1, 0, 8, 16);
        let mut cycle = 100;
        // A read-modify-write: first write of bit 1, second (next cycle) of bit 0, ignored.
        c.cpu_write(0xE000, 1, cycle);
        c.cpu_write(0xE000, 0, cycle + 1);
        // Four more ordinary writes complete the value 0b00011 (if the 0 had counted it would be 0b00101).
        for bit in [1u8, 0, 0, 0] {
            cycle += 10;
            c.cpu_write(0xE000, bit, cycle);
        }
        assert_eq!(prg_bank_at(&c, 0x8000), 6, "PRG bank 3");
        // A reset write on the next cycle is ignored too.
        cycle += 10;
        c.cpu_write(0xE000, 1, cycle);
        c.cpu_write(0xE000, 0x80, cycle + 1);
        for bit in [0u8, 0, 0, 0] {
            cycle += 10;
            c.cpu_write(0xE000, bit, cycle);
        }
        assert_eq!(
            prg_bank_at(&c, 0x8000),
            2,
            "PRG bank 1: the reset never happened"
        );
    }

    #[test]
    fn every_prg_mode() {
        let mut c = cart(1, 0, 8, 16);
        let mut cycle = 0;
        load(&mut c, 0xE000, 0x05, &mut cycle);
        for (control, low, high) in [(0x00, 8, 10), (0x04, 8, 10), (0x08, 0, 10), (0x0C, 10, 14)] {
            load(&mut c, 0x8000, control, &mut cycle);
            assert_eq!(prg_bank_at(&c, 0x8000), low, "mode {control:#x} at $8000");
            assert_eq!(prg_bank_at(&c, 0xC000), high, "mode {control:#x} at $C000");
            assert_eq!(prg_bank_at(&c, 0xE000), high + 1);
        }
    }

    #[test]
    fn chr_modes_and_mirroring() {
        let mut c = cart(1, 0, 8, 16);
        let mut cycle = 0;
        load(&mut c, 0xA000, 0x05, &mut cycle);
        load(&mut c, 0xC000, 0x0B, &mut cycle);
        assert_eq!(
            chr_bank_at(&c, 0x0000),
            16,
            "8 KiB mode uses CHR bank 0 without bit 0"
        );
        assert_eq!(chr_bank_at(&c, 0x1000), 20);
        load(&mut c, 0x8000, 0x1C, &mut cycle); // 4 KiB CHR, one-screen lower
        assert_eq!(chr_bank_at(&c, 0x0000), 20);
        assert_eq!(chr_bank_at(&c, 0x0C00), 23);
        assert_eq!(chr_bank_at(&c, 0x1000), 44);
        assert_eq!(nametable_layout(&c), [0; 4]);
        for (bits, layout) in [(1, [1; 4]), (2, [0, 1, 0, 1]), (3, [0, 0, 1, 1])] {
            load(&mut c, 0x8000, 0x1C | bits, &mut cycle);
            assert_eq!(nametable_layout(&c), layout);
        }
    }

    #[test]
    fn prg_ram_disable_bit() {
        let mut c = cart(1, 0, 8, 16);
        let mut cycle = 0;
        c.cpu_write(0x6123, 0x5A, 1);
        assert_eq!(c.cpu_read(0x6123), Some(0x5A));
        load(&mut c, 0xE000, 0x10, &mut cycle);
        assert_eq!(c.cpu_read(0x6123), None, "disabled RAM is open bus");
        c.cpu_write(0x6123, 0x00, cycle + 10);
        load(&mut c, 0xE000, 0x00, &mut cycle);
        assert_eq!(
            c.cpu_read(0x6123),
            Some(0x5A),
            "writes while disabled are lost"
        );
    }

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
        c.ppu_address_changed(0x1000);
        assert_eq!(c.cpu_read(0x7000), None);
        c.ppu_address_changed(0x2000);
        assert_eq!(c.cpu_read(0x7000), Some(0x33));
        // Only now, with the registers disagreeing in bit 4, must the console keep the PPU in
        // step cycle by cycle; agreeing registers or 8 KiB mode make A12 irrelevant.
        assert!(c.cpu_mapping_follows_ppu());
        load(&mut c, 0xC000, 0x00, &mut cycle);
        assert!(!c.cpu_mapping_follows_ppu(), "registers agree");
        load(&mut c, 0xC000, 0x10, &mut cycle);
        load(&mut c, 0x8000, 0x0C, &mut cycle);
        assert!(!c.cpu_mapping_follows_ppu(), "8 KiB CHR mode");
        // A CHR-ROM board (SKROM) does not react to bit 4.
        let mut c = cart(1, 0, 8, 16);
        load(&mut c, 0xA000, 0x10, &mut cycle);
        assert!(c.cpu_read(0x7000).is_some());
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
    fn registers_and_wiring_out_of_range_in_a_state_are_refused() {
        use crate::boards::tests::reload_edited;
        use crate::boards::Board;
        let mut c = cart(1, 0, 8, 0);
        for (i, bit) in [1, 0, 1].into_iter().enumerate() {
            c.cpu_write(0x8000, bit, 10 * i as u64);
        }
        assert_eq!(reload_edited(&c, |_, _| {}), Ok(()));
        type Edit = fn(&mut super::Mmc1);
        let cases: [(Edit, &str); 4] = [
            // `bit << shift_count` would overflow past 7.
            (
                |m| m.shift_count = 9,
                "MMC1 shift count 9 is out of range 0..=4",
            ),
            (
                |m| m.shift = 0x1F,
                "MMC1 shift register $1F holds more than its 3 bits",
            ),
            (
                |m| m.prg_bank = 0x20,
                "MMC1 PRG bank 32 is out of range 0..=31",
            ),
            (
                |m| m.unbanked_prg = true,
                "the MMC1 board wiring does not match this cartridge's",
            ),
        ];
        for (edit, message) in cases {
            let refusal = reload_edited(&c, |board, _| {
                if let Board::Mmc1(mmc1) = board {
                    edit(mmc1);
                }
            });
            assert_eq!(refusal, Err(message.to_string()));
        }
        // Registers that do not give the tables stored with them.
        let refusal = reload_edited(&c, |board, _| {
            if let Board::Mmc1(mmc1) = board {
                mmc1.control ^= 0x10;
            }
        });
        assert_eq!(
            refusal,
            Err("the cartridge bank tables do not match the SNROM board's registers".to_string())
        );
    }
}
