//! The per-dot pipeline: frame timing, VBlank, and what each dot of a rendering line does
//! (NESdev wiki "PPU rendering" timing diagram, "PPU frame timing").

use crate::schedule::{self, Fetch, Step};
use crate::sprites::{SPRITE_BEHIND_BACKGROUND, SPRITE_PALETTE_INDEX, SPRITE_ZERO};
use crate::{
    mask, palette_ram_index, Ppu, PpuBus, DOTS_PER_SCANLINE, FRAME_WIDTH, POST_RENDER_SCANLINE,
};

/// The pre-render dot at whose start `$2001` is sampled for the odd-frame skip. `$2001` changes
/// reach the rendering logic a few dots late (NESdev wiki "PPU registers"), so the decision
/// taken around dot 339-340 sees the value written before this dot; blargg's
/// 10-even_odd_timing pins it to the dot.
pub(crate) const ODD_FRAME_SKIP_SAMPLE_DOT: u16 = 338;

/// The longest delay `schedule_ale_glitch` sets.
pub(crate) const MAX_ALE_GLITCH_DELAY_DOTS: u8 = 3;

impl Ppu {
    /// Executes the dot at (`scanline()`, `dot()`) and moves to the next one. (A park, and
    /// frame ends before the post-render line, are [`Ppu::run_dots`]'s: see `FrameTiming`.)
    #[inline]
    pub fn tick<B: PpuBus>(&mut self, bus: &mut B) {
        // One load and one branch cover every delayed register effect on the common path.
        if self.delays.any() {
            self.run_delayed_register_effects(bus);
        }
        let line = self.scanline;
        if line < POST_RENDER_SCANLINE {
            if self.rendering_enabled {
                self.rendering_dot::<B, true>(bus);
            } else {
                self.idle_visible_dot();
            }
        } else if line == self.layout.pre_render_scanline {
            self.pre_render_dot(bus);
        } else if line == self.layout.vblank_scanline && self.dot == 1 {
            // A $2002 read on this very dot (before it) cancels the set for this frame.
            self.vblank = !self.vblank_suppressed;
            self.vblank_suppressed = false;
        }
        self.advance();
        bus.dots_elapsed(1);
    }

    /// Runs the next eight dots in one step when they form one of a rendering line's regular
    /// 8-dot groups (starting at dot 1, 9, ..., 329; the pre-render line's first runs dot by
    /// dot) with no delayed register effect pending, doing exactly what the per-dot path does
    /// on them, in the same bus order (see `schedule`). Returns false (having done nothing)
    /// otherwise. Nothing else can touch these dots: register accesses, which could, always
    /// catch the PPU up first and so end a batch before them.
    #[inline(always)]
    pub(crate) fn run_eight_dots<B: PpuBus>(&mut self, bus: &mut B) -> bool {
        if self.dot & 7 != 1 || !self.rendering_enabled || self.delays.any() {
            return false;
        }
        if self.scanline < POST_RENDER_SCANLINE {
            self.run_group::<B, true>(bus)
        } else if self.scanline == self.layout.pre_render_scanline {
            self.run_group::<B, false>(bus)
        } else {
            false
        }
    }

    /// Runs dots 1-336 of a visible line (every 8-dot group of it, back to back, each as
    /// `run_eight_dots` would) when the PPU is on its dot 1 with rendering enabled and no
    /// delayed register effect pending; returns false (having done nothing) otherwise. Only
    /// register accesses could change those conditions, and they catch the PPU up first, so
    /// a caller owing at least `schedule::LINE_GROUP_DOTS` dots may run the line without
    /// testing and dispatching each group.
    #[inline(always)]
    pub(crate) fn run_visible_line_groups<B: PpuBus>(&mut self, bus: &mut B) -> bool {
        if self.dot != 1
            || self.scanline >= POST_RENDER_SCANLINE
            || !self.rendering_enabled
            || self.delays.any()
        {
            return false;
        }
        macro_rules! runs_in_dot_order {
            ($($position:literal)*) => {
                $(
                    if $position < const { schedule::BATCHES[1].run_count } {
                        const RUN: usize = schedule::VISIBLE_LINE_ORDER[$position];
                        let run = const { &schedule::BATCHES[1].runs[RUN] };
                        if RUN == schedule::TILE_RUN {
                            self.run_tile_groups(bus);
                        } else {
                            let mut dot = run.first;
                            loop {
                                self.run_batch_steps::<B, true, RUN>(bus, dot);
                                if dot >= run.last {
                                    break;
                                }
                                dot += schedule::GROUP_DOTS as u16;
                            }
                            // Once per run: no step reads `self.dot`, and storing it after
                            // each group made the next group's load of the neighbouring
                            // scanline wait for the store (a wider load over a narrower
                            // store is not forwarded).
                            self.dot = run.last + schedule::GROUP_DOTS as u16;
                        }
                    }
                )*
            };
        }
        const _: () = assert!(schedule::MAX_RUNS == 12, "one position per run below");
        runs_in_dot_order!(0 1 2 3 4 5 6 7 8 9 10 11);
        true
    }

    /// `run_eight_dots` on a visible (`VISIBLE`) or the pre-render line: finds the run of
    /// groups the dot starts (a range test per run, the commonest first, which also tells the
    /// compiler the batch's dots) and runs its plan.
    #[inline(always)]
    fn run_group<B: PpuBus, const VISIBLE: bool>(&mut self, bus: &mut B) -> bool {
        let dot = self.dot;
        macro_rules! dispatch {
            ($($run:literal)*) => {
                $(
                    if $run < const { schedule::BATCHES[VISIBLE as usize].run_count } {
                        let run = const { &schedule::BATCHES[VISIBLE as usize].runs[$run] };
                        if run.first <= dot && dot <= run.last {
                            self.run_batch::<B, VISIBLE, $run>(bus, dot);
                            return true;
                        }
                    }
                )*
            };
        }
        const _: () = assert!(schedule::MAX_RUNS == 12, "one test per run below");
        dispatch!(0 1 2 3 4 5 6 7 8 9 10 11);
        false
    }

    /// One run's batch on the group starting at `dot`: eight constant steps, so the batch
    /// compiles to straight-line code (and a run of one group knows its dots).
    #[inline(always)]
    pub(crate) fn run_batch<B: PpuBus, const VISIBLE: bool, const RUN: usize>(
        &mut self,
        bus: &mut B,
        dot: u16,
    ) {
        self.run_batch_steps::<B, VISIBLE, RUN>(bus, dot);
        self.dot = dot + 8;
    }

    /// `run_batch` without moving `self.dot` on (the caller does).
    #[inline(always)]
    fn run_batch_steps<B: PpuBus, const VISIBLE: bool, const RUN: usize>(
        &mut self,
        bus: &mut B,
        dot: u16,
    ) {
        let run = const { schedule::BATCHES[VISIBLE as usize].runs[RUN] };
        let dot = if run.first == run.last {
            run.first
        } else {
            dot
        };
        let [s0, s1, s2, s3, s4, s5, s6, s7] = run.steps;
        self.run_step(bus, dot, s0);
        self.run_step(bus, dot + 1, s1);
        self.run_step(bus, dot + 2, s2);
        self.run_step(bus, dot + 3, s3);
        self.run_step(bus, dot + 4, s4);
        self.run_step(bus, dot + 5, s5);
        self.run_step(bus, dot + 6, s6);
        self.run_step(bus, dot + 7, s7);
    }

