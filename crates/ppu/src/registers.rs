//! CPU-visible registers `$2000-$2007` and the PPU's own open bus (the "I/O latch").

use crate::{
    ctrl, mask, palette_ram_index, Ppu, PpuBus, PpuWriteBus, FRAME_WIDTH, POST_RENDER_SCANLINE,
};
use borsh::{BorshDeserialize, BorshSerialize};

/// Frames after its last refresh with a 1 that a latch bit decays to 0. Hardware takes about
/// 600 ms (varies with the console and temperature); 36 NTSC frames is 600 ms.
pub(crate) const IO_LATCH_DECAY_FRAMES: u64 = 36;

/// Dots between a `$2001` write (made between two dots) and the first dot that sees it: 1
/// would be the very next dot.
pub(crate) const MASK_WRITE_DELAY_DOTS: u8 = 4;

/// A greyscale or emphasis change reaches pixel x = `dot - COLOUR_PIPELINE_DOTS` on (`dot`
/// being the next dot to run at the write; pixel x is decided at dot x + 1): see
/// `Ppu::apply_output_bits`.
const COLOUR_PIPELINE_DOTS: usize = 3;

/// Dots between a `$2007` read (made between two dots) and the dot before whose work the
/// buffer refill and v step happen, counted like `MASK_WRITE_DELAY_DOTS`. The CPU read ends
/// one dot after the access point and the refill comes two dots after that (AccuracyCoin
/// "$2007 Stress Test"), so it takes the fetch of the third dot after the access; a second
/// read one CPU cycle (3 dots) later still sees the old buffer.
pub(crate) const DATA_READ_DELAY_DOTS: u8 = 4;

/// Dots between the second `$2006` write and the dot before whose work v takes the new
/// address, counted like `MASK_WRITE_DELAY_DOTS`: the copy lands after the third dot following
/// the access (AccuracyCoin "Hybrid Addresses" catches it between the two dots of a fetch).
pub(crate) const ADDR_WRITE_DELAY_DOTS: u8 = 4;

/// The PPU data-bus latch that write-only registers and undriven status bits read back.
///
/// Each bit is a capacitor: driving it with 1 charges it (and restarts its decay timer),
/// driving 0 empties it, and a charged bit not refreshed for ~600 ms reads 0. Decay is applied
/// lazily from per-bit timestamps, so nothing runs per dot.
#[derive(Debug, Clone, Default, BorshSerialize, BorshDeserialize)]
pub(crate) struct IoLatch {
    value: u8,
    /// `frames_completed` when each bit was last driven with a 1.
    refreshed_at: [u64; 8],
}

impl IoLatch {
    /// The latch value as seen at frame `now`, with stale bits decayed.
    pub fn read(&self, now: u64) -> u8 {
        let mut fresh = 0;
        for (bit, refreshed) in self.refreshed_at.iter().enumerate() {
            fresh |= u8::from(now.saturating_sub(*refreshed) < IO_LATCH_DECAY_FRAMES) << bit;
        }
        self.value & fresh
    }

    /// Drives the bits selected by `bits` with the matching bits of `value`. Every register
    /// write drives all eight, so nothing of the old value (and its decay) is read then.
    #[inline]
    pub fn refresh(&mut self, now: u64, value: u8, bits: u8) {
        let kept = if bits == 0xFF {
            0
        } else {
            self.read(now) & !bits
        };
        self.value = kept | (value & bits);
        let charged = value & bits;
        // A select, not a branch, per bit: the eight stores compile to a few vector ones.
        for (bit, refreshed) in self.refreshed_at.iter_mut().enumerate() {
            *refreshed = if charged >> bit & 1 != 0 {
                now
            } else {
                *refreshed
            };
        }
    }
}

/// The forms of a `$2001` value the pixel path reads (the `Ppu` fields of the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecodedMask {
    pub rendering_enabled: bool,
    pub background_min_x: usize,
    pub sprite_min_x: usize,
    pub colour_mask: u8,
    pub emphasis_bits: u16,
}

impl DecodedMask {
    /// `value` decoded; `swaps_red_green_emphasis` (a 2C07 or UA6538: see
    /// [`PpuModel::swaps_red_green_emphasis`](crate::PpuModel::swaps_red_green_emphasis))
    /// puts its bit 5 (green there) and bit 6 (red) into the 2C02's order.
    pub(crate) fn of(value: u8, swaps_red_green_emphasis: bool) -> DecodedMask {
        let first_visible_x = |enable: u8, left: u8| match (value & enable != 0, value & left != 0)
        {
            (false, _) => 256,
            (true, false) => 8,
            (true, true) => 0,
        };
        DecodedMask {
            rendering_enabled: value & mask::RENDERING != 0,
            background_min_x: first_visible_x(mask::BACKGROUND, mask::BACKGROUND_LEFT),
            sprite_min_x: first_visible_x(mask::SPRITES, mask::SPRITES_LEFT),
            colour_mask: if value & mask::GREYSCALE != 0 {
                0x30
            } else {
                0x3F
            },
            emphasis_bits: emphasis_bits(value, swaps_red_green_emphasis),
        }
    }
}

/// The emphasis bits of `$2001` value `value` as frame-buffer pixels carry them (bits 6-8:
/// red, green, blue in a 2C02's order), from a PPU whose bits 5 and 6 are green and red when
/// `swaps_red_green_emphasis`.
#[inline]
fn emphasis_bits(value: u8, swaps_red_green_emphasis: bool) -> u16 {
    let bits = value >> 5;
    let bits = if swaps_red_green_emphasis {
        (bits & 0b100) | ((bits & 0b001) << 1) | ((bits & 0b010) >> 1)
    } else {
        bits
    };
    u16::from(bits) << 6
}

