//! `Console`: one NES for Python.

use nes::{Nes, Palette, SCREEN_HEIGHT, SCREEN_WIDTH};
use numpy::ndarray::Array2;
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::picture::{fill_indices, unfilled_array, writable, RgbTable};
use crate::{guard, rom_image, state_bytes, tetris, Start};

/// Audio kept between `audio_samples()` calls at most (about 87 s at 48 kHz): a caller that
/// turned audio on and never reads it must not fill memory; the oldest samples go first.
const MAX_BUFFERED_SAMPLES: usize = 1 << 22;

/// One NES console with a cartridge inserted.
///
/// `Console(rom, *, power_on="hardware", power_on_ram=None, region=None, sample_rate=0)`
///
/// `rom` is a path (`str` or `os.PathLike`) or the bytes of an iNES / NES 2.0 image. The
/// console powers on as `nes run ROM` does by default (the hardware timeline, CPU RAM
/// zeroed, the region the header names), so after `step(frames=N)` from power-on the
/// picture and RAM are those of `nes run ROM --frames N`. `power_on="fceux"` starts on
/// FCEUX 2.6.5's timeline instead (see the project README); `power_on_ram` is one of
/// `"zero"`, `"ones"`, `"fceux"`, `"random:SEED"`; `region` one of `"ntsc"`, `"pal"`,
/// `"dendy"`. `sample_rate` > 0 produces audio at that rate (0, the default, is fastest).
///
/// Raises `ValueError` for a file that is not a usable ROM (bad header, unsupported mapper,
/// truncated), `OSError` when the file cannot be read, `TypeError` for another kind of
/// argument.
#[pyclass(module = "cyclenes._native")]
#[derive(Debug)]
pub struct Console {
    nes: Nes,
    start: Start,
    rgb: RgbTable,
    /// The RAM NumPy array Python holds: between calls it *is* the console's RAM (see
    /// [`Console::ram`]); each call copies it in first and back out last.
    ram: Py<PyArray1<u8>>,
    audio: Vec<f32>,
    sample_rate: u32,
}

impl Console {
    pub(crate) fn from_nes(py: Python<'_>, nes: Nes, start: Start, rgb: RgbTable) -> Console {
        let ram = PyArray1::from_slice(py, nes.ram()).unbind();
        Console {
            nes,
            start,
            rgb,
            ram,
            audio: Vec::new(),
            sample_rate: 0,
        }
    }

    /// Python's writes to the RAM array reach the console.
    fn ram_in(&mut self, py: Python<'_>) -> PyResult<()> {
        let array = self.ram.bind(py);
        let view = array
            .try_readonly()
            .map_err(|error| PyRuntimeError::new_err(format!("RAM array busy: {error}")))?;
        let bytes = view
            .as_slice()
            .map_err(|error| PyRuntimeError::new_err(format!("RAM array: {error}")))?;
        self.nes.ram_mut().copy_from_slice(bytes);
        Ok(())
    }

    /// The console's RAM reaches the array Python holds.
    fn ram_out(&mut self, py: Python<'_>) -> PyResult<()> {
        let array = self.ram.bind(py);
        let mut view = array
            .try_readwrite()
            .map_err(|error| PyRuntimeError::new_err(format!("RAM array busy: {error}")))?;
        let bytes = view
            .as_slice_mut()
            .map_err(|error| PyRuntimeError::new_err(format!("RAM array: {error}")))?;
        bytes.copy_from_slice(self.nes.ram());
        Ok(())
    }

    /// Runs `work` on the console with the GIL released, RAM synchronised around it and a
    /// panic turned into `RuntimeError`.
    fn run<T: Send>(
        &mut self,
        py: Python<'_>,
        what: &str,
        work: impl FnOnce(&mut Nes) -> T + Send,
    ) -> PyResult<T> {
        self.ram_in(py)?;
        let nes = &mut self.nes;
        let result = py.detach(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(nes)))
                .map_err(|payload| panic_message(&*payload))
        });
        self.collect_audio();
        self.ram_out(py)?;
        result.map_err(|message| {
            PyRuntimeError::new_err(format!("internal error while {what}: {message}"))
        })
    }

    fn collect_audio(&mut self) {
        if self.sample_rate == 0 {
            return;
        }
        self.nes.take_audio_samples(&mut self.audio);
        self.trim_audio();
    }

    fn trim_audio(&mut self) {
        if self.audio.len() > MAX_BUFFERED_SAMPLES {
            let excess = self.audio.len() - MAX_BUFFERED_SAMPLES;
            self.audio.drain(..excess);
        }
    }
}

pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

#[pymethods]
impl Console {
    #[new]
    #[pyo3(signature = (rom, *, power_on = "hardware", power_on_ram = None, region = None, sample_rate = 0))]
    fn new(
        py: Python<'_>,
        rom: &Bound<'_, PyAny>,
        power_on: &str,
        power_on_ram: Option<&str>,
        region: Option<&str>,
        sample_rate: u32,
    ) -> PyResult<Console> {
        let start = Start::parse(power_on, power_on_ram, region)?;
        let image = rom_image(rom)?;
        let nes = py.detach(|| start.power_on(&image))?;
        let mut console = Console::from_nes(py, nes, start, RgbTable::of(&Palette::ntsc()));
        console.set_sample_rate(sample_rate)?;
        Ok(console)
    }

    /// Runs `frames` frames with `buttons` held on controller 1 (and `buttons2` on
    /// controller 2), releasing the GIL meanwhile. A button mask has bit 0 A, 1 B, 2 Select,
    /// 3 Start, 4 Up, 5 Down, 6 Left, 7 Right (`cyclenes.Button`). The buttons stay held
    /// after the call until the next one changes them.
    ///
    /// Frame numbering is the CLI's: the N-th frame from power-on ends with the N-th picture
    /// (`nes run ROM --frames N`), and `frame_count` counts them.
    #[pyo3(signature = (buttons = 0, frames = 1, buttons2 = 0))]
    fn step(&mut self, py: Python<'_>, buttons: i64, frames: u32, buttons2: i64) -> PyResult<()> {
        let (pad1, pad2) = (crate::buttons(buttons)?, crate::buttons(buttons2)?);
        // The APU holds a quarter of a second of audio: with audio on, it is taken after
        // every frame.
        let mut audio = std::mem::take(&mut self.audio);
        let with_audio = self.sample_rate != 0;
        let audio = self.run(py, "running frames", move |nes| {
            nes.set_buttons(0, pad1);
            nes.set_buttons(1, pad2);
            for _ in 0..frames {
                nes.run_frame();
                if with_audio {
                    nes.take_audio_samples(&mut audio);
                }
            }
            audio
        })?;
        // (`run` may have collected a last few samples meanwhile: they come after.)
        let mut audio = audio;
        audio.append(&mut self.audio);
        self.audio = audio;
        self.trim_audio();
        Ok(())
    }

    /// Presses the console's reset button (a soft reset: RAM and the cartridge keep their
    /// contents). The frame count goes on.
    fn reset(&mut self, py: Python<'_>) -> PyResult<()> {
        self.run(py, "resetting", Nes::soft_reset)
    }

    /// Turns the console off and on again (power-on RAM as `power_on_ram` says; the lag
    /// count restarts, the frame count goes on, as in the CLI's FM2 power commands).
    fn power(&mut self, py: Python<'_>) -> PyResult<()> {
        self.run(py, "power cycling", Nes::power_cycle)
    }

    /// Frames completed since power-on (`nes run --frames N` stops at `frame_count == N`).
    #[getter]
    fn frame_count(&self) -> u64 {
        self.nes.frame_count()
    }

    /// Lag frames since power-on: frames in which the game never read a controller.
    #[getter]
    fn lag_count(&self) -> u64 {
        self.nes.lag_count()
    }

    /// Whether the last frame was a lag frame.
    #[getter]
    fn lagged(&self) -> bool {
        self.nes.lagged()
    }

