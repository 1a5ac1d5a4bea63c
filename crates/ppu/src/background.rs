//! Background tile fetches and the shift registers they feed (NESdev wiki "PPU rendering").
//!
//! Each tile takes four 2-dot fetches: nametable byte, attribute byte, pattern low, pattern
//! high. The bus read is issued on the first dot of each pair (when the address is driven).
//! The fetched tile waits in latches until the next reload dot (9, 17, ..., 257, 329, 337),
//! when it enters the low byte of the 16-bit shifters; pixels come out of the high byte.

use crate::scroll::ScrollRegisters;
use crate::{check_range, ctrl, Ppu, PpuBus};
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

/// `SPREAD[b]` puts bit `7 - i` of `b` at bit `4 * (7 - i)`: one pattern plane of a tile row
/// as eight 4-bit pixel cells, leftmost pixel in the top cell.
const SPREAD: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut bit = 0;
        let mut cells = 0u32;
        while bit < 8 {
            if byte & (1 << bit) != 0 {
                cells |= 1 << (4 * bit);
            }
            bit += 1;
        }
        table[byte] = cells;
        byte += 1;
    }
    table
};

/// The four hardware shift registers (pattern low/high, attribute low/high) kept as one u64
/// of sixteen 4-bit cells `palette << 2 | pixel`: the top eight cells are the tile being
/// output, the low eight the next tile. One shift per dot moves all four planes at once.
#[derive(Debug, Clone, Default, BorshSerialize, BorshDeserialize)]
pub(crate) struct BackgroundPipeline {
    pub(crate) nametable_latch: u8,
    /// Two-bit palette number for the tile being fetched.
    pub(crate) attribute_latch: u8,
    pub(crate) pattern_low_latch: u8,
    pub(crate) pattern_high_latch: u8,
    pub cells: u64,
    /// The cell shifted in at the bottom on each shift: the low-plane pattern shifter shifts
    /// in 0, the high-plane one 1 (AccuracyCoin "BG Serial In" describes the visible result,
    /// colour 2), and the attribute shifters are fed from the attribute bits of the last
    /// reload.
    serial_in: u64,
}

impl BackgroundPipeline {
    /// Checks a pipeline decoded from a save state (see `Ppu::validate_state`): the
    /// attribute latch holds a 2-bit palette number, and the serial input is a cell a reload
    /// sets (colour 2 of one of the four palettes) or 0 before the first: `shift_by`
    /// multiplies it into eight cells, which a wider value would overflow.
    pub(crate) fn validate_state(&self) -> Result<(), InvalidState> {
        check_range(
            "PPU background attribute latch",
            self.attribute_latch,
            0..=3,
        )?;
        if self.serial_in != 0 && !(0..4).any(|palette| self.serial_in == palette << 2 | 2) {
            return Err(InvalidState::impossible(format!(
                "PPU background serial input {} is not a cell a reload sets (0, 2, 6, 10, 14)",
                self.serial_in
            )));
        }
        Ok(())
    }

    /// One pixel clock of the shifters (what `shift_by` does `count` times). Because of the
    /// serial inputs, skipped reloads (rendering toggled mid-line) show colour 2 of the last
    /// palette (AccuracyCoin "BG Serial In"); a normal reload overwrites those cells before
    /// they are output.
    #[cfg(test)]
    pub fn shift(&mut self) {
        self.cells = (self.cells << 4) | self.serial_in;
    }

    /// `count` (1-8) pixel clocks at once: the serial input fills the vacated cells.
    #[inline]
    pub fn shift_by(&mut self, count: u32) {
        let fill = self.serial_in * (0x1111_1111 >> (4 * (8 - count)));
        self.cells = (self.cells << (4 * count)) | fill;
    }

