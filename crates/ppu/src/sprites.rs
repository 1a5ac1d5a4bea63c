//! Sprite pattern fetches (dots 257-320) and the sprite pixels of the next scanline.
//!
//! The hardware keeps eight shift registers with X down-counters. Because the patterns are
//! fixed once fetched, the same output is produced by drawing the eight fetched sprites into a
//! 256-entry line buffer as each one's high pattern byte arrives, lower OAM index first and
//! never over an opaque pixel (the first opaque sprite wins, whatever its priority bit).

use crate::{check_range, ctrl, Ppu, PpuBus, FRAME_WIDTH, POST_RENDER_SCANLINE};
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

/// Line-buffer cell flags. A cell is 0 when no sprite covers the pixel; otherwise bits 0-4
/// are the palette RAM index ($10-$1F).
pub(crate) const SPRITE_OPAQUE: u8 = 0x10;
pub(crate) const SPRITE_PALETTE_INDEX: u8 = 0x1F;
pub(crate) const SPRITE_BEHIND_BACKGROUND: u8 = 0x20;
pub(crate) const SPRITE_ZERO: u8 = 0x40;

/// OAM attribute byte bits.
const ATTR_PALETTE: u8 = 0x03;
const ATTR_BEHIND_BACKGROUND: u8 = 0x20;
const ATTR_FLIP_HORIZONTAL: u8 = 0x40;
const ATTR_FLIP_VERTICAL: u8 = 0x80;

/// `BYTE_PER_BIT[b]` has bit `7 - k` of `b` (a pattern plane's column `k`, left first) as
/// bit 0 of byte `k`.
const BYTE_PER_BIT: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut column = 0;
        while column < 8 {
            if byte & (0x80 >> column) != 0 {
                table[byte] |= 1 << (8 * column);
            }
            column += 1;
        }
        byte += 1;
    }
    table
};

/// 0xFF in each byte of `bytes` that is not zero, 0 in the others.
#[inline(always)]
fn byte_mask_of_nonzero(bytes: u64) -> u64 {
    const LOW_SEVEN: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    // Bit 7 of each byte: set when the byte's low seven bits carry into it or it was set.
    let high = (((bytes & LOW_SEVEN) + LOW_SEVEN) | bytes) & !LOW_SEVEN;
    (high >> 7) * 0xFF
}

/// One of the eight sprite output units as loaded by the fetches at dots 257-320: pattern
/// bytes (already flipped), line-buffer flags, the X down-counter and how many pixels the
/// shifters have already sent out. The line buffer below is what these units produce while
/// rendering runs without a break; the unit state is only consulted (and brought up to date)
/// when rendering is switched off and on mid-frame.
#[derive(Clone, Copy, Debug, Default, BorshSerialize, BorshDeserialize)]
pub(crate) struct SpriteUnit {
    low: u8,
    high: u8,
    flags: u8,
    counter: u16,
    shifted: u8,
    /// The counter's mode: counting down (set on dot 339 while rendering) or halted, i.e.
    /// the shifters send out the pattern (reached when the count ends).
    counting: bool,
}

impl SpriteUnit {
    /// Advances the unit over `pixels` output dots with rendering on: a counting unit runs
    /// its counter down first, then the shifters send out the pattern.
    fn advance(&mut self, pixels: u16) {
        let shifting = if !self.counting {
            pixels
        } else if self.counter >= pixels {
            self.counter -= pixels;
            return;
        } else {
            let rest = pixels - self.counter;
            self.counter = 0;
            self.counting = false;
            rest
        };
        self.shifted = (u16::from(self.shifted) + shifting).min(8) as u8;
    }

    /// `pixels` visible dots of forced blanking: the counter keeps counting (AccuracyCoin
    /// "Stale Sprite Shift Regs" 2) but the shifters stand still.
    fn count_blanked(&mut self, pixels: u16) {
        if self.counting {
            self.counter = self.counter.saturating_sub(pixels);
            if self.counter == 0 {
                self.counting = false;
            }
        }
    }

    /// Column (from the first rendered pixel `x`) where the unit's next pixel appears.
    fn next_column(&self, x: usize) -> usize {
        if self.counting {
            x + usize::from(self.counter)
        } else {
            x
        }
    }
}

