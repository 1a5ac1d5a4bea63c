//! Converting 9-bit PPU pixels (6-bit colour + 3 emphasis bits) to RGB.
//!
//! [`Palette::ntsc`] derives its colours from a model of the 2C02's composite signal
//! (NESdev wiki "NTSC video"): each colour `$LH` is a square wave over the 12 phases of the
//! colour subcarrier, alternating between the voltage of `$LD` (low) and `$L0` (high) levels,
//! high during the six phases of hue H. `$x0` is a flat high level, `$xD` a flat low one and
//! `$xE/$xF` black. Emphasis bits attenuate the signal during the phases of the hue each
//! emphasises against. The signal is then decoded as a TV would: luma is the average over a
//! subcarrier cycle, U/V the quadrature components, and YUV goes to RGB with the BT.470
//! matrix.

use std::fmt;

/// Number of distinct pixel values: 64 colours x 8 emphasis combinations.
pub const PALETTE_ENTRIES: usize = 512;

/// Signal levels relative to sync, in volts, for luma rows 0-3 (NESdev wiki "NTSC video").
const LOW_LEVELS: [f64; 4] = [0.350, 0.518, 0.962, 1.550];
const HIGH_LEVELS: [f64; 4] = [1.090, 1.500, 1.960, 1.960];
const BLACK_LEVEL: f64 = 0.518;
const WHITE_LEVEL: f64 = 1.960;
/// Fraction of the signal left while an emphasis attenuator is active.
const EMPHASIS_ATTENUATION: f64 = 0.746;
/// Hues whose phases each `$2001` emphasis bit (red, green, blue) attenuates: emphasising red
/// darkens the cyan phases ($xC), green the magenta ones ($x4), blue the yellow ones ($x8).
const EMPHASIS_HUES: [u8; 3] = [0x0C, 0x04, 0x08];

/// Why a `.pal` file could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaletteError {
    /// The file is neither 192 bytes (64 RGB colours) nor 1536 bytes (512 RGB colours).
    InvalidSize(usize),
}

impl fmt::Display for PaletteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PaletteError::InvalidSize(size) => write!(
                f,
                "palette file is {size} bytes; expected 192 (64 RGB colours) or 1536 \
                 (512 RGB colours, one set of 64 per emphasis combination)"
            ),
        }
    }
}

impl std::error::Error for PaletteError {}

/// An RGB colour for every 9-bit pixel value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Palette {
    colours: [[u8; 3]; PALETTE_ENTRIES],
    /// The same colours as RGBA8888 words (alpha 255), so converting a frame, which every
    /// frontend does every frame, is one load and one store per pixel.
    rgba: [[u8; 4]; PALETTE_ENTRIES],
}

impl Default for Palette {
    fn default() -> Self {
        Palette::ntsc()
    }
}

/// Whether the square wave of hue `hue` (1-12) is high at subcarrier phase `phase` (0-11).
fn wave_is_high(hue: u8, phase: u8) -> bool {
    (phase + hue + 11) % 12 < 6
}

/// Decodes colour `colour` (0-63) under emphasis bits `emphasis` (0-7) to RGB.
fn ntsc_colour(colour: u8, emphasis: u8) -> [u8; 3] {
    let hue = colour & 0x0F;
    let luma_row = usize::from((colour >> 4) & 3);
    if hue >= 0x0E {
        return [0, 0, 0];
    }
    let (mut y, mut u, mut v) = (0.0f64, 0.0f64, 0.0f64);
    for phase in 0..12u8 {
        let high = match hue {
            0x00 => true,
            0x0D => false,
            _ => wave_is_high(hue, phase),
        };
        let mut voltage = if high {
            HIGH_LEVELS[luma_row]
        } else {
            LOW_LEVELS[luma_row]
        };
        let attenuated = EMPHASIS_HUES
            .iter()
            .enumerate()
            .any(|(bit, &emphasis_hue)| {
                emphasis & (1 << bit) != 0 && wave_is_high(emphasis_hue, phase)
            });
        if attenuated {
            voltage *= EMPHASIS_ATTENUATION;
        }
        let signal = (voltage - BLACK_LEVEL) / (WHITE_LEVEL - BLACK_LEVEL);
        // Phase p sits at 45 - 30p degrees on the U/V plane: this puts the colour burst
        // (hue 8, the -U axis) at 180 degrees and hue 2 on +U (blue).
        let angle = (45.0 - 30.0 * f64::from(phase)).to_radians();
        y += signal;
        u += signal * angle.cos();
        v += signal * angle.sin();
    }
    y /= 12.0;
    u /= 6.0;
    v /= 6.0;
    let red = y + 1.139_883 * v;
    let green = y - 0.394_642 * u - 0.580_622 * v;
    let blue = y + 2.032_062 * u;
    [to_byte(red), to_byte(green), to_byte(blue)]
}

