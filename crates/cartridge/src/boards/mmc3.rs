//! Nintendo MMC3 (mapper 4) on the TxROM boards (NESdev "MMC3").
//!
//! Registers (address bit 0 picks the even/odd register of each pair):
//! * $8000 bank select (bits 0-2 target R0-R7, bit 6 PRG mode, bit 7 CHR A12 inversion),
//!   $8001 bank data;
//! * $A000 mirroring (0 vertical, 1 horizontal; ignored with four-screen VRAM), $A001 PRG RAM
//!   chip enable (bit 7) and write protect (bit 6);
//! * $C000 IRQ latch, $C001 IRQ reload; $E000 IRQ disable + acknowledge, $E001 IRQ enable.
//!
//! The scanline counter is clocked by rising edges of PPU A12 that follow a period with A12 low
//! for a few CPU (M2) cycles; the short low periods between the eight sprite fetches of a line
//! are filtered out. On a clock the counter reloads from the latch when it is 0 or a reload was
//! requested, otherwise it decrements. Revision B (and C) then raise the IRQ whenever the counter
//! is 0; the older revision A only when it has just become 0 (from a decrement or from a
//! requested reload), so a latch of 0 gives a single IRQ rather than one per clock.
//!
//! The chain to the CPU: /IRQ follows the pending flag on the dot of the clocking A12 rise
//! (dot 261 of each rendering line with sprites at $1000, where the first sprite slot presents
//! its pattern address); the CPU's level detector sees it by the end of that CPU cycle, and
//! an instruction polls at the end of its penultimate cycle, so a rise on an instruction's
//! last cycle waits for the next one's poll. `tests/mmc3_irq.rs` checks every link against a
//! model of these documents over thousands of IRQs on every CPU/PPU phase.

use super::{A12Edge, BoardOptions, CpuWrite, Mapper, StateCheck};
use crate::header::{Mirroring, RomFormat, RomInfo};
use crate::memory::Memory;
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

/// Which MMC3 behaviour the IRQ counter follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mmc3Revision {
    /// MMC3A ("alternate"): no IRQ when a counter that was 0 reloads with 0.
    A,
    /// MMC3B/C (the common one): IRQ whenever the counter is 0 after a clock.
    #[default]
    B,
}

impl Mmc3Revision {
    /// The revision an image's header asks for: NES 2.0 mapper 4 submapper 4 is the MMC3A
    /// (NESdev wiki "NES 2.0 submappers"); anything else gets the common MMC3B/C.
    pub fn for_submapper(info: &RomInfo) -> Mmc3Revision {
        if info.format == RomFormat::Nes2 && info.mapper == 4 && info.submapper == 4 {
            Mmc3Revision::A
        } else {
            Mmc3Revision::B
        }
    }
}

/// M2 cycles A12 must stay low before a rise counts (the chip's filter), counted as the CPU
/// cycle of the rise minus the cycle of the fall. The longest low period that must *not*
/// count is the 9 dots (3 CPU cycles) between the dummy nametable fetches at dot 337 and the
/// third tile's pattern fetch at dot 5 of the next line, when the background uses $1000;
/// blargg's mmc3_test_2 "4-scanline_timing" checks it (with 3 here it fails with code 12,
/// "Scanline 239 IRQ should occur later when $2000=$10"). NESdev's "three falling edges of
/// M2" cannot be read as falls between the two edges: 9 dots always span exactly three. The
/// gaps between sprite pattern fetches are 4 + 8k dots and a line's real low period is 60+
/// dots, so rendering alone never produces a gap where the count's phase matters; only
/// `$2006`/`$2007` addresses can.
const A12_LOW_MIN_CPU_CYCLES: u64 = 4;

/// 8 KiB PRG banks the chip's six bank outputs reach: 512 KiB.
const MMC3_PRG_BANKS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct Mmc3 {
    bank_select: u8,
    registers: [u8; 8],
    horizontal: bool,
    ram_control: u8,
    four_screen: bool,
    irq_latch: u8,
    irq_counter: u8,
    irq_reload: bool,
    irq_enabled: bool,
    irq_pending: bool,
    /// A board option ([`BoardOptions::mmc3`]): a setting of the console, not state, so a
    /// state neither stores it nor changes it.
    #[borsh(skip)]
    revision: Mmc3Revision,
}