#[derive(Clone, BorshSerialize, BorshDeserialize)]
pub(crate) struct SpriteLine {
    pub pixels: [u8; 256],
    /// Whether any cell may be non-zero (so clearing can be skipped on sprite-free lines).
    /// Never false while a cell is non-zero.
    pub occupied: bool,
    /// Pattern address of the slot being fetched, set at its low-byte fetch.
    pattern_addr: u16,
    pattern_low: u8,
    pub units: [SpriteUnit; 8],
    /// The pixel x (of the line the units are for) at which the unit state is current.
    pub units_x: u16,
    /// Where rendering was switched off: scanline and pixel x, while it stays off.
    pub frozen_at: Option<(u16, u16)>,
}

impl Default for SpriteLine {
    fn default() -> Self {
        SpriteLine {
            pixels: [0; 256],
            occupied: false,
            pattern_addr: 0,
            pattern_low: 0,
            units: [SpriteUnit::default(); 8],
            units_x: 0,
            frozen_at: None,
        }
    }
}

impl SpriteLine {
    /// `validate_state_within` a 2C02's frame.
    #[cfg(test)]
    pub(crate) fn validate_state(&self) -> Result<(), InvalidState> {
        self.validate_state_within(crate::PRE_RENDER_SCANLINE)
    }

    /// Checks a sprite line decoded from a save state (see `Ppu::validate_state`): the
    /// pattern address is a pattern table address, each unit's counter was loaded from an X
    /// byte and its shifters sent out at most their 8 pixels (`8 - shifted` and the shifts
    /// by it assume so), and the pixel positions lie on a line, the frozen line in a frame
    /// whose last (pre-render) line is `last_scanline`.
    pub(crate) fn validate_state_within(&self, last_scanline: u16) -> Result<(), InvalidState> {
        check_range("PPU sprite pattern address", self.pattern_addr, 0..=0x1FFF)?;
        for (slot, unit) in self.units.iter().enumerate() {
            check_range(
                &format!("PPU sprite unit {slot} counter"),
                unit.counter,
                0..=0xFF,
            )?;
            check_range(
                &format!("PPU sprite unit {slot} pixels sent"),
                unit.shifted,
                0..=8,
            )?;
        }
        let width = FRAME_WIDTH as u16;
        check_range("PPU sprite units' pixel x", self.units_x, 0..=width)?;
        if let Some((line, x)) = self.frozen_at {
            check_range("PPU sprite units' frozen scanline", line, 0..=last_scanline)?;
            check_range("PPU sprite units' frozen pixel x", x, 0..=width)?;
        }
        // The pixel output reads an unoccupied line's buffer as all transparent.
        nes_state::check_consistent(
            self.occupied || self.pixels.iter().all(|&pixel| pixel == 0),
            "PPU sprite line buffer holds pixels but is marked empty",
        )
    }

    /// Empties the buffer before the next line's sprites are fetched (dot 257).
    #[inline]
    pub fn clear(&mut self) {
        if self.occupied {
            self.pixels = [0; 256];
            self.occupied = false;
        }
    }
}

impl Ppu {
    /// The pattern low fetch of the sprite slot whose fetch dots (257-320, 8 per slot, on a
    /// rendering line) include `dot`. The pre-render line has no evaluation, so it fetches
    /// (and line 0 shows) whatever secondary OAM still holds from line 239, as hardware does
    /// (AccuracyCoin "Sprites On Scanline 0").
    #[inline(always)]
    pub(crate) fn fetch_sprite_pattern_low<B: PpuBus>(&mut self, bus: &mut B, dot: u16) {
        let base = Self::sprite_slot(dot) * 4;
        let addr = self.sprite_pattern_addr(base);
        self.sprite_line.pattern_addr = addr;
        self.sprite_line.pattern_low = self.fetch(bus, addr);
    }

    /// The pattern high fetch of `dot`'s sprite slot, which loads the slot's sprite unit.
    #[inline(always)]
    pub(crate) fn fetch_sprite_pattern_high<B: PpuBus>(&mut self, bus: &mut B, dot: u16) {
        let slot = Self::sprite_slot(dot);
        let high = self.fetch(bus, self.sprite_line.pattern_addr | 8);
        let (low, high) =
            if slot < usize::from(self.evaluation.sprite_count) && self.slot_in_range(slot * 4) {
                (self.sprite_line.pattern_low, high)
            } else {
                // Unused slots and out-of-range rows load a transparent pattern.
                (0, 0)
            };
        self.load_sprite_unit(slot, low, high);
    }

    /// The sprite slot (0-7) whose fetch dots include `dot`.
    #[inline(always)]
    fn sprite_slot(dot: u16) -> usize {
        usize::from(dot.wrapping_sub(257) >> 3) & 7
    }

