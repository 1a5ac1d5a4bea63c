//! The bulk of a visible line's background, dots 9-248, in two passes.
//!
//! Those dots are 30 identical tile groups (`schedule::TILE_PLAN`): a shifter clock and a
//! reload, the previous group's eight pixels and a new snapshot of the shifters, four fetches
//! two dots apart, seven more clocks and a coarse X increment. When a whole line runs at once
//! (`Ppu::run_visible_line_groups`) nothing outside the PPU can look at the state between
//! the groups, and their two halves don't feed each other: the fetches and shifters never
//! read the pixels, and the pixels read nothing but the snapshots (and settings no group
//! changes). So the run makes every fetch first, with the shifters and v in registers,
//! recording the snapshot each reload leaves, and then outputs every tile's pixels from the
//! snapshots. Each bus access keeps its place and its dot; the state afterwards is the one
//! the group-by-group plan leaves (`tests::two_passes_equal_the_group_by_group_plan`).

use crate::background::BackgroundPipeline;
use crate::schedule::{self, GROUP_DOTS};
use crate::scroll::ScrollRegisters;
use crate::{Ppu, PpuBus, FRAME_WIDTH};

/// Groups in the tile run.
const TILE_GROUPS: usize = 30;

impl Ppu {
    /// Runs the tile run's groups (dots 9-248) of a visible line with rendering enabled and
    /// no delayed register effect pending, the PPU on dot 9: what `run_batch` does on each of
    /// them in turn, done as described above.
    #[inline(always)]
    pub(crate) fn run_tile_groups<B: PpuBus>(&mut self, bus: &mut B) {
        let run = const { &schedule::BATCHES[1].runs[schedule::TILE_RUN] };
        const {
            let run = &schedule::BATCHES[1].runs[schedule::TILE_RUN];
            assert!(
                (run.last - run.first) as usize / GROUP_DOTS + 1 == TILE_GROUPS,
                "the tile run's length"
            );
        }
        debug_assert_eq!(self.dot, run.first);
        let mut snapshots = [0u64; TILE_GROUPS];
        let table = self.background_table();
        let mut scroll = self.scroll;
        let mut background = self.background.clone();
        // The first group's clock and reload; from then on each group's first clock follows
        // the last group's seven, and eight clocks and a reload are one step.
        background.shift_by(1);
        background.reload();
        snapshots[0] = background.cells;
        fetch_tile(&mut background, bus, &mut scroll, table);
        for snapshot in &mut snapshots[1..] {
            background.shift_tile_and_reload();
            *snapshot = background.cells;
            fetch_tile(&mut background, bus, &mut scroll, table);
        }
        background.shift_by(7);
        self.scroll = scroll;
        self.background = background;

        // The first group outputs the pixels of the snapshot taken before the run (from
        // wherever output stands); each later one those of the snapshot the one before took.
        let first_x = run.first - 1;
        self.output_pixels_until(first_x);
        let last_x = run.last - 1;
        let outputs = &snapshots[..TILE_GROUPS - 1];
        let row_start = usize::from(self.scanline) * FRAME_WIDTH + usize::from(first_x);
        let row_end = row_start + outputs.len() * GROUP_DOTS;
        // No sprite on the line and no clipping: whole tiles of background pixels, as
        // `output_pixels_until` writes them.
        let plain = !self.sprite_line.occupied
            && self.colour_pairs.valid
            && self.background_min_x <= usize::from(first_x);
        match self.frame.get_mut(row_start..row_end) {
            Some(row) if plain => {
                let fine_x = 4 * u32::from(self.scroll.fine_x & 7);
                for (tile, &snapshot) in row.chunks_exact_mut(GROUP_DOTS).zip(outputs) {
                    if let Ok(tile) = <&mut [u16; 8]>::try_from(tile) {
                        self.colour_pairs.write_tile(tile, snapshot << fine_x);
                    }
                }
                self.pixel_x = last_x;
            }
            _ => {
                let mut x = first_x;
                for &snapshot in outputs {
                    self.tile_cells = snapshot;
                    self.tile_base_x = x;
                    x += GROUP_DOTS as u16;
                    self.output_pixels_until(x);
                }
            }
        }
        self.tile_cells = snapshots[TILE_GROUPS - 1];
        self.tile_base_x = last_x;
        self.dot = run.last + GROUP_DOTS as u16;
    }
}

