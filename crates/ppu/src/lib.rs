//! Dot-accurate model of the NTSC Ricoh 2C02 picture processing unit, with the frame layouts
//! of the PAL 2C07 and the Dendy UA6538 (see [`PpuModel`]).
//!
//! The PPU is driven one dot at a time by [`Ppu::tick`]; the console owns the CPU/PPU clock
//! phase and calls [`Ppu::read_register`] / [`Ppu::write_register`] between dots. Memory outside
//! the PPU (pattern tables, nametables) is reached through the [`PpuBus`] trait (and
//! [`PpuWriteBus`] for `$2007` writes), which the console implements over the cartridge;
//! palette RAM and OAM live inside the chip.
//!
//! Position convention: [`Ppu::scanline`] and [`Ppu::dot`] name the *next* dot `tick` will
//! execute. A register access made between ticks therefore happens "at" that dot: a `$2002`
//! read while `scanline() == 241 && dot() == 1` (a 2C02's VBlank line: see
//! [`PpuModel::vblank_scanline`]) races the VBlank flag being set.

mod background;
mod frame_timing;
mod model;
pub mod palette;
mod registers;
mod render;
mod revision;
mod schedule;
mod scroll;
mod sprite_evaluation;
mod sprites;
mod tile_run;

#[cfg(test)]
mod test_support;

use std::fmt;

use borsh::{BorshDeserialize, BorshSerialize};
pub(crate) use nes_state::check_range;
pub use nes_state::InvalidState;

pub use frame_timing::FrameTiming;
pub use model::PpuModel;
pub use palette::{Palette, PaletteError};
pub use revision::PpuRevision;

use background::BackgroundPipeline;
use model::FrameLayout;
use registers::IoLatch;
use scroll::ScrollRegisters;
use sprite_evaluation::{SpriteEvaluation, SpriteRows};
use sprites::SpriteLine;

/// Visible width of the picture in pixels.
pub const FRAME_WIDTH: usize = 256;
/// Visible height of the picture in pixels.
pub const FRAME_HEIGHT: usize = 240;
/// Dots (PPU clocks) in one scanline.
pub const DOTS_PER_SCANLINE: u16 = 341;
/// Scanlines in one 2C02 (NTSC) frame, counting the pre-render line (other models:
/// [`PpuModel::scanlines_per_frame`]).
pub const SCANLINES_PER_FRAME: u16 = PpuModel::Rp2c02.scanlines_per_frame();
/// The first scanline after the picture, on every model; the frame counter advances when it
/// starts.
pub const POST_RENDER_SCANLINE: u16 = 240;
/// The 2C02's scanline whose dot 1 sets the VBlank flag (other models:
/// [`PpuModel::vblank_scanline`]).
pub const VBLANK_SCANLINE: u16 = PpuModel::Rp2c02.vblank_scanline();
/// The 2C02's pre-render (a.k.a. "-1") scanline: fetches like a visible line, outputs nothing
/// (other models: [`PpuModel::pre_render_scanline`]).
pub const PRE_RENDER_SCANLINE: u16 = PpuModel::Rp2c02.pre_render_scanline();
/// Dots in a whole 2C02 frame (262 lines of 341 dots) when no dot is skipped: also the length
/// of each frame a parked 2C02 counts (see [`Ppu::park`]; other models:
/// [`PpuModel::dots_per_frame`], [`Ppu::dots_per_frame`]).
pub const DOTS_PER_FRAME: u32 = PpuModel::Rp2c02.dots_per_frame();

/// The most frames a save state may have completed: 2^48 frames is over 150,000 years at 60
/// a second, so no real state comes near it, and counting on from it cannot overflow.
const MAX_STATE_FRAMES: u64 = 1 << 48;

/// The PPU's memory bus as the PPU's own work uses it, implemented by the console (cartridge
/// CHR + nametables). `$0000-$3EFF` only: palette RAM (`$3F00-$3FFF`) is inside the PPU.
/// Reads only: the one write the PPU makes is a CPU's `$2007` write, made during the
/// register access ([`PpuWriteBus`]), so running dots never writes and can run over a bus
/// that cannot.
pub trait PpuBus {
    /// One PPU memory fetch (pattern, nametable, attribute, `$2007`).
    fn read(&mut self, addr: u16) -> u8;
    /// The byte at `addr` without side effects (debuggers).
    fn peek(&self, addr: u16) -> u8;
    /// The PPU drove a new address on its bus without a read (e.g. v after the 2nd `$2006`
    /// write or a `$2007` increment while not rendering). Mappers watching A12 (MMC3) need it.
    fn address_changed(&mut self, _addr: u16) {}
    /// `dots` PPU dots have passed: accesses made after this belong to the dot that follows.
    /// Called at the end of every dot, and between the fetches of a batch of dots, so a bus
    /// that must know *when* each access happens (the MMC3 times PPU A12 in CPU cycles) can
    /// keep a clock even while the PPU runs many dots in one call.
    #[inline(always)]
    fn dots_elapsed(&mut self, _dots: u32) {}
}

/// [`PpuBus`] with writes: what a register write ([`Ppu::write_register`]) needs.
pub trait PpuWriteBus: PpuBus {
    /// A `$2007` write.
    fn write(&mut self, addr: u16, value: u8);
}

/// `$2000` PPUCTRL bits.
pub(crate) mod ctrl {
    pub const INCREMENT_32: u8 = 0x04;
    pub const SPRITE_TABLE_1000: u8 = 0x08;
    pub const BACKGROUND_TABLE_1000: u8 = 0x10;
    pub const SPRITE_8X16: u8 = 0x20;
    pub const NMI_ENABLE: u8 = 0x80;
}

/// `$2001` PPUMASK bits.
pub(crate) mod mask {
    pub const GREYSCALE: u8 = 0x01;
    pub const BACKGROUND_LEFT: u8 = 0x02;
    pub const SPRITES_LEFT: u8 = 0x04;
    pub const BACKGROUND: u8 = 0x08;
    pub const SPRITES: u8 = 0x10;
    pub const RENDERING: u8 = BACKGROUND | SPRITES;
}

/// Register effects that land a few dots after the CPU access, as countdowns of dots
/// (0 = nothing pending). Each is decremented before the work of a dot and takes effect
/// before the work of the dot where it reaches 0. Kept in one aligned word so `tick` tests
/// them all with a single load.
#[derive(Debug, Clone, Copy, Default, BorshSerialize, BorshDeserialize)]
#[repr(C, align(4))]
pub(crate) struct RegisterDelays {
    /// A `$2001` write on its way to the rendering logic.
    pub mask: u8,
    /// A `$2007` read returns the buffer at once, but the PPU refills the buffer and steps v
    /// only a few dots later (AccuracyCoin "$2007 Stress Test": two dots after the CPU read
    /// ends).
    pub data_read: u8,
    /// A second `$2006` write's t -> v copy.
    pub addr_write: u8,
    /// A `$2007` read landing during rendering keeps the next fetch from latching its own
    /// low address byte (AccuracyCoin "ALE + Read"); that fetch is redone with
    /// `stale_low_byte` when this runs out, just after it happened.
    pub ale_glitch: u8,
}

impl RegisterDelays {
    /// Checks delays decoded from a save state (see [`Ppu::validate_state`]): each counts
    /// down from the delay its register access sets.
    fn validate_state(&self) -> Result<(), InvalidState> {
        check_range(
            "PPU $2001 write delay",
            self.mask,
            0..=registers::MASK_WRITE_DELAY_DOTS,
        )?;
        check_range(
            "PPU $2007 read delay",
            self.data_read,
            0..=registers::DATA_READ_DELAY_DOTS,
        )?;
        check_range(
            "PPU $2006 write delay",
            self.addr_write,
            0..=registers::ADDR_WRITE_DELAY_DOTS,
        )?;
        check_range(
            "PPU address latch glitch delay",
            self.ale_glitch,
            0..=render::MAX_ALE_GLITCH_DELAY_DOTS,
        )
    }