    /// The fetch unit compares Y against the current line again: a slot whose row falls
    /// outside the sprite gets a transparent pattern. This matters on the pre-render line
    /// (a 2C02's line 261 compares as 5, by its low 8 bits; a 2C07's or UA6538's 311 is taken
    /// to compare as 55 the same way), where stale slots are fetched: a sprite left from line 239
    /// is not drawn on line 0, one with Y near 0 is.
    fn slot_in_range(&self, base: usize) -> bool {
        let height: u8 = if self.ctrl & ctrl::SPRITE_8X16 != 0 {
            16
        } else {
            8
        };
        let line = (self.scanline & 0xFF) as u8;
        line.wrapping_sub(self.secondary_oam[base]) < height
    }

    /// The pattern row address for the sprite in secondary slot starting at `base`. Empty
    /// slots hold $FF bytes, so they fetch tile $FF as the hardware does.
    pub(crate) fn sprite_pattern_addr(&self, base: usize) -> u16 {
        let y = self.secondary_oam[base];
        let tile = self.secondary_oam[base + 1];
        let attributes = self.secondary_oam[base + 2];
        let tall = self.ctrl & ctrl::SPRITE_8X16 != 0;
        let height: u16 = if tall { 16 } else { 8 };
        let mut row = self.scanline.wrapping_sub(u16::from(y)) & (height - 1);
        if attributes & ATTR_FLIP_VERTICAL != 0 {
            row = height - 1 - row;
        }
        if tall {
            // 8x16: bit 0 of the tile picks the table, the top half is the even tile.
            let table = u16::from(tile & 1) << 12;
            let tile_index = u16::from(tile & 0xFE) + (row >> 3);
            table | (tile_index << 4) | (row & 7)
        } else {
            let table = if self.ctrl & ctrl::SPRITE_TABLE_1000 != 0 {
                0x1000
            } else {
                0
            };
            table | (u16::from(tile) << 4) | row
        }
    }

    /// Loads output unit `slot` from its fetched pattern bytes and secondary OAM, and draws it
    /// into the line buffer for the next line.
    fn load_sprite_unit(&mut self, slot: usize, low: u8, high: u8) {
        let base = slot * 4;
        let attributes = self.secondary_oam[base + 2];
        let x = self.secondary_oam[base + 3];
        // Empty slots (attributes $FF, flipped) load transparent patterns: skip the reversal,
        // which has no single instruction on common CPUs.
        let (low, high) = if attributes & ATTR_FLIP_HORIZONTAL != 0 && low | high != 0 {
            (low.reverse_bits(), high.reverse_bits())
        } else {
            (low, high)
        };
        let mut flags = SPRITE_OPAQUE | ((attributes & ATTR_PALETTE) << 2);
        if attributes & ATTR_BEHIND_BACKGROUND != 0 {
            flags |= SPRITE_BEHIND_BACKGROUND;
        }
        if slot == 0 && self.evaluation.sprite_zero_in_line {
            flags |= SPRITE_ZERO;
        }
        let stored = &mut self.sprite_line.units[slot & 7];
        // The fetch reloads the counter but not its mode: that is set on dot 339.
        let unit = SpriteUnit {
            low,
            high,
            flags,
            counter: u16::from(x),
            shifted: 0,
            counting: stored.counting,
        };
        *stored = unit;
        self.sprite_line.units_x = 0;
        // (Drawn from `unit`, not read back from `units`: a load of the whole unit right
        // after its fields were stored one by one waits for the stores to drain.)
        // The line buffer assumes rendering stays on through dot 339 (the unit counts from
        // X); if it does not, re-enabling rendering redraws the buffer from the units.
        self.draw_unit(unit, usize::from(x));
    }