/// A tile group's four fetches, two dots apart, and the coarse X increment after them.
#[inline(always)]
fn fetch_tile<B: PpuBus>(
    background: &mut BackgroundPipeline,
    bus: &mut B,
    scroll: &mut ScrollRegisters,
    table: u16,
) {
    background.fetch_nametable(bus, scroll);
    bus.dots_elapsed(2);
    background.fetch_attribute(bus, scroll);
    bus.dots_elapsed(2);
    background.fetch_pattern_low(bus, scroll, table);
    bus.dots_elapsed(2);
    background.fetch_pattern_high(bus, scroll, table);
    bus.dots_elapsed(2);
    scroll.increment_coarse_x();
}

#[cfg(test)]
mod tests {
    use crate::schedule;
    use crate::test_support::{run_to, xorshift32, FlatBus};
    use crate::Ppu;

    /// A PPU on dot 9 of visible line `line`, rendering, after a frame of a random scene:
    /// random pattern and nametable bytes, palette, scroll, sprites (`sprites` of them).
    fn scene(seed: u32, line: u16, sprites: u8, mask: u8, fine_x: u8) -> (Ppu, FlatBus) {
        let mut bus = FlatBus::new();
        let mut next = xorshift32(seed.wrapping_mul(2_654_435_761) | 1);
        for byte in bus.memory.iter_mut() {
            *byte = next() as u8;
        }
        let mut ppu = Ppu::new();
        ppu.run_dots(100_000, &mut bus);
        ppu.write_register(0x2006, 0x3F, &mut bus);
        ppu.write_register(0x2006, 0x00, &mut bus);
        for _ in 0..32 {
            ppu.write_register(0x2007, next() as u8, &mut bus);
        }
        ppu.write_register(0x2003, 0, &mut bus);
        for index in 0..=255u8 {
            // Sprites past `sprites` sit below the picture.
            let byte = if index / 4 < sprites || index % 4 != 0 {
                next() as u8
            } else {
                0xF0
            };
            ppu.write_register(0x2004, byte, &mut bus);
        }
        ppu.write_register(0x2000, next() as u8 & 0x3B, &mut bus);
        ppu.write_register(0x2005, (next() as u8 & 0xF8) | fine_x, &mut bus);
        ppu.write_register(0x2005, next() as u8, &mut bus);
        ppu.write_register(0x2001, mask, &mut bus);
        run_to(
            &mut ppu,
            &mut bus,
            line,
            schedule::BATCHES[1].runs[schedule::TILE_RUN].first,
        );
        bus.record_reads = true;
        (ppu, bus)
    }

    #[test]
    fn two_passes_equal_the_group_by_group_plan() {
        let run = &schedule::BATCHES[1].runs[schedule::TILE_RUN];
        let mut cases = 0;
        for seed in 0..60u32 {
            // Lines without sprites and with many, both clipping settings and both layers,
            // every fine X.
            let sprites = [0, 4, 64][seed as usize % 3];
            let mask = [0x1E, 0x18, 0x0A, 0x1A][seed as usize % 4];
            let line = (seed * 37 % 240) as u16;
            let (mut grouped, mut grouped_bus) = scene(seed, line, sprites, mask, seed as u8 & 7);
            let (mut two_pass, mut two_pass_bus) = (grouped.clone(), FlatBus::new());
            two_pass_bus.memory = grouped_bus.memory.clone();
            two_pass_bus.clock = grouped_bus.clock;
            two_pass_bus.record_reads = true;
            let mut dot = run.first;
            while dot <= run.last {
                grouped.run_batch::<FlatBus, true, { schedule::TILE_RUN }>(&mut grouped_bus, dot);
                dot += schedule::GROUP_DOTS as u16;
            }
            two_pass.run_tile_groups(&mut two_pass_bus);
            assert_eq!(
                borsh::to_vec(&grouped).unwrap(),
                borsh::to_vec(&two_pass).unwrap(),
                "seed {seed}: states differ"
            );
            assert_eq!(grouped_bus.reads, two_pass_bus.reads, "seed {seed}");
            assert_eq!(grouped_bus.read_dots, two_pass_bus.read_dots, "seed {seed}");
            assert_eq!(grouped_bus.reads.len(), 4 * 30);
            // The pixels this run wrote, and the rest of the line too once both finish it.
            for ppu_and_bus in [
                (&mut grouped, &mut grouped_bus),
                (&mut two_pass, &mut two_pass_bus),
            ] {
                let (ppu, bus) = ppu_and_bus;
                ppu.run_dots(400, bus);
            }
            assert_eq!(
                grouped.frame_buffer(),
                two_pass.frame_buffer(),
                "seed {seed}"
            );
            cases += 1;
        }
        assert_eq!(cases, 60);
    }
}