impl Mmc3 {
    pub fn new(info: &RomInfo, options: &BoardOptions, mem: &mut Memory) -> Mmc3 {
        let mmc3 = Mmc3 {
            bank_select: 0,
            // Power-on bank contents are undefined; this choice shows distinct banks.
            registers: [0, 2, 4, 5, 6, 7, 0, 1],
            horizontal: info.mirroring == Mirroring::Horizontal,
            // RAM enabled and writable at power-on: games that never touch $A001 expect RAM.
            ram_control: 0x80,
            four_screen: info.mirroring == Mirroring::FourScreen,
            irq_latch: 0,
            irq_counter: 0,
            irq_reload: false,
            irq_enabled: false,
            irq_pending: false,
            // An explicit option wins over the header's.
            revision: options
                .mmc3
                .unwrap_or_else(|| Mmc3Revision::for_submapper(info)),
        };
        mmc3.apply(mem);
        mmc3
    }

    /// Sets every bank table from the registers.
    pub fn apply(&self, mem: &mut Memory) {
        self.apply_prg(mem);
        self.apply_chr(mem);
        self.apply_mirroring_and_ram(mem);
    }

    fn write_register(&mut self, mem: &mut Memory, addr: u16, value: u8) {
        match addr & 0xE001 {
            0x8000 => {
                self.bank_select = value;
                self.apply_prg(mem);
                self.apply_chr(mem);
            }
            0x8001 => {
                let target = usize::from(self.bank_select & 7);
                self.registers[target] = value;
                if target >= 6 {
                    self.apply_prg(mem);
                } else {
                    self.apply_chr(mem);
                }
            }
            0xA000 => {
                self.horizontal = value & 1 != 0;
                self.apply_mirroring_and_ram(mem);
            }
            0xA001 => {
                self.ram_control = value;
                self.apply_mirroring_and_ram(mem);
            }
            0xC000 => self.irq_latch = value,
            0xC001 => {
                self.irq_counter = 0;
                self.irq_reload = true;
            }
            0xE000 => {
                self.irq_enabled = false;
                self.irq_pending = false;
            }
            0xE001 => self.irq_enabled = true,
            _ => {}
        }
    }

    fn clock_counter(&mut self) {
        let before = self.irq_counter;
        let reloading = self.irq_counter == 0 || self.irq_reload;
        if reloading {
            self.irq_counter = self.irq_latch;
        } else {
            self.irq_counter -= 1;
        }
        let fire = match self.revision {
            Mmc3Revision::B => self.irq_counter == 0,
            Mmc3Revision::A => self.irq_counter == 0 && (before != 0 || self.irq_reload),
        };
        self.irq_reload = false;
        if fire && self.irq_enabled {
            self.irq_pending = true;
        }
    }

    fn apply_prg(&self, mem: &mut Memory) {
        let banks = mem.prg_rom_banks_8k();
        let second_last = banks.saturating_sub(2);
        // The MMC3 has six PRG bank outputs (512 KiB). Larger homebrew images (NES 2.0 up to
        // 2 MiB) assume all eight bits of R6/R7 reach the ROM, as other emulators wire them;
        // up to 512 KiB the top two bits are ignored, as on the chip.
        let bank_mask = if banks > MMC3_PRG_BANKS { 0xFF } else { 0x3F };
        let r6 = usize::from(self.registers[6] & bank_mask);
        let r7 = usize::from(self.registers[7] & bank_mask);
        if self.bank_select & 0x40 == 0 {
            mem.map_prg_8k(0, r6);
            mem.map_prg_8k(2, second_last);
        } else {
            mem.map_prg_8k(0, second_last);
            mem.map_prg_8k(2, r6);
        }
        mem.map_prg_8k(1, r7);
        mem.map_prg_8k(3, second_last + 1);
    }

    fn apply_chr(&self, mem: &mut Memory) {
        // With A12 inversion the 2 KiB banks move to $1000 and the 1 KiB ones to $0000.
        let (two_k_base, one_k_base) = if self.bank_select & 0x80 != 0 {
            (4, 0)
        } else {
            (0, 4)
        };
        mem.map_chr_2k(two_k_base, usize::from(self.registers[0] >> 1));
        mem.map_chr_2k(two_k_base + 2, usize::from(self.registers[1] >> 1));
        for i in 0..4 {
            mem.map_chr_1k(one_k_base + i, usize::from(self.registers[2 + i]));
        }
    }

