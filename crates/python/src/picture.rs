//! The picture as NumPy arrays: palette indices, the raw 9-bit pixels, and RGB through a
//! palette. Each conversion writes into a buffer the caller owns (a `Vec` that then becomes
//! the NumPy array without another copy, or a slice of a batch's buffer filled on a worker
//! thread).

use nes::{Palette, SCREEN_HEIGHT, SCREEN_WIDTH};

pub(crate) const PIXELS: usize = SCREEN_WIDTH * SCREEN_HEIGHT;

/// An RGB colour for each of the 512 9-bit pixel values, looked up once per pixel.
#[derive(Debug, Clone)]
pub(crate) struct RgbTable(Box<[[u8; 3]; 512]>);

impl RgbTable {
    pub(crate) fn of(palette: &Palette) -> RgbTable {
        let mut table = Box::new([[0u8; 3]; 512]);
        for (pixel, colour) in table.iter_mut().enumerate() {
            *colour = palette.rgb(pixel as u16);
        }
        RgbTable(table)
    }

    /// Writes 256x240x3 bytes of `frame` into `out` (which holds exactly that many).
    pub(crate) fn fill(&self, frame: &[u16], out: &mut [u8]) {
        for (&pixel, rgb) in frame.iter().zip(out.chunks_exact_mut(3)) {
            rgb.copy_from_slice(&self.0[usize::from(pixel) & 511]);
        }
    }
}

/// The palette index of each pixel (0-63: the colour the PPU chose, after greyscale, without
/// the emphasis bits), one byte per pixel.
pub(crate) fn fill_indices(frame: &[u16], out: &mut [u8]) {
    for (&pixel, index) in frame.iter().zip(out.iter_mut()) {
        *index = (pixel & 0x3F) as u8;
    }
}

/// What a batch's observation holds for each console after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Render {
    /// No picture (RAM observations).
    None,
    /// Palette indices, 240x256 bytes.
    Indices,
    /// RGB, 240x256x3 bytes.
    Rgb,
}

impl Render {
    pub(crate) fn parse(name: &str) -> pyo3::PyResult<Render> {
        match name {
            "none" => Ok(Render::None),
            "index" => Ok(Render::Indices),
            "rgb" => Ok(Render::Rgb),
            other => Err(pyo3::exceptions::PyValueError::new_err(format!(
                "render must be 'rgb', 'index' or 'none', not {other:?}"
            ))),
        }
    }

    /// Bytes of one console's picture.
    pub(crate) fn bytes(self) -> usize {
        match self {
            Render::None => 0,
            Render::Indices => PIXELS,
            Render::Rgb => PIXELS * 3,
        }
    }

    pub(crate) fn fill(self, table: &RgbTable, frame: &[u16], out: &mut [u8]) {
        match self {
            Render::None => {}
            Render::Indices => fill_indices(frame, out),
            Render::Rgb => table.fill(frame, out),
        }
    }
}
