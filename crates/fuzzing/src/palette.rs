//! Fuzz target: a `.pal` palette file, loaded and used.
//!
//! The bytes are a `--palette` file. `Palette::from_pal_bytes` takes 192 bytes (64 colours) or
//! 1536 (512: one set per emphasis combination) and refuses any other size, naming it. A
//! palette it accepts must hold the file's colours, and converts pictures to opaque RGBA: every
//! pixel value (the PPU's 9 bits, also with junk above them) and a console's picture.

use std::sync::OnceLock;

use nes::{Nes, Palette, PaletteError, SCREEN_WIDTH};

/// libFuzzer's `-max_len`: past 1536 bytes every size is refused alike.
pub const MAX_LEN: usize = 4096;

/// A picture the test program drew (built once).
fn console_frame() -> &'static [u16] {
    static FRAME: OnceLock<Vec<u16>> = OnceLock::new();
    FRAME.get_or_init(|| {
        let mut nes =
            Nes::from_ines(&crate::corpus::console_image()).expect("the console image loads");
        for _ in 0..3 {
            nes.run_frame();
        }
        nes.frame_buffer().to_vec()
    })
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    let palette = match Palette::from_pal_bytes(data) {
        Ok(palette) => palette,
        Err(error) => {
            assert_eq!(error, PaletteError::InvalidSize(data.len()));
            assert!(!error.to_string().is_empty());
            return;
        }
    };
    match data.len() {
        1536 => {
            for (pixel, rgb) in (0u16..).zip(data.chunks_exact(3)) {
                assert_eq!(palette.rgb(pixel), rgb, "colour {pixel:#05X}");
            }
        }
        192 => {
            // Without emphasis, the file's own colours.
            for (pixel, rgb) in (0u16..).zip(data.chunks_exact(3)) {
                assert_eq!(palette.rgb(pixel), rgb, "colour {pixel:#04X}");
            }
        }
        other => panic!("a {other}-byte palette was accepted"),
    }

    // Every pixel value, and each again with junk in the bits above the ninth (ignored).
    let all: Vec<u16> = (0..0x200)
        .chain((0..0x200).map(|pixel| pixel | 0xFE00))
        .collect();
    let mut rgba = vec![0; all.len() * 4];
    palette.to_rgba(&all, &mut rgba);
    for (pixel, out) in all.iter().zip(rgba.chunks_exact(4)) {
        assert_eq!(out[..3], palette.rgb(pixel & 0x1FF), "pixel {pixel:#06X}");
        assert_eq!(out[3], 0xFF, "opaque");
    }
    // A short output buffer stops the conversion early instead of overrunning.
    let mut short = [0u8; 6];
    palette.to_rgba(&all, &mut short);
    assert_eq!(short[4..], [0, 0]);

    // The top of a console's picture: the conversion takes the same path for every pixel,
    // and under the fuzzer's comparison tracing a whole 61,440-pixel frame would take nearly
    // all of each input's time for nothing more.
    let picture = &console_frame()[..SCREEN_WIDTH * PICTURE_LINES];
    let mut rgba = vec![0; picture.len() * 4];
    palette.to_rgba(picture, &mut rgba);
    for (pixel, out) in picture.iter().zip(rgba.chunks_exact(4)) {
        let [r, g, b] = palette.rgb(*pixel);
        assert_eq!(out, [r, g, b, 0xFF]);
    }
}

/// Lines of the console's picture converted per input.
const PICTURE_LINES: usize = 8;

/// The seed inputs: both accepted sizes (a ramp, the built-in palette's colours) and sizes
/// around them.
pub fn seeds() -> Vec<Vec<u8>> {
    let ramp = |len: usize| (0..len).map(|i| (i * 37 % 256) as u8).collect::<Vec<u8>>();
    let builtin = Palette::ntsc();
    let full: Vec<u8> = (0..512).flat_map(|pixel| builtin.rgb(pixel)).collect();
    let mut seeds = vec![full[..192].to_vec(), full, ramp(192), ramp(1536)];
    for len in [0, 1, 3, 64, 191, 193, 384, 576, 1535, 1537, 1539, 3072] {
        seeds.push(ramp(len));
    }
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoke() {
        let seeds = seeds();
        let ran = crate::mutate::smoke(&seeds, 3000, 0x9A1E_77E5, MAX_LEN, run);
        assert_eq!(ran, seeds.len() + 3000);
    }
}
