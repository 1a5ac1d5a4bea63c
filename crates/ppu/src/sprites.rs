//! Sprite pattern fetches (dots 257-320) and the sprite pixels of the next scanline.
//!
//! The hardware keeps eight shift registers with X down-counters. Because the patterns are
//! fixed once fetched, the same output is produced by drawing the eight fetched sprites into a
//! 256-entry line buffer as each one's high pattern byte arrives, lower OAM index first and
//! never over an opaque pixel (the first opaque sprite wins, whatever its priority bit).

use crate::{ctrl, Ppu, PpuBus};

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

#[derive(Clone)]
pub(crate) struct SpriteLine {
    pub pixels: [u8; 256],
    /// Whether any cell is non-zero (so clearing can be skipped on sprite-free lines).
    pub occupied: bool,
    /// Pattern address of the slot being fetched, set at its low-byte fetch.
    pattern_addr: u16,
    pattern_low: u8,
}

impl Default for SpriteLine {
    fn default() -> Self {
        SpriteLine {
            pixels: [0; 256],
            occupied: false,
            pattern_addr: 0,
            pattern_low: 0,
        }
    }
}

impl SpriteLine {
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
    /// Sprite-fetch work of dot `dot` (257-320) on a rendering line. Each slot takes 8 dots:
    /// two garbage nametable fetches, then pattern low and high. The pre-render line has no
    /// evaluation, so it fetches (and line 0 shows) whatever secondary OAM still holds from
    /// line 239, as hardware does (AccuracyCoin "Sprites On Scanline 0").
    #[inline]
    pub(crate) fn sprite_fetch_dot<B: PpuBus>(&mut self, bus: &mut B, dot: u16) {
        let offset = dot - 257;
        let slot = usize::from(offset >> 3) & 7;
        let base = slot * 4;
        match offset & 7 {
            0 => {
                self.oam_bus = self.secondary_oam[base];
                bus.read(self.scroll.nametable_addr());
            }
            1 => self.oam_bus = self.secondary_oam[base + 1],
            2 => {
                self.oam_bus = self.secondary_oam[base + 2];
                bus.read(self.scroll.nametable_addr());
            }
            3 => self.oam_bus = self.secondary_oam[base + 3],
            4 => {
                let addr = self.sprite_pattern_addr(base);
                self.sprite_line.pattern_addr = addr;
                self.sprite_line.pattern_low = bus.read(addr);
            }
            6 => {
                let high = bus.read(self.sprite_line.pattern_addr | 8);
                if slot < usize::from(self.evaluation.sprite_count) && self.slot_in_range(base) {
                    self.draw_sprite(slot, self.sprite_line.pattern_low, high);
                }
            }
            _ => {}
        }
    }

    /// The fetch unit compares Y against the current line again: a slot whose row falls
    /// outside the sprite gets a transparent pattern. This matters on the pre-render line
    /// (line 261 compares as 5), where stale slots are fetched: a sprite left from line 239
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
    fn sprite_pattern_addr(&self, base: usize) -> u16 {
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

    fn draw_sprite(&mut self, slot: usize, low: u8, high: u8) {
        let base = slot * 4;
        let attributes = self.secondary_oam[base + 2];
        let x = usize::from(self.secondary_oam[base + 3]);
        let (low, high) = if attributes & ATTR_FLIP_HORIZONTAL != 0 {
            (low.reverse_bits(), high.reverse_bits())
        } else {
            (low, high)
        };
        if low | high == 0 {
            return;
        }
        let mut flags = SPRITE_OPAQUE | ((attributes & ATTR_PALETTE) << 2);
        if attributes & ATTR_BEHIND_BACKGROUND != 0 {
            flags |= SPRITE_BEHIND_BACKGROUND;
        }
        if slot == 0 && self.evaluation.sprite_zero_in_line {
            flags |= SPRITE_ZERO;
        }
        // Sprites do not wrap: columns past x=255 are simply not shown.
        for (column, cell) in self
            .sprite_line
            .pixels
            .iter_mut()
            .skip(x)
            .take(8)
            .enumerate()
        {
            let bit = 7 - column;
            let pixel = ((low >> bit) & 1) | (((high >> bit) & 1) << 1);
            if pixel != 0 && *cell == 0 {
                *cell = flags | pixel;
            }
        }
        self.sprite_line.occupied = true;
    }
}
