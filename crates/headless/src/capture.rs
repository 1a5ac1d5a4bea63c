//! Frame captures: a picture saved as `NAME_fN.png` (through a palette) and `NAME_fN.raw9` (the
//! PPU's own 9-bit output), the SHA-256 that identifies a picture independently of palettes, and
//! the pixel-by-pixel comparison of two pictures.
//!
//! The raw9 format: 256x240 pixels in raster order (left to right, top to bottom), each a
//! little-endian u16 whose low 9 bits are the PPU's output: the palette index (after greyscale)
//! in bits 0-5 and the `$2001` emphasis bits 5/6/7 in bits 6/7/8. The upper 7 bits are zero.

use std::path::{Path, PathBuf};

use nes::{Palette, SCREEN_HEIGHT, SCREEN_WIDTH};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::output::{self, OutputError};

/// Pixels in one picture.
pub const PIXELS: usize = SCREEN_WIDTH * SCREEN_HEIGHT;
/// Size of a `.raw9` file: two bytes per pixel.
pub const RAW9_LEN: usize = PIXELS * 2;
/// The bits of a pixel the PPU produces (6 colour bits, 3 emphasis bits).
pub const PIXEL_BITS: u16 = 0x1FF;

/// The palette for PNGs: a `.pal` file (64 or 512 colours), or the built-in NTSC palette.
pub fn load_palette(path: Option<&Path>) -> Result<Palette, crate::Error> {
    match path {
        None => Ok(Palette::ntsc()),
        Some(path) => {
            let bytes = crate::limits::read_limited(path, &crate::limits::PALETTE)?;
            Palette::from_pal_bytes(&bytes).map_err(|source| crate::Error::Palette {
                path: path.to_path_buf(),
                source,
            })
        }
    }
}

/// Encode a picture as raw9 bytes.
pub fn raw9_bytes(pixels: &[u16]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(pixels.len() * 2);
    for &pixel in pixels {
        bytes.extend_from_slice(&(pixel & PIXEL_BITS).to_le_bytes());
    }
    bytes
}

/// Decode raw9 bytes; the error says what is wrong (size, bits above the ninth).
pub fn parse_raw9(bytes: &[u8]) -> Result<Vec<u16>, String> {
    if bytes.len() != RAW9_LEN {
        return Err(format!(
            "a raw9 picture is {RAW9_LEN} bytes (256x240 little-endian u16), not {}",
            bytes.len()
        ));
    }
    let pixels: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .collect();
    if let Some(index) = pixels.iter().position(|&pixel| pixel & !PIXEL_BITS != 0) {
        return Err(format!(
            "pixel {index} (x {}, y {}) has bits above the ninth set: {:#06x}",
            index % SCREEN_WIDTH,
            index / SCREEN_WIDTH,
            pixels[index]
        ));
    }
    Ok(pixels)
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::hex(&Sha256::digest(bytes))
}

/// Parse a comma-separated list of frame numbers (`120,300,450`), counted from 1. The result is
/// sorted and free of duplicates.
pub fn parse_frame_list(text: &str) -> Result<Vec<u64>, String> {
    let mut frames = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!(
                "`{text}` has an empty entry (expected frame numbers separated by commas)"
            ));
        }
        let frame: u64 = part
            .parse()
            .map_err(|_| format!("`{part}` is not a frame number"))?;
        if frame == 0 {
            return Err("frames are counted from 1: frame 0 does not exist".to_owned());
        }
        frames.push(frame);
    }
    frames.sort_unstable();
    frames.dedup();
    Ok(frames)
}

/// A `--capture` list as clap parses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameList(pub Vec<u64>);

impl FrameList {
    pub fn parse(text: &str) -> Result<FrameList, String> {
        parse_frame_list(text).map(FrameList)
    }
}

/// The file name (without extension) of frame `frame` of `name`: `NAME_fN`.
pub fn capture_stem(name: &str, frame: u64) -> String {
    format!("{name}_f{frame}")
}

/// The files of one capture and the picture's hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureFiles {
    pub png: PathBuf,
    pub raw9: PathBuf,
    /// SHA-256 of the raw9 bytes.
    pub sha256: String,
}