fn to_byte(level: f64) -> u8 {
    (level.clamp(0.0, 1.0) * 255.0).round() as u8
}

impl Palette {
    /// The built-in palette generated from the NTSC signal model.
    pub fn ntsc() -> Palette {
        let mut colours = [[0u8; 3]; PALETTE_ENTRIES];
        for (index, colour) in colours.iter_mut().enumerate() {
            *colour = ntsc_colour((index & 0x3F) as u8, (index >> 6) as u8);
        }
        Palette::of(colours)
    }

    fn of(colours: [[u8; 3]; PALETTE_ENTRIES]) -> Palette {
        Palette {
            colours,
            rgba: colours.map(|[red, green, blue]| [red, green, blue, 0xFF]),
        }
    }

    /// Loads a `.pal` file: 192 bytes (64 RGB triples; emphasis is then approximated by
    /// dimming the channels not emphasised) or 1536 bytes (512 triples, emphasis-major, the
    /// same order as the 9-bit pixel value).
    pub fn from_pal_bytes(bytes: &[u8]) -> Result<Palette, PaletteError> {
        let mut colours = [[0u8; 3]; PALETTE_ENTRIES];
        match bytes.len() {
            192 => {
                for (index, colour) in colours.iter_mut().enumerate() {
                    let base = (index & 0x3F) * 3;
                    let rgb = [bytes[base], bytes[base + 1], bytes[base + 2]];
                    *colour = approximate_emphasis(rgb, (index & 0x3F) as u8, (index >> 6) as u8);
                }
            }
            1536 => {
                for (colour, rgb) in colours.iter_mut().zip(bytes.chunks_exact(3)) {
                    *colour = [rgb[0], rgb[1], rgb[2]];
                }
            }
            other => return Err(PaletteError::InvalidSize(other)),
        }
        Ok(Palette::of(colours))
    }

    /// The RGB colour of a 9-bit pixel value (higher bits are ignored).
    #[inline]
    pub fn rgb(&self, pixel: u16) -> [u8; 3] {
        self.colours[usize::from(pixel) & (PALETTE_ENTRIES - 1)]
    }

    /// Converts frame-buffer pixels to RGBA8888. Stops at whichever of `frame` or
    /// `out` (4 bytes per pixel) ends first.
    pub fn to_rgba(&self, frame: &[u16], out: &mut [u8]) {
        // Eight pixels per outer step: the inner loops have a constant trip count, so they
        // unroll into straight loads and stores without per-pixel bounds checks.
        let convert = |pixels: &[u16], rgba: &mut [u8]| {
            for (&pixel, rgba) in pixels.iter().zip(rgba.chunks_exact_mut(4)) {
                rgba.copy_from_slice(&self.rgba[usize::from(pixel) & (PALETTE_ENTRIES - 1)]);
            }
        };
        let pixels = frame.len().min(out.len() / 4);
        let whole = pixels / 8 * 8;
        let (frame_groups, frame_rest) = frame[..pixels].split_at(whole);
        let (out_groups, out_rest) = out[..pixels * 4].split_at_mut(whole * 4);
        for (pixels, rgba) in frame_groups
            .chunks_exact(8)
            .zip(out_groups.chunks_exact_mut(32))
        {
            // Chunks of exactly 8 and 32: the conversions cannot fail.
            if let (Ok(pixels), Ok(rgba)) = (
                <&[u16; 8]>::try_from(pixels),
                <&mut [u8; 32]>::try_from(rgba),
            ) {
                convert(pixels, rgba);
            }
        }
        convert(frame_rest, out_rest);
    }
}