    /// Whether any delayed effect is pending.
    #[inline(always)]
    pub fn any(&self) -> bool {
        u32::from_ne_bytes([self.mask, self.data_read, self.addr_write, self.ale_glitch]) != 0
    }
}

/// Output values of two background pixels at once: entry `first << 4 | second` (two 4-bit
/// shifter cells, palette and colour bits) holds the first pixel's value in its low half and
/// the second's in its high half, so a tile takes four lookups. Valid only while `valid`;
/// starts invalid, which is also what a loaded state gets.
#[derive(Clone)]
pub(crate) struct ColourPairs {
    pub values: [u32; 256],
    pub valid: bool,
}

impl ColourPairs {
    /// Writes the eight pixels of the top eight background cells of `cells` (no sprite, no
    /// clipping) to `tile`, two pixels per lookup. The pairs must be valid.
    #[inline(always)]
    pub(crate) fn write_tile(&self, tile: &mut [u16; 8], cells: u64) {
        debug_assert!(self.valid);
        for (pair, pixels) in tile.chunks_exact_mut(2).enumerate() {
            let cells_byte = (cells >> (56 - 8 * pair)) as u8;
            let values = self.values[usize::from(cells_byte)];
            pixels[0] = values as u16;
            pixels[1] = (values >> 16) as u16;
        }
    }
}

impl Default for ColourPairs {
    fn default() -> Self {
        ColourPairs {
            values: [0; 256],
            valid: false,
        }
    }
}

/// The Ricoh 2C02 NTSC PPU, or with [`Ppu::set_model`] the frame layout of a 2C07 or UA6538.
///
/// Save states serialise every field (borsh), the latches, delays and open-bus decay times
/// included; any change to the fields changes the console's state format version.
#[derive(Clone, BorshSerialize, BorshDeserialize)]
pub struct Ppu {
    // --- Timing ---
    scanline: u16,
    dot: u16,
    odd_frame: bool,
    /// Latched on the pre-render line: this frame skips dot (0, 0).
    skip_idle_dot: bool,
    frames_completed: u64,
    park: Park,
    frame_timing: FrameTiming,
    /// Which 2C02 this is: part of the console, not of its state (a loaded state keeps the
    /// console's revision).
    #[borsh(skip)]
    revision: PpuRevision,
    /// Which chip's frame layout this is, and its numbers: part of the console, not of its
    /// state (a decoded state has the 2C02's until the console sets its model).
    #[borsh(skip)]
    layout: FrameLayout,

    // --- Registers ---
    ctrl: u8,
    mask: u8,
    /// Cached `mask & (BACKGROUND | SPRITES) != 0`, read on every dot.
    rendering_enabled: bool,
    /// Decoded `$2001` for the pixel path: first x where the background / sprites show
    /// (0, 8 with left clipping, 256 when disabled), the greyscale AND mask and the emphasis
    /// bits already shifted into place.
    background_min_x: usize,
    sprite_min_x: usize,
    colour_mask: u8,
    emphasis_bits: u16,
    /// Output value (palette entry, greyscale, emphasis) of each palette RAM index as the
    /// pixel path uses it: 0-15 background cells (colour 0 of any palette is the backdrop),
    /// 16-31 sprite colours. Refreshed on palette and `$2001` writes.
    colour_cache: [u16; 32],
    /// The background half of `colour_cache` for two pixels at once (see `ColourPairs`),
    /// rebuilt from it when first needed after a change. Derived, so not in save states.
    #[borsh(skip)]
    colour_pairs: ColourPairs,
    /// A `$2001` write reaches the rendering logic a few dots late (NESdev wiki "PPU
    /// registers"; AccuracyCoin "BG Serial In" measures 2-5 dots): the value waits here for
    /// `delays.mask` more dots.
    pending_mask: u8,
    /// The second `$2006` write copies t to v a few dots after the CPU access (AccuracyCoin
    /// "Hybrid Addresses"): the new v waits here for `delays.addr_write` more dots.
    pending_v: u16,
    /// The low address byte a fetch missing its address latch strobe reads with (see
    /// `delays.ale_glitch`).
    stale_low_byte: u8,
    delays: RegisterDelays,
    vblank: bool,
    sprite_zero_hit: bool,
    sprite_overflow: bool,
    /// Set by a `$2002` read on the very dot VBlank would be set: the flag (and so the NMI)
    /// stays clear for that frame.
    vblank_suppressed: bool,
    /// After power-on/reset the PPU ignores `$2000/$2001/$2005/$2006` writes until the end of
    /// the first VBlank (dot 1 of the pre-render line).
    warmup: bool,
    oam_addr: u8,
    /// OAM rows (bit n = bytes 8n..8n+8) that rendering being switched off mid-line has
    /// marked for corruption: when the next frame's rendering starts (pre-render dot 1), row 0
    /// is copied over each (see `mark_oam_corruption`).
    oam_corruption_rows: u32,
    scroll: ScrollRegisters,
    read_buffer: u8,
    io_latch: IoLatch,

    // --- Memory ---
    oam: [u8; 256],
    secondary_oam: [u8; 32],
    palette_ram: [u8; 32],

    // --- Rendering state ---
    background: BackgroundPipeline,
    evaluation: SpriteEvaluation,
    /// The lines OAM's sprites cover (see `SpriteRows`). Derived, so not in save states.
    #[borsh(skip)]
    sprite_rows: SpriteRows,
    /// First evaluation dot (1-256) of the current visible line not yet executed. Sprite
    /// evaluation runs lazily: its results are only observable through register accesses
    /// (which catch it up first) and the sprite fetches from dot 257 on.
    evaluation_cursor: u16,
    /// Pixels are produced lazily, a tile (8 dots) at a time: `pixel_x` is the next pixel of
    /// the current visible line not yet written. While rendering runs without a break, the
    /// background shifter at the dot of pixel x equals `tile_cells` shifted by
    /// `x - tile_base_x` cells, so a whole tile is computed from one snapshot.
    pixel_x: u16,
    tile_cells: u64,
    tile_base_x: u16,
    sprite_line: SpriteLine,
    /// The value on the OAM data bus during rendering, returned by `$2004` reads then.
    oam_bus: u8,
    #[borsh(
        serialize_with = "frame_state::serialize",
        deserialize_with = "frame_state::deserialize"
    )]
    frame: Box<[u16]>,
}

/// A park in progress (see [`Ppu::park`]). Save states carry it; a state's values are checked
/// against the bounds `park` itself keeps, so a crafted state cannot hold the PPU for longer
/// than a real park does: as it is decoded against the longest frame of any model, and by
/// [`Ppu::validate_state`] against the console's model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, BorshSerialize)]
struct Park {
    /// Parked frames still to complete; 0 while the PPU runs.
    frames: u8,
    /// Dots until the current parked frame completes (1 or more while parked, else 0).
    dots: u32,
}

impl Park {
    /// FCEUX parks for two frames; a few more are allowed to callers.
    const MAX_FRAMES: u8 = 8;
}

