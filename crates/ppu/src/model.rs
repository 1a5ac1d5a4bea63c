//! Which PPU chip: the NTSC 2C02, the PAL 2C07 or the Dendy UA6538. They share the picture
//! (240 visible lines of 341 dots) and everything inside a rendering line; what differs is the
//! frame around it (NESdev wiki "Cycle reference chart", "PPU frame timing") and the order of
//! the red and green emphasis bits (NESdev wiki "Colour emphasis").

use crate::{DOTS_PER_SCANLINE, POST_RENDER_SCANLINE};

/// Which PPU chip: the frame layout differs (NESdev "Cycle reference chart", "PPU frame
/// timing").
///
/// | model  | lines | VBlank set   | pre-render | odd-frame dot skip | `$2001` bits 5 / 6 |
/// |--------|-------|--------------|------------|--------------------|--------------------|
/// | 2C02   | 262   | (241, 1)     | 261        | yes, while rendering | red / green      |
/// | 2C07   | 312   | (241, 1)     | 311        | no                 | green / red        |
/// | UA6538 | 312   | (291, 1)     | 311        | no                 | green / red        |
///
/// The 2C07 and UA6538 lines after the picture are idle (post-render) up to the VBlank line,
/// then VBlank up to the pre-render line. The power-on/reset write warm-up ends at the
/// pre-render line on every model (about 33,132 CPU cycles on a PAL console: NESdev "PPU
/// registers").
///
/// Not modelled: the 2C07's OAM refresh during its long VBlank (OAM is then safe to write
/// only early in VBlank: NESdev "PPU OAM"), its PAL colour decoding (the frame buffer's pixels
/// keep the 2C02's meaning: see [`PpuModel::swaps_red_green_emphasis`]), its 239-line picture
/// (the 2C07 blanks the picture's first line), and the open-bus decay, which stays counted in
/// frames (36: 600 ms at 60 frames a second, 720 ms at 50).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PpuModel {
    /// RP2C02, NTSC.
    #[default]
    Rp2c02,
    /// RP2C07, PAL.
    Rp2c07,
    /// UA6538, the Dendy's PAL-timed clone: the 2C07's 312 lines with a 2C02-like VBlank of
    /// 20 lines, set 50 lines after the picture.
    Ua6538,
}

impl PpuModel {
    /// The largest [`PpuModel::dots_per_frame`] of any model.
    pub(crate) const MAX_DOTS_PER_FRAME: u32 = PpuModel::Rp2c07.dots_per_frame();

    /// Scanlines in a frame, counting the pre-render line: 262, 312, 312.
    pub const fn scanlines_per_frame(self) -> u16 {
        match self {
            PpuModel::Rp2c02 => 262,
            PpuModel::Rp2c07 | PpuModel::Ua6538 => 312,
        }
    }

    /// The scanline whose dot 1 sets the VBlank flag (and raises /NMI when enabled): 241,
    /// 241, 291.
    pub const fn vblank_scanline(self) -> u16 {
        match self {
            PpuModel::Rp2c02 | PpuModel::Rp2c07 => 241,
            PpuModel::Ua6538 => 291,
        }
    }

    /// The pre-render (a.k.a. "-1") scanline, the frame's last: 261, 311, 311.
    pub const fn pre_render_scanline(self) -> u16 {
        self.scanlines_per_frame() - 1
    }

    /// Whether an odd frame with rendering on skips the idle dot (0, 0): only the 2C02's do.
    pub const fn skips_odd_frame_dot(self) -> bool {
        matches!(self, PpuModel::Rp2c02)
    }

    /// Dots in a frame when no dot is skipped: scanlines x 341 (89,342 or 106,392).
    pub const fn dots_per_frame(self) -> u32 {
        self.scanlines_per_frame() as u32 * DOTS_PER_SCANLINE as u32
    }

