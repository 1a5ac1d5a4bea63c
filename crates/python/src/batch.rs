//! `ConsoleBatch`: N consoles stepped in one call on native threads, so that Python pays its
//! call overhead once per batch (the engine of the `gymnasium.vector` environments).

use nes::{Nes, Palette, SCREEN_HEIGHT, SCREEN_WIDTH};
use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{
    PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;

use crate::console::{panic_message, Console};
use crate::picture::{Render, RgbTable};
use crate::{rom_image, state_bytes, tetris, Start};

/// N consoles of one ROM, stepped together on native threads.
///
/// `ConsoleBatch(rom, n, *, threads=None, render="rgb", power_on="hardware",
/// power_on_ram=None, region=None)`
///
/// Every console powers on as `Console(rom, ...)` does. `threads` is how many native threads
/// the batch starts for itself and keeps until it is dropped (default: the machine's cores,
/// at most `n`; with 1, the calling thread does the work); each call hands them the consoles
/// one at a time, so a thread that finishes early takes the consoles still waiting.
/// `render` is what `step` and `observe` return for each console: `"rgb"` (240x256x3),
/// `"index"` (240x256 palette indices) or `"none"`.
#[pyclass(module = "cyclenes._native")]
#[derive(Debug)]
pub struct ConsoleBatch {
    consoles: Vec<Nes>,
    start: Start,
    workers: Workers,
    render: Render,
    rgb: RgbTable,
    /// (n, 2048): console i's RAM between calls, as `Console.ram` is.
    ram: Py<PyArray2<u8>>,
}

/// Work on console `i` with its picture and its result.
type ConsoleWork<'a, R> = &'a (dyn Fn(usize, &mut Nes, &mut [u8], &mut R) + Sync);

/// The pictures of a batch as one NumPy array (`None` when nothing is rendered).
type Pictures<'py> = Option<Bound<'py, PyArrayDyn<u8>>>;

/// A batch's native threads: one rayon pool, started by `ConsoleBatch(...)` and reused by
/// every call (no thread is spawned per call).
#[derive(Debug)]
struct Workers {
    /// `None` with one thread: the calling thread steps the consoles itself, as handing them
    /// to a lone pool thread would only add a wake-up to every call.
    pool: Option<rayon::ThreadPool>,
    threads: usize,
    /// The process that started `pool`. A child made by `fork()` has none of its parent's
    /// threads: a call there would wait forever on a pool with nobody in it, so the child
    /// starts a pool of its own (see `Workers::pool`).
    pid: u32,
}

impl Workers {
    fn start(threads: usize) -> PyResult<Workers> {
        let pool = if threads > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("cyclenes-batch-{i}"))
                .build()
                .map_err(|error| {
                    PyRuntimeError::new_err(format!("cannot start the batch's threads: {error}"))
                })?;
            Some(pool)
        } else {
            None
        };
        Ok(Workers {
            pool,
            threads,
            pid: std::process::id(),
        })
    }

    /// The pool (`None`: the calling thread), restarted first when this process is a
    /// `fork()` of the one that started it.
    fn pool(&mut self) -> PyResult<Option<&rayon::ThreadPool>> {
        if self.pool.is_some() && self.pid != std::process::id() {
            let inherited = std::mem::replace(self, Workers::start(self.threads)?);
            // Dropping a pool signals its threads, which do not exist in this process (and
            // whose locks may have been held at the fork): it is left alone instead, a few
            // hundred bytes leaked once per forked child.
            std::mem::forget(inherited);
        }
        Ok(self.pool.as_ref())
    }
}

/// Runs `work(i, console, picture, result)` for every console on `pool`, each console a task
/// of its own: a thread that is done takes the consoles still waiting, so one slow thread
/// does not hold up a fixed share of the batch (without a pool, one after the other on the
/// calling thread). `pictures` holds `picture_len` bytes per console (0: none). A panic in
/// `work` is raised again on the calling thread.
fn for_each<R: Send>(
    pool: Option<&rayon::ThreadPool>,
    consoles: &mut [Nes],
    pictures: &mut [u8],
    picture_len: usize,
    results: &mut [R],
    work: ConsoleWork<'_, R>,
) {
    let Some(pool) = pool else {
        for (i, (nes, result)) in consoles.iter_mut().zip(results.iter_mut()).enumerate() {
            let picture = &mut pictures[i * picture_len..(i + 1) * picture_len];
            work(i, nes, picture, result);
        }
        return;
    };
    pool.install(|| {
        let tasks = consoles.par_iter_mut().zip(results.par_iter_mut());
        if picture_len == 0 {
            // `par_chunks_mut(0)` panics: without pictures every console gets an empty one.
            tasks
                .enumerate()
                .for_each(|(i, (nes, result))| work(i, nes, &mut [], result));
        } else {
            tasks
                .zip(pictures.par_chunks_mut(picture_len))
                .enumerate()
                .for_each(|(i, ((nes, result), picture))| work(i, nes, picture, result));
        }
    });
}