impl BorshDeserialize for Park {
    fn deserialize_reader<R: borsh::io::Read>(reader: &mut R) -> borsh::io::Result<Park> {
        let frames = u8::deserialize_reader(reader)?;
        let dots = u32::deserialize_reader(reader)?;
        let valid = if frames == 0 {
            dots == 0
        } else {
            frames <= Park::MAX_FRAMES && (1..=PpuModel::MAX_DOTS_PER_FRAME).contains(&dots)
        };
        if !valid {
            return Err(borsh::io::Error::new(
                borsh::io::ErrorKind::InvalidData,
                format!("PPU park of {frames} frames and {dots} dots is out of range"),
            ));
        }
        Ok(Park { frames, dots })
    }
}

/// The picture being drawn belongs in a save state (a state taken mid-frame must finish the
/// same picture), stored as little-endian bytes in one block rather than 61,440 separate
/// values, which keeps taking a state every frame cheap.
mod frame_state {
    use borsh::io::{Read, Result, Write};

    use crate::{FRAME_HEIGHT, FRAME_WIDTH};

    const FRAME_PIXELS: usize = FRAME_WIDTH * FRAME_HEIGHT;

    /// Pixels converted per chunk: a small stack buffer, no allocation.
    const CHUNK: usize = 1024;

    pub(super) fn serialize<W: Write>(frame: &[u16], writer: &mut W) -> Result<()> {
        let mut bytes = [0u8; CHUNK * 2];
        for pixels in frame.chunks(CHUNK) {
            for (pair, pixel) in bytes.chunks_exact_mut(2).zip(pixels) {
                pair.copy_from_slice(&pixel.to_le_bytes());
            }
            writer.write_all(&bytes[..pixels.len() * 2])?;
        }
        Ok(())
    }

    pub(super) fn deserialize<R: Read>(reader: &mut R) -> Result<Box<[u16]>> {
        let mut frame = vec![0u16; FRAME_PIXELS].into_boxed_slice();
        let mut bytes = [0u8; CHUNK * 2];
        for pixels in frame.chunks_mut(CHUNK) {
            let bytes = &mut bytes[..pixels.len() * 2];
            reader.read_exact(bytes)?;
            for (pixel, pair) in pixels.iter_mut().zip(bytes.chunks_exact(2)) {
                // Only 9 bits are meaningful; masking keeps a crafted state from producing
                // values the palette lookup does not cover.
                *pixel = u16::from_le_bytes([pair[0], pair[1]]) & 0x1FF;
            }
        }
        Ok(frame)
    }
}

impl fmt::Debug for Ppu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ppu")
            .field("scanline", &self.scanline)
            .field("dot", &self.dot)
            .field("odd_frame", &self.odd_frame)
            .field("frames_completed", &self.frames_completed)
            .field("model", &self.layout.model)
            .field("ctrl", &format_args!("{:#04x}", self.ctrl))
            .field("mask", &format_args!("{:#04x}", self.mask))
            .field("vblank", &self.vblank)
            .field("sprite_zero_hit", &self.sprite_zero_hit)
            .field("sprite_overflow", &self.sprite_overflow)
            .field("warmup", &self.warmup)
            .field("oam_addr", &self.oam_addr)
            .field("scroll", &self.scroll)
            .field("read_buffer", &self.read_buffer)
            .field("io_latch", &self.io_latch)
            .finish_non_exhaustive()
    }
}

impl Default for Ppu {
    fn default() -> Self {
        Ppu::new()
    }
}

impl Ppu {
    /// Power-on state, positioned at scanline 0 dot 0.
    pub fn new() -> Ppu {
        Ppu {
            scanline: 0,
            dot: 0,
            odd_frame: false,
            skip_idle_dot: false,
            frames_completed: 0,
            park: Park::default(),
            frame_timing: FrameTiming::HARDWARE,
            revision: PpuRevision::G,
            layout: FrameLayout::default(),
            ctrl: 0,
            mask: 0,
            rendering_enabled: false,
            background_min_x: 256,
            sprite_min_x: 256,
            colour_mask: 0x3F,
            emphasis_bits: 0,
            colour_cache: [0; 32],
            colour_pairs: ColourPairs::default(),
            pending_mask: 0,
            pending_v: 0,
            stale_low_byte: 0,
            delays: RegisterDelays::default(),
            vblank: false,
            sprite_zero_hit: false,
            sprite_overflow: false,
            vblank_suppressed: false,
            warmup: true,
            oam_addr: 0,
            oam_corruption_rows: 0,
            scroll: ScrollRegisters::default(),
            read_buffer: 0,
            io_latch: IoLatch::default(),
            oam: [0; 256],
            secondary_oam: [0xFF; 32],
            palette_ram: [0; 32],
            background: BackgroundPipeline::default(),
            evaluation: SpriteEvaluation::default(),
            sprite_rows: SpriteRows::default(),
            evaluation_cursor: 1,
            pixel_x: 0,
            tile_cells: 0,
            tile_base_x: 0,
            sprite_line: SpriteLine::default(),
            oam_bus: 0xFF,
            frame: vec![0; FRAME_WIDTH * FRAME_HEIGHT].into_boxed_slice(),
        }
    }

    /// The reset line (NESdev "PPU power up state", reset column): PPUCTRL, PPUMASK, the
    /// write toggle, the `$2005` scroll (t and fine X) and the read buffer clear; the VBlank
    /// flag, OAM, OAMADDR, v and palette RAM are unchanged. The write warm-up starts again.
    pub fn reset(&mut self) {
        self.ctrl = 0;
        // Pending register effects are dropped with the registers they belonged to.
        self.delays = RegisterDelays::default();
        self.set_mask(0);
        self.scroll.t = 0;
        self.scroll.fine_x = 0;
        self.scroll.w = false;
        self.read_buffer = 0;
        self.odd_frame = false;
        self.warmup = true;
    }

    /// Switches the power-on/reset write warm-up on or off (on after `new` and `reset`).
    ///
    /// While it is on, `$2000/$2001/$2005/$2006` writes are ignored until dot 1 of the
    /// pre-render line. A console that wants writes honoured from the first cycle calls
    /// `set_warmup(false)`.
    pub fn set_warmup(&mut self, active: bool) {
        self.warmup = active;
    }

    /// Whether the power-on/reset write warm-up is still in effect.
    pub fn warmup_active(&self) -> bool {
        self.warmup
    }

    /// Parks the PPU where frames end (the start of the post-render line, or earlier: see
    /// [`FrameTiming::frame_end_lead`]) for `frames` whole frames: it renders nothing and never
    /// sets VBlank (so raises no NMI), while its registers and memory work as they do there.
    /// Each parked frame completes after the model's dots per frame ([`Ppu::dots_per_frame`]:
    /// no dot is skipped); after the last one the PPU runs on from there, starting its next
    /// frame.
    ///
    /// This is not something a 2C02 does: it is FCEUX's start-up. FCEUX's PPU stays inactive
    /// for two frames after power-on and reset (its source calls it "ppudead") and starts each
    /// frame at the post-render line, so a console following FCEUX's timeline parks its PPU
    /// there (`nes::Timeline::Fceux`). Called at a frame boundary (or at power-on): dots
    /// already run since the frame's end count towards the first parked frame, since nothing
    /// happened on them. What FCEUX's PPU reset clears beyond a 2C02's reset clears too: the
    /// status flags, the open-bus latch, v and OAMADDR. A park of 0 frames does nothing.
    pub fn park(&mut self, frames: u8) {
        if frames == 0 {
            return;
        }
        // The park starts where frames end (see `FrameTiming::frame_end_lead`).
        let lead = self.frame_timing.frame_end_lead;
        let end_dot = self.frame_timing.frame_end_dot();
        let credited = match self.scanline {
            POST_RENDER_SCANLINE => u32::from(self.dot) + u32::from(lead),
            line if lead > 0 && line + 1 == POST_RENDER_SCANLINE && self.dot >= end_dot => {
                u32::from(self.dot - end_dot)
            }
            _ => 0,
        };
        if lead == 0 {
            self.scanline = POST_RENDER_SCANLINE;
            self.dot = 0;
        } else {
            self.scanline = POST_RENDER_SCANLINE - 1;
            self.dot = end_dot;
        }
        self.evaluation_cursor = 1;
        self.vblank = false;
        self.vblank_suppressed = false;
        self.sprite_zero_hit = false;
        self.sprite_overflow = false;
        // What FCEUX's PPU reset clears beyond a 2C02's reset.
        self.io_latch = IoLatch::default();
        self.scroll.v = 0;
        self.oam_addr = 0;
        self.park = Park {
            frames: frames.min(Park::MAX_FRAMES),
            dots: self.layout.dots_per_frame.saturating_sub(credited).max(1),
        };
    }