impl Ppu {
    /// A CPU read of `$2000-$3FFF`; `addr & 7` selects the register.
    pub fn read_register<B: PpuBus>(&mut self, addr: u16, bus: &mut B) -> u8 {
        self.catch_up();
        let now = self.frames_completed;
        match addr & 7 {
            2 => {
                let value = self.status_value();
                // Reading on the dot VBlank is set: the read sees it clear and the set never
                // happens this frame, so neither does the NMI.
                if self.scanline == self.layout.vblank_scanline
                    && self.dot == 1
                    && self.frame_timing.vblank_read_race
                {
                    self.vblank_suppressed = true;
                }
                self.vblank = false;
                self.scroll.w = false;
                self.io_latch.refresh(now, value, 0xE0);
                value
            }
            4 if !self.revision.reads_oam() => self.io_latch.read(now),
            4 => {
                let value = if self.rendering_active() {
                    self.oam_bus_at_read_end()
                } else {
                    self.oam[usize::from(self.oam_addr)]
                };
                self.io_latch.refresh(now, value, 0xFF);
                value
            }
            7 => self.read_data(bus),
            _ => self.io_latch.read(now),
        }
    }

    /// What a read of the register would return, without any side effect. Mid-line, the
    /// sprite evaluation and pixel output the PPU runs lazily may be behind the dot; `$2002`
    /// (sprite 0 hit, overflow) and `$2004` (the OAM bus) depend on them, so they are read
    /// from a copy brought up to the dot, as `read_register` would see them.
    pub fn peek_register(&self, addr: u16) -> u8 {
        if matches!(addr & 7, 2 | 4) && self.deferred_work_pending() {
            let mut caught_up = self.clone();
            caught_up.catch_up();
            return caught_up.peek_register_as_is(addr);
        }
        self.peek_register_as_is(addr)
    }

    /// `peek_register` on the state as it stands.
    fn peek_register_as_is(&self, addr: u16) -> u8 {
        match addr & 7 {
            2 => self.status_value(),
            4 if !self.revision.reads_oam() => self.io_latch.read(self.frames_completed),
            4 => self.oam_data_value(),
            7 => {
                let vram_addr = self.scroll.v & 0x3FFF;
                if vram_addr >= 0x3F00 && self.revision.reads_palette() {
                    (self.io_latch.read(self.frames_completed) & 0xC0)
                        | self.palette_read_value(vram_addr)
                } else {
                    self.read_buffer
                }
            }
            _ => self.io_latch.read(self.frames_completed),
        }
    }

    /// A CPU write of `$2000-$3FFF`; `addr & 7` selects the register.
    pub fn write_register<B: PpuWriteBus>(&mut self, addr: u16, value: u8, bus: &mut B) {
        self.catch_up();
        self.io_latch.refresh(self.frames_completed, value, 0xFF);
        match addr & 7 {
            0 => {
                if !self.warmup {
                    // nmi_line() is combinational, so enabling NMI while VBlank is set raises
                    // /NMI at once (an edge for the CPU) and disabling drops it.
                    self.ctrl = value;
                    self.scroll.write_ctrl(value);
                }
            }
            1 => {
                if !self.warmup {
                    if self.delays.mask != 0 {
                        // A second write before the first landed: the first lands now.
                        self.apply_mask(self.pending_mask);
                    }
                    self.apply_output_bits(value);
                    self.pending_mask = value;
                    self.delays.mask = MASK_WRITE_DELAY_DOTS;
                }
            }
            2 => {}
            3 => self.oam_addr = value,
            4 => self.write_oam_data(value),
            5 => {
                if !self.warmup {
                    self.scroll.write_scroll(value);
                }
            }
            6 => {
                self.settle_data_read(bus);
                self.settle_addr_write(bus);
                if !self.warmup {
                    let old_v = self.scroll.v;
                    if let Some(v) = self.scroll.write_addr(value) {
                        // t is written now; v follows `ADDR_WRITE_DELAY_DOTS` later.
                        self.scroll.v = old_v;
                        self.pending_v = v;
                        self.delays.addr_write = ADDR_WRITE_DELAY_DOTS;
                    }
                }
            }
            _ => self.write_data(value, bus),
        }
    }

    /// A `$2001` value reaching the rendering logic (after `MASK_WRITE_DELAY_DOTS`).
    pub(crate) fn apply_mask(&mut self, value: u8) {
        self.delays.mask = 0;
        self.catch_up();
        let was_rendering = self.rendering_enabled;
        self.set_mask(value);
        if was_rendering != self.rendering_enabled {
            // Evaluation and pixel output (caught up above) resume or stop from the next dot.
            self.evaluation_cursor = self.dot.max(1);
            self.resume_pixels();
            if self.rendering_enabled {
                self.thaw_sprite_units();
            } else {
                self.freeze_sprite_units();
                if self.scanline < POST_RENDER_SCANLINE
                    || self.scanline == self.layout.pre_render_scanline
                {
                    self.mark_oam_corruption(self.dot);
                }
            }
        }
    }