    /// Whether `$2001` bit 5 emphasises green and bit 6 red (the 2C07 and UA6538), the
    /// reverse of the 2C02; bit 7 is blue on all. The PPU swaps them as it decodes `$2001`,
    /// so [`Ppu::frame_buffer`](crate::Ppu::frame_buffer) pixels always carry red, green and
    /// blue emphasis in bits 6, 7 and 8, as on the 2C02.
    pub const fn swaps_red_green_emphasis(self) -> bool {
        !matches!(self, PpuModel::Rp2c02)
    }
}

/// A model's numbers as the per-dot paths read them: plain fields set once by
/// [`Ppu::set_model`](crate::Ppu::set_model), compared against without recomputing. Part of
/// the console, not of its state (the `Ppu` field is `#[borsh(skip)]`), so `Default` is the
/// 2C02's, the layout a decoded state gets until the console sets its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameLayout {
    pub model: PpuModel,
    pub scanlines_per_frame: u16,
    pub vblank_scanline: u16,
    pub pre_render_scanline: u16,
    pub dots_per_frame: u32,
    pub skips_odd_frame_dot: bool,
    pub swaps_red_green_emphasis: bool,
    /// Frame positions (scanline * 341 + dot) reached right after the VBlank flag's dot and
    /// after the pre-render line's flag-clearing dot, and the dots from one frame's position
    /// to the same one of the next, assuming the idle dot is skipped where the model may skip
    /// it (early is safe): `Ppu::dots_until_event`'s numbers, worked out once.
    pub vblank_event: u32,
    pub pre_render_event: u32,
    pub shortest_frame_dots: u32,
}

impl FrameLayout {
    pub const fn of(model: PpuModel) -> FrameLayout {
        FrameLayout {
            model,
            scanlines_per_frame: model.scanlines_per_frame(),
            vblank_scanline: model.vblank_scanline(),
            pre_render_scanline: model.pre_render_scanline(),
            dots_per_frame: model.dots_per_frame(),
            skips_odd_frame_dot: model.skips_odd_frame_dot(),
            swaps_red_green_emphasis: model.swaps_red_green_emphasis(),
            vblank_event: model.vblank_scanline() as u32 * DOTS_PER_SCANLINE as u32 + 2,
            pre_render_event: model.pre_render_scanline() as u32 * DOTS_PER_SCANLINE as u32 + 2,
            shortest_frame_dots: model.dots_per_frame() - model.skips_odd_frame_dot() as u32,
        }
    }
}

impl Default for FrameLayout {
    fn default() -> FrameLayout {
        FrameLayout::of(PpuModel::Rp2c02)
    }
}

// The post-render line comes right after the picture on every model, and the VBlank line at
// or after it, before the pre-render line.
const _: () = {
    let models = [PpuModel::Rp2c02, PpuModel::Rp2c07, PpuModel::Ua6538];
    let mut index = 0;
    while index < models.len() {
        let model = models[index];
        assert!(model.vblank_scanline() > POST_RENDER_SCANLINE);
        assert!(model.vblank_scanline() < model.pre_render_scanline());
        assert!(model.dots_per_frame() <= PpuModel::MAX_DOTS_PER_FRAME);
        index += 1;
    }
};

#[cfg(test)]
mod tests {
    use super::PpuModel;
    use crate::test_support::{run_dots, run_to, FlatBus};
    use crate::{FrameTiming, Ppu};

    const MODELS: [PpuModel; 3] = [PpuModel::Rp2c02, PpuModel::Rp2c07, PpuModel::Ua6538];

    fn ready(model: PpuModel) -> (Ppu, FlatBus) {
        let mut ppu = Ppu::new();
        ppu.set_model(model);
        ppu.set_warmup(false);
        (ppu, FlatBus::new())
    }

    fn vblank_flag(ppu: &Ppu) -> bool {
        ppu.peek_register(0x2002) & 0x80 != 0
    }