    /// Which 2C02 revision this PPU behaves as (see [`PpuRevision`]).
    pub fn set_revision(&mut self, revision: PpuRevision) {
        self.revision = revision;
    }

    pub fn revision(&self) -> PpuRevision {
        self.revision
    }

    /// Which chip's frame layout the PPU has (see [`PpuModel`]; a 2C02's unless changed). A
    /// console setting, not part of save states: set it right after [`Ppu::new`], and on a
    /// decoded state before [`Ppu::validate_state`]. Changing it mid-frame keeps the PPU
    /// consistent but is no hardware event: a position past the new frame moves to the start
    /// of its pre-render line, and a park longer than the new frame is cut to one.
    pub fn set_model(&mut self, model: PpuModel) {
        let layout = FrameLayout::of(model);
        if layout == self.layout {
            return;
        }
        self.layout = layout;
        if self.scanline > layout.pre_render_scanline {
            self.scanline = layout.pre_render_scanline;
            self.dot = 0;
            self.evaluation_cursor = 1;
        }
        if !layout.skips_odd_frame_dot {
            self.skip_idle_dot = false;
        }
        if let Some((line, _)) = self.sprite_line.frozen_at {
            if line > layout.pre_render_scanline {
                self.sprite_line.frozen_at = Some((0, 0));
            }
        }
        self.park.dots = self.park.dots.min(layout.dots_per_frame);
        // The emphasis bits follow the latest `$2001` write (see `apply_output_bits`).
        let latest = if self.delays.mask != 0 {
            self.pending_mask
        } else {
            self.mask
        };
        self.emphasis_bits =
            registers::DecodedMask::of(latest, layout.swaps_red_green_emphasis).emphasis_bits;
        self.refresh_colour_cache();
    }

    /// Sets the model of a PPU just decoded from a save state (which does not carry it),
    /// before [`Ppu::validate_state`]: unlike [`Ppu::set_model`] nothing is adjusted to fit,
    /// so a state outside the model's frame is refused rather than repaired.
    pub fn set_decoded_model(&mut self, model: PpuModel) {
        self.layout = FrameLayout::of(model);
    }

    pub fn model(&self) -> PpuModel {
        self.layout.model
    }

    /// Dots in one of the model's frames when no dot is skipped (see
    /// [`PpuModel::dots_per_frame`]).
    #[inline]
    pub fn dots_per_frame(&self) -> u32 {
        self.layout.dots_per_frame
    }

    /// How frames line up with the console's timeline (see [`FrameTiming`]; a 2C02's unless
    /// changed).
    pub fn set_frame_timing(&mut self, timing: FrameTiming) {
        self.frame_timing = FrameTiming {
            frame_end_lead: timing.frame_end_lead.min(FrameTiming::MAX_LEAD),
            ..timing
        };
    }

    /// Checks a PPU decoded from a save state before a console accepts it: the position is a
    /// dot of the frame, every counter, index and address lies in the range the chip can
    /// reach, and the values cached from others (the decoded `$2001`, the colour cache) agree
    /// with them. Err names the first field out of range. (The frame timing is checked as it
    /// is decoded, the park too, against the longest frame of any model.) The frame's extent
    /// is the current model's ([`Ppu::set_model`]), which a decoded state does not carry: set
    /// it first. Loading only: the running PPU never needs it.
    pub fn validate_state(&self) -> Result<(), InvalidState> {
        check_range(
            "PPU scanline",
            self.scanline,
            0..=self.layout.pre_render_scanline,
        )?;
        check_range("PPU dot", self.dot, 0..=DOTS_PER_SCANLINE - 1)?;
        check_range(
            "PPU frames completed",
            self.frames_completed,
            0..=MAX_STATE_FRAMES,
        )?;
        // The pixel-output fields follow the latest write at once; rendering itself waits
        // for it to land (see `Ppu::apply_output_bits`).
        let latest = if self.delays.mask != 0 {
            self.pending_mask
        } else {
            self.mask
        };
        let swaps_emphasis = self.layout.swaps_red_green_emphasis;
        let expected = registers::DecodedMask {
            rendering_enabled: registers::DecodedMask::of(self.mask, swaps_emphasis)
                .rendering_enabled,
            ..registers::DecodedMask::of(latest, swaps_emphasis)
        };
        if self.decoded_mask() != expected {
            return Err(InvalidState::impossible(format!(
                "PPU decoded $2001 does not match $2001 = ${:02X}",
                self.mask
            )));
        }
        if let Some(index) = self.palette_ram.iter().position(|&entry| entry > 0x3F) {
            return Err(InvalidState::impossible(format!(
                "PPU palette RAM entry {index} = ${:02X} is out of range $00..=$3F",
                self.palette_ram[index]
            )));
        }
        if self.colour_cache != self.colour_cache_values() {
            return Err(InvalidState::impossible(
                "PPU colour cache does not match palette RAM and $2001",
            ));
        }
        if self.park.frames > 0 {
            check_range(
                "PPU parked frame dots",
                self.park.dots,
                1..=self.layout.dots_per_frame,
            )?;
        }
        check_range("PPU pending VRAM address", self.pending_v, 0..=0x7FFF)?;
        self.delays.validate_state()?;
        self.scroll.validate_state()?;
        self.background.validate_state()?;
        self.evaluation.validate_state()?;
        check_range(
            "PPU sprite evaluation dot",
            self.evaluation_cursor,
            1..=DOTS_PER_SCANLINE - 1,
        )?;
        check_range("PPU pixel x", self.pixel_x, 0..=FRAME_WIDTH as u16)?;
        self.sprite_line
            .validate_state_within(self.layout.pre_render_scanline)
    }

    /// Whether the PPU is parked (see [`Ppu::park`]).
    pub fn parked(&self) -> bool {
        self.park.frames > 0
    }

    /// Runs up to `dots` dots of a park; returns how many it ran (0 when not parked).
    fn run_parked_dots(&mut self, dots: u32) -> u32 {
        let mut run = 0;
        while self.park.frames > 0 && run < dots {
            let step = self.park.dots.min(dots - run);
            self.park.dots -= step;
            run += step;
            if self.park.dots == 0 {
                self.frames_completed += 1;
                self.park.frames -= 1;
                self.park.dots = if self.park.frames > 0 {
                    self.layout.dots_per_frame
                } else {
                    0
                };
            }
        }
        run
    }

    /// /NMI asserted: VBlank flag set and NMI enabled (`$2000` bit 7). Combinational, so the
    /// CPU sees an edge when either input rises and loses it when a `$2002` read clears VBlank.
    #[inline]
    pub fn nmi_line(&self) -> bool {
        self.vblank && self.ctrl & ctrl::NMI_ENABLE != 0
    }