    /// Draws the pixels `unit` still has to send out into the line buffer from column `x`,
    /// never over an opaque pixel of a lower-numbered unit. Columns past 255 are not shown.
    fn draw_unit(&mut self, unit: SpriteUnit, x: usize) {
        if unit.low | unit.high == 0 || unit.shifted >= 8 {
            return;
        }
        self.sprite_line.occupied = true;
        let (low, high) = (unit.low << unit.shifted, unit.high << unit.shifted);
        // Eight columns at once, column k in byte k: the pixel values (0-3; the columns past
        // the pixels left to send are 0, shifted in), and the cells that take them: opaque
        // pixels over empty cells.
        let pixels = BYTE_PER_BIT[usize::from(low)] | (BYTE_PER_BIT[usize::from(high)] << 1);
        let flags = u64::from(unit.flags) * 0x0101_0101_0101_0101;
        let draw = |old: u64| {
            let writes = byte_mask_of_nonzero(pixels) & !byte_mask_of_nonzero(old);
            old | ((pixels | flags) & writes)
        };
        let line = &mut self.sprite_line.pixels;
        if let Some(Ok(cells)) = line.get_mut(x..x + 8).map(<&mut [u8; 8]>::try_from) {
            *cells = draw(u64::from_le_bytes(*cells)).to_le_bytes();
        } else if let Some(cells) = line.get_mut(x..) {
            // Near the right edge: the columns past 255 are not shown.
            let mut window = [0u8; 8];
            window[..cells.len()].copy_from_slice(cells);
            let drawn = draw(u64::from_le_bytes(window)).to_le_bytes();
            cells.copy_from_slice(&drawn[..cells.len()]);
        }
    }

    /// Dot 257 with rendering on: the units have sent out the whole line; the ones the fetches
    /// below do not reload (rendering switched off during them) keep what is left, for the
    /// next line. The shifters do not clock in HBlank.
    pub(crate) fn sprite_units_finish_line(&mut self) {
        let consumed = 256u16.saturating_sub(self.sprite_line.units_x);
        for unit in &mut self.sprite_line.units {
            unit.advance(consumed);
        }
        self.sprite_line.units_x = 0;
    }

    /// Rendering was just switched off (the pipeline is caught up to `self.dot`): the sprite
    /// units keep their state, brought up to the pixel reached on this line.
    pub(crate) fn freeze_sprite_units(&mut self) {
        let (line, x) = if self.scanline < POST_RENDER_SCANLINE && self.dot <= 256 {
            (self.scanline, self.dot.saturating_sub(1))
        } else {
            // In HBlank or outside the picture: the units hold the next line's sprites.
            (self.next_line(), 0)
        };
        let consumed = x.saturating_sub(self.sprite_line.units_x);
        for unit in &mut self.sprite_line.units {
            unit.advance(consumed);
        }
        self.sprite_line.units_x = x;
        self.sprite_line.frozen_at = Some((line, x));
    }

    /// Dot 339 with rendering on: every unit's counter starts counting.
    pub(crate) fn start_sprite_counters(&mut self) {
        for unit in &mut self.sprite_line.units {
            unit.counting = true;
        }
    }

    /// The odd-frame skip of the pre-render line's last dot, with rendering on: the signal
    /// that dot 339 sends to start the counters arrives a dot late, so on scanline 0 every
    /// unit first sends out one pixel at x = 0, then counts down from its X and sends out the
    /// other seven where they normally are. A composite 2C02's scanline-0 sprites thus show
    /// their first pixel at x = 0 on every other frame (MesenCE pull request 141, Fiskbit;
    /// AccuracyCoin "Sprites On Scanline 0", composite PPU code 1). The line buffer the
    /// pre-render fetches drew is redrawn that way, lower unit first as always.
    pub(crate) fn start_sprite_counters_late(&mut self) {
        if self.sprite_line.frozen_at.is_some() || !self.sprite_line.occupied {
            // Rendering was off during the fetches (nothing was loaded), or nothing opaque
            // was: there is nothing to move.
            return;
        }
        self.sprite_line.pixels = [0; FRAME_WIDTH];
        self.sprite_line.occupied = false;
        let units = self.sprite_line.units;
        for (slot, unit) in units.iter().enumerate() {
            if unit.shifted != 0 {
                continue;
            }
            let first_pixel = ((unit.low >> 7) & 1) | (((unit.high >> 7) & 1) << 1);
            if first_pixel != 0 && self.sprite_line.pixels[0] == 0 {
                self.sprite_line.pixels[0] = unit.flags | first_pixel;
                self.sprite_line.occupied = true;
            }
            let rest = SpriteUnit {
                shifted: 1,
                ..*unit
            };
            self.draw_unit(rest, usize::from(unit.counter) + 1);
            self.sprite_line.units[slot] = rest;
        }
        // The units' state is now that of x = 1: each has sent out one pixel and counts.
        self.sprite_line.units_x = 1;
    }