/// Write `NAME_fN.png` (through `palette`) and `NAME_fN.raw9` into `dir`, each atomically.
pub fn write_capture(
    dir: &Path,
    name: &str,
    frame: u64,
    pixels: &[u16],
    palette: &Palette,
) -> Result<CaptureFiles, OutputError> {
    let stem = capture_stem(name, frame);
    let png = dir.join(format!("{stem}.png"));
    let raw9 = dir.join(format!("{stem}.raw9"));
    let raw = raw9_bytes(pixels);
    output::write_atomically(&raw9, &raw)?;
    let mut rgba = vec![0; pixels.len() * 4];
    palette.to_rgba(pixels, &mut rgba);
    output::save_png(&png, &rgba, SCREEN_WIDTH as u32, SCREEN_HEIGHT as u32)?;
    Ok(CaptureFiles {
        png,
        raw9,
        sha256: sha256_hex(&raw),
    })
}

/// How two pictures differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameDiff {
    /// Pixels whose raw value differs.
    pub changed_pixels: usize,
    /// The bounding box of the changed pixels: `[left, top, right, bottom]`, inclusive.
    pub changed_area: Option<[usize; 4]>,
}

/// The colour changed pixels get in a diff image: saturated magenta, which stands out against
/// the dimmed grey the unchanged pixels are drawn in.
pub const DIFF_HIGHLIGHT: [u8; 3] = [255, 0, 255];