    /// Runs `dots` dots in a row: what a console that catches the PPU up lazily calls (see
    /// [`Ppu::dots_until_event`]). One call for many dots keeps the per-dot cost to the work
    /// of the dot itself.
    #[inline]
    pub fn run_dots<B: PpuBus>(&mut self, dots: u32, bus: &mut B) {
        // One test for both of FCEUX's timeline's cases (a park, a frame-end lead).
        if u16::from(self.park.frames) | self.frame_timing.frame_end_lead != 0 {
            self.run_dots_on_fceux_timeline(dots, bus);
        } else {
            self.run_dots_within_frame(dots, bus);
        }
    }

    /// `run_dots` while parked or with a frame-end lead (see [`FrameTiming`]).
    #[inline(never)]
    fn run_dots_on_fceux_timeline<B: PpuBus>(&mut self, mut dots: u32, bus: &mut B) {
        if self.park.frames > 0 {
            let parked = self.run_parked_dots(dots);
            // A parked PPU makes no memory access: its time passes all the same.
            bus.dots_elapsed(parked);
            dots -= parked;
        }
        if self.frame_timing.frame_end_lead == 0 {
            self.run_dots_within_frame(dots, bus);
            return;
        }
        // Frames end inside the last visible line: run to that dot exactly, count the frame
        // there, then go on.
        let end_dot = self.frame_timing.frame_end_dot();
        while dots > 0 {
            let until = self.dots_until_frame_end().min(dots);
            self.run_dots_within_frame(until, bus);
            dots -= until;
            if self.scanline + 1 == POST_RENDER_SCANLINE && self.dot == end_dot {
                self.frames_completed += 1;
            }
        }
    }

    /// Dots until the next frame end at the frame-end lead's dot: exact within the frame,
    /// and assuming the odd-frame dot skip across the end of one where the model has it
    /// (early, never late).
    fn dots_until_frame_end(&self) -> u32 {
        let now = u32::from(self.scanline) * u32::from(DOTS_PER_SCANLINE) + u32::from(self.dot);
        let end = u32::from(POST_RENDER_SCANLINE) * u32::from(DOTS_PER_SCANLINE)
            - u32::from(self.frame_timing.frame_end_lead);
        if now < end {
            end - now
        } else {
            (end + self.layout.dots_per_frame - now)
                .saturating_sub(u32::from(self.layout.skips_odd_frame_dot))
                .max(1)
        }
    }

    /// `run_dots` for `dots` that do not run past a frame end.
    #[inline]
    fn run_dots_within_frame<B: PpuBus>(&mut self, mut dots: u32, bus: &mut B) {
        while dots > 0 {
            if dots >= schedule::LINE_GROUP_DOTS && self.run_visible_line_groups(bus) {
                dots -= schedule::LINE_GROUP_DOTS;
                continue;
            }
            if dots >= 8 && self.run_eight_dots(bus) {
                dots -= 8;
                continue;
            }
            let skipped = self.run_blank_dots(dots, bus);
            if skipped > 0 {
                dots -= skipped;
            } else {
                self.tick(bus);
                dots -= 1;
            }
        }
    }

    /// Whether the next `dots` dots, from the next one, all lie in vertical blanking after the
    /// VBlank line and before the pre-render line (and the PPU is not parked). There the PPU
    /// neither reads nor writes OAM or OAMADDR, no event happens (see
    /// [`Ppu::dots_until_event`]) and no frame completes, and nothing a delayed register
    /// effect changes bears on an OAMDATA (`$2004`) write: such a write made anywhere in
    /// those dots stores the same byte at the same address and reads back the same, so a
    /// console need not run the PPU up to it first (OAM DMA makes 256 of them a frame).
    pub fn stays_in_vblank_for(&self, dots: u32) -> bool {
        let line = u32::from(DOTS_PER_SCANLINE);
        self.park.frames == 0
            && self.scanline > self.layout.vblank_scanline
            && self.scanline < self.layout.pre_render_scanline
            && u32::from(self.scanline) * line + u32::from(self.dot) + dots
                < u32::from(self.layout.pre_render_scanline) * line
    }

    /// How many dots can run before something the CPU side observes without touching a PPU
    /// register may change: the NMI output (VBlank set on dot 1 of the model's VBlank line,
    /// 241 on a 2C02, cleared on the pre-render line's dot 1) or a frame completing (scanline
    /// 240 reached). At least 1; may be one short of the truth (a 2C02's odd frame's skipped
    /// dot), never long. Between two such
    /// events the PPU is observable only through its registers, whose accesses catch it up
    /// first, so a console may run it in one batch of this many dots.
    pub fn dots_until_event(&self) -> u32 {
        if self.park.frames > 0 {
            // A parked frame's end is the only event while parked.
            return self.park.dots;
        }
        let index = |scanline: u16, dot: u16| {
            u32::from(scanline) * u32::from(DOTS_PER_SCANLINE) + u32::from(dot)
        };
        let now = index(self.scanline, self.dot);
        let layout = &self.layout;
        let frame_dots = layout.shortest_frame_dots;
        // Positions reached right after the events' dots.
        [
            index(POST_RENDER_SCANLINE, 0) - u32::from(self.frame_timing.frame_end_lead),
            layout.vblank_event,
            layout.pre_render_event,
        ]
        .into_iter()
        .map(|target| {
            if target > now {
                target - now
            } else {
                (target + frame_dots - now).max(1)
            }
        })
        .min()
        .unwrap_or(1)
    }

    /// Scanline of the next dot: 0-239 visible, 240 post-render, then on a 2C02 241-260
    /// VBlank and 261 pre-render (2C07: 241-310 VBlank, 311 pre-render; UA6538: 240-290
    /// post-render, 291-310 VBlank, 311 pre-render).
    #[inline]
    pub fn scanline(&self) -> u16 {
        self.scanline
    }

    /// The next dot within the scanline, 0-340.
    #[inline]
    pub fn dot(&self) -> u16 {
        self.dot
    }

    /// Frames finished: +1 each time the PPU reaches scanline 240, dot 0 (or the frame end
    /// [`FrameTiming::frame_end_lead`] sets), and at the end of each parked frame.
    #[inline]
    pub fn frames_completed(&self) -> u64 {
        self.frames_completed
    }

    /// Whether the current frame is an odd one (the one whose pre-render line may be a dot
    /// short, on a 2C02).
    #[inline]
    pub fn odd_frame(&self) -> bool {
        self.odd_frame
    }

    /// 256x240 pixels in raster order; each is a 6-bit palette value (after greyscale) with
    /// the three emphasis bits of `$2001` in bits 6-8: red, green, blue, as a 2C02's `$2001`
    /// bits 5-7 (a 2C07's or UA6538's red and green bits are swapped into this order).
    ///
    /// Pixels are written a tile (8 dots) at a time, and up to the present on every register
    /// access, so mid-line the last few pixels may not be stored yet; at scanline 240 the
    /// frame is complete.
    #[inline]
    pub fn frame_buffer(&self) -> &[u16] {
        &self.frame
    }

    /// Palette RAM entry `index & 0x1F`, with the `$3F10/$14/$18/$1C` mirrors applied.
    pub fn peek_palette(&self, index: u8) -> u8 {
        self.palette_ram[palette_ram_index(u16::from(index))]
    }

    /// Primary OAM (sprite attribute memory).
    pub fn oam(&self) -> &[u8; 256] {
        &self.oam
    }

    /// Secondary OAM: the up-to-8 sprites found for the next scanline.
    pub fn secondary_oam(&self) -> &[u8; 32] {
        &self.secondary_oam
    }

    /// The current VRAM address (loopy v). A second `$2006` write and a `$2007` read reach
    /// it a few dots after the CPU access (see `RegisterDelays`).
    pub fn vram_addr(&self) -> u16 {
        self.scroll.v
    }