    fn apply_mirroring_and_ram(&self, mem: &mut Memory) {
        if self.four_screen {
            mem.set_mirroring(Mirroring::FourScreen);
        } else if self.horizontal {
            mem.set_mirroring(Mirroring::Horizontal);
        } else {
            mem.set_mirroring(Mirroring::Vertical);
        }
        if self.ram_control & 0x80 != 0 {
            mem.map_prg_ram(0, self.ram_control & 0x40 == 0);
        } else {
            mem.unmap_prg_ram();
        }
    }
}

impl Mapper for Mmc3 {
    fn name(&self, _info: &RomInfo) -> &'static str {
        "TxROM"
    }

    #[inline]
    fn cpu_write(&mut self, mem: &mut Memory, write: CpuWrite) {
        self.write_register(mem, write.addr, write.value);
    }

    fn watches_a12(&self) -> bool {
        true
    }

    /// A rise of A12 after a long enough low period clocks the counter.
    #[inline]
    fn ppu_a12_changed(&mut self, _mem: &mut Memory, edge: A12Edge) {
        if edge.rises_after_low(A12_LOW_MIN_CPU_CYCLES) {
            self.clock_counter();
        }
    }

    #[inline]
    fn irq_line(&self) -> bool {
        self.irq_pending
    }

    /// The IRQ rises only on a counter clock, and clocks are A12 rises that follow at least
    /// `A12_LOW_MIN_CPU_CYCLES` M2 cycles of A12 low: two counted rises are at least that
    /// many cycles apart, i.e. at least `3 * A12_LOW_MIN_CPU_CYCLES - 2` dots (the first on
    /// its cycle's last dot, the next on its cycle's first). The first clock may come on the
    /// very next dot. Whatever drives A12 (fetches, `$2006`, `$2007`), the filter holds.
    #[inline]
    fn dots_until_irq_possible(&self) -> u32 {
        if self.irq_pending || !self.irq_enabled {
            // Already asserted (only a CPU write clears it), or no clock can raise it.
            return u32::MAX;
        }
        // Clocks until the counter becomes 0 (with a reload first when it is 0 or a
        // reload is requested). MMC3A fires no earlier than MMC3B, so MMC3B's count is a
        // bound for both.
        let clocks = if self.irq_counter == 0 || self.irq_reload {
            1 + u32::from(self.irq_latch)
        } else {
            u32::from(self.irq_counter)
        };
        const MIN_DOTS_BETWEEN_CLOCKS: u32 = 3 * A12_LOW_MIN_CPU_CYCLES as u32 - 2;
        1 + (clocks - 1) * MIN_DOTS_BETWEEN_CLOCKS
    }

    /// Every register value is valid (bank numbers wrap at the chip sizes), so the wiring must
    /// be this cartridge's and the tables what the registers give. The revision is this
    /// cartridge's (a setting, see [`BoardOptions`]).
    fn validate_state(self, fresh: Mmc3, mut check: StateCheck<'_>) -> Result<Mmc3, InvalidState> {
        if self.four_screen != fresh.four_screen {
            return Err(InvalidState::impossible(
                "the MMC3 board's four-screen wiring does not match this cartridge's",
            ));
        }
        let loaded = Mmc3 {
            revision: fresh.revision,
            ..self
        };
        loaded.apply(&mut check.scratch);
        check.registers_give_tables()?;
        Ok(loaded)
    }
}

#[cfg(test)]
mod tests {
    use super::Mmc3Revision;
    use crate::boards::tests::{cart, chr_bank_at, image, nametable_layout, prg_bank_at};
    use crate::boards::Board;
    use crate::{BoardOptions, Cartridge};

    /// An MMC3 board (128 KiB PRG and CHR ROM) of revision `revision`.
    fn revision_cart(revision: Mmc3Revision) -> Cartridge {
        let options = BoardOptions {
            mmc3: Some(revision),
        };
        Cartridge::from_ines_with(&image(4, 0, 8, 16), options).unwrap()
    }

    /// The revision of `c`'s MMC3.
    fn revision_of(c: &Cartridge) -> Mmc3Revision {
        match &c.board {
            Board::Mmc3(mmc3) => mmc3.revision,
            other => panic!("not an MMC3: {other:?}"),
        }
    }

    fn select(c: &mut Cartridge, register: u8, value: u8, mode: u8) {
        c.cpu_write(0x8000, register | mode, 0);
        c.cpu_write(0x8001, value, 0);
    }