    /// Rendering switched off on a rendering line at `dot`: the OAM row address the clear /
    /// fetch logic was driving stays latched, and that row gets row 0 written over it when the
    /// next frame's rendering starts (NESdev wiki "PPU OAM" errata; AccuracyCoin "OAM
    /// Corruption" wants nothing visible right after the disable nor right after a re-enable
    /// in VBlank, and blargg's sprite_overflow "5.Emulator" #3 re-enables mid-frame and needs
    /// the rest of that frame's OAM intact). During the secondary OAM clear (dots 0-63) the row
    /// steps every 2 dots; during the sprite fetches (dots 256-319) each 8-dot slot steps the
    /// row on its first 3 dots and then holds it. Other dots leave no row to corrupt.
    pub(crate) fn mark_oam_corruption(&mut self, dot: u16) {
        let row = match dot {
            0..=63 => dot >> 1,
            256..=319 => {
                let slot_dot = dot - 256;
                (slot_dot >> 3) * 4 + (slot_dot & 7).min(3)
            }
            _ => return,
        };
        self.oam_corruption_rows |= 1 << (row & 31);
    }

    /// Rendering starting a frame (pre-render dot 1) with corruption pending: every marked row
    /// receives row 0.
    pub(crate) fn corrupt_oam_rows(&mut self) {
        // Row 0 copied onto itself changes nothing.
        let mut rows = self.oam_corruption_rows & !1;
        self.oam_corruption_rows = 0;
        while rows != 0 {
            let row = rows.trailing_zeros() as usize;
            rows &= rows - 1;
            let (first_row, rest) = self.oam.split_at_mut(8);
            if let Some(target) = rest.get_mut((row - 1) * 8..row * 8) {
                target.copy_from_slice(first_row);
            }
            self.oam_changed();
        }
    }

    /// The pixel-output bits of a `$2001` write, which do not wait for the rendering logic.
    ///
    /// Greyscale and emphasis act at the end of the pixel pipeline, not where a pixel is
    /// decided: a pixel reaches the video output about three dots after its dot (NESdev wiki
    /// "PPU rendering": the first pixel is output during cycle 4), and the emphasis lines go
    /// straight from the register to the output stage (Breaking NES notes). So they take
    /// effect at once, on the two pixels already decided before the write as well (Mesen2
    /// and TriCNES agree on this), recoloured as Mesen2 does it: a pixel greyscaled before
    /// the write keeps its grey colour.
    ///
    /// The background and sprite show bits and the left-column masks gate the pixel
    /// multiplexer from the next pixel on (Mesen2's model; TriCNES delays them with
    /// rendering), while the fetches, shifters and evaluation that rendering enable drives
    /// wait for `MASK_WRITE_DELAY_DOTS` (AccuracyCoin "BG Serial In" fails with less).
    fn apply_output_bits(&mut self, value: u8) {
        let decoded = DecodedMask::of(value, self.layout.swaps_red_green_emphasis);
        self.background_min_x = decoded.background_min_x;
        self.sprite_min_x = decoded.sprite_min_x;
        if (decoded.colour_mask, decoded.emphasis_bits) == (self.colour_mask, self.emphasis_bits) {
            return;
        }
        self.colour_mask = decoded.colour_mask;
        self.emphasis_bits = decoded.emphasis_bits;
        self.refresh_colour_cache();
        if self.scanline >= POST_RENDER_SCANLINE {
            return;
        }
        // Pixels up to x = `dot - 2` are decided (and caught up: `write_register` did);
        // recolour those from x = `dot - 3` on, which may be the previous line's last ones.
        let line_start = usize::from(self.scanline) * FRAME_WIDTH;
        let decided_end = line_start + usize::from(self.dot.saturating_sub(1).min(256));
        let first = (line_start + usize::from(self.dot)).saturating_sub(COLOUR_PIPELINE_DOTS);
        let (colour_mask, emphasis) = (u16::from(self.colour_mask), self.emphasis_bits);
        if let Some(pixels) = self.frame.get_mut(first..decided_end) {
            for pixel in pixels {
                *pixel = (*pixel & colour_mask) | emphasis;
            }
        }
    }

    /// Stores PPUMASK and its decoded forms.
    pub(crate) fn set_mask(&mut self, value: u8) {
        self.mask = value;
        DecodedMask {
            rendering_enabled: self.rendering_enabled,
            background_min_x: self.background_min_x,
            sprite_min_x: self.sprite_min_x,
            colour_mask: self.colour_mask,
            emphasis_bits: self.emphasis_bits,
        } = DecodedMask::of(value, self.layout.swaps_red_green_emphasis);
        self.refresh_colour_cache();
    }

    /// The decoded `$2001` fields as they stand (see [`DecodedMask`]).
    pub(crate) fn decoded_mask(&self) -> DecodedMask {
        DecodedMask {
            rendering_enabled: self.rendering_enabled,
            background_min_x: self.background_min_x,
            sprite_min_x: self.sprite_min_x,
            colour_mask: self.colour_mask,
            emphasis_bits: self.emphasis_bits,
        }
    }

    /// `$2002`: VBlank, sprite 0 hit, overflow; the low five bits are the I/O latch.
    ///
    /// The VBlank bit is latched when the CPU read begins, but the two sprite bits pass
    /// through unlatched and are what they are when it ends, about two dots later
    /// (AccuracyCoin "$2002 flag timing"): a read just before pre-render dot 1 already sees
    /// them cleared while VBlank still reads set.
    fn status_value(&self) -> u8 {
        let sprite_flags_clearing =
            self.scanline == self.layout.pre_render_scanline && self.dot == 1;
        let sprite_flags = if sprite_flags_clearing {
            0
        } else {
            (u8::from(self.sprite_zero_hit) << 6) | (u8::from(self.sprite_overflow) << 5)
        };
        (u8::from(self.vblank) << 7)
            | sprite_flags
            | (self.io_latch.read(self.frames_completed) & 0x1F)
    }