    /// Moves the latched tile into the low eight cells.
    #[inline]
    pub fn reload(&mut self) {
        let palette = u32::from(self.attribute_latch & 3) << 2;
        let tile = SPREAD[usize::from(self.pattern_low_latch)]
            | (SPREAD[usize::from(self.pattern_high_latch)] << 1)
            | (palette * 0x1111_1111);
        self.cells = (self.cells & 0xFFFF_FFFF_0000_0000) | u64::from(tile);
        self.serial_in = u64::from(palette) | 2;
    }

    /// Eight pixel clocks and then a reload (`shift_by(8)` and `reload`), the step from one
    /// tile's reload to the next: the low tile moves up, and the cells the serial input
    /// fills are all replaced by the latched tile.
    #[inline]
    pub fn shift_tile_and_reload(&mut self) {
        let low = self.cells << 32;
        self.reload();
        self.cells = low | (self.cells & 0xFFFF_FFFF);
    }

    /// The 4-bit background palette index (`palette << 2 | pixel`) under fine X, 0 when
    /// the pixel is transparent.
    #[cfg(test)]
    pub fn pixel(&self, fine_x: u8) -> u8 {
        let cell = (self.cells >> (60 - 4 * u32::from(fine_x & 7))) as u8 & 0x0F;
        if cell & 3 == 0 {
            0
        } else {
            cell
        }
    }
}

impl BackgroundPipeline {
    /// The nametable fetch of the tile at v.
    #[inline(always)]
    pub(crate) fn fetch_nametable<B: PpuBus>(&mut self, bus: &mut B, scroll: &ScrollRegisters) {
        self.nametable_latch = bus.read(scroll.nametable_addr());
    }

    /// The attribute fetch of the tile at v: the byte's two bits for the tile's quadrant.
    #[inline(always)]
    pub(crate) fn fetch_attribute<B: PpuBus>(&mut self, bus: &mut B, scroll: &ScrollRegisters) {
        let byte = bus.read(scroll.attribute_addr());
        self.attribute_latch = (byte >> scroll.attribute_shift()) & 0x03;
    }

    /// The low pattern plane of the latched tile's row under fine Y, from the pattern table
    /// at `table` ($0000 or $1000, PPUCTRL bit 4).
    #[inline(always)]
    pub(crate) fn fetch_pattern_low<B: PpuBus>(
        &mut self,
        bus: &mut B,
        scroll: &ScrollRegisters,
        table: u16,
    ) {
        self.pattern_low_latch = bus.read(self.pattern_addr(scroll, table));
    }

    /// The high pattern plane, eight bytes after the low one.
    #[inline(always)]
    pub(crate) fn fetch_pattern_high<B: PpuBus>(
        &mut self,
        bus: &mut B,
        scroll: &ScrollRegisters,
        table: u16,
    ) {
        self.pattern_high_latch = bus.read(self.pattern_addr(scroll, table) | 8);
    }

    /// The address of the latched tile's low pattern byte.
    #[inline(always)]
    pub(crate) fn pattern_addr(&self, scroll: &ScrollRegisters, table: u16) -> u16 {
        table | (u16::from(self.nametable_latch) << 4) | scroll.fine_y()
    }
}

impl Ppu {
    /// A rendering fetch from the PPU bus.
    #[inline(always)]
    pub(crate) fn fetch<B: PpuBus>(&mut self, bus: &mut B, addr: u16) -> u8 {
        bus.read(addr)
    }

    /// The background pattern table PPUCTRL selects: $0000 or $1000.
    #[inline(always)]
    pub(crate) fn background_table(&self) -> u16 {
        if self.ctrl & ctrl::BACKGROUND_TABLE_1000 != 0 {
            0x1000
        } else {
            0
        }
    }

    #[inline(always)]
    pub(crate) fn fetch_nametable<B: PpuBus>(&mut self, bus: &mut B) {
        self.background.fetch_nametable(bus, &self.scroll);
    }

    #[inline(always)]
    pub(crate) fn fetch_attribute<B: PpuBus>(&mut self, bus: &mut B) {
        self.background.fetch_attribute(bus, &self.scroll);
    }