    /// One A12 rise after a long low period, as a scanline with background at $0000 and sprites
    /// at $1000 produces; `cycle` advances like the CPU clock.
    fn scanline(c: &mut Cartridge, cycle: &mut u64) {
        c.ppu_read(0x0FF0, || *cycle);
        *cycle += 85;
        c.ppu_read(0x1000, || *cycle);
        *cycle += 29;
    }

    #[test]
    fn prg_banking_both_modes() {
        let mut c = cart(4, 0, 8, 16); // 128 KiB PRG = 16 banks
        assert_eq!(c.info().board_name, "TxROM");
        select(&mut c, 6, 3, 0);
        select(&mut c, 7, 5, 0);
        assert_eq!(
            [0x8000, 0xA000, 0xC000, 0xE000].map(|a| prg_bank_at(&c, a)),
            [3, 5, 14, 15]
        );
        c.cpu_write(0x8000, 0x40, 0);
        assert_eq!(
            [0x8000, 0xA000, 0xC000, 0xE000].map(|a| prg_bank_at(&c, a)),
            [14, 5, 3, 15]
        );
        select(&mut c, 6, 0xC4, 0x40); // top two bits ignored
        assert_eq!(prg_bank_at(&c, 0xC000), 4);
    }

    #[test]
    fn prg_banks_keep_all_eight_bits_only_beyond_512_kib() {
        // 512 KiB: the chip's six bank bits.
        let mut c = cart(4, 0, 32, 8);
        select(&mut c, 6, 0x45, 0);
        assert_eq!(prg_bank_at(&c, 0x8000), 0x05);
        // 1 MiB homebrew image: bit 6 reaches the ROM, and the fixed banks are its last two.
        let mut c = cart(4, 0, 64, 8);
        select(&mut c, 6, 0x45, 0);
        select(&mut c, 7, 0x7F, 0);
        assert_eq!(
            [0x8000, 0xA000, 0xC000, 0xE000].map(|a| prg_bank_at(&c, a)),
            [0x45, 0x7F, 126, 127]
        );
    }

    #[test]
    fn nes2_submapper_4_is_the_mmc3a_unless_an_option_says_otherwise() {
        use crate::boards::tests::image_nes2;
        let revision = |submapper, mmc3| {
            let image = image_nes2(4, submapper, 0, 8, 8, 7, 0);
            let mut c = Cartridge::from_ines_with(&image, BoardOptions { mmc3 }).unwrap();
            let before = revision_of(&c);
            c.power_cycle();
            assert_eq!(revision_of(&c), before, "a power cycle keeps the revision");
            before
        };
        assert_eq!(revision(4, None), Mmc3Revision::A);
        assert_eq!(revision(0, None), Mmc3Revision::B);
        assert_eq!(revision(4, Some(Mmc3Revision::B)), Mmc3Revision::B);
        assert_eq!(revision(0, Some(Mmc3Revision::A)), Mmc3Revision::A);
        assert_eq!(revision_of(&cart(4, 0, 8, 8)), Mmc3Revision::B);
    }

    #[test]
    fn a_state_keeps_the_loading_cartridges_revision() {
        let mut a = revision_cart(Mmc3Revision::A);
        a.cpu_write(0xC000, 0, 0);
        let mut state = Vec::new();
        a.save_state(&mut state).unwrap();
        let mut b = revision_cart(Mmc3Revision::B);
        let loaded = b.read_state(&mut &state[..]).unwrap();
        b.restore_state(loaded);
        assert_eq!(revision_of(&b), Mmc3Revision::B);
        let mut again = Vec::new();
        b.save_state(&mut again).unwrap();
        assert_eq!(again, state, "the revision is no part of the state");
    }

    #[test]
    fn chr_banking_and_inversion() {
        let mut c = cart(4, 0, 8, 16); // 128 KiB CHR = 128 1 KiB banks
        for (r, v) in [(0, 9u8), (1, 20), (2, 40), (3, 41), (4, 60), (5, 127)] {
            select(&mut c, r, v, 0);
        }
        let pages = |c: &Cartridge| {
            (0..8)
                .map(|p| chr_bank_at(c, p * 0x400))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            pages(&c),
            [8, 9, 20, 21, 40, 41, 60, 127],
            "R0/R1 ignore bit 0"
        );
        c.cpu_write(0x8000, 0x80, 0);
        assert_eq!(pages(&c), [40, 41, 60, 127, 8, 9, 20, 21]);
    }