    /// `$2004` read value: while rendering, whatever the sprite circuitry has on the OAM bus
    /// (secondary-OAM clear value $FF, evaluation reads, sprite fetch bytes); otherwise
    /// `OAM[OAMADDR]`.
    fn oam_data_value(&self) -> u8 {
        if self.rendering_active() {
            self.oam_bus
        } else {
            self.oam[usize::from(self.oam_addr)]
        }
    }

    /// The OAM bus during rendering as a `$2004` read sees it: the data is taken at the end
    /// of the CPU read, after the dot about to run (AccuracyCoin "$2004 Stress Test"). No
    /// CPU access can come before that dot, so its evaluation step may run now.
    fn oam_bus_at_read_end(&mut self) -> u8 {
        let dot = self.dot;
        match dot {
            1..=256 if self.scanline < POST_RENDER_SCANLINE => {
                self.run_evaluation_until(dot + 1);
                self.oam_bus
            }
            257..=320 => {
                let offset = usize::from(dot - 257);
                self.secondary_oam[((offset >> 3) * 4 + (offset & 7).min(3)) & 31]
            }
            0 | 321..=340 => self.secondary_oam[0],
            _ => self.oam_bus,
        }
    }

    /// `$2004` write. While rendering the byte is not stored and OAMADDR gets the glitchy
    /// increment: +4 on its high six bits, low two bits cleared (measured by AccuracyCoin's
    /// "Address $2004 behavior" test on hardware).
    fn write_oam_data(&mut self, value: u8) {
        if self.rendering_active() {
            self.oam_addr = self.oam_addr.wrapping_add(4) & 0xFC;
            return;
        }
        // Attribute bytes (n*4+2) have no storage for bits 2-4: they read back as 0.
        let stored = if self.oam_addr & 3 == 2 {
            value & 0xE3
        } else {
            value
        };
        self.oam[usize::from(self.oam_addr)] = stored;
        self.oam_changed();
        self.oam_addr = self.oam_addr.wrapping_add(1);
    }

    /// Palette RAM as `$2007` reads it: 6 bits, greyscale applied.
    fn palette_read_value(&self, vram_addr: u16) -> u8 {
        let value = self.palette_ram[palette_ram_index(vram_addr)];
        if self.mask & mask::GREYSCALE != 0 {
            value & 0x30
        } else {
            value
        }
    }

    /// `$2007` read: returns the read buffer (palette addresses return palette RAM at once,
    /// bits 6-7 from the latch, on revision G). The buffer refill and the v step follow
    /// `DATA_READ_DELAY_DOTS` later ([`Ppu::finish_data_read`]).
    fn read_data<B: PpuBus>(&mut self, bus: &mut B) -> u8 {
        self.settle_addr_write(bus);
        let now = self.frames_completed;
        let vram_addr = self.scroll.v & 0x3FFF;
        let value = if vram_addr >= 0x3F00 && self.revision.reads_palette() {
            let value = (self.io_latch.read(now) & 0xC0) | self.palette_read_value(vram_addr);
            self.io_latch.refresh(now, value, 0x3F);
            value
        } else {
            let value = self.read_buffer;
            self.io_latch.refresh(now, value, 0xFF);
            value
        };
        if self.delays.data_read != 0 {
            // A read one CPU cycle after another (`LDA $20F7,X` crossing a page, DMA halt
            // re-reads) sampled the buffer before the earlier refill arrived: it returns the
            // stale byte, and the earlier refill and v step still happen (blargg's
            // double_2007_read accepts "22 44 ..." for this).
            self.finish_data_read(bus);
        }
        self.delays.data_read = DATA_READ_DELAY_DOTS;
        value
    }

    /// The second half of a `$2007` read: the PPU's own memory cycle fills the buffer, then
    /// v steps. Outside rendering it reads v (the nametable "underneath" for palette
    /// addresses); during rendering the rendering fetch owns the bus, so the buffer takes
    /// whatever that fetch reads on this dot (AccuracyCoin "$2007 Stress Test").
    #[cold]
    pub(crate) fn finish_data_read<B: PpuBus>(&mut self, bus: &mut B) {
        self.delays.data_read = 0;
        if self.rendering_active() {
            let fetch_addr = self.rendering_fetch_addr();
            self.read_buffer = bus.peek(fetch_addr);
            self.schedule_ale_glitch(fetch_addr);
        } else {
            let vram_addr = self.scroll.v & 0x3FFF;
            let source = if vram_addr >= 0x3F00 {
                vram_addr & 0x2FFF
            } else {
                vram_addr
            };
            self.read_buffer = bus.read(source);
        }
        self.step_after_data_access(bus);
    }

    /// A CPU access that uses v sees a pending `$2006` copy first.
    fn settle_addr_write<B: PpuBus>(&mut self, bus: &mut B) {
        if self.delays.addr_write != 0 {
            self.finish_addr_write(bus);
        }
    }

    /// A CPU access that uses v (`$2006`, `$2007` writes) sees any pending read's step first.
    fn settle_data_read<B: PpuBus>(&mut self, bus: &mut B) {
        if self.delays.data_read != 0 {
            self.finish_data_read(bus);
        }
    }

    /// `$2007` write: palette RAM keeps 6 bits; everything else goes to the bus.
    fn write_data<B: PpuWriteBus>(&mut self, value: u8, bus: &mut B) {
        self.settle_addr_write(bus);
        self.settle_data_read(bus);
        let vram_addr = self.scroll.v & 0x3FFF;
        if vram_addr >= 0x3F00 {
            self.palette_ram[palette_ram_index(vram_addr)] = value & 0x3F;
            self.refresh_colour_cache();
        } else {
            bus.write(vram_addr, value);
        }
        self.step_after_data_access(bus);
    }