/// Compare two pictures of the same size. Returns the counts and an RGBA diff image: unchanged
/// pixels as a dim grey version of `new` (through `palette`), changed ones in [`DIFF_HIGHLIGHT`].
pub fn diff_frames(old: &[u16], new: &[u16], palette: &Palette) -> (FrameDiff, Vec<u8>) {
    let mut rgba = Vec::with_capacity(new.len() * 4);
    let mut changed_pixels = 0;
    let mut area: Option<[usize; 4]> = None;
    for (index, (&before, &after)) in old.iter().zip(new).enumerate() {
        if before == after {
            let [r, g, b] = palette.rgb(after & PIXEL_BITS);
            // Luma, then dimmed to a third so the highlight is what the eye finds first.
            let luma = (u32::from(r) * 299 + u32::from(g) * 587 + u32::from(b) * 114) / 1000;
            let grey = (luma / 3 + 16) as u8;
            rgba.extend_from_slice(&[grey, grey, grey, 255]);
        } else {
            changed_pixels += 1;
            let (x, y) = (index % SCREEN_WIDTH, index / SCREEN_WIDTH);
            area = Some(match area {
                None => [x, y, x, y],
                Some([left, top, right, bottom]) => {
                    [left.min(x), top.min(y), right.max(x), bottom.max(y)]
                }
            });
            let [r, g, b] = DIFF_HIGHLIGHT;
            rgba.extend_from_slice(&[r, g, b, 255]);
        }
    }
    (
        FrameDiff {
            changed_pixels,
            changed_area: area,
        },
        rgba,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic picture using every colour, every emphasis combination and both extremes.
    fn synthetic_frame() -> Vec<u16> {
        (0..PIXELS)
            .map(|index| {
                let (x, y) = (index % SCREEN_WIDTH, index / SCREEN_WIDTH);
                ((x / 4) as u16 & 0x3F) | (((y / 30) as u16 & 7) << 6)
            })
            .collect()
    }

    #[test]
    fn raw9_is_little_endian_u16_in_raster_order() {
        let mut frame = vec![0u16; PIXELS];
        frame[0] = 0x1FF; // top left: colour $3F, all three emphasis bits
        frame[1] = 0x041; // colour $01 with red emphasis ($2001 bit 5 -> bit 6)
        frame[SCREEN_WIDTH] = 0x100; // first pixel of line 1: blue emphasis only
        frame[PIXELS - 1] = 0x0AB & PIXEL_BITS;
        let bytes = raw9_bytes(&frame);
        assert_eq!(bytes.len(), RAW9_LEN);
        assert_eq!(&bytes[0..4], &[0xFF, 0x01, 0x41, 0x00]);
        assert_eq!(
            &bytes[SCREEN_WIDTH * 2..SCREEN_WIDTH * 2 + 2],
            &[0x00, 0x01]
        );
        assert_eq!(&bytes[RAW9_LEN - 2..], &[0xAB, 0x00]);
        assert_eq!(parse_raw9(&bytes).unwrap(), frame);
    }

    #[test]
    fn raw9_hash_is_sha256_of_the_bytes() {
        // Expected values computed outside this code base (Python's hashlib over the same
        // little-endian layout), so both the byte layout and the hash are checked.
        assert_eq!(
            sha256_hex(&raw9_bytes(&synthetic_frame())),
            "ca8f800f3ccb10ebbc72aad48faacdf90e52d3d76bdcfbd2a79a2774a6b62f73"
        );
        assert_eq!(
            sha256_hex(&raw9_bytes(&vec![0; PIXELS])),
            "6d7bd1fa33ee71b2d2c4fc8062f6c4b09804b84449ff73a687fe7cfd568d0625"
        );
        let mut changed = synthetic_frame();
        changed[12_345] ^= 0x40; // one emphasis bit on one pixel
        assert_ne!(
            sha256_hex(&raw9_bytes(&synthetic_frame())),
            sha256_hex(&raw9_bytes(&changed))
        );
    }

    #[test]
    fn raw9_rejects_wrong_sizes_and_high_bits() {
        assert!(parse_raw9(&[0; 10]).unwrap_err().contains("122880"));
        let mut bytes = vec![0; RAW9_LEN];
        bytes[2 * 300 + 1] = 0x02; // pixel 300 = 0x0200
        let error = parse_raw9(&bytes).unwrap_err();
        assert!(error.contains("pixel 300 (x 44, y 1)"), "{error}");
    }

    #[test]
    fn frame_lists_are_sorted_deduplicated_and_checked() {
        assert_eq!(
            parse_frame_list("300, 120,120,450").unwrap(),
            [120, 300, 450]
        );
        assert_eq!(parse_frame_list("1").unwrap(), [1]);
        assert!(parse_frame_list("0")
            .unwrap_err()
            .contains("counted from 1"));
        assert!(parse_frame_list("1,,2")
            .unwrap_err()
            .contains("empty entry"));
        assert!(parse_frame_list("ten").unwrap_err().contains("`ten`"));
        assert!(parse_frame_list("").is_err());
    }

    #[test]
    fn capture_writes_png_and_raw9_with_the_hash() {
        let dir = tempfile::tempdir().unwrap();
        let frame = synthetic_frame();
        let palette = Palette::ntsc();
        let files = write_capture(dir.path(), "game", 120, &frame, &palette).unwrap();
        assert_eq!(files.png, dir.path().join("game_f120.png"));
        assert_eq!(files.raw9, dir.path().join("game_f120.raw9"));
        let raw = std::fs::read(&files.raw9).unwrap();
        assert_eq!(parse_raw9(&raw).unwrap(), frame);
        assert_eq!(files.sha256, sha256_hex(&raw));

        let decoder = png::Decoder::new(std::io::Cursor::new(std::fs::read(&files.png).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut rgba = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut rgba).unwrap();
        assert_eq!((info.width, info.height), (256, 240));
        let pixel = 37 * SCREEN_WIDTH + 200;
        let [r, g, b] = palette.rgb(frame[pixel]);
        assert_eq!(&rgba[pixel * 4..pixel * 4 + 4], &[r, g, b, 255]);
    }

    #[test]
    fn diff_counts_and_highlights_changed_pixels() {
        let old = synthetic_frame();
        let mut new = old.clone();
        for index in [
            5 * SCREEN_WIDTH + 10,
            7 * SCREEN_WIDTH + 3,
            9 * SCREEN_WIDTH + 20,
        ] {
            new[index] ^= 0x01;
        }
        let (diff, rgba) = diff_frames(&old, &new, &Palette::ntsc());
        assert_eq!(diff.changed_pixels, 3);
        assert_eq!(diff.changed_area, Some([3, 5, 20, 9]));
        let at = |index: usize| &rgba[index * 4..index * 4 + 3];
        assert_eq!(at(7 * SCREEN_WIDTH + 3), &DIFF_HIGHLIGHT);
        let unchanged = at(0);
        assert_eq!(unchanged[0], unchanged[1], "unchanged pixels are grey");
        assert_ne!(unchanged, &DIFF_HIGHLIGHT);
        let (same, _) = diff_frames(&old, &old, &Palette::ntsc());
        assert_eq!(same.changed_pixels, 0);
        assert_eq!(same.changed_area, None);
    }
}