/// Emphasis for 64-colour palettes: with one or two bits set, the channels whose bit is
/// clear are dimmed; with all three set, everything is. `$xE/$xF` stay black.
fn approximate_emphasis(rgb: [u8; 3], colour: u8, emphasis: u8) -> [u8; 3] {
    if emphasis == 0 || colour & 0x0F >= 0x0E {
        return rgb;
    }
    let mut out = rgb;
    for (channel, value) in out.iter_mut().enumerate() {
        if emphasis == 7 || emphasis & (1 << channel) == 0 {
            *value = (f64::from(*value) * EMPHASIS_ATTENUATION).round() as u8;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greys_and_black_follow_the_signal_levels() {
        let palette = Palette::ntsc();
        assert_eq!(palette.rgb(0x20), [255, 255, 255]);
        assert_eq!(palette.rgb(0x30), [255, 255, 255]);
        assert_eq!(palette.rgb(0x0F), [0, 0, 0]);
        assert_eq!(palette.rgb(0x1D), [0, 0, 0]);
        assert_eq!(palette.rgb(0x0D), [0, 0, 0], "blacker than black clamps");
        // $00: (1.090 - 0.518) / 1.442 of white, a grey.
        let grey = palette.rgb(0x00);
        assert_eq!(grey[0], grey[1]);
        assert_eq!(grey[1], grey[2]);
        assert!((98..=104).contains(&grey[0]), "{grey:?}");
    }

    #[test]
    fn hues_land_where_the_wiki_chart_has_them() {
        let palette = Palette::ntsc();
        let [r, g, b] = palette.rgb(0x12);
        assert!(b > r && b > g, "$12 is blue: {:?}", [r, g, b]);
        let [r, g, b] = palette.rgb(0x16);
        assert!(r > g && r > b, "$16 is red: {:?}", [r, g, b]);
        let [r, g, b] = palette.rgb(0x1A);
        assert!(g > r && g > b, "$1A is green: {:?}", [r, g, b]);
        let [r, g, b] = palette.rgb(0x28);
        assert!(r > b && g > b, "$28 is yellow-orange: {:?}", [r, g, b]);
    }

    #[test]
    fn emphasis_darkens_other_hues() {
        let palette = Palette::ntsc();
        let plain = palette.rgb(0x20);
        let red_emphasis = palette.rgb(0x20 | (1 << 6));
        assert!(red_emphasis[0] >= red_emphasis[1] && red_emphasis[0] >= red_emphasis[2]);
        assert!(red_emphasis[1] < plain[1]);
        let all = palette.rgb(0x20 | (7 << 6));
        assert!(all.iter().all(|&c| c < 255));
        assert_eq!(palette.rgb(0x0F | (7 << 6)), [0, 0, 0]);
    }

    #[test]
    fn pal_files_of_both_sizes_load_and_others_are_rejected() {
        let mut small = vec![0u8; 192];
        small[3 * 0x21..3 * 0x21 + 3].copy_from_slice(&[10, 20, 30]);
        let palette = Palette::from_pal_bytes(&small).unwrap();
        assert_eq!(palette.rgb(0x21), [10, 20, 30]);
        assert_eq!(
            palette.rgb(0x21 | (1 << 6)),
            [10, 15, 22],
            "red emphasis dims green and blue"
        );

        let full: Vec<u8> = (0..1536).map(|i| (i % 251) as u8).collect();
        let palette = Palette::from_pal_bytes(&full).unwrap();
        let entry = 5 * 64 + 7;
        assert_eq!(
            palette.rgb(entry as u16),
            [full[entry * 3], full[entry * 3 + 1], full[entry * 3 + 2]]
        );

        let err = Palette::from_pal_bytes(&[0; 100]).unwrap_err();
        assert_eq!(err, PaletteError::InvalidSize(100));
        assert!(err.to_string().contains("192"));
    }

    #[test]
    fn to_rgba_writes_opaque_pixels() {
        let palette = Palette::ntsc();
        let frame = [0x20u16, 0x0F];
        let mut out = [0u8; 8];
        palette.to_rgba(&frame, &mut out);
        assert_eq!(out, [255, 255, 255, 255, 0, 0, 0, 255]);
    }

    #[test]
    fn to_rgba_converts_every_pixel_and_stops_at_the_shorter_buffer() {
        let palette = Palette::ntsc();
        let frame: Vec<u16> = (0..21u16).map(|i| i * 23 % 512).collect();
        let expected = |pixels: usize| -> Vec<u8> {
            frame[..pixels]
                .iter()
                .flat_map(|&pixel| {
                    let [red, green, blue] = palette.rgb(pixel);
                    [red, green, blue, 255]
                })
                .collect()
        };
        let mut out = vec![0u8; 21 * 4];
        palette.to_rgba(&frame, &mut out);
        assert_eq!(out, expected(21));
        // A shorter output (here 13 pixels and 2 bytes) is filled as far as whole pixels go.
        let mut short = vec![0u8; 13 * 4 + 2];
        palette.to_rgba(&frame, &mut short);
        assert_eq!(short[..13 * 4], expected(13)[..]);
        assert_eq!(short[13 * 4..], [0, 0]);
        // A shorter frame leaves the rest of the output alone.
        let mut long = vec![7u8; 30 * 4];
        palette.to_rgba(&frame, &mut long);
        assert_eq!(long[..21 * 4], expected(21)[..]);
        assert!(long[21 * 4..].iter().all(|&byte| byte == 7));
    }
}