    /// Runs dot `dot`'s part of a rendering line: `step`'s shifter clocks, then its operations
    /// (see `schedule`), with the bus told of the dots before and after its fetch. Callers
    /// pass constant steps, so each call compiles to its operations alone. The order here is
    /// the one `schedule::simulate` models: the shifters clock before a reload; writes to v
    /// come after the dot's fetch, so dot 257's unused nametable fetch still uses v from
    /// before the horizontal copy (AccuracyCoin "$2007 Stress Test" notes).
    #[inline(always)]
    fn run_step<B: PpuBus>(&mut self, bus: &mut B, dot: u16, step: Step) {
        let ops = step.ops;
        if step.shifts != 0 {
            self.background.shift_by(u32::from(step.shifts));
        }
        if ops & schedule::RELOAD != 0 {
            self.background.reload();
        }
        if ops & schedule::LINE_START != 0 {
            self.pixel_x = 0;
        }
        if ops & schedule::PIXELS != 0 {
            self.output_pixels_until(dot - 1);
        }
        if ops & schedule::SNAPSHOT != 0 {
            self.snapshot_tile(dot - 1);
        }
        if ops & schedule::LAST_PIXELS != 0 {
            self.output_pixels_until(FRAME_WIDTH as u16);
        }
        if ops & schedule::FINISH_EVALUATION != 0 {
            self.run_evaluation_until(257);
        }
        if ops & schedule::SPRITE_LINE_END != 0 {
            self.sprite_line.clear();
            self.sprite_units_finish_line();
        }
        if ops & schedule::OAM_ADDR_ZERO != 0 {
            self.oam_addr = 0;
        }
        if ops & schedule::OAM_BUS_SLOT != 0 {
            self.oam_bus = self.sprite_slot_byte(dot);
        }
        if ops & schedule::OAM_BUS_FIRST != 0 {
            self.oam_bus = self.secondary_oam[0];
        }
        if ops & schedule::START_SPRITE_COUNTERS != 0 {
            self.start_sprite_counters();
        }
        if step.dots_before_fetch != 0 {
            bus.dots_elapsed(u32::from(step.dots_before_fetch));
        }
        match schedule::fetch_of(ops) {
            Fetch::None => {}
            Fetch::Nametable => self.fetch_nametable(bus),
            Fetch::Attribute => self.fetch_attribute(bus),
            Fetch::PatternLow => self.fetch_pattern_low(bus),
            Fetch::PatternHigh => self.fetch_pattern_high(bus),
            Fetch::UnusedNametable => {
                self.fetch(bus, self.scroll.nametable_addr());
            }
            Fetch::SpritePatternLow => self.fetch_sprite_pattern_low(bus, dot),
            Fetch::SpritePatternHigh => self.fetch_sprite_pattern_high(bus, dot),
        }
        if step.dots_after_fetch != 0 {
            bus.dots_elapsed(u32::from(step.dots_after_fetch));
        }
        if ops & schedule::COPY_HORIZONTAL != 0 {
            self.scroll.copy_horizontal();
        }
        if ops & schedule::COPY_VERTICAL != 0 {
            self.scroll.copy_vertical();
        }
        if ops & schedule::INCREMENT_X != 0 {
            self.scroll.increment_coarse_x();
        }
        if ops & schedule::INCREMENT_Y != 0 {
            self.scroll.increment_y();
        }
    }

    /// Register effects landing a few dots after their CPU access (a `$2001` value, a
    /// `$2006` copy, a `$2007` read's refill and step, the fetch that read disturbs), before
    /// the work of the dot about to run.
    #[cold]
    fn run_delayed_register_effects<B: PpuBus>(&mut self, bus: &mut B) {
        if self.delays.mask != 0 {
            self.delays.mask -= 1;
            if self.delays.mask == 0 {
                self.apply_mask(self.pending_mask);
            }
        }
        if self.delays.addr_write != 0 {
            self.delays.addr_write -= 1;
            if self.delays.addr_write == 0 {
                self.finish_addr_write(bus);
            }
        }
        if self.delays.ale_glitch != 0 {
            self.delays.ale_glitch -= 1;
            if self.delays.ale_glitch == 0 {
                self.redo_fetch_with_stale_low_byte(bus);
            }
        }
        if self.delays.data_read != 0 {
            self.delays.data_read -= 1;
            if self.delays.data_read == 0 {
                self.finish_data_read(bus);
            }
        }
    }

    /// Called by a `$2007` read landing during rendering (before the work of the dot about
    /// to run): the fetch after the current one misses its address latch strobe, so it reads
    /// from its own high bits over the current fetch's low byte (AccuracyCoin "ALE + Read": a
    /// pattern fetch right after an attribute fetch reads the pattern byte at the attribute
    /// address's low byte, `$C0-$FF`, instead of its own row).
    pub(crate) fn schedule_ale_glitch(&mut self, current_fetch_addr: u16) {
        self.stale_low_byte = current_fetch_addr as u8;
        // Fetches start on odd dots; the next one starts 2 dots on from an odd dot, 1 from an
        // even one. It is redone before the work of the dot after it.
        self.delays.ale_glitch = if self.dot & 1 == 1 {
            MAX_ALE_GLITCH_DELAY_DOTS
        } else {
            MAX_ALE_GLITCH_DELAY_DOTS - 1
        };
    }

    /// Redoes the background fetch made on the previous dot with the stale low address byte.
    /// Sprite pattern fetches are left alone.
    #[cold]
    fn redo_fetch_with_stale_low_byte<B: PpuBus>(&mut self, bus: &mut B) {
        if !self.rendering_active() {
            return;
        }
        let low = u16::from(self.stale_low_byte);
        let stale = |addr: u16| (addr & 0x3F00) | low;
        // `peek`: the bus already saw this fetch; only the data it returns changes.
        match schedule::fetch_in_progress(self.dot.wrapping_sub(1)) {
            Fetch::Nametable => {
                self.background.nametable_latch = bus.peek(stale(self.scroll.nametable_addr()));
            }
            Fetch::Attribute => {
                let byte = bus.peek(stale(self.scroll.attribute_addr()));
                self.background.attribute_latch = (byte >> self.scroll.attribute_shift()) & 0x03;
            }
            Fetch::PatternLow => {
                self.background.pattern_low_latch = bus.peek(stale(self.background_pattern_addr()));
            }
            Fetch::PatternHigh => {
                self.background.pattern_high_latch =
                    bus.peek(stale(self.background_pattern_addr() | 8));
            }
            // Sprite pattern fetches are left alone, and unused nametable bytes stay unused.
            _ => {}
        }
    }

    /// The delayed t -> v copy of a second `$2006` write. The PPU's address bus is
    /// multiplexed: the external latch took the low byte on the first dot of a fetch (ALE),
    /// while A8-A13 are driven for the whole fetch. A copy landing between the two dots
    /// therefore reads from a hybrid address, the new v's high bits over the old low byte
    /// (AccuracyCoin "Hybrid Addresses").
    #[cold]
    pub(crate) fn finish_addr_write<B: PpuBus>(&mut self, bus: &mut B) {
        self.delays.addr_write = 0;
        let old_v = self.scroll.v;
        self.scroll.v = self.pending_v;
        if self.rendering_active() {
            let new = self.scroll;
            let mut old = self.scroll;
            old.v = old_v;
            let hybrid = |old_addr: u16, new_addr: u16| (new_addr & 0x3F00) | (old_addr & 0x00FF);
            // The copy lands between the two dots of a fetch started on the previous dot.
            match schedule::fetch_started_on(self.dot.wrapping_sub(1)) {
                Fetch::Nametable => {
                    let addr = hybrid(old.nametable_addr(), new.nametable_addr());
                    self.background.nametable_latch = bus.peek(addr);
                }
                Fetch::Attribute => {
                    let addr = hybrid(old.attribute_addr(), new.attribute_addr());
                    self.background.attribute_latch =
                        (bus.peek(addr) >> old.attribute_shift()) & 0x03;
                }
                // Pattern addresses do not depend on v's high bits, and unused nametable
                // bytes stay unused.
                _ => {}
            }
        }
        bus.address_changed(self.scroll.v & 0x3FFF);
    }

    /// A pre-render line dot: the status flags clear at dot 1, the odd-frame skip (a 2C02's)
    /// is decided at dot 338, and with rendering on it fetches like a visible line.
    #[inline(always)]
    fn pre_render_dot<B: PpuBus>(&mut self, bus: &mut B) {
        if self.dot == 1 {
            // End of VBlank: all three status flags clear, and the PPU starts accepting
            // $2000/$2001/$2005/$2006 writes after its power-on/reset warm-up.
            self.vblank = false;
            self.sprite_zero_hit = false;
            self.sprite_overflow = false;
            self.warmup = false;
            if self.rendering_enabled && self.oam_corruption_rows != 0 {
                // The frame's rendering starts: rows latched by a mid-line `$2001`
                // disable receive row 0 (see `mark_oam_corruption`).
                self.corrupt_oam_rows();
            }
        } else if self.dot == ODD_FRAME_SKIP_SAMPLE_DOT {
            // The latest `$2001` value counts even if it has not reached the rendering
            // logic yet: this sample point already accounts for that delay.
            let latest_mask = if self.delays.mask != 0 {
                self.pending_mask
            } else {
                self.mask
            };
            self.skip_idle_dot = self.layout.skips_odd_frame_dot
                && self.odd_frame
                && (latest_mask & mask::RENDERING != 0
                    || self.frame_timing.odd_frames_always_short);
        }
        if self.rendering_enabled {
            self.rendering_dot::<B, false>(bus);
        } else if self.dot == 339 {
            self.blanked_dot_339();
        }
    }