impl ConsoleBatch {
    fn ram_in(&mut self, py: Python<'_>) -> PyResult<()> {
        let array = self.ram.bind(py);
        let view = array
            .try_readonly()
            .map_err(|error| PyRuntimeError::new_err(format!("RAM array busy: {error}")))?;
        let bytes = view
            .as_slice()
            .map_err(|error| PyRuntimeError::new_err(format!("RAM array: {error}")))?;
        for (nes, ram) in self
            .consoles
            .iter_mut()
            .zip(bytes.chunks_exact(nes::CPU_RAM_SIZE))
        {
            nes.ram_mut().copy_from_slice(ram);
        }
        Ok(())
    }

    fn ram_out(&mut self, py: Python<'_>) -> PyResult<()> {
        let array = self.ram.bind(py);
        let mut view = array
            .try_readwrite()
            .map_err(|error| PyRuntimeError::new_err(format!("RAM array busy: {error}")))?;
        let bytes = view
            .as_slice_mut()
            .map_err(|error| PyRuntimeError::new_err(format!("RAM array: {error}")))?;
        for (nes, ram) in self
            .consoles
            .iter()
            .zip(bytes.chunks_exact_mut(nes::CPU_RAM_SIZE))
        {
            ram.copy_from_slice(nes.ram());
        }
        Ok(())
    }

    /// A mask from Python (`None`: every console), checked for length.
    fn mask(&self, mask: Option<PyReadonlyArray1<'_, bool>>) -> PyResult<Vec<bool>> {
        match mask {
            None => Ok(vec![true; self.consoles.len()]),
            Some(mask) => {
                let mask = mask.as_slice().map_err(|error| {
                    PyValueError::new_err(format!("mask must be contiguous: {error}"))
                })?;
                self.check_len("mask", mask.len())?;
                Ok(mask.to_vec())
            }
        }
    }

    fn check_len(&self, what: &str, len: usize) -> PyResult<()> {
        if len != self.consoles.len() {
            return Err(PyValueError::new_err(format!(
                "{what} has {len} entries for {} consoles",
                self.consoles.len()
            )));
        }
        Ok(())
    }

    fn index(&self, i: isize) -> PyResult<usize> {
        let n = self.consoles.len() as isize;
        let index = if i < 0 { i + n } else { i };
        if (0..n).contains(&index) {
            Ok(index as usize)
        } else {
            Err(PyIndexError::new_err(format!(
                "console {i} out of range for {n} consoles"
            )))
        }
    }

    /// Runs `work` on the masked consoles with the GIL released and RAM synchronised; returns
    /// each console's result and, with `render`, the pictures as one NumPy array.
    fn run<'py, R: Send + Default + Clone>(
        &mut self,
        py: Python<'py>,
        mask: &[bool],
        render: bool,
        work: &(dyn Fn(usize, &mut Nes, &mut R) + Sync),
    ) -> PyResult<(Vec<R>, Pictures<'py>)> {
        self.ram_in(py)?;
        let n = self.consoles.len();
        let picture_len = if render { self.render.bytes() } else { 0 };
        // Zero-filled first (about 20 us for 8 RGB pictures, against milliseconds of
        // emulation): leaving it out safely is not possible, as a `Vec` or NumPy array that
        // the workers fill must be initialised before it is lent to them.
        let mut pictures = vec![0u8; n * picture_len];
        let mut results = vec![R::default(); n];
        let pool = self.workers.pool()?;
        let (consoles, kind, rgb) = (&mut self.consoles, self.render, &self.rgb);
        // Every console renders its picture (masked-out ones too: theirs is still the
        // observation of a console that did not step).
        let outcome = py.detach(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                for_each(
                    pool,
                    consoles,
                    &mut pictures,
                    picture_len,
                    &mut results,
                    &|i, nes, picture, result| {
                        if mask[i] {
                            work(i, nes, result);
                        }
                        if picture_len > 0 {
                            kind.fill(rgb, nes.frame_buffer(), picture);
                        }
                    },
                )
            }))
            .map_err(|payload| panic_message(&*payload))
        });
        self.ram_out(py)?;
        outcome.map_err(|message| {
            PyRuntimeError::new_err(format!("internal error while stepping a batch: {message}"))
        })?;
        let pictures = if picture_len > 0 {
            Some(self.pictures_array(py, pictures)?)
        } else {
            None
        };
        Ok((results, pictures))
    }

    fn pictures_array<'py>(
        &self,
        py: Python<'py>,
        pictures: Vec<u8>,
    ) -> PyResult<Bound<'py, PyArrayDyn<u8>>> {
        let n = self.consoles.len();
        let shape = match self.render {
            Render::Rgb => vec![n, SCREEN_HEIGHT, SCREEN_WIDTH, 3],
            _ => vec![n, SCREEN_HEIGHT, SCREEN_WIDTH],
        };
        let array = ArrayD::from_shape_vec(IxDyn(&shape), pictures)
            .map_err(|error| PyRuntimeError::new_err(error.to_string()))?;
        Ok(PyArrayDyn::from_owned_array(py, array))
    }
}