    /// The temporary VRAM address (loopy t).
    pub fn temp_vram_addr(&self) -> u16 {
        self.scroll.t
    }

    /// Fine X scroll (0-7).
    pub fn fine_x(&self) -> u8 {
        self.scroll.fine_x
    }

    /// Whether background or sprite rendering is enabled in `$2001`.
    #[inline]
    pub fn rendering_enabled(&self) -> bool {
        self.rendering_enabled
    }

    /// True while the PPU is actively fetching: rendering enabled on a visible or the
    /// pre-render line. `$2004`/`$2007` behave differently then.
    #[inline]
    pub(crate) fn rendering_active(&self) -> bool {
        self.rendering_enabled
            && (self.scanline < POST_RENDER_SCANLINE
                || self.scanline == self.layout.pre_render_scanline)
    }
}

/// Index into the 32-byte palette RAM for a PPU address in `$3F00-$3FFF`: 32-byte mirroring,
/// and `$3F10/$14/$18/$1C` are the same cells as `$3F00/$04/$08/$0C`.
#[inline]
pub(crate) fn palette_ram_index(addr: u16) -> usize {
    let index = usize::from(addr & 0x1F);
    if index & 0x13 == 0x10 {
        index & 0x0F
    } else {
        index
    }
}

#[cfg(test)]
mod catch_up_tests {
    use crate::test_support::FlatBus;
    use crate::Ppu;

    /// What the CPU side sees of the PPU without touching a register.
    fn observable(ppu: &Ppu) -> (bool, u64) {
        (ppu.nmi_line(), ppu.frames_completed())
    }

    #[test]
    fn batched_dots_match_single_dots_exactly() {
        let mut memory = FlatBus::new();
        let mut seed = 99u32;
        for byte in memory.memory.iter_mut() {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            *byte = (seed >> 16) as u8;
        }
        let mut single_bus = FlatBus::new();
        single_bus.memory = memory.memory.clone();
        let mut batched_bus = FlatBus::new();
        batched_bus.memory = memory.memory.clone();
        let mut single = Ppu::new();
        let mut batched = Ppu::new();
        for ppu_and_bus in [
            (&mut single, &mut single_bus),
            (&mut batched, &mut batched_bus),
        ] {
            let (ppu, bus) = ppu_and_bus;
            ppu.run_dots(100_000, bus);
            ppu.write_register(0x2006, 0x3F, bus);
            ppu.write_register(0x2006, 0x00, bus);
            for colour in 0..32 {
                ppu.write_register(0x2007, colour + 1, bus);
            }
            // Sprites spread over the screen, some sharing lines (overflow), 8x16.
            ppu.write_register(0x2003, 0, bus);
            for index in 0..=255u8 {
                ppu.write_register(0x2004, index.wrapping_mul(73).wrapping_add(index >> 2), bus);
            }
            ppu.write_register(0x2001, 0x1E, bus);
            ppu.write_register(0x2000, 0xB0, bus);
            ppu.write_register(0x2005, 0x0B, bus);
            ppu.write_register(0x2005, 0x05, bus);
        }
        for round in 0..700u32 {
            let dots = 37 + round * 97 % 900;
            if round % 7 == 3 {
                // Rendering off and on again mid-frame, at arbitrary dots: blank lines, with
                // v sometimes inside the palette (its entry is then shown).
                let mask = if round % 2 == 0 { 0x1E } else { 0x00 };
                let v = if round % 3 == 0 { 0x3F05 } else { 0x2000 };
                for (ppu, bus) in [
                    (&mut single, &mut single_bus),
                    (&mut batched, &mut batched_bus),
                ] {
                    ppu.write_register(0x2001, mask, bus);
                    if mask == 0 {
                        ppu.write_register(0x2006, (v >> 8) as u8, bus);
                        ppu.write_register(0x2006, v as u8, bus);
                    }
                }
            }
            // The reference: every dot through `tick`, no batch of any kind.
            for _ in 0..dots {
                single.tick(&mut single_bus);
            }
            batched.run_dots(dots, &mut batched_bus);
            assert_eq!(
                borsh::to_vec(&single).unwrap(),
                borsh::to_vec(&batched).unwrap(),
                "round {round}: states differ"
            );
        }
        assert!(batched.frame_buffer().iter().any(|&pixel| pixel != 0));
    }

    #[test]
    fn batched_dots_report_every_fetch_on_the_dot_single_dots_do() {
        let mut single_bus = FlatBus::new();
        let mut batched_bus = FlatBus::new();
        let mut single = Ppu::new();
        let mut batched = Ppu::new();
        for (ppu, bus) in [
            (&mut single, &mut single_bus),
            (&mut batched, &mut batched_bus),
        ] {
            ppu.run_dots(100_000, bus);
            // Sprites in range on some lines, so pattern fetches of both kinds happen.
            ppu.write_register(0x2003, 0, bus);
            for index in 0..=255u8 {
                ppu.write_register(0x2004, index.wrapping_mul(37), bus);
            }
            ppu.write_register(0x2000, 0x08, bus);
            ppu.write_register(0x2001, 0x18, bus);
            bus.record_reads = true;
        }
        for _ in 0..2 * 89_342 {
            single.tick(&mut single_bus);
        }
        batched.run_dots(2 * 89_342, &mut batched_bus);
        assert_eq!(single_bus.clock, batched_bus.clock);
        assert_eq!(single_bus.reads, batched_bus.reads);
        assert_eq!(single_bus.read_dots, batched_bus.read_dots);
        assert!(batched_bus.reads.len() > 2 * 240 * 160);
    }

    #[test]
    fn batches_never_run_past_an_observable_change() {
        for timing in [crate::FrameTiming::HARDWARE, crate::FrameTiming::FCEUX] {
            let mut ppu = Ppu::new();
            ppu.set_frame_timing(timing);
            let mut bus = FlatBus::new();
            // NMI on (after the warm-up, so the write takes) and rendering on, so the
            // odd-frame dot skip is exercised too.
            ppu.run_dots(100_000, &mut bus);
            ppu.write_register(0x2000, 0x80, &mut bus);
            ppu.write_register(0x2001, 0x18, &mut bus);
            let mut changes = 0;
            let mut seed = 12_345u32;
            for _ in 0..400 {
                // Start batches at arbitrary dots too, as register accesses do.
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                ppu.run_dots((seed >> 16) % 700, &mut bus);
                // From this position, the observable state must stay the same for the first
                // `batch - 1` dots: the change may only come with the batch's last dot.
                let batch = ppu.dots_until_event();
                assert!(batch >= 1);
                let before = observable(&ppu);
                for _ in 1..batch {
                    ppu.run_dots(1, &mut bus);
                    assert_eq!(
                        observable(&ppu),
                        before,
                        "{timing:?}: changed inside a batch of {batch} at ({}, {})",
                        ppu.scanline(),
                        ppu.dot()
                    );
                }
                ppu.run_dots(1, &mut bus);
                changes += usize::from(observable(&ppu) != before);
            }
            assert!(changes > 8, "the walk saw {changes} changes");
        }
    }
    /// A PPU of `model` and `timing` past its warm-up, parked for `parked` frames, with NMI
    /// and rendering on, and its bus.
    fn parked_with_nmi_and_rendering(
        model: crate::PpuModel,
        timing: crate::FrameTiming,
        parked: u8,
    ) -> (Ppu, FlatBus) {
        let mut ppu = Ppu::new();
        ppu.set_model(model);
        ppu.set_frame_timing(timing);
        ppu.set_warmup(false);
        let mut bus = FlatBus::new();
        ppu.park(parked);
        ppu.write_register(0x2000, 0x80, &mut bus);
        ppu.write_register(0x2001, 0x18, &mut bus);
        (ppu, bus)
    }