    /// Runs up to `dots` dots at once where they do nothing but count, or output one colour:
    /// the post-render and VBlank lines (but the VBlank flag's dot, 241/1 on a 2C02), and a
    /// visible line with rendering off (the backdrop, or the palette entry v points at, is
    /// constant as long as no register access intervenes, and none does inside a batch).
    /// Stops at the end of a line. Returns the dots run (0 = none: the next dot needs `tick`).
    #[inline]
    pub(crate) fn run_blank_dots<B: PpuBus>(&mut self, dots: u32, bus: &mut B) -> u32 {
        if self.delays.any() {
            return 0;
        }
        let line = self.scanline;
        let dot = self.dot;
        let end = if line < POST_RENDER_SCANLINE {
            if self.rendering_enabled {
                return 0;
            }
            let end = (u32::from(dot) + dots).min(u32::from(DOTS_PER_SCANLINE)) as u16;
            self.fill_blank_pixels(dot, end);
            if (dot..end).contains(&339) {
                self.blanked_dot_339();
            }
            end
        } else if line == self.layout.pre_render_scanline
            || (line == self.layout.vblank_scanline && dot <= 1)
        {
            // The pre-render line's dots 1 and 338-339 and the VBlank flag's dot: per dot.
            if line != self.layout.vblank_scanline || dot == 1 {
                return 0;
            }
            // Dot 0 of the VBlank line, just before the flag is set.
            1
        } else {
            (u32::from(dot) + dots).min(u32::from(DOTS_PER_SCANLINE)) as u16
        };
        let run = u32::from(end - dot);
        bus.dots_elapsed(run);
        // The line's last dot goes through `advance`, which starts the next line.
        self.dot = end - 1;
        self.advance();
        run
    }

    /// Dots `first..end` of a visible line with rendering off: pixels `first - 1..end - 1`
    /// show the backdrop, or the palette entry v points at inside `$3F00-$3FFF` (the
    /// "background palette hack"), as `idle_visible_dot` does one at a time.
    fn fill_blank_pixels(&mut self, first: u16, end: u16) {
        let from = usize::from(first.max(1) - 1);
        let to = usize::from(end.max(1) - 1).min(FRAME_WIDTH);
        if from >= to {
            return;
        }
        let v = self.scroll.v & 0x3FFF;
        let index = if v >= 0x3F00 { palette_ram_index(v) } else { 0 };
        let value = u16::from(self.palette_ram[index] & self.colour_mask) | self.emphasis_bits;
        let row_start = usize::from(self.scanline) * FRAME_WIDTH;
        if let Some(row) = self.frame.get_mut(row_start + from..row_start + to) {
            row.fill(value);
        }
    }

    /// Moves the (scanline, dot) counters on by one, with the odd-frame skip (a 2C02's).
    #[inline(always)]
    fn advance(&mut self) {
        if self.dot < 340 {
            self.dot += 1;
            return;
        }
        self.next_scanline();
    }

    fn next_scanline(&mut self) {
        self.dot = 0;
        self.evaluation_cursor = 1;
        if self.scanline == self.layout.pre_render_scanline && self.skip_idle_dot {
            // A 2C02's odd frames with rendering enabled are one dot short: the idle dot
            // (0, 0) is skipped (see ODD_FRAME_SKIP_SAMPLE_DOT for when rendering is sampled).
            // `skip_idle_dot` is only ever set on a model that skips.
            self.skip_idle_dot = false;
            self.dot = 1;
            if self.rendering_enabled {
                self.start_sprite_counters_late();
            }
        }
        self.scanline += 1;
        if self.scanline == POST_RENDER_SCANLINE {
            // With a frame-end lead, `run_dots` counts frames where they end.
            if self.frame_timing.frame_end_lead == 0 {
                self.frames_completed += 1;
            }
        } else if self.scanline == self.layout.scanlines_per_frame {
            self.scanline = 0;
            self.odd_frame = !self.odd_frame;
        }
    }

    /// A visible-line dot with rendering disabled: only the backdrop is output.
    #[inline]
    fn idle_visible_dot(&mut self) {
        let dot = self.dot;
        if dot.wrapping_sub(1) < 256 {
            // With rendering off the PPU shows the backdrop, or the palette entry v points at
            // when v is inside $3F00-$3FFF (the "background palette hack").
            let v = self.scroll.v & 0x3FFF;
            let index = if v >= 0x3F00 { palette_ram_index(v) } else { 0 };
            self.write_pixel(usize::from(dot - 1), self.palette_ram[index]);
        } else if dot == 339 {
            self.blanked_dot_339();
        }
    }

    /// One dot of a visible (`VISIBLE`) or pre-render line with rendering enabled: its entry
    /// in the schedule (one jump per dot to that entry's operations).
    #[inline(always)]
    fn rendering_dot<B: PpuBus, const VISIBLE: bool>(&mut self, bus: &mut B) {
        let dot = self.dot;
        let action = schedule::ACTIONS
            .of_dot
            .get(usize::from(dot))
            .copied()
            .unwrap_or(0);
        macro_rules! dispatch {
            ($($action:literal)*) => {
                match action {
                    $($action => self.run_step(
                        bus,
                        dot,
                        const { Step::single(schedule::ACTIONS.ops[$action], VISIBLE) },
                    ),)*
                    _ => {}
                }
            };
        }
        const _: () = assert!(schedule::MAX_ACTIONS == 40, "one arm per action below");
        dispatch!(
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19
            20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39
        );
    }

    /// The address the rendering fetch drives during the dot about to run: the 2-dot fetch
    /// (address, then read) that contains it, computed from the state the fetch itself uses.
    /// Only a `$2007` read landing during rendering asks, so this stays off the per-dot path.
    pub(crate) fn rendering_fetch_addr(&self) -> u16 {
        let dot = self.dot;
        let sprite_base = || usize::from(dot.wrapping_sub(257) >> 3) * 4;
        match schedule::fetch_in_progress(dot) {
            Fetch::Attribute => self.scroll.attribute_addr(),
            Fetch::PatternLow => self.background_pattern_addr(),
            Fetch::PatternHigh => self.background_pattern_addr() | 8,
            Fetch::SpritePatternLow => self.sprite_pattern_addr(sprite_base()),
            Fetch::SpritePatternHigh => self.sprite_pattern_addr(sprite_base()) | 8,
            // Nametable fetches, used or not; dot 0 idles with the address of dot 339's
            // unused fetch still on the bus.
            Fetch::Nametable | Fetch::UnusedNametable | Fetch::None => self.scroll.nametable_addr(),
        }
    }

    /// Secondary OAM byte that sprite-fetch dot `dot` (offsets 0-3 of its slot) puts on the
    /// OAM bus.
    #[inline(always)]
    fn sprite_slot_byte(&self, dot: u16) -> u8 {
        let offset = usize::from(dot.wrapping_sub(257));
        self.secondary_oam[((offset >> 3) * 4 + (offset & 3)) & 31]
    }

    /// Brings lazily-run work (sprite evaluation, pixel output) up to the present, i.e.
    /// through the last ticked dot, before a register access can observe or change its inputs.
    #[inline]
    /// Whether `catch_up` has work to do: lazy evaluation or pixels behind the dot.
    pub(crate) fn deferred_work_pending(&self) -> bool {
        self.rendering_enabled
            && self.scanline < POST_RENDER_SCANLINE
            && (self.evaluation_cursor < self.dot.min(257)
                || (self.dot >= 2 && self.pixel_x < (self.dot - 1).min(256)))
    }

    pub(crate) fn catch_up(&mut self) {
        if self.rendering_enabled && self.scanline < POST_RENDER_SCANLINE {
            self.run_evaluation_until(self.dot.min(257));
            if self.dot >= 2 {
                self.output_pixels_until((self.dot - 1).min(256));
            }
        }
    }

