//! The picture as NumPy arrays: palette indices, the raw 9-bit pixels, and RGB through a
//! palette. Each conversion writes into a buffer the caller owns: a new NumPy array
//! (`unfilled_array`), or one console's slice of a batch's array, filled on a worker thread.

use nes::{Palette, SCREEN_HEIGHT, SCREEN_WIDTH};
use numpy::ndarray::Dimension;
use numpy::{PyArray, PyArrayMethods, PyReadwriteArray};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;

const PIXELS: usize = SCREEN_WIDTH * SCREEN_HEIGHT;

/// `numpy.empty`, looked up once.
static NUMPY_EMPTY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A new `uint8` NumPy array of `shape` whose bytes are left as they were
/// (`numpy.empty`), for a picture that the caller writes whole before Python sees it.
///
/// Why not a zeroed `Vec` handed over to NumPy: in a batch the zeroing ran on the calling
/// thread alone, before the workers started, and left the pictures' lines in that core's
/// cache for the other core to fetch back. Measured on an 8-console batch of RGB pictures
/// on 2 threads, a call that runs no frames: 165 us with the zeroing, 107 us without.
pub(crate) fn unfilled_array<'py, D: Dimension>(
    py: Python<'py>,
    shape: &[usize],
) -> PyResult<Bound<'py, PyArray<u8, D>>> {
    let empty = NUMPY_EMPTY.import(py, "numpy", "empty")?;
    let array = empty.call1((PyTuple::new(py, shape)?, "uint8"))?;
    Ok(array.cast_into::<PyArray<u8, D>>()?)
}

/// Write access to an array made by `unfilled_array`, for filling it.
pub(crate) fn writable<'py, D: Dimension>(
    array: &Bound<'py, PyArray<u8, D>>,
) -> PyResult<PyReadwriteArray<'py, u8, D>> {
    array
        .try_readwrite()
        .map_err(|error| PyRuntimeError::new_err(format!("picture array busy: {error}")))
}

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
