//! The Nintendo MMC1 chip (NESdev "MMC1"); the boards that wire it (SxROM) are in `sxrom.rs`.
//!
//! The CPU loads the four 5-bit registers one bit at a time through a serial shift register at
//! $8000-$FFFF; address bits 13-14 of the fifth write pick the register (control, CHR bank 0,
//! CHR bank 1, PRG bank). A write with bit 7 set clears the shift register and forces PRG mode 3.
//! The chip only latches a write when the CPU did not write on the previous cycle, so the second
//! write of a read-modify-write instruction is ignored.
//!
//! Its outputs: PRG A14-A17 for the CPU half being read, CHR A12-A16 from the CHR register
//! PPU A12 selects, the nametable mirroring, and (MMC1B) a PRG RAM enable. What a board does
//! with them, and with the CHR lines CHR RAM leaves free, is the board's.

use crate::header::Mirroring;
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::{check_range, InvalidState};

/// The chip's registers.
#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
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
}

/// A `last_write_cycle` no cycle follows, so the first write always counts.
const NEVER: u64 = u64::MAX - 1;

impl Mmc1 {
    /// Power-on: PRG mode 3 (the last bank fixed at $C000), so the reset vector is there
    /// whatever the other registers hold.
    pub const POWER_ON: Mmc1 = Mmc1 {
        shift: 0,
        shift_count: 0,
        control: 0x0C,
        chr_bank_0: 0,
        chr_bank_1: 0,
        prg_bank: 0,
        last_write_cycle: NEVER,
    };

    /// A CPU write on CPU cycle `cpu_cycle`; the chip sees those to $8000-$FFFF (/ROMSEL).
    /// Returns whether a register changed, i.e. whether the outputs may have.
    pub fn write(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        if addr < 0x8000 {
            return false;
        }
        let back_to_back = cpu_cycle == self.last_write_cycle.wrapping_add(1);
        self.last_write_cycle = cpu_cycle;
        if back_to_back {
            return false;
        }
        if value & 0x80 != 0 {
            self.shift = 0;
            self.shift_count = 0;
            self.control |= 0x0C;
            return true;
        }
        // Bits arrive LSB first.
        self.shift |= (value & 1) << self.shift_count;
        self.shift_count += 1;
        if self.shift_count < 5 {
            return false;
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
        true
    }

    /// Checks registers decoded from a save state: they are 5-bit, and the shift register
    /// holds no more bits than its count says, a count below 5 (at 5 it is emptied into a
    /// register; more would shift past the byte).
    pub fn validate_state(&self) -> Result<(), InvalidState> {
        check_range("MMC1 shift count", self.shift_count, 0..=4)?;
        if self.shift >> self.shift_count != 0 {
            return Err(InvalidState::impossible(format!(
                "MMC1 shift register ${:02X} holds more than its {} bits",
                self.shift, self.shift_count
            )));
        }
        for (name, value) in [
            ("control", self.control),
            ("CHR bank 0", self.chr_bank_0),
            ("CHR bank 1", self.chr_bank_1),
            ("PRG bank", self.prg_bank),
        ] {
            check_range(&format!("MMC1 {name}"), value, 0..=31)?;
        }
        Ok(())
    }

    /// The 16 KiB PRG bank (PRG A14-A17) for CPU $8000-$BFFF (`upper` false) or
    /// $C000-$FFFF (`upper` true): modes 0 and 1 switch 32 KiB (bit 0 ignored), mode 2 fixes
    /// the first bank at $8000, mode 3 the last at $C000.
    pub fn prg_bank_16k(&self, upper: bool) -> usize {
        let bank = usize::from(self.prg_bank & 0x0F);
        match ((self.control >> 2) & 3, upper) {
            (0 | 1, false) => bank & !1,
            (0 | 1, true) => bank | 1,
            (2, false) => 0,
            (2, true) => bank,
            (_, false) => bank,
            (_, true) => 0x0F,
        }
    }

    /// 4 KiB CHR mode: CHR bank 0 at PPU $0000, CHR bank 1 at $1000. Otherwise 8 KiB mode:
    /// CHR bank 0 without its bit 0 for both.
    pub fn chr_4k_mode(&self) -> bool {
        self.control & 0x10 != 0
    }

    /// The CHR bank registers, 0 and 1.
    pub fn chr_banks(&self) -> [u8; 2] {
        [self.chr_bank_0, self.chr_bank_1]
    }

    /// The CHR register the chip outputs on its upper CHR lines while PPU A12 is `ppu_a12`:
    /// CHR bank 1 for $1000-$1FFF in 4 KiB mode, else CHR bank 0.
    pub fn chr_register_for(&self, ppu_a12: bool) -> u8 {
        if self.chr_4k_mode() && ppu_a12 {
            self.chr_bank_1
        } else {
            self.chr_bank_0
        }
    }

    /// Whether the register on the CHR lines can change in `bits` with PPU A12: only 4 KiB
    /// mode lets A12 pick a register, and only registers that disagree in those bits give
    /// different lines (games keep them equal). Changes only with a register write.
    pub fn chr_lines_follow_a12(&self, bits: u8) -> bool {
        self.chr_4k_mode() && (self.chr_bank_0 ^ self.chr_bank_1) & bits != 0
    }

    /// MMC1B: PRG bank bit 4 disables the PRG RAM.
    pub fn prg_ram_enabled(&self) -> bool {
        self.prg_bank & 0x10 == 0
    }

    pub fn mirroring(&self) -> Mirroring {
        match self.control & 3 {
            0 => Mirroring::SingleScreenLower,
            1 => Mirroring::SingleScreenUpper,
            2 => Mirroring::Vertical,
            _ => Mirroring::Horizontal,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::boards::tests::{cart, chr_bank_at, nametable_layout, prg_bank_at};
    use crate::Cartridge;

    /// Loads a 5-bit register the way games do: five writes on cycles far apart.
    pub(crate) fn load(c: &mut Cartridge, addr: u16, value: u8, cycle: &mut u64) {
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
        // Writes to PRG RAM do not reach the chip: they do not make the next one back-to-back.
        load(&mut c, 0x8000, 0x08, &mut cycle); // PRG mode 2: PRG bank 1 at $C000
        assert_eq!(prg_bank_at(&c, 0xC000), 2);
        cycle += 10;
        c.cpu_write(0x6000, 0, cycle);
        c.cpu_write(0x8000, 0x80, cycle + 1);
        assert_eq!(prg_bank_at(&c, 0xC000), 14, "the reset counted: mode 3");
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
    fn registers_out_of_range_in_a_state_are_refused() {
        use crate::boards::tests::reload_edited;
        use crate::boards::Board;
        let mut c = cart(1, 0, 8, 0);
        for (i, bit) in [1, 0, 1].into_iter().enumerate() {
            c.cpu_write(0x8000, bit, 10 * i as u64);
        }
        assert_eq!(reload_edited(&c, |_, _| {}), Ok(()));
        type Edit = fn(&mut super::Mmc1);
        let cases: [(Edit, &str); 3] = [
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
        ];
        for (edit, message) in cases {
            let refusal = reload_edited(&c, |board, _| {
                if let Board::Sxrom(sxrom) = board {
                    edit(&mut sxrom.chip);
                }
            });
            assert_eq!(refusal, Err(message.to_string()));
        }
        // Registers that do not give the tables stored with them.
        let refusal = reload_edited(&c, |board, _| {
            if let Board::Sxrom(sxrom) = board {
                sxrom.chip.control ^= 0x10;
            }
        });
        assert_eq!(
            refusal,
            Err("the cartridge bank tables do not match the SNROM board's registers".to_string())
        );
    }
}