    #[inline(always)]
    pub(crate) fn fetch_pattern_low<B: PpuBus>(&mut self, bus: &mut B) {
        let table = self.background_table();
        self.background.fetch_pattern_low(bus, &self.scroll, table);
    }

    #[inline(always)]
    pub(crate) fn fetch_pattern_high<B: PpuBus>(&mut self, bus: &mut B) {
        let table = self.background_table();
        self.background.fetch_pattern_high(bus, &self.scroll, table);
    }

    /// The address of the latched tile's low pattern byte.
    #[inline]
    pub(crate) fn background_pattern_addr(&self) -> u16 {
        self.background
            .pattern_addr(&self.scroll, self.background_table())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn shifting_by_n_is_n_single_shifts() {
        for count in 1..=8 {
            let mut one_by_one = super::BackgroundPipeline {
                cells: 0x0123_4567_89AB_CDEF,
                serial_in: 0x6,
                ..Default::default()
            };
            let mut at_once = one_by_one.clone();
            for _ in 0..count {
                one_by_one.shift();
            }
            at_once.shift_by(count);
            assert_eq!(at_once.cells, one_by_one.cells, "{count} shifts");
        }
    }

    use super::*;

    #[test]
    fn shifting_a_tile_and_reloading_is_eight_shifts_and_a_reload() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..1000 {
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            let mut stepwise = BackgroundPipeline {
                nametable_latch: next() as u8,
                attribute_latch: next() as u8 & 3,
                pattern_low_latch: next() as u8,
                pattern_high_latch: next() as u8,
                cells: next(),
                serial_in: [0, 2, 6, 10, 14][next() as usize % 5],
            };
            let mut at_once = stepwise.clone();
            stepwise.shift_by(8);
            stepwise.reload();
            at_once.shift_tile_and_reload();
            assert_eq!(at_once.cells, stepwise.cells);
            assert_eq!(at_once.serial_in, stepwise.serial_in);
        }
    }

    #[test]
    fn reload_then_shift_moves_a_tile_into_the_output_byte() {
        let mut bg = BackgroundPipeline {
            pattern_low_latch: 0b1000_0001,
            pattern_high_latch: 0b1100_0000,
            attribute_latch: 2,
            ..Default::default()
        };
        bg.reload();
        for _ in 0..8 {
            bg.shift();
        }
        // Column 0: low 1, high 1 -> pixel 3, palette 2.
        assert_eq!(bg.pixel(0), 0b1011);
        // Column 1: low 0, high 1 -> pixel 2.
        assert_eq!(bg.pixel(1), 0b1010);
        // Column 2: transparent.
        assert_eq!(bg.pixel(2), 0);
        // Column 7: low 1 -> pixel 1.
        assert_eq!(bg.pixel(7), 0b1001);
    }

    #[test]
    fn shifting_without_reload_brings_in_colour_2_of_the_last_palette() {
        let mut bg = BackgroundPipeline {
            attribute_latch: 1,
            ..Default::default()
        };
        bg.reload();
        for _ in 0..16 {
            bg.shift();
        }
        assert_eq!(bg.pixel(0), 0b0110);
        assert_eq!(bg.pixel(7), 0b0110);
    }

    #[test]
    fn a_serial_input_no_reload_sets_is_refused() {
        // Found by the save-state fuzzer: `shift_by` multiplied this into an overflow.
        for palette in 0..4 {
            let mut bg = BackgroundPipeline {
                attribute_latch: palette,
                ..Default::default()
            };
            bg.reload();
            assert_eq!(bg.validate_state(), Ok(()));
        }
        let bg = BackgroundPipeline {
            serial_in: 1 << 60,
            ..Default::default()
        };
        assert_eq!(
            bg.validate_state().map_err(|e| e.to_string()),
            Err(
                "PPU background serial input 1152921504606846976 is not a cell a reload sets \
                 (0, 2, 6, 10, 14)"
                    .to_string()
            )
        );
    }
}
