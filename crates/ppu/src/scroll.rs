//! The internal scroll registers ("loopy" v, t, x, w) and their update rules
//! (NESdev wiki "PPU scrolling").
//!
//! v and t are 15-bit: `yyy NN YYYYY XXXXX` = fine Y, nametable select, coarse Y, coarse X.

use crate::check_range;
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

const COARSE_X: u16 = 0x001F;
const COARSE_Y: u16 = 0x03E0;
const NAMETABLE_X: u16 = 0x0400;
const NAMETABLE_Y: u16 = 0x0800;
const FINE_Y: u16 = 0x7000;
/// The bits `hori(v) = hori(t)` copies at dot 257.
const HORIZONTAL_BITS: u16 = COARSE_X | NAMETABLE_X;
/// The bits `vert(v) = vert(t)` copies on pre-render dots 280-304.
const VERTICAL_BITS: u16 = COARSE_Y | NAMETABLE_Y | FINE_Y;

/// For each nametable select, coarse Y and coarse X (v's low 12 bits): the low 12 bits of
/// the attribute byte's address (`$23C0 | NN | YYY000 | XXX`, each 4x4-tile area's byte of
/// the nametable's attribute table) in bits 0-11, and the shift that selects the tile's
/// 2-bit quadrant in it (coarse Y bit 1, coarse X bit 1) in bits 12-14.
static ATTRIBUTES: [u16; 0x1000] = {
    let mut table = [0; 0x1000];
    let mut v = 0;
    while v < 0x1000 {
        let addr = 0x03C0 | (v & 0x0C00) | ((v >> 4) & 0x38) | ((v >> 2) & 0x07);
        let shift = ((v >> 4) & 0x04) | (v & 0x02);
        table[v as usize] = addr | (shift << 12);
        v += 1;
    }
    table
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct ScrollRegisters {
    /// Current VRAM address.
    pub v: u16,
    /// Temporary VRAM address (the top-left of the screen while rendering).
    pub t: u16,
    /// Fine X scroll, 3 bits.
    pub fine_x: u8,
    /// First/second write toggle shared by `$2005` and `$2006`.
    pub w: bool,
}

impl ScrollRegisters {
    /// Checks scroll registers decoded from a save state (see `Ppu::validate_state`): v and t
    /// are 15-bit, fine X 3-bit.
    pub fn validate_state(&self) -> Result<(), InvalidState> {
        check_range("PPU VRAM address (v)", self.v, 0..=0x7FFF)?;
        check_range("PPU temporary VRAM address (t)", self.t, 0..=0x7FFF)?;
        check_range("PPU fine X scroll", self.fine_x, 0..=7)
    }

    /// `$2000` write: t's nametable select bits come from the value's low two bits.
    #[inline]
    pub fn write_ctrl(&mut self, value: u8) {
        self.t = (self.t & !(NAMETABLE_X | NAMETABLE_Y)) | (u16::from(value & 0x03) << 10);
    }

    /// `$2005` write: X scroll on the first write, Y scroll on the second.
    pub fn write_scroll(&mut self, value: u8) {
        if self.w {
            self.t = (self.t & !(FINE_Y | COARSE_Y))
                | (u16::from(value & 0x07) << 12)
                | (u16::from(value & 0xF8) << 2);
        } else {
            self.t = (self.t & !COARSE_X) | u16::from(value >> 3);
            self.fine_x = value & 0x07;
        }
        self.w = !self.w;
    }

    /// `$2006` write: high byte (6 bits, bit 14 cleared) first, then low byte, which copies
    /// t into v. Returns the new v after the second write.
    pub fn write_addr(&mut self, value: u8) -> Option<u16> {
        let copied = if self.w {
            self.t = (self.t & 0x7F00) | u16::from(value);
            self.v = self.t;
            Some(self.v)
        } else {
            self.t = (self.t & 0x00FF) | (u16::from(value & 0x3F) << 8);
            None
        };
        self.w = !self.w;
        copied
    }

    /// Coarse X increment, wrapping into the horizontally adjacent nametable after tile 31.
    #[inline]
    pub fn increment_coarse_x(&mut self) {
        if self.v & COARSE_X == COARSE_X {
            self.v = (self.v & !COARSE_X) ^ NAMETABLE_X;
        } else {
            self.v += 1;
        }
    }

    /// Fine Y increment with carry into coarse Y; coarse Y 29 wraps to 0 and switches the
    /// vertical nametable, coarse Y 31 (attribute rows, only reachable by writing it) wraps to 0
    /// without switching.
    #[inline]
    pub fn increment_y(&mut self) {
        if self.v & FINE_Y != FINE_Y {
            self.v += 0x1000;
            return;
        }
        self.v &= !FINE_Y;
        let coarse_y = (self.v & COARSE_Y) >> 5;
        let next = match coarse_y {
            29 => {
                self.v ^= NAMETABLE_Y;
                0
            }
            31 => 0,
            other => other + 1,
        };
        self.v = (self.v & !COARSE_Y) | (next << 5);
    }

    /// Dot 257: `hori(v) = hori(t)`.
    #[inline]
    pub fn copy_horizontal(&mut self) {
        self.v = (self.v & !HORIZONTAL_BITS) | (self.t & HORIZONTAL_BITS);
    }

    /// Pre-render dots 280-304: `vert(v) = vert(t)`.
    #[inline]
    pub fn copy_vertical(&mut self) {
        self.v = (self.v & !VERTICAL_BITS) | (self.t & VERTICAL_BITS);
    }

    /// The v step after a `$2007` access outside rendering: +1 or +32, 15-bit wrap.
    #[inline]
    pub fn increment_linear(&mut self, step: u16) {
        self.v = self.v.wrapping_add(step) & 0x7FFF;
    }

    /// The nametable byte address for v.
    #[inline]
    pub fn nametable_addr(&self) -> u16 {
        0x2000 | (self.v & 0x0FFF)
    }

    /// The attribute byte address for v.
    #[inline]
    pub fn attribute_addr(&self) -> u16 {
        0x2000 | (self.attribute_entry() & 0x0FFF)
    }

    /// Shift that selects v's 2-bit quadrant inside an attribute byte.
    #[inline]
    pub fn attribute_shift(&self) -> u8 {
        (self.attribute_entry() >> 12) as u8
    }

    /// v's `ATTRIBUTES` entry: every background tile fetches an attribute byte, and one load
    /// costs fewer instructions than rearranging v's bits for the address and the shift.
    #[inline(always)]
    fn attribute_entry(&self) -> u16 {
        ATTRIBUTES[usize::from(self.v & 0x0FFF)]
    }

    /// Fine Y (row within the tile) of v.
    #[inline]
    pub fn fine_y(&self) -> u16 {
        (self.v >> 12) & 0x07
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scroll_writes_follow_the_wiki_bit_layout() {
        let mut s = ScrollRegisters::default();
        s.write_ctrl(0x03);
        assert_eq!(s.t, 0x0C00);
        // First $2005 write: coarse X = value >> 3, fine X = value & 7.
        s.write_scroll(0x7D); // 0111_1101
        assert_eq!(s.t & 0x1F, 0x0F);
        assert_eq!(s.fine_x, 5);
        assert!(s.w);
        // Second write: fine Y = value & 7, coarse Y = value >> 3.
        s.write_scroll(0x5E); // 0101_1110
        assert_eq!(s.t, 0x6000 | 0x0C00 | (0x0B << 5) | 0x0F);
        assert!(!s.w);
        assert_eq!(s.v, 0, "$2005 never touches v");
    }

    #[test]
    fn addr_writes_clear_bit_14_and_copy_t_to_v_on_second_write() {
        let mut s = ScrollRegisters {
            t: 0x7FFF,
            ..Default::default()
        };
        assert_eq!(s.write_addr(0xFF), None);
        assert_eq!(
            s.t, 0x3FFF,
            "top two bits of the value are dropped and bit 14 cleared"
        );
        assert_eq!(s.write_addr(0x12), Some(0x3F12));
        assert_eq!(s.v, 0x3F12);
        assert!(!s.w);
    }

    #[test]
    fn ctrl_write_between_addr_writes_changes_the_nametable() {
        let mut s = ScrollRegisters::default();
        s.write_addr(0x20);
        s.write_ctrl(0x01);
        s.write_addr(0x00);
        assert_eq!(s.v, 0x2400);
    }

    #[test]
    fn shared_write_toggle_between_2005_and_2006() {
        let mut s = ScrollRegisters::default();
        s.write_scroll(0x00);
        // This is the second write of the pair: it sets the low byte and copies.
        assert_eq!(s.write_addr(0x34), Some(0x0034));
    }

    #[test]
    fn coarse_x_wraps_into_the_next_nametable() {
        let mut s = ScrollRegisters {
            v: 0x001E,
            ..Default::default()
        };
        s.increment_coarse_x();
        assert_eq!(s.v, 0x001F);
        s.increment_coarse_x();
        assert_eq!(s.v, 0x0400);
        s.v = 0x041F;
        s.increment_coarse_x();
        assert_eq!(s.v, 0x0000);
    }

    #[test]
    fn y_increment_carries_and_wraps_at_29_and_31() {
        let mut s = ScrollRegisters {
            v: 0x6000 | (5 << 5),
            ..Default::default()
        };
        s.increment_y();
        assert_eq!(s.v, 0x7000 | (5 << 5));
        s.increment_y();
        assert_eq!(s.v, 6 << 5, "fine Y overflow carries into coarse Y");
        // Coarse Y 29 with fine Y 7: wrap to 0 and switch vertical nametable.
        s.v = 0x7000 | (29 << 5) | 0x0003;
        s.increment_y();
        assert_eq!(s.v, 0x0800 | 0x0003);
        s.increment_y();
        assert_eq!(s.v, 0x1800 | 0x0003);
        // Coarse Y 31: wraps to 0 without switching nametables.
        s.v = 0x7000 | (31 << 5) | 0x0800;
        s.increment_y();
        assert_eq!(s.v, 0x0800);
        // Coarse Y 30 goes to 31 (attribute memory), no wrap.
        s.v = 0x7000 | (30 << 5);
        s.increment_y();
        assert_eq!(s.v, 31 << 5);
    }

    #[test]
    fn horizontal_and_vertical_copies_take_only_their_bits() {
        let mut s = ScrollRegisters {
            v: 0x0000,
            t: 0x7FFF,
            ..Default::default()
        };
        s.copy_horizontal();
        assert_eq!(s.v, 0x041F);
        s.v = 0x041F;
        s.copy_vertical();
        assert_eq!(s.v, 0x7FFF);
        s.t = 0;
        s.copy_vertical();
        assert_eq!(s.v, 0x041F);
    }

    #[test]
    fn fetch_addresses() {
        let s = ScrollRegisters {
            v: 0x0C00 | (17 << 5) | 22 | 0x5000,
            ..Default::default()
        };
        assert_eq!(s.nametable_addr(), 0x2C00 | (17 << 5) | 22);
        // Attribute: row 17/4 = 4, column 22/4 = 5.
        assert_eq!(s.attribute_addr(), 0x2FC0 | (4 << 3) | 5);
        // Quadrant shift: (coarse Y & 2) << 1 | (coarse X & 2); Y=17 gives 0, X=22 gives 2.
        assert_eq!(s.attribute_shift(), 2);
        assert_eq!(s.fine_y(), 5);
    }

    #[test]
    fn attribute_fetch_of_every_tile_position() {
        for v in 0..=0x7FFF_u16 {
            let s = ScrollRegisters {
                v,
                ..Default::default()
            };
            let (coarse_x, coarse_y, nametable) = (v & 31, (v >> 5) & 31, (v >> 10) & 3);
            // Each nametable's attribute table: 8 bytes per row of 4x4-tile areas.
            let addr = 0x2000 + nametable * 0x400 + 0x3C0 + (coarse_y / 4) * 8 + coarse_x / 4;
            // Quadrants: right half of the area +2, bottom half +4.
            let shift = (coarse_x / 2 % 2) * 2 + (coarse_y / 2 % 2) * 4;
            assert_eq!(s.attribute_addr(), addr, "v = {v:#06X}");
            assert_eq!(u16::from(s.attribute_shift()), shift, "v = {v:#06X}");
        }
    }
}