    #[test]
    fn mirroring_and_ram_protect() {
        let mut c = cart(4, 0, 8, 16);
        c.cpu_write(0xA000, 0, 0);
        assert_eq!(nametable_layout(&c), [0, 1, 0, 1]);
        c.cpu_write(0xA000, 1, 0);
        assert_eq!(nametable_layout(&c), [0, 0, 1, 1]);
        c.cpu_write(0x6000, 0x11, 0);
        assert_eq!(c.cpu_read(0x6000), Some(0x11));
        c.cpu_write(0xA001, 0xC0, 0); // enabled, write-protected
        c.cpu_write(0x6000, 0x22, 0);
        assert_eq!(c.cpu_read(0x6000), Some(0x11));
        c.cpu_write(0xA001, 0x00, 0); // disabled: open bus
        assert_eq!(c.cpu_read(0x6000), None);
        // Four-screen VRAM ignores $A000.
        let mut c = cart(4, 0x08, 8, 16);
        c.cpu_write(0xA000, 1, 0);
        assert_eq!(nametable_layout(&c), [0, 1, 2, 3]);
    }

    /// Drives A12 as fast as the filter lets rises count (high for one dot, then low for
    /// exactly the filter's cycles), three dots per CPU cycle, and checks at every dot that
    /// the IRQ does not rise before `ppu_dots_until_irq_possible` said it could.
    #[test]
    fn irq_never_rises_before_the_predicted_dot() {
        for revision in [Mmc3Revision::A, Mmc3Revision::B] {
            for latch in [0u8, 1, 2, 7] {
                let mut c = revision_cart(revision);
                c.cpu_write(0xC000, latch, 0);
                c.cpu_write(0xC001, 0, 0);
                c.cpu_write(0xE001, 0, 0);
                let mut high = false;
                let mut low_since = 0u64;
                let mut earliest = c.dots_until_irq_possible();
                let mut fires = 0;
                for dot in 0..3_000u64 {
                    let cycle = dot / 3;
                    if high {
                        c.ppu_read(0x0000, || cycle);
                        low_since = cycle;
                    } else if cycle - low_since >= super::A12_LOW_MIN_CPU_CYCLES {
                        c.ppu_read(0x1000, || cycle);
                    }
                    high = !high && cycle - low_since >= super::A12_LOW_MIN_CPU_CYCLES;
                    // `earliest` counts this dot as 1.
                    if c.irq_line() {
                        assert!(
                            earliest <= 1,
                            "{revision:?} latch {latch}: IRQ at dot {dot}, {earliest} early"
                        );
                        fires += 1;
                        c.cpu_write(0xE000, 0, 0);
                        c.cpu_write(0xE001, 0, 0);
                    }
                    earliest = if earliest == u32::MAX {
                        u32::MAX
                    } else {
                        earliest.saturating_sub(1).max(1)
                    };
                    earliest = earliest.min(c.dots_until_irq_possible());
                    assert!(earliest >= 1);
                }
                // (MMC3A with latch 0 fires once, on the requested reload.)
                assert!(fires > 0, "{revision:?} latch {latch}: the walk saw IRQs");
            }
        }
    }

    #[test]
    fn disabled_or_pending_irq_leaves_the_ppu_free_to_run() {
        let mut c = cart(4, 0, 8, 16);
        assert_eq!(c.dots_until_irq_possible(), u32::MAX, "disabled");
        c.cpu_write(0xC000, 5, 0);
        c.cpu_write(0xC001, 0, 0);
        c.cpu_write(0xE001, 0, 0);
        // Reload to 5, then five clocks: the first may come on the next dot, the rest at
        // least 10 dots apart.
        assert_eq!(c.dots_until_irq_possible(), 1 + 5 * 10);
    }

