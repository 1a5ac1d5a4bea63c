//! Where a script host (the Lua host of issue 7) plugs into the window: a hook called before
//! and after every emulated frame, with access to the console, an RGBA overlay drawn over the
//! picture, on-screen messages and the speed mode.

use nes::{Nes, SCREEN_HEIGHT, SCREEN_WIDTH};

use super::osd::Osd;

/// FCEUX's `emu.speedmode` settings, as the Lua host keeps them: "normal" is throttled to
/// the console's speed, the others run as fast as the machine can (every frame is still
/// emulated and the window shows the latest).
pub use nes_lua::SpeedMode;

/// A 256x240 RGBA layer composited over the picture (FCEUX's `gui.*` drawing surface).
/// Transparent pixels (alpha 0) leave the picture as it is.
#[derive(Debug, Clone)]
pub struct Overlay {
    rgba: Vec<u8>,
    /// Whether anything was drawn since the last clear (skips compositing an empty layer).
    used: bool,
}

impl Default for Overlay {
    fn default() -> Self {
        Overlay {
            rgba: vec![0; SCREEN_WIDTH * SCREEN_HEIGHT * 4],
            used: false,
        }
    }
}

impl Overlay {
    /// The layer's pixels for drawing into (RGBA, row by row, 256 x 240).
    #[allow(dead_code)] // Used by the script host (issue 7).
    pub fn pixels_mut(&mut self) -> &mut [u8] {
        self.used = true;
        &mut self.rgba
    }

    /// Make the whole layer transparent.
    pub fn clear(&mut self) {
        if self.used {
            self.rgba.fill(0);
            self.used = false;
        }
    }

    /// Blend the layer over `picture` (RGBA, same size): source-over with straight alpha.
    pub fn composite_onto(&self, picture: &mut [u8]) {
        if !self.used {
            return;
        }
        for (dst, src) in picture.chunks_exact_mut(4).zip(self.rgba.chunks_exact(4)) {
            let alpha = u16::from(src[3]);
            if alpha == 0 {
                continue;
            }
            for channel in 0..3 {
                let blended = (u16::from(src[channel]) * alpha
                    + u16::from(dst[channel]) * (255 - alpha)
                    + 127)
                    / 255;
                dst[channel] = blended as u8;
            }
        }
    }
}

/// What a frame hook may change in the frontend.
#[allow(dead_code)] // Read by the script host (issue 7).
#[derive(Debug)]
pub struct FrameContext<'a> {
    /// Drawn over the picture on screen and in screenshots; cleared before each frame's
    /// `after_frame` calls (FCEUX's gui drawings last one frame).
    pub overlay: &'a mut Overlay,
    /// On-screen messages (`emu.message`, and `print` output when asked for).
    pub osd: &'a mut Osd,
    /// Pacing (`emu.speedmode`).
    pub speed_mode: &'a mut SpeedMode,
}

/// A per-frame hook: the Lua host implements this. Hooks run in the order added, on the
/// window's thread; `before_frame` runs after the player's input is set on the console (a
/// hook may override it with `Nes::set_buttons`, like `joypad.set`), `after_frame` after the
/// frame is complete and before it is drawn.
pub trait FrameHook {
    fn before_frame(&mut self, _nes: &mut Nes, _context: &mut FrameContext<'_>) {}
    fn after_frame(&mut self, _nes: &mut Nes, _context: &mut FrameContext<'_>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_blends_with_alpha_and_leaves_transparent_pixels_alone() {
        let mut overlay = Overlay::default();
        let mut picture = vec![100u8; SCREEN_WIDTH * SCREEN_HEIGHT * 4];
        let untouched = picture.clone();
        overlay.composite_onto(&mut picture);
        assert_eq!(picture, untouched);
        let layer = overlay.pixels_mut();
        layer[..4].copy_from_slice(&[255, 0, 0, 255]);
        layer[4..8].copy_from_slice(&[200, 200, 200, 128]);
        overlay.composite_onto(&mut picture);
        assert_eq!(&picture[..3], &[255, 0, 0]);
        assert_eq!(&picture[4..7], &[150, 150, 150]);
        assert_eq!(&picture[8..], &untouched[8..]);
        overlay.clear();
        let mut again = untouched.clone();
        overlay.composite_onto(&mut again);
        assert_eq!(again, untouched);
    }

    #[test]
    fn speed_modes_by_fceux_name() {
        assert_eq!(SpeedMode::from_name("turbo"), Some(SpeedMode::Turbo));
        assert!(SpeedMode::from_name("normal").unwrap().is_throttled());
        assert!(!SpeedMode::from_name("maximum").unwrap().is_throttled());
        assert_eq!(SpeedMode::from_name("fast"), None);
    }
}