#[pymethods]
impl ConsoleBatch {
    #[new]
    #[pyo3(signature = (rom, n, *, threads = None, render = "rgb", power_on = "hardware", power_on_ram = None, region = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        rom: &Bound<'_, PyAny>,
        n: usize,
        threads: Option<usize>,
        render: &str,
        power_on: &str,
        power_on_ram: Option<&str>,
        region: Option<&str>,
    ) -> PyResult<ConsoleBatch> {
        if n == 0 {
            return Err(PyValueError::new_err("a batch needs at least one console"));
        }
        if n > 4096 {
            return Err(PyValueError::new_err(format!(
                "{n} consoles in one batch is too many (at most 4096)"
            )));
        }
        let render = Render::parse(render)?;
        let start = Start::parse(power_on, power_on_ram, region)?;
        let image = rom_image(rom)?;
        let first = py.detach(|| start.power_on(&image))?;
        let consoles = vec![first; n];
        let threads = match threads {
            Some(0) => return Err(PyValueError::new_err("threads must be at least 1")),
            Some(threads) => threads.min(n),
            None => std::thread::available_parallelism()
                .map_or(1, usize::from)
                .min(n),
        };
        let workers = Workers::start(threads)?;
        let ram = PyArray2::<u8>::zeros(py, [n, nes::CPU_RAM_SIZE], false).unbind();
        let mut batch = ConsoleBatch {
            consoles,
            start,
            workers,
            render,
            rgb: RgbTable::of(&Palette::ntsc()),
            ram,
        };
        batch.ram_out(py)?;
        Ok(batch)
    }

    fn __len__(&self) -> usize {
        self.consoles.len()
    }

    /// Native threads that step the consoles: the batch's own, started with it and kept
    /// for every call (with 1, the calling thread, the GIL released).
    #[getter]
    fn threads(&self) -> usize {
        self.workers.threads
    }

    /// What `step`/`observe` return per console: "rgb", "index" or "none".
    #[getter]
    fn render(&self) -> &'static str {
        match self.render {
            Render::None => "none",
            Render::Indices => "index",
            Render::Rgb => "rgb",
        }
    }

    /// Runs `frames` frames on every console whose `mask` entry is true (default: all),
    /// console i holding `buttons[i]` on controller 1 (a `uint8` array of n button masks),
    /// on native threads with the GIL released. Returns the pictures of all n consoles
    /// (`render`: shape (n, 240, 256, 3) or (n, 240, 256)), or `None` with `render="none"`.
    #[pyo3(signature = (buttons, frames = 1, mask = None))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        buttons: PyReadonlyArray1<'_, u8>,
        frames: u32,
        mask: Option<PyReadonlyArray1<'_, bool>>,
    ) -> PyResult<Pictures<'py>> {
        let mask = self.mask(mask)?;
        let pads = buttons
            .as_slice()
            .map_err(|error| PyValueError::new_err(format!("buttons: {error}")))?
            .to_vec();
        self.check_len("buttons", pads.len())?;
        let (_, pictures) = self.run::<()>(py, &mask, true, &|i, nes, _| {
            nes.set_buttons(0, nes::Buttons::from_bits_retain(pads[i]));
            for _ in 0..frames {
                nes.run_frame();
            }
        })?;
        Ok(pictures)
    }

    /// The current pictures of all consoles (as `step` returns them), without stepping.
    fn observe<'py>(&mut self, py: Python<'py>) -> PyResult<Pictures<'py>> {
        let none = vec![false; self.consoles.len()];
        Ok(self.run::<()>(py, &none, true, &|_, _, _| {})?.1)
    }

    /// CPU RAM of every console: a writable `uint8` array of shape (n, 2048), the same array
    /// every time (see `Console.ram`: writes reach console i's RAM at the next call).
    #[getter]
    fn ram(&self, py: Python<'_>) -> Py<PyArray2<u8>> {
        self.ram.clone_ref(py)
    }

    /// Frames completed by each console (`uint64`, shape (n,)).
    fn frame_counts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        let counts: Vec<u64> = self.consoles.iter().map(Nes::frame_count).collect();
        PyArray1::from_vec(py, counts)
    }

    /// Lag frames of each console since its power-on (`uint64`, shape (n,)).
    fn lag_counts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        let counts: Vec<u64> = self.consoles.iter().map(Nes::lag_count).collect();
        PyArray1::from_vec(py, counts)
    }

    /// A save state of console `i` (`Console.save_state`'s format).
    fn save_state<'py>(&mut self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyBytes>> {
        let i = self.index(i)?;
        self.ram_in(py)?;
        let state = crate::guard("saving a state", || self.consoles[i].save_state())?;
        Ok(PyBytes::new(py, &state))
    }

    /// Loads `state` into every console whose `mask` entry is true (default: all): the
    /// vector environments' reset. Raises `ValueError` (and changes no console) when the
    /// state is refused.
    #[pyo3(signature = (state, mask = None))]
    fn load_state(
        &mut self,
        py: Python<'_>,
        state: Vec<u8>,
        mask: Option<PyReadonlyArray1<'_, bool>>,
    ) -> PyResult<()> {
        let mask = self.mask(mask)?;
        state_bytes(&state)?;
        // Checked on a copy first, so that a bad state changes no console.
        let Some(first) = mask.iter().position(|&selected| selected) else {
            return Ok(());
        };
        let mut probe = self.consoles[first].clone();
        crate::guard("loading a state", || probe.load_state(&state))?
            .map_err(|error| PyValueError::new_err(format!("save state refused: {error}")))?;
        self.run::<()>(py, &mask, false, &|_, nes, _| {
            // The same bytes loaded into the same ROM: cannot fail after the probe passed.
            let _ = nes.load_state(&state);
        })?;
        Ok(())
    }

    /// Console `i` as a `Console` of its own (a copy: stepping it leaves the batch alone).
    fn console(&mut self, py: Python<'_>, i: isize) -> PyResult<Console> {
        let i = self.index(i)?;
        self.ram_in(py)?;
        Ok(Console::from_nes(
            py,
            self.consoles[i].clone(),
            self.start,
            self.rgb.clone(),
        ))
    }

    /// Presses reset on the masked consoles (default: all).
    #[pyo3(signature = (mask = None))]
    fn reset(&mut self, py: Python<'_>, mask: Option<PyReadonlyArray1<'_, bool>>) -> PyResult<()> {
        let mask = self.mask(mask)?;
        self.run::<()>(py, &mask, false, &|_, nes, _| nes.soft_reset())?;
        Ok(())
    }

    /// Power-cycles the masked consoles (default: all).
    #[pyo3(signature = (mask = None))]
    fn power(&mut self, py: Python<'_>, mask: Option<PyReadonlyArray1<'_, bool>>) -> PyResult<()> {
        let mask = self.mask(mask)?;
        self.run::<()>(py, &mask, false, &|_, nes, _| nes.power_cycle())?;
        Ok(())
    }

    /// NES Tetris: `Console.tetris_place` on every masked console at once, on native
    /// threads. `targets` is a `uint8` array of shape (n, 2): orientation ID and pivot
    /// column per console. Returns a tuple `(frames, reached, locked, game_over,
    /// pictures)`: `uint32`/`bool` arrays of shape (n,) and the pictures as `step` returns
    /// them.
    #[pyo3(signature = (targets, mask = None, max_frames = 2000))]
    #[allow(clippy::type_complexity)]
    fn tetris_place<'py>(
        &mut self,
        py: Python<'py>,
        targets: PyReadonlyArray2<'_, u8>,
        mask: Option<PyReadonlyArray1<'_, bool>>,
        max_frames: u32,
    ) -> PyResult<(
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyArray1<bool>>,
        Pictures<'py>,
    )> {
        let mask = self.mask(mask)?;
        if targets.shape() != [self.consoles.len(), 2] {
            return Err(PyValueError::new_err(format!(
                "targets must have shape ({}, 2), not {:?}",
                self.consoles.len(),
                targets.shape()
            )));
        }
        let targets = targets
            .as_slice()
            .map_err(|error| PyValueError::new_err(format!("targets: {error}")))?
            .to_vec();
        let (placements, pictures) =
            self.run::<tetris::Placement>(py, &mask, true, &|i, nes, result| {
                *result = tetris::place(nes, targets[2 * i], targets[2 * i + 1], max_frames);
            })?;
        let frames = placements.iter().map(|p| p.frames).collect::<Vec<_>>();
        let reached = placements.iter().map(|p| p.reached).collect::<Vec<_>>();
        let locked = placements.iter().map(|p| p.locked).collect::<Vec<_>>();
        let over = placements.iter().map(|p| p.game_over).collect::<Vec<_>>();
        Ok((
            PyArray1::from_vec(py, frames),
            PyArray1::from_vec(py, reached),
            PyArray1::from_vec(py, locked),
            PyArray1::from_vec(py, over),
            pictures,
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "<cyclenes.ConsoleBatch {} consoles on {} threads, render {}>",
            self.consoles.len(),
            self.threads(),
            self.render()
        )
    }
}