    #[test]
    fn irq_counts_filtered_a12_rises() {
        let mut c = cart(4, 0, 8, 16);
        let mut cycle = 1000;
        c.cpu_write(0xC000, 3, 0);
        c.cpu_write(0xC001, 0, 0);
        c.cpu_write(0xE001, 0, 0);
        // Clock 1 reloads 3; clocks 2-4 count 2, 1, 0 -> IRQ on the 4th.
        for line in 1..=4 {
            assert!(!c.irq_line(), "no IRQ before line {line}");
            scanline(&mut c, &mut cycle);
        }
        assert!(c.irq_line());
        c.cpu_write(0xE000, 0, 0);
        assert!(!c.irq_line(), "$E000 acknowledges");
        // Short low pulses (sprite fetch gaps, under 3 CPU cycles) do not clock the counter.
        for _ in 0..8 {
            c.ppu_read(0x2000, || cycle);
            cycle += 1;
            c.ppu_read(0x1000, || cycle);
            cycle += 1;
        }
        c.cpu_write(0xE001, 0, 0);
        for _ in 0..3 {
            scanline(&mut c, &mut cycle);
        }
        assert!(
            !c.irq_line(),
            "counter went 3, 2, 1: the short pulses did not count"
        );
        scanline(&mut c, &mut cycle);
        assert!(c.irq_line());
        // $2006-style changes through ppu_address_changed clock it too.
        c.cpu_write(0xE000, 0, 0);
        c.cpu_write(0xC000, 0, 0);
        c.cpu_write(0xC001, 0, 0);
        c.cpu_write(0xE001, 0, 0);
        c.ppu_address_changed(0x0000, || cycle);
        cycle += 8;
        c.ppu_address_changed(0x1000, || cycle);
        assert!(c.irq_line());
    }

    #[test]
    fn revision_a_and_b_with_latch_zero() {
        for (revision, irq_on_second_clock) in [(Mmc3Revision::B, true), (Mmc3Revision::A, false)] {
            let mut c = revision_cart(revision);
            let mut cycle = 0;
            c.cpu_write(0xC000, 0, 0);
            c.cpu_write(0xC001, 0, 0);
            c.cpu_write(0xE001, 0, 0);
            scanline(&mut c, &mut cycle);
            assert!(
                c.irq_line(),
                "{revision:?}: a requested reload to 0 raises the IRQ"
            );
            c.cpu_write(0xE000, 0, 0);
            c.cpu_write(0xE001, 0, 0);
            scanline(&mut c, &mut cycle);
            assert_eq!(
                c.irq_line(),
                irq_on_second_clock,
                "{revision:?}: counter 0 reloading with 0"
            );
        }
    }

    #[test]
    fn filter_rejects_the_nine_dot_gap_of_background_at_1000() {
        let mut c = cart(4, 0, 8, 16);
        c.cpu_write(0xC000, 0, 0);
        c.cpu_write(0xE001, 0, 0);
        c.ppu_read(0x1000, || 0); // A12 starts high (that first rise clocks: counter 0 -> reload 0)
        c.cpu_write(0xE000, 0, 0);
        c.cpu_write(0xE001, 0, 0);
        let pulse = |c: &mut Cartridge, start: u64, low_cycles: u64| {
            c.ppu_read(0x2000, || start);
            c.ppu_read(0x1000, || start + low_cycles);
        };
        pulse(&mut c, 100, 3);
        assert!(!c.irq_line(), "3 CPU cycles low: filtered");
        pulse(&mut c, 200, 4);
        assert!(c.irq_line(), "4 CPU cycles low: clocked (latch 0 -> IRQ)");
    }

    #[test]
    fn disabled_irq_never_asserts() {
        let mut c = cart(4, 0, 8, 16);
        let mut cycle = 0;
        c.cpu_write(0xC000, 1, 0);
        c.cpu_write(0xC001, 0, 0);
        for _ in 0..4 {
            scanline(&mut c, &mut cycle);
        }
        assert!(!c.irq_line());
    }

    #[test]
    fn wiring_and_registers_that_disagree_with_the_tables_are_refused() {
        use crate::boards::tests::reload_edited;
        let mut c = cart(4, 0, 8, 8);
        c.cpu_write(0x8000, 0x46, 0);
        c.cpu_write(0x8001, 0x03, 0);
        assert_eq!(reload_edited(&c, |_, _| {}), Ok(()));
        let refusal = reload_edited(&c, |board, _| {
            if let Board::Mmc3(mmc3) = board {
                mmc3.four_screen = true;
            }
        });
        assert_eq!(
            refusal,
            Err("the MMC3 board's four-screen wiring does not match this cartridge's".to_string())
        );
        let refusal = reload_edited(&c, |board, _| {
            if let Board::Mmc3(mmc3) = board {
                mmc3.registers[6] = 5;
            }
        });
        assert_eq!(
            refusal,
            Err("the cartridge bank tables do not match the TxROM board's registers".to_string())
        );
    }
}