    /// Every model and timing, dot by dot over a park (FCEUX timing) and then two frames, NMI
    /// and rendering on: no observable change comes sooner than `dots_until_event` said at
    /// any dot before it.
    #[test]
    fn dots_until_event_is_a_lower_bound_on_every_model() {
        use crate::{FrameTiming, PpuModel};
        for model in [PpuModel::Rp2c02, PpuModel::Rp2c07, PpuModel::Ua6538] {
            for timing in [FrameTiming::HARDWARE, FrameTiming::FCEUX] {
                let parked = if timing == FrameTiming::FCEUX { 2 } else { 0 };
                let (mut ppu, mut bus) = parked_with_nmi_and_rendering(model, timing, parked);
                let total = u64::from(model.dots_per_frame()) * (u64::from(parked) + 2) + 500;
                let mut before = observable(&ppu);
                // The earliest dot count at which a change may come.
                let mut limit = u64::from(ppu.dots_until_event());
                let mut changes = 0;
                for dots in 1..=total {
                    ppu.run_dots(1, &mut bus);
                    let now = observable(&ppu);
                    let bound = u64::from(ppu.dots_until_event());
                    assert!(bound >= 1);
                    if now != before {
                        assert!(
                            dots >= limit,
                            "{model:?} {timing:?}: a change {} dots early at ({}, {})",
                            limit - dots,
                            ppu.scanline(),
                            ppu.dot()
                        );
                        changes += 1;
                        before = now;
                        limit = dots + bound;
                    } else {
                        limit = limit.max(dots + bound);
                    }
                }
                // Each running frame: VBlank up, VBlank down, the frame's end; each parked
                // frame its end.
                assert!(
                    changes >= 6 + usize::from(parked),
                    "{model:?} {timing:?}: {changes} changes"
                );
            }
        }
    }

    /// Every model and timing, over a park (FCEUX timing) and two frames with rendering and
    /// NMI on: wherever `stays_in_vblank_for(k)` holds, an OAMDATA write and then k dots
    /// leave the PPU as k dots and then the write do (other register writes pending around
    /// it), and it holds for a stretch of every frame.
    #[test]
    fn an_oam_write_in_vblank_does_not_depend_on_the_dot() {
        use crate::{FrameTiming, PpuModel};
        let state = |ppu: &Ppu| borsh::to_vec(ppu).unwrap();
        for model in [PpuModel::Rp2c02, PpuModel::Rp2c07, PpuModel::Ua6538] {
            for timing in [FrameTiming::HARDWARE, FrameTiming::FCEUX] {
                let parked = if timing == FrameTiming::FCEUX { 1 } else { 0 };
                let (mut ppu, mut bus) = parked_with_nmi_and_rendering(model, timing, parked);
                let total = model.dots_per_frame() * (u32::from(parked) + 2);
                let mut held = 0;
                let mut step = 0u32;
                while step < total {
                    let noise = [
                        (0x2001, 0x1E),
                        (0x2006, 0x21),
                        (0x2003, 0x40),
                        (0x2005, 0x13),
                    ][step as usize % 4];
                    for dots in [1, 5, 341, 3000] {
                        if !ppu.stays_in_vblank_for(dots) {
                            continue;
                        }
                        held += 1;
                        let (mut write_first, mut dots_first) = (ppu.clone(), ppu.clone());
                        for (ppu, write_first) in
                            [(&mut write_first, true), (&mut dots_first, false)]
                        {
                            ppu.write_register(noise.0, noise.1, &mut bus);
                            if write_first {
                                ppu.write_register(0x2004, 0xA5, &mut bus);
                            }
                            ppu.run_dots(dots, &mut bus);
                            if !write_first {
                                ppu.write_register(0x2004, 0xA5, &mut bus);
                            }
                        }
                        assert_eq!(
                            state(&write_first),
                            state(&dots_first),
                            "{model:?} {timing:?} at ({}, {}), {dots} dots",
                            ppu.scanline(),
                            ppu.dot()
                        );
                    }
                    ppu.run_dots(29, &mut bus);
                    step += 29;
                }
                assert!(held > 200, "{model:?} {timing:?}: held {held} times");
            }
        }
    }

    #[test]
    fn batched_dots_match_single_dots_on_every_model() {
        use crate::{FrameTiming, PpuModel};
        for model in [PpuModel::Rp2c07, PpuModel::Ua6538] {
            for timing in [FrameTiming::HARDWARE, FrameTiming::FCEUX] {
                let mut memory = FlatBus::new();
                let mut seed = 31u32;
                for byte in memory.memory.iter_mut() {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    *byte = (seed >> 16) as u8;
                }
                let mut single_bus = FlatBus::new();
                single_bus.memory = memory.memory.clone();
                let mut batched_bus = FlatBus::new();
                batched_bus.memory = memory.memory.clone();
                let mut single = Ppu::new();
                let mut batched = Ppu::new();
                for (ppu, bus) in [
                    (&mut single, &mut single_bus),
                    (&mut batched, &mut batched_bus),
                ] {
                    ppu.set_model(model);
                    ppu.set_frame_timing(timing);
                    ppu.run_dots(120_000, bus);
                    ppu.write_register(0x2003, 0, bus);
                    for index in 0..=255u8 {
                        ppu.write_register(0x2004, index.wrapping_mul(73) ^ (index >> 2), bus);
                    }
                    ppu.write_register(0x2001, 0x3E, bus);
                    ppu.write_register(0x2000, 0xB0, bus);
                    bus.record_reads = true;
                }
                for round in 0..300u32 {
                    let dots = 37 + round * 997 % 4000;
                    if round % 9 == 4 {
                        let mask = if round % 2 == 0 { 0x1E } else { 0x00 };
                        for (ppu, bus) in [
                            (&mut single, &mut single_bus),
                            (&mut batched, &mut batched_bus),
                        ] {
                            ppu.write_register(0x2001, mask, bus);
                        }
                    }
                    for _ in 0..dots {
                        // The reference: every dot on its own (`tick` knows no frame-end
                        // lead, so FCEUX's timing goes through single-dot `run_dots`).
                        if timing == FrameTiming::HARDWARE {
                            single.tick(&mut single_bus);
                        } else {
                            single.run_dots(1, &mut single_bus);
                        }
                    }
                    batched.run_dots(dots, &mut batched_bus);
                    assert_eq!(
                        borsh::to_vec(&single).unwrap(),
                        borsh::to_vec(&batched).unwrap(),
                        "{model:?} {timing:?} round {round}: states differ"
                    );
                }
                assert_eq!(single_bus.reads, batched_bus.reads, "{model:?}");
                assert_eq!(single_bus.read_dots, batched_bus.read_dots, "{model:?}");
                assert!(batched.frames_completed() >= 6);
                assert_eq!(batched.validate_state(), Ok(()));
            }
        }
    }
}

#[cfg(test)]
mod state_validation_tests {
    use crate::test_support::FlatBus;
    use crate::{FrameTiming, Ppu};