    /// Dot 339 with rendering off: the counter modes stay as they are (usually halted, so a
    /// loaded sprite is drawn as soon as rendering resumes: AccuracyCoin "Stale BG Shift
    /// Registers" 4). The rest of this line's blanked dots are counted.
    pub(crate) fn blanked_dot_339(&mut self) {
        if let Some((line, x)) = self.sprite_line.frozen_at {
            if line == self.scanline {
                let rest = 256u16.saturating_sub(x);
                for unit in &mut self.sprite_line.units {
                    unit.count_blanked(rest);
                }
                self.sprite_line.frozen_at = Some((self.next_line(), 0));
                self.sprite_line.units_x = 0;
            }
        }
    }

    /// Rendering was just switched on. While it was off the counters kept counting on the
    /// visible dots but the shifters stood still (AccuracyCoin "Stale Sprite Shift Regs"),
    /// and nothing was fetched: the line buffer is redrawn from the units, from the current
    /// pixel on a visible line, else for the whole next line.
    pub(crate) fn thaw_sprite_units(&mut self) {
        let Some((frozen_line, frozen_x)) = self.sprite_line.frozen_at.take() else {
            return;
        };
        let (line, x) = if self.scanline < POST_RENDER_SCANLINE && self.dot <= 256 {
            (self.scanline, self.dot.saturating_sub(1))
        } else {
            (self.next_line(), 0)
        };
        let counted = if line == frozen_line {
            x.saturating_sub(frozen_x)
        } else {
            x
        };
        for unit in &mut self.sprite_line.units {
            unit.count_blanked(counted);
        }
        self.sprite_line.units_x = x;
        let start = usize::from(x);
        if let Some(rest) = self.sprite_line.pixels.get_mut(start..) {
            rest.fill(0);
        }
        for slot in 0..8 {
            let unit = self.sprite_line.units[slot];
            self.draw_unit(unit, unit.next_column(start));
        }
    }

    /// The scanline after the current one.
    fn next_line(&self) -> u16 {
        if self.scanline + 1 >= self.layout.scanlines_per_frame {
            0
        } else {
            self.scanline + 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight columns at once draw what one column at a time does: each opaque pixel the unit
    /// still has to send, with its flags, into an empty cell only; at every X (the last
    /// seven columns cut off at 255) and over a line buffer already partly drawn.
    #[test]
    fn drawing_a_unit_matches_drawing_it_column_by_column() {
        let mut next = crate::test_support::xorshift32(0x2545_F491);
        for case in 0..20_000 {
            let mut ppu = Ppu::new();
            for cell in ppu.sprite_line.pixels.iter_mut() {
                // About half the cells already hold something (any byte).
                *cell = if next() & 1 == 0 { 0 } else { next() as u8 };
            }
            let unit = SpriteUnit {
                low: next() as u8,
                high: next() as u8,
                flags: 0x10 | (next() as u8 & 0x6C),
                counter: 0,
                shifted: (next() % 9) as u8,
                counting: false,
            };
            let x = (next() % 256) as usize;
            let mut expected = ppu.sprite_line.pixels;
            if unit.low | unit.high != 0 && unit.shifted < 8 {
                let (low, high) = (unit.low << unit.shifted, unit.high << unit.shifted);
                for column in 0..usize::from(8 - unit.shifted) {
                    let bit = 7 - column;
                    let pixel = ((low >> bit) & 1) | (((high >> bit) & 1) << 1);
                    if let Some(cell) = expected.get_mut(x + column) {
                        if pixel != 0 && *cell == 0 {
                            *cell = unit.flags | pixel;
                        }
                    }
                }
            }
            ppu.draw_unit(unit, x);
            assert_eq!(
                ppu.sprite_line.pixels, expected,
                "case {case}: {unit:?} at {x}"
            );
        }
    }

    #[test]
    fn state_fields_out_of_range_are_refused() {
        assert_eq!(SpriteLine::default().validate_state(), Ok(()));
        type Edit = fn(&mut SpriteLine);
        let cases: [(Edit, &str); 4] = [
            (
                |l| l.pattern_addr = 0x2000,
                "PPU sprite pattern address 8192 is out of range 0..=8191",
            ),
            // `8 - shifted` would underflow.
            (
                |l| l.units[3].shifted = 9,
                "PPU sprite unit 3 pixels sent 9 is out of range 0..=8",
            ),
            (
                |l| l.units[0].counter = 256,
                "PPU sprite unit 0 counter 256 is out of range 0..=255",
            ),
            (
                |l| l.frozen_at = Some((0, 999)),
                "PPU sprite units' frozen pixel x 999 is out of range 0..=256",
            ),
        ];
        for (edit, message) in cases {
            let mut line = SpriteLine::default();
            edit(&mut line);
            assert_eq!(
                line.validate_state().map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
    }
}