    /// After a `$2007` access v moves on by 1 or 32; during rendering the increment logic is
    /// shared with the fetch pipeline and instead does a coarse X and a Y increment at once.
    fn step_after_data_access<B: PpuBus>(&mut self, bus: &mut B) {
        if self.rendering_active() {
            self.scroll.increment_coarse_x();
            self.scroll.increment_y();
        } else {
            let step = if self.ctrl & ctrl::INCREMENT_32 != 0 {
                32
            } else {
                1
            };
            self.scroll.increment_linear(step);
            bus.address_changed(self.scroll.v & 0x3FFF);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IO_LATCH_DECAY_FRAMES;
    use crate::test_support::{run_dots, run_to, FlatBus};
    use crate::Ppu;

    fn ready() -> (Ppu, FlatBus) {
        let mut ppu = Ppu::new();
        ppu.set_warmup(false);
        (ppu, FlatBus::new())
    }

    /// OAM filled with its own indices, rendering on, then switched off at (`line`, `dot`).
    fn rendering_stopped_at(line: u16, dot: u16) -> (Ppu, FlatBus) {
        let (mut ppu, mut bus) = ready();
        for (index, byte) in ppu.oam.iter_mut().enumerate() {
            *byte = index as u8;
        }
        ppu.apply_mask(0x18);
        run_to(&mut ppu, &mut bus, line, dot);
        ppu.apply_mask(0x00);
        (ppu, bus)
    }

    /// Rows (other than row 0) no longer holding their own indices.
    fn corrupted_rows(ppu: &Ppu) -> Vec<usize> {
        (1..32)
            .filter(|&row| {
                let intact = (row * 8..row * 8 + 8).map(|index| index as u8);
                !ppu.oam[row * 8..row * 8 + 8].iter().copied().eq(intact)
            })
            .collect()
    }

    #[test]
    fn stopping_rendering_during_the_secondary_oam_clear_corrupts_a_row_next_frame() {
        let (mut ppu, mut bus) = rendering_stopped_at(10, 20);
        run_dots(&mut ppu, &mut bus, 500);
        assert!(
            corrupted_rows(&ppu).is_empty(),
            "nothing happens while blanked"
        );
        ppu.apply_mask(0x18);
        assert!(
            corrupted_rows(&ppu).is_empty(),
            "nor on a mid-frame re-enable"
        );
        run_to(&mut ppu, &mut bus, 261, 2);
        assert_eq!(corrupted_rows(&ppu), vec![10], "row 20 / 2 receives row 0");
        assert_eq!(ppu.oam[80..88], [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(ppu.oam[88], 88, "the next row is intact");
    }

    #[test]
    fn stopping_rendering_during_evaluation_or_after_the_fetches_is_harmless() {
        for dot in [64, 100, 255, 320, 340] {
            let (mut ppu, mut bus) = rendering_stopped_at(30, dot);
            run_dots(&mut ppu, &mut bus, 10);
            ppu.apply_mask(0x18);
            run_to(&mut ppu, &mut bus, 0, 0);
            assert!(corrupted_rows(&ppu).is_empty(), "dot {dot}");
        }
    }

    #[test]
    fn corruption_from_the_sprite_fetches_lands_when_rendering_starts_after_vblank() {
        // Dot 256 + 8 + 2: the second fetch slot's third dot, row 4 + 2.
        let (mut ppu, mut bus) = rendering_stopped_at(100, 266);
        run_to(&mut ppu, &mut bus, 245, 0);
        ppu.apply_mask(0x18);
        assert!(
            corrupted_rows(&ppu).is_empty(),
            "not while enabling in VBlank"
        );
        run_to(&mut ppu, &mut bus, 261, 1);
        assert!(corrupted_rows(&ppu).is_empty());
        ppu.tick(&mut bus);
        assert_eq!(
            corrupted_rows(&ppu),
            vec![6],
            "when the pre-render line starts"
        );
    }

    fn set_addr(ppu: &mut Ppu, bus: &mut FlatBus, addr: u16) {
        ppu.write_register(0x2006, (addr >> 8) as u8, bus);
        ppu.write_register(0x2006, addr as u8, bus);
    }

    /// A `$2007` read as `LDA $2007` makes it: the access, then the rest of the instruction
    /// (4 CPU cycles, 12 dots) before the next one.
    fn lda_2007(ppu: &mut Ppu, bus: &mut FlatBus) -> u8 {
        let value = ppu.read_register(0x2007, bus);
        run_dots(ppu, bus, 12);
        value
    }

    #[test]
    fn data_reads_are_buffered_below_the_palette() {
        let (mut ppu, mut bus) = ready();
        bus.memory[0x2345] = 0xAB;
        bus.memory[0x2346] = 0xCD;
        set_addr(&mut ppu, &mut bus, 0x2345);
        assert_eq!(
            lda_2007(&mut ppu, &mut bus),
            0x00,
            "first read returns the stale buffer"
        );
        assert_eq!(lda_2007(&mut ppu, &mut bus), 0xAB);
        assert_eq!(lda_2007(&mut ppu, &mut bus), 0xCD);
        assert_eq!(ppu.vram_addr(), 0x2348);
    }

    #[test]
    fn data_read_refill_and_step_land_a_few_dots_later() {
        let (mut ppu, mut bus) = ready();
        bus.memory[0x2345] = 0xAB;
        set_addr(&mut ppu, &mut bus, 0x2345);
        let _ = ppu.read_register(0x2007, &mut bus);
        run_dots(
            &mut ppu,
            &mut bus,
            u32::from(super::DATA_READ_DELAY_DOTS) - 1,
        );
        assert_eq!(ppu.peek_register(0x2007), 0x00, "refill not there yet");
        assert_eq!(ppu.vram_addr(), 0x2345, "v not stepped yet");
        ppu.tick(&mut bus);
        assert_eq!(ppu.peek_register(0x2007), 0xAB);
        assert_eq!(ppu.vram_addr(), 0x2346);
    }

    #[test]
    fn reads_one_cpu_cycle_apart_return_the_stale_buffer_and_step_twice() {
        // blargg's double_2007_read: `LDA $20F7,X` reads $2007 on two consecutive cycles.
        let (mut ppu, mut bus) = ready();
        for (offset, byte) in [0x11u8, 0x22, 0x33, 0x44].iter().enumerate() {
            bus.memory[0x2000 + offset] = *byte;
        }
        set_addr(&mut ppu, &mut bus, 0x2000);
        assert_eq!(lda_2007(&mut ppu, &mut bus), 0x00);
        assert_eq!(ppu.read_register(0x2007, &mut bus), 0x11, "dummy read");
        run_dots(&mut ppu, &mut bus, 3);
        assert_eq!(
            ppu.read_register(0x2007, &mut bus),
            0x11,
            "the first refill has not arrived"
        );
        run_dots(&mut ppu, &mut bus, 9);
        assert_eq!(lda_2007(&mut ppu, &mut bus), 0x33, "both reads stepped v");
        assert_eq!(ppu.vram_addr(), 0x2004);
    }

    #[test]
    fn increment_32_and_writes() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2000, 0x04, &mut bus);
        set_addr(&mut ppu, &mut bus, 0x2000);
        ppu.write_register(0x2007, 0x11, &mut bus);
        ppu.write_register(0x2007, 0x22, &mut bus);
        assert_eq!(bus.memory[0x2000], 0x11);
        assert_eq!(bus.memory[0x2020], 0x22);
        assert_eq!(ppu.vram_addr(), 0x2040);
        assert_eq!(bus.address_changes, vec![0x2000, 0x2020, 0x2040]);
    }

    #[test]
    fn before_revision_g_oam_and_palette_do_not_read_back() {
        let (mut ppu, mut bus) = ready();
        ppu.set_revision(crate::PpuRevision::PreG);
        bus.memory[0x2F01] = 0x5A;
        set_addr(&mut ppu, &mut bus, 0x3F01);
        ppu.write_register(0x2007, 0x21, &mut bus);
        // $2004 is write-only: a read returns the I/O latch, here the $2002 write's value.
        ppu.write_register(0x2003, 0, &mut bus);
        ppu.write_register(0x2004, 0x33, &mut bus);
        ppu.write_register(0x2003, 0, &mut bus);
        ppu.write_register(0x2002, 0x02, &mut bus);
        assert_eq!(ppu.read_register(0x2004, &mut bus), 0x02);
        assert_eq!(ppu.peek_register(0x2004), 0x02);
        // A palette address reads through the buffer: the nametable byte underneath, one
        // read later (AccuracyCoin "PPU Read Buffer", code E).
        set_addr(&mut ppu, &mut bus, 0x3F01);
        lda_2007(&mut ppu, &mut bus);
        set_addr(&mut ppu, &mut bus, 0x3F01);
        assert_eq!(lda_2007(&mut ppu, &mut bus), 0x5A);
        assert_eq!(ppu.peek_palette(1), 0x21, "palette writes still land");
    }

    #[test]
    fn palette_reads_are_direct_and_fill_the_buffer_from_underneath() {
        let (mut ppu, mut bus) = ready();
        bus.memory[0x2F05] = 0x77;
        set_addr(&mut ppu, &mut bus, 0x3F05);
        ppu.write_register(0x2007, 0xE9, &mut bus);
        assert_eq!(ppu.peek_palette(5), 0x29, "palette RAM keeps 6 bits");
        set_addr(&mut ppu, &mut bus, 0x3F05);
        // The latch holds $3F05's low byte from the $2006 write: bits 6-7 come from it (0).
        assert_eq!(ppu.read_register(0x2007, &mut bus), 0x29);
        set_addr(&mut ppu, &mut bus, 0x2000);
        assert_eq!(
            ppu.read_register(0x2007, &mut bus),
            0x77,
            "buffer came from $2F05"
        );
    }

    #[test]
    fn palette_mirrors() {
        let (mut ppu, mut bus) = ready();
        for (mirror, base) in [(0x3F10u16, 0u8), (0x3F14, 4), (0x3F18, 8), (0x3F1C, 12)] {
            set_addr(&mut ppu, &mut bus, mirror);
            ppu.write_register(0x2007, 0x20 + base, &mut bus);
            assert_eq!(ppu.peek_palette(base), 0x20 + base);
            assert_eq!(ppu.peek_palette(base | 0x10), 0x20 + base);
        }
        // $3F11 is its own cell; $3F21+ mirrors $3F01.
        set_addr(&mut ppu, &mut bus, 0x3F11);
        ppu.write_register(0x2007, 0x05, &mut bus);
        set_addr(&mut ppu, &mut bus, 0x3F01);
        ppu.write_register(0x2007, 0x06, &mut bus);
        assert_eq!(ppu.peek_palette(0x11), 0x05);
        set_addr(&mut ppu, &mut bus, 0x3FE1);
        assert_eq!(ppu.read_register(0x2007, &mut bus) & 0x3F, 0x06);
    }

    #[test]
    fn palette_reads_honour_greyscale_and_keep_latch_high_bits() {
        let (mut ppu, mut bus) = ready();
        set_addr(&mut ppu, &mut bus, 0x3F02);
        ppu.write_register(0x2007, 0x2A, &mut bus);
        set_addr(&mut ppu, &mut bus, 0x3F02);
        ppu.write_register(0x2001, 0xC1, &mut bus); // greyscale; latch = $C1
                                                    // The $2001 value takes a few dots to arrive.
        run_dots(&mut ppu, &mut bus, u32::from(super::MASK_WRITE_DELAY_DOTS));
        assert_eq!(ppu.read_register(0x2007, &mut bus), 0xC0 | 0x20);
    }

    #[test]
    fn mask_writes_reach_the_renderer_after_a_delay() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2001, 0x08, &mut bus);
        for _ in 1..super::MASK_WRITE_DELAY_DOTS {
            ppu.tick(&mut bus);
            assert!(!ppu.rendering_enabled(), "still the old value");
        }
        ppu.tick(&mut bus);
        assert!(ppu.rendering_enabled());
        // A second write before the first lands: the first lands at once.
        ppu.write_register(0x2001, 0x10, &mut bus);
        ppu.write_register(0x2001, 0x00, &mut bus);
        assert_eq!(ppu.mask, 0x10);
        run_dots(&mut ppu, &mut bus, u32::from(super::MASK_WRITE_DELAY_DOTS));
        assert_eq!(ppu.mask, 0x00);
    }