    /// A PPU rendering sprites (8x16, many on a line) and background, with palette and OAM
    /// loaded, after its warm-up.
    fn busy() -> (Ppu, FlatBus) {
        let mut ppu = Ppu::new();
        let mut bus = FlatBus::new();
        let mut seed = 5u32;
        for byte in bus.memory.iter_mut() {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            *byte = (seed >> 16) as u8;
        }
        ppu.run_dots(100_000, &mut bus);
        ppu.write_register(0x2006, 0x3F, &mut bus);
        ppu.write_register(0x2006, 0x00, &mut bus);
        for colour in 0..32 {
            ppu.write_register(0x2007, colour * 7, &mut bus);
        }
        ppu.write_register(0x2003, 0, &mut bus);
        for index in 0..=255u8 {
            ppu.write_register(0x2004, index.wrapping_mul(29) ^ (index >> 3), &mut bus);
        }
        ppu.write_register(0x2000, 0xA0, &mut bus);
        ppu.write_register(0x2001, 0x1E, &mut bus);
        (ppu, bus)
    }

    #[test]
    fn states_of_a_running_ppu_validate() {
        for timing in [FrameTiming::HARDWARE, FrameTiming::FCEUX] {
            let (mut ppu, mut bus) = busy();
            ppu.set_frame_timing(timing);
            let mut seed = 77u32;
            for round in 0..3_000u32 {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                ppu.run_dots((seed >> 16) % 300, &mut bus);
                assert_eq!(ppu.validate_state(), Ok(()), "{timing:?} round {round}");
                // Register accesses that leave delays, frozen sprite units and the
                // evaluation mid-way in the state.
                match round % 11 {
                    0 => ppu.write_register(0x2001, (seed >> 8) as u8 & 0x1F, &mut bus),
                    1 => ppu.write_register(0x2001, 0x1E, &mut bus),
                    2 => {
                        ppu.read_register(0x2007, &mut bus);
                    }
                    3 => ppu.write_register(0x2006, (seed >> 4) as u8 & 0x3F, &mut bus),
                    4 => {
                        ppu.read_register(0x2004, &mut bus);
                    }
                    5 => ppu.write_register(0x2004, seed as u8, &mut bus),
                    6 => {
                        ppu.read_register(0x2002, &mut bus);
                    }
                    7 => ppu.write_register(0x2005, (seed >> 12) as u8, &mut bus),
                    _ => {}
                }
                assert_eq!(ppu.validate_state(), Ok(()), "{timing:?} round {round}");
            }
        }
        let mut parked = Ppu::new();
        parked.set_frame_timing(FrameTiming::FCEUX);
        parked.park(2);
        assert_eq!(parked.validate_state(), Ok(()));
        assert_eq!(Ppu::new().validate_state(), Ok(()));
    }

    /// A busy PPU edited by `edit` must be refused with `message`.
    fn refused(edit: impl FnOnce(&mut Ppu), message: &str) {
        let (mut ppu, mut bus) = busy();
        ppu.run_dots(150_000, &mut bus);
        edit(&mut ppu);
        assert_eq!(
            ppu.validate_state().map_err(|e| e.to_string()),
            Err(message.to_string())
        );
    }

    #[test]
    fn positions_and_counters_out_of_range_are_refused() {
        // A scanline past the frame would count up until it overflowed; a dot past the line
        // underflows `end - dot` in the blank-dot batches.
        refused(
            |p| p.scanline = 262,
            "PPU scanline 262 is out of range 0..=261",
        );
        refused(|p| p.dot = 341, "PPU dot 341 is out of range 0..=340");
        refused(
            |p| p.frames_completed = u64::MAX,
            "PPU frames completed 18446744073709551615 is out of range 0..=281474976710656",
        );
        refused(
            |p| p.evaluation_cursor = 0,
            "PPU sprite evaluation dot 0 is out of range 1..=340",
        );
        refused(
            |p| p.pixel_x = 300,
            "PPU pixel x 300 is out of range 0..=256",
        );
    }

    #[test]
    fn the_scanline_range_is_the_models() {
        use crate::PpuModel;
        let (mut ppu, mut bus) = busy();
        ppu.set_model(PpuModel::Rp2c07);
        ppu.run_dots(150_000, &mut bus);
        assert_eq!(ppu.validate_state(), Ok(()));
        ppu.scanline = 311;
        assert_eq!(ppu.validate_state(), Ok(()));
        ppu.scanline = 312;
        assert_eq!(
            ppu.validate_state().map_err(|e| e.to_string()),
            Err("PPU scanline 312 is out of range 0..=311".to_string())
        );
        ppu.scanline = 300;
        ppu.sprite_line.frozen_at = Some((311, 0));
        assert_eq!(ppu.validate_state(), Ok(()));
        ppu.sprite_line.frozen_at = Some((312, 0));
        assert_eq!(
            ppu.validate_state().map_err(|e| e.to_string()),
            Err("PPU sprite units' frozen scanline 312 is out of range 0..=311".to_string())
        );
        // The same PPU as a 2C02 (set_model moves it onto the 2C02's frame).
        let (mut ppu, _) = busy();
        ppu.scanline = 262;
        assert_eq!(
            ppu.validate_state().map_err(|e| e.to_string()),
            Err("PPU scanline 262 is out of range 0..=261".to_string())
        );
        ppu.scanline = 261;
        assert_eq!(ppu.validate_state(), Ok(()));
    }

    #[test]
    fn parks_longer_than_the_models_frame_are_refused() {
        use crate::PpuModel;
        let mut ppu = Ppu::new();
        ppu.set_model(PpuModel::Rp2c07);
        ppu.park(2);
        assert_eq!(ppu.park.dots, PpuModel::Rp2c07.dots_per_frame());
        // Decoded against the longest frame of any model...
        let back: Ppu = borsh::from_slice(&borsh::to_vec(&ppu).unwrap()).unwrap();
        // ...and checked against the console's model.
        assert_eq!(
            back.validate_state().map_err(|e| e.to_string()),
            Err("PPU parked frame dots 106392 is out of range 1..=89342".to_string())
        );
        let mut back = back;
        back.set_model(PpuModel::Rp2c07);
        assert_eq!(back.validate_state(), Ok(()));
    }

    #[test]
    fn registers_and_addresses_out_of_range_are_refused() {
        refused(
            |p| p.scroll.v = 0x8000,
            "PPU VRAM address (v) 32768 is out of range 0..=32767",
        );
        refused(
            |p| p.scroll.fine_x = 8,
            "PPU fine X scroll 8 is out of range 0..=7",
        );
        refused(
            |p| p.pending_v = 0xFFFF,
            "PPU pending VRAM address 65535 is out of range 0..=32767",
        );
        refused(
            |p| p.delays.mask = 200,
            "PPU $2001 write delay 200 is out of range 0..=4",
        );
        refused(
            |p| p.delays.ale_glitch = 4,
            "PPU address latch glitch delay 4 is out of range 0..=3",
        );
        refused(
            |p| p.background.attribute_latch = 4,
            "PPU background attribute latch 4 is out of range 0..=3",
        );
        refused(
            |p| p.palette_ram[17] = 0x40,
            "PPU palette RAM entry 17 = $40 is out of range $00..=$3F",
        );
    }

    #[test]
    fn sprite_state_out_of_range_is_refused() {
        // Each part's own fields: see the tests in sprite_evaluation.rs and sprites.rs.
        refused(
            |p| p.evaluation.sprite_count = 9,
            "PPU sprites on the next line 9 is out of range 0..=8",
        );
        refused(
            |p| p.sprite_line.frozen_at = Some((300, 0)),
            "PPU sprite units' frozen scanline 300 is out of range 0..=261",
        );
    }

    #[test]
    fn cached_values_that_disagree_with_their_source_are_refused() {
        refused(
            |p| p.background_min_x = 1 << 40,
            "PPU decoded $2001 does not match $2001 = $1E",
        );
        refused(
            |p| p.colour_cache[5] = 0xFFFF,
            "PPU colour cache does not match palette RAM and $2001",
        );
    }
}
