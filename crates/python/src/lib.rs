//! `cyclenes._native`: the Rust half of the Python package `cyclenes`.
//!
//! - [`console::Console`]: one console, with the picture, RAM, audio and save states as NumPy
//!   arrays and bytes;
//! - [`batch::ConsoleBatch`]: N consoles stepped in one call on native threads (the vector
//!   environments' engine);
//! - [`tetris`]: the NES Tetris placement driver both of them use.
//!
//! The GIL is released while frames run. Everything a user hands in (ROM bytes, save states,
//! palettes, button masks) is checked and refused with a Python exception; a panic inside the
//! emulator is caught and raised as `RuntimeError` rather than left to abort anything.

mod batch;
mod console;
mod picture;
mod tetris;

use std::panic::{catch_unwind, AssertUnwindSafe};

use nes::{Cartridge, Nes, PowerOn, PowerOnRam, Region, Timeline};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};

/// The largest ROM image accepted: the headless CLI's limit (NES 2.0's largest PRG and CHR
/// chips, 64 MiB each, a trainer and 1 MiB of miscellaneous ROM), so a wrong path such as
/// `/dev/zero` is refused at once instead of filling memory.
const MAX_ROM_BYTES: u64 = 16 + 512 + 2 * 64 * 1024 * 1024 + 1024 * 1024;

/// The largest save state accepted (a state is about 137 KB; the largest boards' RAM adds a
/// few hundred KB). Refused before any parsing.
const MAX_STATE_BYTES: usize = 64 * 1024 * 1024;

/// How a console powers on: the `power_on` and `power_on_ram` arguments, named as the CLI's
/// `--power-on` and `--power-on-ram` options name them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Start {
    power_on: PowerOn,
    region: Option<Region>,
}

impl Start {
    pub(crate) fn parse(
        power_on: &str,
        power_on_ram: Option<&str>,
        region: Option<&str>,
    ) -> PyResult<Start> {
        let timeline = match power_on {
            "hardware" => Timeline::Hardware,
            "fceux" => Timeline::Fceux,
            other => {
                return Err(PyValueError::new_err(format!(
                    "power_on must be 'hardware' or 'fceux', not {other:?}"
                )))
            }
        };
        // The CLI's defaults: zeroed RAM on the hardware timeline, FCEUX's pattern on FCEUX's.
        let ram = match power_on_ram {
            None => match timeline {
                Timeline::Hardware => PowerOnRam::Zeroed,
                Timeline::Fceux => PowerOnRam::FceuxPattern,
            },
            Some("zero") => PowerOnRam::Zeroed,
            Some("ones") => PowerOnRam::Ones,
            Some("fceux") => PowerOnRam::FceuxPattern,
            Some(text) => match text.strip_prefix("random:").map(str::parse::<u32>) {
                Some(Ok(seed)) => PowerOnRam::Random { seed },
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "power_on_ram must be 'zero', 'ones', 'fceux' or 'random:SEED' \
                         (SEED 0-4294967295), not {text:?}"
                    )))
                }
            },
        };
        let region = match region {
            None => None,
            Some(name) => Some(
                nes::parse_variant::<Region>(name)
                    .map_err(|error| PyValueError::new_err(format!("region: {error}")))?,
            ),
        };
        Ok(Start {
            power_on: PowerOn { timeline, ram },
            region,
        })
    }

    /// Powers a console on with `image` as `nes run ROM` does by default: the reference
    /// console (NES-001), the region the header names unless one was given, the board's
    /// options from the header.
    pub(crate) fn power_on(&self, image: &[u8]) -> PyResult<Nes> {
        let start = *self;
        guard("loading the ROM", || {
            let cart = Cartridge::from_ines(image)
                .map_err(|error| PyValueError::new_err(format!("not a usable ROM: {error}")))?;
            let region = start.region.unwrap_or_else(|| Region::for_rom(cart.info()));
            Ok(Nes::with_region(
                cart,
                start.power_on,
                region,
                nes::ClockAlignment::default(),
            ))
        })?
    }
}

/// The ROM image `rom` names: bytes-like (`bytes`, `bytearray`, `memoryview`) as they are, or
/// a path (`str` or `os.PathLike`) read from disk within [`MAX_ROM_BYTES`].
pub(crate) fn rom_image(rom: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(bytes) = rom.cast::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    if let Ok(bytes) = rom.cast::<PyByteArray>() {
        return Ok(bytes.to_vec());
    }
    let py = rom.py();
    let memoryview = py.import("builtins")?.getattr("memoryview")?;
    if rom.is_instance(&memoryview)? {
        return rom.call_method0("tobytes")?.extract::<Vec<u8>>();
    }
    let path: std::path::PathBuf = match py.import("os")?.getattr("fspath")?.call1((rom,)) {
        Ok(path) => path.extract()?,
        Err(_) => {
            return Err(PyTypeError::new_err(format!(
                "rom must be a path (str or os.PathLike) or bytes, not {}",
                rom.get_type().name()?
            )))
        }
    };
    read_rom_file(&path)
}

fn read_rom_file(path: &std::path::Path) -> PyResult<Vec<u8>> {
    use std::io::Read;
    let describe = |error: std::io::Error| {
        pyo3::exceptions::PyOSError::new_err(format!("{}: {error}", path.display()))
    };
    let file = std::fs::File::open(path).map_err(describe)?;
    let mut bytes = Vec::new();
    // One byte past the limit tells "too large" from "exactly the limit".
    file.take(MAX_ROM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(describe)?;
    if bytes.len() as u64 > MAX_ROM_BYTES {
        return Err(PyValueError::new_err(format!(
            "{}: ROM file too large (over {MAX_ROM_BYTES} bytes)",
            path.display()
        )));
    }
    Ok(bytes)
}

/// A save state handed in from Python, size-checked before it is parsed.
pub(crate) fn state_bytes(state: &[u8]) -> PyResult<&[u8]> {
    if state.len() > MAX_STATE_BYTES {
        return Err(PyValueError::new_err(format!(
            "save state too large ({} bytes; at most {MAX_STATE_BYTES})",
            state.len()
        )));
    }
    Ok(state)
}

/// Runs `work`, turning a panic into a `RuntimeError` naming `what` (the emulator is meant
/// never to panic; if it does, Python gets an exception, not an abort).
pub(crate) fn guard<T>(what: &str, work: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(work)).map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        PyRuntimeError::new_err(format!("internal error while {what}: {message}"))
    })
}

/// Checks a button mask from Python: one byte, bits A, B, Select, Start, Up, Down, Left,
/// Right from bit 0 (the shift register's order, `nes::Buttons`).
pub(crate) fn buttons(mask: i64) -> PyResult<nes::Buttons> {
    u8::try_from(mask)
        .map(nes::Buttons::from_bits_retain)
        .map_err(|_| PyValueError::new_err(format!("buttons must be 0-255, not {mask}")))
}

/// The Rust extension of `cyclenes`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<console::Console>()?;
    m.add_class::<batch::ConsoleBatch>()?;
    m.add("SCREEN_WIDTH", nes::SCREEN_WIDTH)?;
    m.add("SCREEN_HEIGHT", nes::SCREEN_HEIGHT)?;
    m.add("RAM_SIZE", nes::CPU_RAM_SIZE)?;
    m.add("STATE_FORMAT_VERSION", nes::STATE_FORMAT_VERSION)?;
    Ok(())
}