    fn pixel(ppu: &Ppu, y: usize, x: usize) -> u16 {
        ppu.frame_buffer()[y * crate::FRAME_WIDTH + x]
    }

    #[test]
    fn greyscale_and_emphasis_reach_the_two_pixels_already_in_the_pipeline() {
        let (mut ppu, mut bus) = ready();
        set_addr(&mut ppu, &mut bus, 0x3F00);
        ppu.write_register(0x2007, 0x21, &mut bus);
        set_addr(&mut ppu, &mut bus, 0x0000);
        run_to(&mut ppu, &mut bus, 10, 100);
        // Dot 100 runs next: pixels up to 98 are decided, and 97-98 are still on their way to
        // the output, so greyscale reaches them; the rendering bits wait their delay.
        ppu.write_register(0x2001, 0x01, &mut bus);
        run_to(&mut ppu, &mut bus, 10, 200);
        assert_eq!([pixel(&ppu, 10, 95), pixel(&ppu, 10, 96)], [0x21, 0x21]);
        assert_eq!(
            [
                pixel(&ppu, 10, 97),
                pixel(&ppu, 10, 98),
                pixel(&ppu, 10, 99),
                pixel(&ppu, 10, 150)
            ],
            [0x20; 4]
        );
        // Emphasis the same way; a pixel greyscaled before keeps its grey colour.
        ppu.write_register(0x2001, 0x20, &mut bus);
        run_to(&mut ppu, &mut bus, 11, 0);
        assert_eq!(pixel(&ppu, 10, 196), 0x20);
        assert_eq!(
            [pixel(&ppu, 10, 197), pixel(&ppu, 10, 198)],
            [0x20 | 0x40; 2]
        );
        assert_eq!(
            [pixel(&ppu, 10, 199), pixel(&ppu, 10, 255)],
            [0x21 | 0x40; 2]
        );
        // A write in the first dots of a line reaches the previous line's last pixels.
        run_to(&mut ppu, &mut bus, 12, 1);
        ppu.write_register(0x2001, 0x00, &mut bus);
        run_to(&mut ppu, &mut bus, 13, 0);
        assert_eq!(
            [pixel(&ppu, 11, 253), pixel(&ppu, 11, 254)],
            [0x21 | 0x40, 0x21]
        );
        assert_eq!(pixel(&ppu, 11, 255), 0x21);
        assert_eq!(pixel(&ppu, 12, 0), 0x21);
    }