    #[test]
    fn the_models_numbers() {
        let numbers = |m: PpuModel| {
            (
                m.scanlines_per_frame(),
                m.vblank_scanline(),
                m.pre_render_scanline(),
                m.skips_odd_frame_dot(),
                m.dots_per_frame(),
                m.swaps_red_green_emphasis(),
            )
        };
        assert_eq!(
            numbers(PpuModel::Rp2c02),
            (262, 241, 261, true, 89_342, false)
        );
        assert_eq!(
            numbers(PpuModel::Rp2c07),
            (312, 241, 311, false, 106_392, true)
        );
        assert_eq!(
            numbers(PpuModel::Ua6538),
            (312, 291, 311, false, 106_392, true)
        );
        assert_eq!(PpuModel::default(), PpuModel::Rp2c02);
        assert_eq!(Ppu::new().model(), PpuModel::Rp2c02);
        for model in MODELS {
            let (ppu, _) = ready(model);
            assert_eq!(ppu.model(), model);
            assert_eq!(ppu.dots_per_frame(), model.dots_per_frame());
        }
        assert_eq!(crate::DOTS_PER_FRAME, 89_342);
        assert_eq!(
            (
                crate::SCANLINES_PER_FRAME,
                crate::VBLANK_SCANLINE,
                crate::PRE_RENDER_SCANLINE
            ),
            (262, 241, 261)
        );
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
    fn frame_lengths_with_rendering_off_and_on() {
        for model in MODELS {
            let (mut ppu, mut bus) = ready(model);
            let off: Vec<u32> = (0..3).map(|_| frame_length(&mut ppu, &mut bus)).collect();
            let full = model.dots_per_frame();
            assert_eq!(off, [full; 3], "{model:?}, rendering off");
            ppu.write_register(0x2001, 0x18, &mut bus);
            let on: Vec<u32> = (0..6).map(|_| frame_length(&mut ppu, &mut bus)).collect();
            if model == PpuModel::Rp2c02 {
                assert!(on.iter().all(|&n| n == full || n == full - 1), "{on:?}");
                for pair in on.windows(2) {
                    assert_eq!(pair[0] + pair[1], 2 * full - 1, "alternating: {on:?}");
                }
            } else {
                assert_eq!(on, [full; 6], "{model:?}, rendering on");
            }
        }
    }

    #[test]
    fn no_odd_frame_skip_without_the_2c02_even_on_fceux_timing() {
        for model in [PpuModel::Rp2c07, PpuModel::Ua6538] {
            for timing in [FrameTiming::HARDWARE, FrameTiming::FCEUX] {
                let (mut ppu, mut bus) = ready(model);
                ppu.set_frame_timing(timing);
                ppu.write_register(0x2001, 0x18, &mut bus);
                for _ in 0..4 {
                    run_to(&mut ppu, &mut bus, 311, 340);
                    ppu.tick(&mut bus);
                    assert_eq!((ppu.scanline(), ppu.dot()), (0, 0), "{model:?} {timing:?}");
                }
            }
        }
    }

    #[test]
    fn vblank_and_nmi_start_on_the_models_vblank_line_and_end_on_its_pre_render_line() {
        for model in MODELS {
            let (mut ppu, mut bus) = ready(model);
            ppu.write_register(0x2000, 0x80, &mut bus);
            let (vblank, pre_render) = (model.vblank_scanline(), model.pre_render_scanline());
            // A whole frame from (0, 0): the flag is clear up to the set dot, set from it to
            // the pre-render line's dot 1, then clear again.
            for _ in 0..2 {
                run_to(&mut ppu, &mut bus, 0, 0);
                loop {
                    let at = (ppu.scanline(), ppu.dot());
                    ppu.tick(&mut bus);
                    let set = vblank_flag(&ppu);
                    assert_eq!(ppu.nmi_line(), set, "{model:?} after {at:?}");
                    let expected = at >= (vblank, 1) && at < (pre_render, 1);
                    assert_eq!(set, expected, "{model:?}: VBlank after {at:?}");
                    if at == (pre_render, 1) {
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn a_status_read_on_the_models_vblank_dot_cancels_the_flag_and_nmi() {
        for model in MODELS {
            let (mut ppu, mut bus) = ready(model);
            ppu.write_register(0x2000, 0x80, &mut bus);
            run_to(&mut ppu, &mut bus, model.vblank_scanline(), 1);
            assert_eq!(ppu.read_register(0x2002, &mut bus) & 0x80, 0);
            for _ in 0..10 * 341 {
                ppu.tick(&mut bus);
                assert!(!vblank_flag(&ppu) && !ppu.nmi_line(), "{model:?}");
            }
            // One dot early is no race.
            let (mut ppu, mut bus) = ready(model);
            ppu.write_register(0x2000, 0x80, &mut bus);
            run_to(&mut ppu, &mut bus, model.vblank_scanline(), 0);
            assert_eq!(ppu.read_register(0x2002, &mut bus) & 0x80, 0);
            run_dots(&mut ppu, &mut bus, 2);
            assert!(ppu.nmi_line(), "{model:?}");
        }
    }

    #[test]
    fn the_warm_up_ends_at_the_models_pre_render_line() {
        for model in MODELS {
            let mut ppu = Ppu::new();
            ppu.set_model(model);
            let mut bus = FlatBus::new();
            assert!(ppu.warmup_active());
            let pre_render = model.pre_render_scanline();
            run_to(&mut ppu, &mut bus, pre_render, 1);
            assert!(ppu.warmup_active(), "{model:?}");
            ppu.write_register(0x2000, 0x80, &mut bus);
            assert_eq!(ppu.ctrl, 0, "{model:?}: ignored during the warm-up");
            ppu.tick(&mut bus);
            assert!(!ppu.warmup_active(), "{model:?}");
            ppu.write_register(0x2000, 0x80, &mut bus);
            assert_eq!(ppu.ctrl, 0x80);
            // From power-on: (pre-render line, dot 1) is this many dots in, which on a PAL
            // console (16 dots per 5 CPU cycles) is about 33,132 CPU cycles.
            let dots = u32::from(pre_render) * 341 + 2;
            if model == PpuModel::Rp2c07 {
                assert_eq!(dots * 5 / 16, 33_141);
            }
        }
    }

    /// The first visible pixel of a frame rendered with `$2001` = `mask`, background on.
    fn rendered_pixel(model: PpuModel, mask: u8) -> u16 {
        let (mut ppu, mut bus) = ready(model);
        // Background tile 0 all colour 1, palette entry 1 = $16.
        for row in 0..8 {
            bus.memory[row] = 0xFF;
        }
        ppu.write_register(0x2006, 0x3F, &mut bus);
        ppu.write_register(0x2006, 0x01, &mut bus);
        ppu.write_register(0x2007, 0x16, &mut bus);
        ppu.write_register(0x2006, 0x00, &mut bus);
        ppu.write_register(0x2006, 0x00, &mut bus);
        ppu.write_register(0x2001, mask | 0x0A, &mut bus);
        run_to(&mut ppu, &mut bus, model.pre_render_scanline(), 0);
        run_to(&mut ppu, &mut bus, 240, 0);
        let pixel = ppu.frame_buffer()[10 * 256 + 10];
        assert_eq!(pixel & 0x3F, 0x16);
        assert_eq!(ppu.validate_state(), Ok(()));
        pixel
    }

    /// The first pixel of a frame with rendering off and `$2001` = `mask` (the backdrop).
    fn blank_pixel(model: PpuModel, mask: u8) -> u16 {
        let (mut ppu, mut bus) = ready(model);
        ppu.write_register(0x2001, mask, &mut bus);
        run_to(&mut ppu, &mut bus, model.pre_render_scanline(), 0);
        ppu.run_dots(341 * 241, &mut bus);
        ppu.frame_buffer()[20 * 256 + 30]
    }

    #[test]
    fn pal_and_dendy_swap_the_red_and_green_emphasis_bits_into_the_2c02s_order() {
        for (mask, ntsc, swapped) in [
            (0x20, 0b001, 0b010),
            (0x40, 0b010, 0b001),
            (0x80, 0b100, 0b100),
            (0x60, 0b011, 0b011),
            (0xA0, 0b101, 0b110),
            (0xC0, 0b110, 0b101),
            (0xE0, 0b111, 0b111),
            (0x00, 0b000, 0b000),
        ] {
            for model in MODELS {
                let expected = if model.swaps_red_green_emphasis() {
                    swapped
                } else {
                    ntsc
                };
                assert_eq!(
                    rendered_pixel(model, mask) >> 6,
                    expected,
                    "{model:?} {mask:#x}"
                );
                assert_eq!(
                    blank_pixel(model, mask) >> 6,
                    expected,
                    "{model:?} {mask:#x}"
                );
            }
        }
    }

    #[test]
    fn changing_the_model_keeps_the_state_consistent() {
        let (mut ppu, mut bus) = ready(PpuModel::Rp2c07);
        ppu.write_register(0x2001, 0x3E, &mut bus);
        ppu.write_register(0x2000, 0x80, &mut bus);
        run_to(&mut ppu, &mut bus, 300, 17);
        assert_eq!(ppu.validate_state(), Ok(()));
        ppu.set_model(PpuModel::Rp2c02);
        assert_eq!((ppu.scanline(), ppu.dot()), (261, 0));
        assert_eq!(ppu.validate_state(), Ok(()));
        assert_eq!(ppu.emphasis_bits, 0b001 << 6, "$2001 bit 5 is red again");
        ppu.set_model(PpuModel::Ua6538);
        assert_eq!(ppu.validate_state(), Ok(()));
        assert_eq!(ppu.emphasis_bits, 0b010 << 6);
        ppu.run_dots(3 * 106_392, &mut bus);
        assert_eq!(ppu.validate_state(), Ok(()));
    }

    #[test]
    fn the_model_is_not_in_a_state() {
        let (mut ppu, mut bus) = ready(PpuModel::Ua6538);
        run_to(&mut ppu, &mut bus, 300, 5);
        let bytes = borsh::to_vec(&ppu).unwrap();
        let ntsc_bytes = borsh::to_vec(&{
            let mut ntsc = ppu.clone();
            ntsc.layout = super::FrameLayout::default();
            ntsc
        })
        .unwrap();
        assert_eq!(bytes, ntsc_bytes);
        let mut back: Ppu = borsh::from_slice(&bytes).unwrap();
        assert_eq!(back.model(), PpuModel::Rp2c02, "a decoded state's default");
        assert!(back.validate_state().is_err(), "line 300 is no 2C02 line");
        back.set_model(PpuModel::Ua6538);
        assert_eq!(back.validate_state(), Ok(()));
        assert_eq!((back.scanline(), back.dot()), (300, 5));
    }

    #[test]
    fn parked_frames_last_the_models_frame() {
        for model in MODELS {
            let (mut ppu, mut bus) = ready(model);
            ppu.set_frame_timing(FrameTiming::FCEUX);
            ppu.park(2);
            assert_eq!(ppu.dots_until_event(), model.dots_per_frame());
            assert_eq!(ppu.validate_state(), Ok(()));
            for _ in 0..2 {
                let start = ppu.frames_completed();
                ppu.run_dots(model.dots_per_frame() - 1, &mut bus);
                assert_eq!(ppu.frames_completed(), start, "{model:?}");
                ppu.run_dots(1, &mut bus);
                assert_eq!(ppu.frames_completed(), start + 1, "{model:?}");
            }
            assert!(!ppu.parked());
        }
    }
}