    /// Records the background shifter as it stands after the dot of pixel `x`.
    #[inline(always)]
    fn snapshot_tile(&mut self, x: u16) {
        self.tile_cells = self.background.cells;
        self.tile_base_x = x;
    }

    /// Rendering was switched on or off by a `$2001` write just now (after `catch_up`).
    /// Switched on mid-line, the stale shifter resumes shifting at the next dot: its state
    /// then is the current value shifted once, the same relation a snapshot taken one pixel
    /// earlier has.
    pub(crate) fn resume_pixels(&mut self) {
        if self.rendering_enabled && self.dot >= 1 {
            self.pixel_x = (self.dot - 1).min(256);
            self.tile_cells = self.background.cells;
            self.tile_base_x = self.dot.wrapping_sub(2);
        }
    }

    /// Writes the pixels from `pixel_x` up to (not including) `end_x` of the current visible
    /// line from the tile snapshot: background/sprite multiplexing, sprite 0 hit, colour.
    ///
    /// The commonest call, a whole tile on a line without sprites and outside the left clip,
    /// is done inline with four two-pixel lookups; the rest goes to `output_pixels_general`.
    #[inline(always)]
    pub(crate) fn output_pixels_until(&mut self, end_x: u16) {
        let start_x = self.pixel_x;
        let whole_plain_tile = end_x.wrapping_sub(start_x) == 8
            && end_x <= FRAME_WIDTH as u16
            && self.no_sprite_pixels(start_x)
            && usize::from(start_x) >= self.background_min_x
            && self.colour_pairs.valid;
        if !whole_plain_tile {
            self.output_pixels_general(end_x);
            return;
        }
        self.pixel_x = end_x;
        let first_cell = u32::from(self.scroll.fine_x & 7)
            + u32::from(start_x.wrapping_sub(self.tile_base_x) & 7);
        let cells = self.tile_cells << (4 * first_cell);
        let start = usize::from(self.scanline) * FRAME_WIDTH + usize::from(start_x);
        let Some(Ok(tile)) = self
            .frame
            .get_mut(start..start + 8)
            .map(<&mut [u16; 8]>::try_from)
        else {
            return;
        };
        self.colour_pairs.write_tile(tile, cells);
    }

    /// Whether the 8 pixels from `x` have no opaque sprite pixel: the line has no sprite, or
    /// none of its sprites covers them (on a sprite line most tiles are still bare). Such
    /// pixels are the background's alone, as on a line without sprites: no priority to
    /// resolve, no sprite 0 hit.
    /// An empty line's buffer is all zero (`SpriteLine::occupied`), so one 8-byte load and
    /// test answers for every line.
    #[inline(always)]
    fn no_sprite_pixels(&self, x: u16) -> bool {
        let x = usize::from(x);
        match self
            .sprite_line
            .pixels
            .get(x..x + 8)
            .map(<[u8; 8]>::try_from)
        {
            Some(Ok(span)) => u64::from_ne_bytes(span) == 0,
            _ => false,
        }
    }

    /// `output_pixels_until` for any span: sprites, clipping, partial tiles.
    #[inline(never)]
    fn output_pixels_general(&mut self, end_x: u16) {
        if !self.colour_pairs.valid {
            self.rebuild_colour_pairs();
        }
        let start_x = self.pixel_x;
        if start_x >= end_x {
            return;
        }
        self.pixel_x = end_x;
        // At most 7 shifts after the snapshot (a reload takes a new one) and fine X is at
        // most 7: every pixel's cell is one of the 16 the snapshot holds.
        let first_cell = u32::from(self.scroll.fine_x & 7)
            + u32::from(start_x.wrapping_sub(self.tile_base_x) & 7);
        let mut cells = self.tile_cells << (4 * first_cell);
        let row_start = usize::from(self.scanline) * FRAME_WIDTH;
        let (start, end) = (usize::from(start_x), usize::from(end_x).min(FRAME_WIDTH));
        let Some(row) = self.frame.get_mut(row_start + start..row_start + end) else {
            return;
        };
        let background_min_x = self.background_min_x;
        if !self.sprite_line.occupied {
            // No sprite on this line: the colour cache maps every transparent cell to the
            // backdrop, so each pixel is one lookup. Left-clipped pixels show the backdrop.
            if start >= background_min_x {
                if let Ok(tile) = <&mut [u16; 8]>::try_from(&mut *row) {
                    // The common case, a whole unclipped tile: straight-line code.
                    for (column, pixel) in tile.iter_mut().enumerate() {
                        let cell = (cells >> (60 - 4 * column)) as usize & 0x0F;
                        *pixel = self.colour_cache[cell];
                    }
                    return;
                }
            }
            let clipped = background_min_x.clamp(start, end) - start;
            let (left, rest) = row.split_at_mut(clipped);
            left.fill(self.colour_cache[0]);
            cells <<= 4 * (clipped as u32 & 15);
            for pixel in rest {
                *pixel = self.colour_cache[(cells >> 60) as usize & 0x0F];
                cells <<= 4;
            }
            return;
        }
        let sprite_min_x = self.sprite_min_x;
        if start >= background_min_x.max(sprite_min_x) {
            let sprites = self.sprite_line.pixels.get(start..start + 8);
            if let (Ok(tile), Some(Ok(sprites))) = (
                <&mut [u16; 8]>::try_from(&mut *row),
                sprites.map(<[u8; 8]>::try_from),
            ) {
                // A whole unclipped tile under sprites: its background as on a bare tile,
                // then each sprite pixel resolved against it (the loop below, pixel by
                // pixel, for the cells a sprite covers).
                self.colour_pairs.write_tile(tile, cells);
                for (column, (&sprite, pixel)) in sprites.iter().zip(tile.iter_mut()).enumerate() {
                    if sprite != 0 {
                        let cell = (cells >> (60 - 4 * column)) as u8 & 0x0F;
                        let background = if cell & 3 != 0 { cell } else { 0 };
                        let index = shown_index(
                            background,
                            sprite,
                            start + column,
                            &mut self.sprite_zero_hit,
                        );
                        *pixel = self.colour_cache[usize::from(index & SPRITE_PALETTE_INDEX)];
                    }
                }
                return;
            }
        }
        for (x, pixel) in (start..end).zip(row.iter_mut()) {
            let cell = (cells >> 60) as u8;
            cells <<= 4;
            let background = if x >= background_min_x && cell & 3 != 0 {
                cell
            } else {
                0
            };
            let sprite = if x >= sprite_min_x {
                self.sprite_line.pixels[x & 0xFF]
            } else {
                0
            };
            let index = shown_index(background, sprite, x, &mut self.sprite_zero_hit);
            *pixel = self.colour_cache[usize::from(index & SPRITE_PALETTE_INDEX)];
        }
    }

    /// Stores a palette value with greyscale and emphasis applied.
    #[inline(always)]
    fn write_pixel(&mut self, x: usize, colour: u8) {
        let value = u16::from(colour & self.colour_mask) | self.emphasis_bits;
        if let Some(pixel) = self
            .frame
            .get_mut(usize::from(self.scanline) * FRAME_WIDTH + x)
        {
            *pixel = value;
        }
    }

    /// Recomputes the output colour of every palette index (greyscale and emphasis applied)
    /// after palette RAM or `$2001` changes. Background indices with colour 0 all show the
    /// backdrop ($3F00).
    pub(crate) fn refresh_colour_cache(&mut self) {
        self.colour_cache = self.colour_cache_values();
        // Rebuilt on the next pixels: palette uploads write many entries in a row.
        self.colour_pairs.valid = false;
    }

    /// What `colour_cache` holds for the palette RAM and `$2001` as they stand.
    pub(crate) fn colour_cache_values(&self) -> [u16; 32] {
        std::array::from_fn(|index| {
            let source = if index & 3 == 0 { 0 } else { index };
            u16::from(self.palette_ram[source] & self.colour_mask) | self.emphasis_bits
        })
    }

    /// Recomputes `colour_pairs` from the background half of `colour_cache`.
    #[cold]
    fn rebuild_colour_pairs(&mut self) {
        for (cells, values) in self.colour_pairs.values.iter_mut().enumerate() {
            let first = self.colour_cache[cells >> 4];
            let second = self.colour_cache[cells & 0x0F];
            *values = u32::from(first) | (u32::from(second) << 16);
        }
        self.colour_pairs.valid = true;
    }
}