    #[test]
    fn status_read_clears_vblank_and_toggle_and_keeps_latch_low_bits() {
        let (mut ppu, mut bus) = ready();
        run_to(&mut ppu, &mut bus, 241, 2);
        ppu.write_register(0x2005, 0x1F, &mut bus); // w = 1, latch = $1F
        assert_eq!(ppu.peek_register(0x2002), 0x9F);
        assert_eq!(ppu.read_register(0x2002, &mut bus), 0x9F);
        assert_eq!(
            ppu.read_register(0x200A, &mut bus),
            0x1F,
            "mirrored every 8 bytes; VBL now clear"
        );
        // The toggle was reset: this is a first write again.
        ppu.write_register(0x2005, 0x08, &mut bus);
        assert_eq!(ppu.temp_vram_addr() & 0x1F, 1);
    }

    #[test]
    fn io_latch_reads_back_on_write_only_registers_and_decays() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2000, 0x00, &mut bus);
        ppu.write_register(0x2003, 0xA5, &mut bus);
        for reg in [0x2000, 0x2001, 0x2003, 0x2005, 0x2006] {
            assert_eq!(ppu.read_register(reg, &mut bus), 0xA5);
        }
        let start = ppu.frames_completed();
        while ppu.frames_completed() < start + IO_LATCH_DECAY_FRAMES - 2 {
            ppu.tick(&mut bus);
        }
        assert_eq!(
            ppu.read_register(0x2000, &mut bus),
            0xA5,
            "no decay before ~600 ms"
        );
        while ppu.frames_completed() < start + IO_LATCH_DECAY_FRAMES + 1 {
            ppu.tick(&mut bus);
        }
        assert_eq!(
            ppu.read_register(0x2000, &mut bus),
            0x00,
            "decayed after ~600 ms"
        );
    }

    #[test]
    fn io_latch_bits_decay_independently() {
        let mut latch = super::IoLatch::default();
        latch.refresh(0, 0xF0, 0xFF);
        latch.refresh(30, 0x30, 0x3F); // refreshes bits 4-5 with 1, bits 0-3 with 0
        assert_eq!(latch.read(35), 0xF0);
        assert_eq!(
            latch.read(40),
            0x30,
            "bits 6-7 decayed, 4-5 were refreshed at frame 30"
        );
        assert_eq!(latch.read(30 + IO_LATCH_DECAY_FRAMES), 0x00);
    }

    #[test]
    fn status_read_refreshes_only_bits_5_to_7() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2000, 0x1F, &mut bus);
        let start = ppu.frames_completed();
        while ppu.frames_completed() < start + 20 {
            ppu.tick(&mut bus);
        }
        // A $2002 read drives bits 5-7 with 0s; the low bits stay and keep their age.
        let _ = ppu.read_register(0x2002, &mut bus);
        assert_eq!(ppu.read_register(0x2000, &mut bus), 0x1F);
        while ppu.frames_completed() < start + IO_LATCH_DECAY_FRAMES {
            ppu.tick(&mut bus);
        }
        assert_eq!(ppu.read_register(0x2000, &mut bus), 0x00);
    }

    #[test]
    fn oam_data_access_outside_rendering() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2003, 0x10, &mut bus);
        for value in [0x11, 0x22, 0xFF, 0x44] {
            ppu.write_register(0x2004, value, &mut bus);
        }
        assert_eq!(
            &ppu.oam()[0x10..0x14],
            &[0x11, 0x22, 0xE3, 0x44],
            "byte 2 bits 2-4 are missing"
        );
        ppu.write_register(0x2003, 0x12, &mut bus);
        assert_eq!(ppu.read_register(0x2004, &mut bus), 0xE3);
        assert_eq!(
            ppu.read_register(0x2004, &mut bus),
            0xE3,
            "reads do not increment OAMADDR"
        );
    }

    #[test]
    fn oam_data_during_rendering() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2001, 0x18, &mut bus);
        run_to(&mut ppu, &mut bus, 10, 30);
        assert_eq!(
            ppu.read_register(0x2004, &mut bus),
            0xFF,
            "secondary OAM clear phase"
        );
        run_to(&mut ppu, &mut bus, 10, 300);
        ppu.write_register(0x2003, 0x05, &mut bus);
        ppu.write_register(0x2004, 0x99, &mut bus);
        assert_eq!(ppu.oam()[5], 0, "no write while rendering");
        assert_eq!(ppu.oam_addr, 0x08, "glitchy +4 increment, low bits cleared");
    }

    #[test]
    fn data_access_during_rendering_increments_coarse_x_and_y() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2001, 0x08, &mut bus);
        run_to(&mut ppu, &mut bus, 5, 100);
        let before = ppu.vram_addr();
        let _ = ppu.read_register(0x2007, &mut bus);
        // The step lands with the refill, a few dots after the access.
        run_dots(&mut ppu, &mut bus, u32::from(super::DATA_READ_DELAY_DOTS));
        let mut expected = crate::scroll::ScrollRegisters {
            v: before,
            ..Default::default()
        };
        expected.increment_coarse_x();
        expected.increment_y();
        assert_eq!(ppu.vram_addr(), expected.v);
    }

    #[test]
    fn data_read_during_rendering_fills_the_buffer_from_the_rendering_fetch() {
        let (mut ppu, mut bus) = ready();
        // Every attribute byte of the first nametable reads $5A, every tile byte $00.
        for addr in 0x23C0..0x2400 {
            bus.memory[addr] = 0x5A;
        }
        ppu.write_register(0x2001, 0x08, &mut bus);
        // Accessed before dot 16: the refill lands on dot 19, the attribute fetch (19-20).
        run_to(&mut ppu, &mut bus, 5, 16);
        let _ = ppu.read_register(0x2007, &mut bus);
        run_dots(&mut ppu, &mut bus, 12);
        assert_eq!(ppu.peek_register(0x2007), 0x5A);
        // Accessed before dot 30: the refill lands on dot 33, a nametable fetch.
        run_to(&mut ppu, &mut bus, 6, 30);
        let _ = ppu.read_register(0x2007, &mut bus);
        run_dots(&mut ppu, &mut bus, 12);
        assert_eq!(ppu.peek_register(0x2007), 0x00);
    }

    #[test]
    fn warmup_ignores_some_writes_until_pre_render() {
        let mut ppu = Ppu::new();
        let mut bus = FlatBus::new();
        assert!(ppu.warmup_active());
        ppu.write_register(0x2000, 0x80, &mut bus);
        ppu.write_register(0x2001, 0x18, &mut bus);
        ppu.write_register(0x2005, 0x08, &mut bus);
        ppu.write_register(0x2006, 0x21, &mut bus);
        ppu.write_register(0x2003, 0x07, &mut bus);
        assert_eq!(ppu.ctrl, 0);
        assert_eq!(ppu.mask, 0);
        assert_eq!(ppu.temp_vram_addr(), 0);
        assert_eq!(ppu.oam_addr, 7, "$2003 is not blocked");
        assert_eq!(
            ppu.read_register(0x2000, &mut bus),
            0x07,
            "the latch still sees writes"
        );
        run_to(&mut ppu, &mut bus, 261, 2);
        assert!(!ppu.warmup_active());
        ppu.write_register(0x2000, 0x80, &mut bus);
        assert_eq!(ppu.ctrl, 0x80);
    }
}