    /// CPU RAM ($0000-$07FF) as a writable `uint8` NumPy array of 2048 bytes. The same
    /// array every time: after any call it holds the console's RAM, and what Python writes
    /// into it is what the console's RAM holds when the next call runs (each call copies
    /// the 2 KiB in and out, which costs far less than a frame).
    #[getter]
    fn ram(&self, py: Python<'_>) -> Py<PyArray1<u8>> {
        self.ram.clone_ref(py)
    }

    /// The byte the CPU would read at `address` (0-65535), without side effects.
    fn peek(&mut self, py: Python<'_>, address: u16) -> PyResult<u8> {
        self.ram_in(py)?;
        Ok(self.nes.peek(address))
    }

    /// Writes `value` at CPU `address` as a debugger would: RAM directly, registers through
    /// the bus. Takes no time.
    fn poke(&mut self, py: Python<'_>, address: u16, value: u8) -> PyResult<()> {
        self.run(py, "poking", move |nes| nes.poke(address, value))
    }

    /// The last picture as palette indices: `uint8`, shape (240, 256), values 0-63.
    fn screen<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let array = unfilled_array(py, &[SCREEN_HEIGHT, SCREEN_WIDTH])?;
        fill_indices(self.nes.frame_buffer(), writable(&array)?.as_slice_mut()?);
        Ok(array)
    }

    /// The last picture as the PPU outputs it: `uint16`, shape (240, 256), each pixel the
    /// palette index (bits 0-5) and the emphasis bits (6-8), as the CLI's raw9 captures and
    /// its `frame sha1` hash them (little-endian bytes in raster order).
    fn raw_screen<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<u16>> {
        let array = Array2::from_shape_vec(
            (SCREEN_HEIGHT, SCREEN_WIDTH),
            self.nes.frame_buffer().to_vec(),
        )
        .expect("the picture is 256x240");
        PyArray2::from_owned_array(py, array)
    }

    /// The last picture in RGB through the palette (`set_palette`; default the built-in
    /// NTSC one): `uint8`, shape (240, 256, 3).
    fn rgb<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<u8>>> {
        let array = unfilled_array(py, &[SCREEN_HEIGHT, SCREEN_WIDTH, 3])?;
        self.rgb
            .fill(self.nes.frame_buffer(), writable(&array)?.as_slice_mut()?);
        Ok(array)
    }

    /// Uses the palette in `pal` (the bytes of a 192-byte or 1536-byte `.pal` file) for
    /// `rgb()`; `None` goes back to the built-in NTSC palette. Raises `ValueError` for
    /// another size.
    #[pyo3(signature = (pal = None))]
    fn set_palette(&mut self, pal: Option<Vec<u8>>) -> PyResult<()> {
        let palette = match pal {
            None => Palette::ntsc(),
            Some(bytes) => Palette::from_pal_bytes(&bytes)
                .map_err(|error| PyValueError::new_err(error.to_string()))?,
        };
        self.rgb = RgbTable::of(&palette);
        Ok(())
    }

    /// Audio samples produced since the last call (mono, -1.0..1.0, `float32`), at
    /// `sample_rate` samples per second. Empty while `sample_rate` is 0.
    fn audio_samples<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        self.collect_audio();
        PyArray1::from_vec(py, std::mem::take(&mut self.audio))
    }

    /// Audio output rate in samples per second (0: no audio, the fastest).
    #[getter]
    fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    #[setter]
    fn set_sample_rate(&mut self, hz: u32) -> PyResult<()> {
        if hz != 0 && !(8_000..=192_000).contains(&hz) {
            return Err(PyValueError::new_err(format!(
                "sample_rate must be 0 (off) or 8000-192000, not {hz}"
            )));
        }
        self.sample_rate = hz;
        self.nes.set_audio_sample_rate(hz);
        self.audio.clear();
        Ok(())
    }

    /// A save state of the whole console (the project's format: a header naming the ROM,
    /// then every chip's state), as `bytes`.
    fn save_state<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.ram_in(py)?;
        let state = guard("saving a state", || self.nes.save_state())?;
        Ok(PyBytes::new(py, &state))
    }

    /// Restores a state made by `save_state` for the same ROM (frame and lag counts
    /// included). Raises `ValueError` for a state of another ROM or format version, or a
    /// truncated, corrupt or edited one; the console is then left as it was.
    fn load_state(&mut self, py: Python<'_>, state: Vec<u8>) -> PyResult<()> {
        state_bytes(&state)?;
        self.ram_in(py)?;
        let loaded = guard("loading a state", || self.nes.load_state(&state))?;
        self.audio.clear();
        self.ram_out(py)?;
        loaded.map_err(|error| PyValueError::new_err(format!("save state refused: {error}")))
    }

    /// A new console in exactly this one's state (RAM, picture, counters): for tree search.
    fn clone(&mut self, py: Python<'_>) -> PyResult<Console> {
        self.ram_in(py)?;
        let mut copy = Console::from_nes(py, self.nes.clone(), self.start, self.rgb.clone());
        copy.sample_rate = self.sample_rate;
        Ok(copy)
    }

    fn __copy__(&mut self, py: Python<'_>) -> PyResult<Console> {
        self.clone(py)
    }

    fn __deepcopy__(&mut self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Console> {
        self.clone(py)
    }

    /// The console's region: "ntsc", "pal" or "dendy".
    #[getter]
    fn region(&self) -> &'static str {
        nes::variant_name(self.nes.region())
    }

    /// What the cartridge header says and the ROM's hashes, as a dict: `mapper`,
    /// `submapper`, `board`, `prg_rom_size`, `chr_rom_size`, `prg_ram_size`, `chr_ram_size`,
    /// `battery`, `mirroring`, `md5` (of the file), `prg_chr_md5` (FCEUX's ROM checksum),
    /// `sha1`.
    fn rom_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let info = self.nes.rom_info();
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let dict = PyDict::new(py);
        dict.set_item("mapper", info.mapper)?;
        dict.set_item("submapper", info.submapper)?;
        dict.set_item("board", info.board_name)?;
        dict.set_item("prg_rom_size", info.prg_rom_len)?;
        dict.set_item("chr_rom_size", info.chr_rom_len)?;
        dict.set_item("prg_ram_size", info.prg_ram_len + info.prg_nvram_len)?;
        dict.set_item("chr_ram_size", info.chr_ram_len + info.chr_nvram_len)?;
        dict.set_item("battery", info.battery)?;
        dict.set_item("mirroring", format!("{:?}", info.mirroring).to_lowercase())?;
        dict.set_item("md5", hex(&info.file_md5))?;
        dict.set_item("prg_chr_md5", hex(&info.prg_chr_md5))?;
        dict.set_item("sha1", hex(&info.file_sha1))?;
        Ok(dict)
    }

    /// NES Tetris: steers the falling piece to orientation ID `piece_id` (0-18, the game's
    /// own numbering) and pivot column `x` (0-9), drops it until it locks and runs until the
    /// next piece is under control or the game ends, within `max_frames` frames (GIL
    /// released). Returns `(frames, reached, locked, game_over)`. See `cyclenes.tetris`.
    /// (With audio on, only the last quarter second of a placement's audio is kept: the
    /// driver is meant for agents, which run without sound.)
    #[pyo3(signature = (piece_id, x, max_frames = 2000))]
    fn tetris_place(
        &mut self,
        py: Python<'_>,
        piece_id: u8,
        x: u8,
        max_frames: u32,
    ) -> PyResult<(u32, bool, bool, bool)> {
        let placement = self.run(py, "placing a Tetris piece", move |nes| {
            tetris::place(nes, piece_id, x, max_frames)
        })?;
        Ok((
            placement.frames,
            placement.reached,
            placement.locked,
            placement.game_over,
        ))
    }

    fn __repr__(&self) -> String {
        let info = self.nes.rom_info();
        format!(
            "<cyclenes.Console mapper {} ({}) {} frame {}>",
            info.mapper,
            info.board_name,
            nes::variant_name(self.nes.region()),
            self.nes.frame_count()
        )
    }
}