/// What pixel `x` shows of its background palette index (0: transparent or clipped) and
/// its sprite line-buffer cell (0: none): the sprite's unless it is transparent or behind
/// an opaque background. An opaque sprite 0 pixel over an opaque background sets the
/// sprite 0 hit (never at x = 255).
#[inline(always)]
fn shown_index(background: u8, sprite: u8, x: usize, sprite_zero_hit: &mut bool) -> u8 {
    if sprite == 0 {
        background
    } else if background == 0 {
        sprite
    } else {
        if sprite & SPRITE_ZERO != 0 && x != 255 {
            *sprite_zero_hit = true;
        }
        if sprite & SPRITE_BEHIND_BACKGROUND != 0 {
            background
        } else {
            sprite
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{run_dots, run_to, FlatBus};
    use crate::{Ppu, PpuBus, PpuWriteBus};

    fn ready() -> (Ppu, FlatBus) {
        let mut ppu = Ppu::new();
        ppu.set_warmup(false);
        (ppu, FlatBus::new())
    }

    fn vblank_flag(ppu: &Ppu) -> bool {
        ppu.peek_register(0x2002) & 0x80 != 0
    }

    #[test]
    fn vblank_sets_at_241_dot_1_and_clears_at_261_dot_1() {
        let (mut ppu, mut bus) = ready();
        run_to(&mut ppu, &mut bus, 241, 1);
        assert!(!vblank_flag(&ppu));
        ppu.tick(&mut bus);
        assert!(vblank_flag(&ppu));
        run_to(&mut ppu, &mut bus, 261, 1);
        assert!(vblank_flag(&ppu));
        ppu.tick(&mut bus);
        assert!(!vblank_flag(&ppu));
    }

    #[test]
    fn frame_counter_advances_at_line_240() {
        let (mut ppu, mut bus) = ready();
        run_to(&mut ppu, &mut bus, 239, 340);
        assert_eq!(ppu.frames_completed(), 0);
        ppu.tick(&mut bus);
        assert_eq!((ppu.scanline(), ppu.dot()), (240, 0));
        assert_eq!(ppu.frames_completed(), 1);
    }

    #[test]
    fn status_read_on_the_set_dot_suppresses_flag_and_nmi() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2000, 0x80, &mut bus);
        run_to(&mut ppu, &mut bus, 241, 1);
        assert_eq!(ppu.read_register(0x2002, &mut bus) & 0x80, 0);
        for _ in 0..20 * 341 {
            ppu.tick(&mut bus);
            assert!(!vblank_flag(&ppu));
            assert!(!ppu.nmi_line());
        }
    }

    #[test]
    fn status_reads_next_to_the_set_dot() {
        // One dot early: reads clear, flag still sets afterwards (and NMI follows).
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2000, 0x80, &mut bus);
        run_to(&mut ppu, &mut bus, 241, 0);
        assert_eq!(ppu.read_register(0x2002, &mut bus) & 0x80, 0);
        run_dots(&mut ppu, &mut bus, 2);
        assert!(ppu.nmi_line());

        // One dot late: reads set, and clearing it drops /NMI again, so a CPU that has not
        // sampled the line in between sees no NMI.
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2000, 0x80, &mut bus);
        run_to(&mut ppu, &mut bus, 241, 2);
        assert!(ppu.nmi_line());
        assert_eq!(ppu.read_register(0x2002, &mut bus) & 0x80, 0x80);
        assert!(!ppu.nmi_line());
        assert_eq!(
            ppu.read_register(0x2002, &mut bus) & 0x80,
            0,
            "reading clears the flag"
        );
    }

    #[test]
    fn nmi_enable_during_vblank_raises_the_line_at_once() {
        let (mut ppu, mut bus) = ready();
        run_to(&mut ppu, &mut bus, 250, 0);
        assert!(!ppu.nmi_line());
        ppu.write_register(0x2000, 0x80, &mut bus);
        assert!(
            ppu.nmi_line(),
            "enabling while VBlank is set is an immediate edge"
        );
        ppu.write_register(0x2000, 0x00, &mut bus);
        assert!(!ppu.nmi_line());
        ppu.write_register(0x2000, 0x80, &mut bus);
        assert!(ppu.nmi_line(), "enable after disable: a new edge");
        run_to(&mut ppu, &mut bus, 261, 2);
        assert!(!ppu.nmi_line(), "VBlank end drops /NMI");
        ppu.write_register(0x2000, 0x00, &mut bus);
        ppu.write_register(0x2000, 0x80, &mut bus);
        assert!(!ppu.nmi_line(), "no NMI when enabled with the flag clear");
    }

    #[test]
    fn nmi_disabled_just_before_the_set_dot_never_fires() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2000, 0x80, &mut bus);
        run_to(&mut ppu, &mut bus, 241, 1);
        ppu.write_register(0x2000, 0x00, &mut bus);
        ppu.tick(&mut bus);
        assert!(vblank_flag(&ppu));
        assert!(!ppu.nmi_line());
    }

    /// Dots from (100, 0) of one frame to (100, 0) of the next.
    fn frame_length(ppu: &mut Ppu, bus: &mut FlatBus) -> u32 {
        run_to(ppu, bus, 100, 0);
        let mut dots = 0;
        loop {
            ppu.tick(bus);
            dots += 1;
            if ppu.scanline() == 100 && ppu.dot() == 0 {
                return dots;
            }
        }
    }

    #[test]
    fn odd_frames_are_one_dot_short_only_when_rendering() {
        let (mut ppu, mut bus) = ready();
        assert_eq!(frame_length(&mut ppu, &mut bus), 341 * 262);
        assert_eq!(
            frame_length(&mut ppu, &mut bus),
            341 * 262,
            "rendering off: never skipped"
        );
        ppu.write_register(0x2001, 0x08, &mut bus);
        let lengths = [
            frame_length(&mut ppu, &mut bus),
            frame_length(&mut ppu, &mut bus),
            frame_length(&mut ppu, &mut bus),
        ];
        assert!(lengths
            .iter()
            .all(|&n| n == 341 * 262 || n == 341 * 262 - 1));
        assert_ne!(lengths[0], lengths[1], "long and short frames alternate");
        assert_ne!(lengths[1], lengths[2]);
    }

    /// Where the PPU is after the pre-render line of an odd frame, when `$2001` is written with
    /// `mask` just before pre-render dot `dot` (rendering was `initial_mask` before).
    fn position_after_pre_render(initial_mask: u8, mask: u8, dot: u16) -> (u16, u16) {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2001, initial_mask, &mut bus);
        while !ppu.odd_frame() {
            run_dots(&mut ppu, &mut bus, 341);
        }
        run_to(&mut ppu, &mut bus, 261, dot);
        ppu.write_register(0x2001, mask, &mut bus);
        run_to(&mut ppu, &mut bus, 261, 340);
        ppu.tick(&mut bus);
        (ppu.scanline(), ppu.dot())
    }

    #[test]
    fn odd_frame_skip_samples_rendering_at_pre_render_dot_338() {
        assert_eq!(
            position_after_pre_render(0x00, 0x10, 338),
            (0, 1),
            "enabled in time: (0, 0) skipped"
        );
        assert_eq!(
            position_after_pre_render(0x00, 0x10, 339),
            (0, 0),
            "enabled too late"
        );
        assert_eq!(
            position_after_pre_render(0x08, 0x00, 338),
            (0, 0),
            "disabled in time"
        );
        assert_eq!(
            position_after_pre_render(0x08, 0x00, 339),
            (0, 1),
            "disabled too late"
        );
    }

    #[test]
    fn fetches_happen_on_their_dots() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2000, 0x08, &mut bus); // sprites from $1000
        for _ in 0..256 {
            ppu.write_register(0x2004, 0xF0, &mut bus); // no sprite in range
        }
        ppu.write_register(0x2001, 0x18, &mut bus);
        run_to(&mut ppu, &mut bus, 5, 0);
        bus.record_reads = true;
        let mut per_dot = Vec::new();
        for _ in 0..341 {
            bus.reads.clear();
            ppu.tick(&mut bus);
            per_dot.push(bus.reads.clone());
        }
        let total: usize = per_dot.iter().map(Vec::len).sum();
        assert_eq!(total, 34 * 4 + 8 * 4 + 2);
        assert!(per_dot[0].is_empty(), "dot 0 idles");
        assert!(
            (0x2000..0x23C0).contains(&per_dot[1][0]),
            "nametable at dot 1"
        );
        assert!(per_dot[2].is_empty());
        assert!(
            (0x23C0..0x2400).contains(&per_dot[3][0]),
            "attribute at dot 3"
        );
        assert_eq!(per_dot[5], vec![5], "pattern low: tile 0, fine Y 5");
        assert_eq!(per_dot[7], vec![5 | 8], "pattern high");
        assert!(
            (0x2000..0x3000).contains(&per_dot[257][0]),
            "garbage nametable"
        );
        assert!(
            (0x2000..0x3000).contains(&per_dot[259][0]),
            "garbage nametable"
        );
        // Empty sprite slots fetch tile $FF from the sprite table.
        assert_eq!(per_dot[261][0] & 0xFFF0, 0x1FF0);
        assert_eq!(per_dot[263][0] & 0xFFF8, 0x1FF8);
        assert!((0x2000..0x3000).contains(&per_dot[321][0]));
        assert!((0x2000..0x3000).contains(&per_dot[337][0]));
        assert!((0x2000..0x3000).contains(&per_dot[339][0]));
        assert!(per_dot[340].is_empty());
    }

    #[test]
    fn scroll_copies_happen_at_257_and_280_to_304() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2001, 0x08, &mut bus);
        run_to(&mut ppu, &mut bus, 100, 0);
        ppu.write_register(0x2000, 0x01, &mut bus);
        ppu.write_register(0x2005, 0x28, &mut bus); // coarse X 5
        ppu.write_register(0x2005, 0x4B, &mut bus); // coarse Y 9, fine Y 3
        run_to(&mut ppu, &mut bus, 100, 257);
        let before = ppu.vram_addr();
        ppu.tick(&mut bus);
        assert_eq!(ppu.vram_addr() & 0x041F, 0x0405, "hori(v) = hori(t)");
        assert_eq!(
            ppu.vram_addr() & 0x7BE0,
            before & 0x7BE0,
            "vertical bits untouched"
        );
        run_to(&mut ppu, &mut bus, 261, 280);
        assert_ne!(ppu.vram_addr() & 0x7BE0, 0x3000 | (9 << 5));
        ppu.tick(&mut bus);
        assert_eq!(
            ppu.vram_addr() & 0x7BE0,
            0x3000 | (9 << 5),
            "vert(v) = vert(t)"
        );
        // After the pre-render line's two tile fetches v is at coarse X 5 + 2.
        run_to(&mut ppu, &mut bus, 0, 0);
        assert_eq!(ppu.vram_addr(), 0x3000 | 0x0400 | (9 << 5) | 7);
    }

    #[test]
    fn oamaddr_is_cleared_during_sprite_fetches() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2001, 0x10, &mut bus);
        run_to(&mut ppu, &mut bus, 20, 10);
        ppu.write_register(0x2003, 0x40, &mut bus);
        run_to(&mut ppu, &mut bus, 20, 258);
        assert_eq!(ppu.oam_addr, 0);
    }

    #[test]
    fn disabled_rendering_shows_the_backdrop_or_the_palette_entry_v_points_at() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2006, 0x3F, &mut bus);
        ppu.write_register(0x2006, 0x00, &mut bus);
        ppu.write_register(0x2007, 0x21, &mut bus);
        ppu.write_register(0x2007, 0x22, &mut bus);
        ppu.write_register(0x2007, 0x23, &mut bus);
        ppu.write_register(0x2006, 0x3F, &mut bus);
        ppu.write_register(0x2006, 0x02, &mut bus);
        // v = $3F02 from dot 3 on: the PPU outputs that entry.
        run_to(&mut ppu, &mut bus, 1, 0);
        assert!(ppu.frame_buffer()[2..256].iter().all(|&p| p == 0x23));
        ppu.write_register(0x2006, 0x20, &mut bus);
        ppu.write_register(0x2006, 0x00, &mut bus);
        run_to(&mut ppu, &mut bus, 2, 0);
        // The t -> v copy lands before dot 3: pixels 0-1 (dots 1-2) still show $3F02.
        let line_1 = &ppu.frame_buffer()[256..512];
        assert!(line_1[..2].iter().all(|&p| p == 0x23));
        assert!(line_1[2..].iter().all(|&p| p == 0x21));
    }

    // ---- Golden scenes ----

    const BACKDROP: u16 = 0x30;
    /// Background palette p, pixel c is 0x30 + 4p + c; sprite palette p, pixel c 0x10 + 4p + c.
    fn bg(palette: u16, pixel: u16) -> u16 {
        0x30 + palette * 4 + pixel
    }
    fn spr(palette: u16, pixel: u16) -> u16 {
        0x10 + palette * 4 + pixel
    }

    /// Background: nametable 0 filled with tile 1 (solid colour 1), except tile row 8 which is
    /// tile 0 (transparent) and tile (2, 1) which is tile 2 (solid colour 2) in attribute
    /// palette 1. Sprite tiles (table $1000): 1 = left half colour 1; 3 = only row 0,
    /// colour 3; 4/5 = 8x16 pair, top tile colour 1, bottom tile colour 2.
    fn scene(ctrl: u8, mask: u8, sprites: &[[u8; 4]]) -> (Ppu, FlatBus) {
        let (mut ppu, mut bus) = ready();
        let memory = &mut bus.memory;
        for row in 0..8 {
            memory[0x0010 + row] = 0xFF; // bg tile 1, low plane
            memory[0x0028 + row] = 0xFF; // bg tile 2, high plane
            memory[0x1010 + row] = 0xF0; // sprite tile 1
            memory[0x1040 + row] = 0xFF; // tile 4 (top of 8x16 pair 4/5): colour 1
            memory[0x1058 + row] = 0xFF; // tile 5: colour 2
        }
        memory[0x1030] = 0xFF; // sprite tile 3 row 0, both planes
        memory[0x1038] = 0xFF;
        for cell in 0..960 {
            memory[0x2000 + cell] = if cell / 32 == 8 { 0 } else { 1 };
        }
        memory[0x2000 + 32 + 2] = 2;
        memory[0x23C0] = 0b0000_0100; // top-right quadrant of the first block: palette 1
        let write = |ppu: &mut Ppu, bus: &mut FlatBus, addr: u16, value: u8| {
            ppu.write_register(0x2006, (addr >> 8) as u8, bus);
            ppu.write_register(0x2006, addr as u8, bus);
            ppu.write_register(0x2007, value, bus);
        };
        for entry in 0..16u16 {
            write(&mut ppu, &mut bus, 0x3F00 + entry, 0x30 + entry as u8);
            if entry & 3 != 0 {
                write(&mut ppu, &mut bus, 0x3F10 + entry, 0x10 + entry as u8);
            }
        }
        let mut oam = [0xF0u8; 256];
        for (slot, sprite) in sprites.iter().enumerate() {
            oam[slot * 4..slot * 4 + 4].copy_from_slice(sprite);
        }
        ppu.write_register(0x2003, 0, &mut bus);
        for byte in oam {
            ppu.write_register(0x2004, byte, &mut bus);
        }
        ppu.write_register(0x2006, 0, &mut bus);
        ppu.write_register(0x2006, 0, &mut bus);
        ppu.write_register(0x2000, ctrl, &mut bus);
        ppu.write_register(0x2001, mask, &mut bus);
        (ppu, bus)
    }

    /// Renders until a complete frame (started from the pre-render line) is in the buffer.
    fn render(ppu: &mut Ppu, bus: &mut FlatBus) {
        run_to(ppu, bus, 261, 0);
        run_to(ppu, bus, 240, 0);
    }

    fn pixel(ppu: &Ppu, x: usize, y: usize) -> u16 {
        ppu.frame_buffer()[y * 256 + x]
    }

    const SHOW_ALL: u8 = 0x1E;

    #[test]
    fn hiding_the_layers_reaches_the_next_pixel_and_rendering_stops_later() {
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &[]);
        run_to(&mut ppu, &mut bus, 261, 0);
        run_to(&mut ppu, &mut bus, 5, 100);
        // Pixels up to 98 are decided; the multiplexer hides the background from pixel 99 on,
        // while the fetches and shifters run on for `MASK_WRITE_DELAY_DOTS`.
        ppu.write_register(0x2001, 0x00, &mut bus);
        assert!(
            ppu.rendering_enabled(),
            "rendering itself has not stopped yet"
        );
        run_to(&mut ppu, &mut bus, 6, 0);
        assert_eq!(pixel(&ppu, 98, 5), bg(0, 1));
        assert_eq!(pixel(&ppu, 99, 5), bg(0, 0), "the backdrop");
        assert!(!ppu.rendering_enabled());
    }

    #[test]
    fn background_tiles_and_attributes() {
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &[]);
        render(&mut ppu, &mut bus);
        assert_eq!(pixel(&ppu, 0, 0), bg(0, 1));
        assert_eq!(pixel(&ppu, 15, 8), bg(0, 1));
        for (x, y) in [(16, 8), (23, 8), (16, 15), (23, 15)] {
            assert_eq!(pixel(&ppu, x, y), bg(1, 2), "tile (2,1) at {x},{y}");
        }
        assert_eq!(
            pixel(&ppu, 24, 8),
            bg(1, 1),
            "same attribute quadrant, tile 1"
        );
        assert_eq!(pixel(&ppu, 32, 8), bg(0, 1), "next quadrant");
        assert_eq!(
            pixel(&ppu, 100, 64),
            BACKDROP,
            "transparent row shows the backdrop"
        );
        assert_eq!(pixel(&ppu, 255, 239), bg(0, 1));
    }

    #[test]
    fn fine_x_scroll_shifts_the_picture() {
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &[]);
        ppu.write_register(0x2005, 3, &mut bus);
        ppu.write_register(0x2005, 0, &mut bus);
        render(&mut ppu, &mut bus);
        assert_eq!(pixel(&ppu, 12, 8), bg(0, 1));
        assert_eq!(
            pixel(&ppu, 13, 8),
            bg(1, 2),
            "tile 2 starts 3 pixels earlier"
        );
        assert_eq!(pixel(&ppu, 20, 8), bg(1, 2));
        assert_eq!(pixel(&ppu, 21, 8), bg(1, 1));
    }

    #[test]
    fn sprites_priority_and_ordering() {
        let sprites = [
            [0xF0, 1, 0x00, 0],        // sprite 0 hidden
            [63, 1, 0x21, 10],         // behind bg, palette 1, on the transparent row
            [63, 1, 0x02, 12],         // in front, palette 2, overlapping sprite 1
            [49, 1, 0x23, 120],        // behind bg over opaque bg: hidden
            [49, 1, 0x40 | 0x03, 140], // horizontally flipped: right half
        ];
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &sprites);
        render(&mut ppu, &mut bus);
        // Sprite 1 over transparent background shows although "behind".
        assert_eq!(pixel(&ppu, 10, 64), spr(1, 1));
        assert_eq!(pixel(&ppu, 10, 71), spr(1, 1));
        assert_eq!(pixel(&ppu, 10, 72), bg(0, 1), "8 lines only");
        assert_eq!(pixel(&ppu, 10, 63), bg(0, 1), "drawn one line below its Y");
        // Lower OAM index wins where sprites overlap, even with its behind-bg bit.
        assert_eq!(pixel(&ppu, 12, 64), spr(1, 1));
        assert_eq!(pixel(&ppu, 13, 64), spr(1, 1));
        assert_eq!(pixel(&ppu, 14, 64), spr(2, 1));
        assert_eq!(pixel(&ppu, 15, 64), spr(2, 1));
        assert_eq!(pixel(&ppu, 16, 64), BACKDROP);
        // Behind an opaque background.
        assert_eq!(pixel(&ppu, 120, 50), bg(0, 1));
        // Flipped: columns 4-7 opaque.
        assert_eq!(pixel(&ppu, 143, 50), bg(0, 1));
        assert_eq!(pixel(&ppu, 144, 50), spr(3, 1));
        assert_eq!(pixel(&ppu, 147, 50), spr(3, 1));
        assert!(!ppu.sprite_zero_hit, "sprite 0 never overlapped");
    }

    #[test]
    fn vertical_flip_and_8x16() {
        let sprites = [
            [0xF0, 0, 0, 0],
            [99, 3, 0x80, 30], // tile 3 (row 0 only) flipped: shows on its last row
            [150, 5, 0x00, 60], // 8x16 from table $1000 (tile bit 0), tiles 4/5
            [180, 5, 0x80, 60], // 8x16 flipped: bottom tile on top, rows reversed
        ];
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &sprites);
        render(&mut ppu, &mut bus);
        assert_eq!(pixel(&ppu, 30, 100), bg(0, 1));
        assert_eq!(pixel(&ppu, 30, 107), spr(0, 3));

        let (mut ppu, mut bus) = scene(0x20, SHOW_ALL, &sprites);
        render(&mut ppu, &mut bus);
        assert_eq!(pixel(&ppu, 60, 151), spr(0, 1));
        assert_eq!(pixel(&ppu, 60, 158), spr(0, 1));
        assert_eq!(pixel(&ppu, 60, 159), spr(0, 2));
        assert_eq!(pixel(&ppu, 67, 166), spr(0, 2));
        assert_eq!(pixel(&ppu, 60, 167), bg(0, 1));
        assert_eq!(pixel(&ppu, 60, 181), spr(0, 2));
        assert_eq!(pixel(&ppu, 60, 189), spr(0, 1));
    }

    #[test]
    fn sprite_zero_hit_is_set_on_the_first_overlapping_dot() {
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &[[49, 1, 0, 100]]);
        run_to(&mut ppu, &mut bus, 261, 0);
        run_to(&mut ppu, &mut bus, 50, 101);
        assert_eq!(ppu.read_register(0x2002, &mut bus) & 0x40, 0);
        ppu.tick(&mut bus);
        assert_eq!(
            ppu.read_register(0x2002, &mut bus) & 0x40,
            0x40,
            "pixel 100 is output on dot 101"
        );
        assert_eq!(pixel(&ppu, 100, 50), spr(0, 1));
        run_to(&mut ppu, &mut bus, 261, 0);
        assert_ne!(ppu.read_register(0x2002, &mut bus) & 0x40, 0);
        ppu.tick(&mut bus);
        // The flag clears on pre-render dot 1, and a read just before that dot already sees
        // it clear (the sprite bits are sampled at the end of the CPU read).
        assert_eq!(
            ppu.read_register(0x2002, &mut bus) & 0x40,
            0,
            "cleared at pre-render dot 1"
        );
        ppu.tick(&mut bus);
        assert_eq!(ppu.read_register(0x2002, &mut bus) & 0x40, 0);
    }

    #[test]
    fn status_read_before_pre_render_dot_1_sees_vblank_set_but_sprite_flags_clear() {
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &[[49, 1, 0, 100]]);
        run_to(&mut ppu, &mut bus, 261, 0);
        run_to(&mut ppu, &mut bus, 261, 1);
        assert_eq!(ppu.peek_register(0x2002) & 0xE0, 0x80);
    }

    fn hits(ctrl: u8, mask: u8, sprite: [u8; 4]) -> bool {
        let (mut ppu, mut bus) = scene(ctrl, mask, &[sprite]);
        render(&mut ppu, &mut bus);
        ppu.peek_register(0x2002) & 0x40 != 0
    }

    #[test]
    fn sprite_zero_hit_conditions() {
        assert!(hits(0x08, SHOW_ALL, [20, 1, 0, 0]));
        assert!(
            !hits(0x08, SHOW_ALL, [63, 1, 0, 0]),
            "transparent background"
        );
        assert!(
            hits(0x08, SHOW_ALL, [20, 1, 0x20, 50]),
            "priority does not matter"
        );
        assert!(
            !hits(0x08, 0x18, [20, 1, 0, 0]),
            "both left-8 clips on: hidden"
        );
        assert!(!hits(0x08, 0x18 | 0x02, [20, 1, 0, 0]), "sprite clipped");
        assert!(
            !hits(0x08, 0x18 | 0x04, [20, 1, 0, 0]),
            "background clipped"
        );
        assert!(
            hits(0x08, 0x18, [20, 1, 0, 5]),
            "columns 8 and later still hit"
        );
        assert!(
            !hits(0x08, 0x10 | 0x06, [20, 1, 0, 50]),
            "background disabled"
        );
        assert!(!hits(0x08, 0x08 | 0x06, [20, 1, 0, 50]), "sprites disabled");
        assert!(!hits(0x08, SHOW_ALL, [20, 1, 0, 255]), "never at x = 255");
        assert!(hits(0x08, SHOW_ALL, [20, 1, 0, 252]));
    }

    #[test]
    fn left_column_clipping() {
        let (mut ppu, mut bus) = scene(0x08, 0x18, &[[0xF0, 0, 0, 0], [63, 1, 0, 2]]);
        render(&mut ppu, &mut bus);
        assert_eq!(pixel(&ppu, 0, 0), BACKDROP);
        assert_eq!(pixel(&ppu, 7, 0), BACKDROP);
        assert_eq!(pixel(&ppu, 8, 0), bg(0, 1));
        assert_eq!(pixel(&ppu, 3, 64), BACKDROP, "sprite clipped");
        let (mut ppu, mut bus) = scene(0x08, 0x1C, &[[0xF0, 0, 0, 0], [63, 1, 0, 2]]);
        render(&mut ppu, &mut bus);
        assert_eq!(pixel(&ppu, 0, 0), BACKDROP);
        assert_eq!(pixel(&ppu, 3, 64), spr(0, 1), "sprite left column shown");
    }

    #[test]
    fn emphasis_and_greyscale() {
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL | 0xA0, &[]);
        render(&mut ppu, &mut bus);
        assert_eq!(pixel(&ppu, 16, 8), bg(1, 2) | (0b101 << 6));
        assert_eq!(pixel(&ppu, 100, 64), BACKDROP | (0b101 << 6));
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL | 0x01, &[]);
        render(&mut ppu, &mut bus);
        assert_eq!(pixel(&ppu, 16, 8), bg(1, 2) & 0x30);
    }

    #[test]
    fn eight_sprites_per_line_and_overflow_in_a_frame() {
        let sprites: Vec<[u8; 4]> = (0..9).map(|i| [63, 1, 0, 20 * i as u8 + 20]).collect();
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &sprites);
        render(&mut ppu, &mut bus);
        for i in 0..8 {
            assert_eq!(pixel(&ppu, 20 * i + 20, 64), spr(0, 1));
        }
        assert_eq!(
            pixel(&ppu, 180, 64),
            BACKDROP,
            "the ninth sprite is dropped"
        );
        assert_ne!(ppu.peek_register(0x2002) & 0x20, 0);
    }

    #[test]
    fn bus_trait_default_address_changed_is_a_no_op() {
        struct Minimal;
        impl PpuBus for Minimal {
            fn read(&mut self, _: u16) -> u8 {
                0
            }
            fn peek(&self, _: u16) -> u8 {
                0
            }
        }
        impl PpuWriteBus for Minimal {
            fn write(&mut self, _: u16, _: u8) {}
        }
        let mut ppu = Ppu::new();
        ppu.set_warmup(false);
        ppu.write_register(0x2006, 0x21, &mut Minimal);
        ppu.write_register(0x2006, 0x08, &mut Minimal);
        for _ in 0..crate::registers::ADDR_WRITE_DELAY_DOTS {
            ppu.tick(&mut Minimal);
        }
        assert_eq!(ppu.vram_addr(), 0x2108);
    }

    #[test]
    fn address_copy_between_the_two_dots_of_a_fetch_reads_a_hybrid_address() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2001, 0x08, &mut bus);
        // Accessed before dot 183: the copy lands before dot 186, between the nametable
        // fetch's address dot (185, after the coarse X step on 184) and its read dot.
        run_to(&mut ppu, &mut bus, 5, 183);
        let mut old = crate::scroll::ScrollRegisters {
            v: ppu.vram_addr(),
            ..Default::default()
        };
        old.increment_coarse_x();
        let hybrid = 0x2F00 | (old.nametable_addr() & 0xFF);
        bus.memory[usize::from(hybrid)] = 0x77;
        ppu.write_register(0x2006, 0x2F, &mut bus);
        ppu.write_register(0x2006, 0x00, &mut bus);
        run_to(&mut ppu, &mut bus, 5, 187);
        assert_eq!(ppu.background.nametable_latch, 0x77);
        assert_eq!(ppu.vram_addr(), 0x2F00);
    }

    #[test]
    fn data_read_during_rendering_makes_the_next_fetch_reuse_the_low_address_byte() {
        let (mut ppu, mut bus) = ready();
        ppu.write_register(0x2001, 0x08, &mut bus);
        // Accessed before dot 224: the read lands on the attribute fetch (227), so the
        // pattern fetch on 229 keeps the attribute address's low byte. Tiles are all $00.
        run_to(&mut ppu, &mut bus, 5, 224);
        let mut at_landing = crate::scroll::ScrollRegisters {
            v: ppu.vram_addr(),
            ..Default::default()
        };
        at_landing.increment_coarse_x();
        let stale_addr = at_landing.attribute_addr() & 0xFF;
        bus.memory[usize::from(stale_addr)] = 0xA5;
        let _ = ppu.read_register(0x2007, &mut bus);
        run_to(&mut ppu, &mut bus, 5, 231);
        assert_eq!(ppu.background.pattern_low_latch, 0xA5);
        // Without the read the same fetch sees the tile's own (empty) row.
        run_to(&mut ppu, &mut bus, 6, 231);
        assert_eq!(ppu.background.pattern_low_latch, 0x00);
    }

    #[test]
    fn sprites_from_line_239_do_not_leak_onto_line_0() {
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &[[0xF0, 0, 0, 0], [235, 1, 0, 50]]);
        render(&mut ppu, &mut bus);
        assert_eq!(pixel(&ppu, 50, 236), spr(0, 1));
        assert_eq!(pixel(&ppu, 50, 0), bg(0, 1));
    }

    #[test]
    fn pre_render_fetch_draws_stale_secondary_oam_on_line_0() {
        // Sprite 1 (Y = 0) is evaluated on line 3; rendering then stays off until the
        // pre-render line, whose fetch reuses that secondary OAM. Line 261 compares as 5, so
        // row 5 of the sprite appears on line 0.
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &[[0xF0, 0, 0, 0], [0, 1, 0, 40]]);
        run_to(&mut ppu, &mut bus, 261, 0);
        run_to(&mut ppu, &mut bus, 3, 330);
        ppu.write_register(0x2001, 0x00, &mut bus);
        run_to(&mut ppu, &mut bus, 261, 0);
        ppu.write_register(0x2001, SHOW_ALL, &mut bus);
        assert!(ppu.odd_frame(), "this pre-render line skips its last dot");
        run_to(&mut ppu, &mut bus, 1, 0);
        // The skip delays the sprite counters' start by a dot: the sprite's first pixel is
        // drawn at x = 0, the rest where they belong (see `start_sprite_counters_late`).
        assert_eq!(pixel(&ppu, 0, 0), spr(0, 1));
        assert_eq!(pixel(&ppu, 40, 0), bg(0, 1));
        assert_eq!(pixel(&ppu, 41, 0), spr(0, 1));
        assert_eq!(pixel(&ppu, 44, 0), bg(0, 1));
    }

    #[test]
    fn without_the_odd_frame_skip_scanline_0_sprites_start_at_their_x() {
        let (mut ppu, mut bus) = scene(0x08, SHOW_ALL, &[[0xF0, 0, 0, 0], [0, 1, 0, 40]]);
        run_to(&mut ppu, &mut bus, 3, 330);
        ppu.write_register(0x2001, 0x00, &mut bus);
        run_to(&mut ppu, &mut bus, 261, 0);
        ppu.write_register(0x2001, SHOW_ALL, &mut bus);
        assert!(!ppu.odd_frame(), "an even frame: no dot is skipped");
        run_to(&mut ppu, &mut bus, 1, 0);
        assert_eq!(pixel(&ppu, 0, 0), bg(0, 1));
        assert_eq!(pixel(&ppu, 40, 0), spr(0, 1));
        assert_eq!(pixel(&ppu, 44, 0), bg(0, 1));
    }
}
