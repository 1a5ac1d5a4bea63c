//! `ConsoleBatch`: N consoles stepped in one call on native threads, so that Python pays its
//! call overhead once per batch (the engine of the `gymnasium.vector` environments).

use nes::{Nes, Palette, SCREEN_HEIGHT, SCREEN_WIDTH};
use numpy::ndarray::IxDyn;
use numpy::{
    PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::console::{panic_message, Console};
use crate::picture::{unfilled_array, writable, Render, RgbTable};
use crate::{rom_image, state_bytes, tetris, Start};

/// N consoles of one ROM, stepped together on native threads.
///
/// `ConsoleBatch(rom, n, *, threads=None, render="rgb", power_on="hardware",
/// power_on_ram=None, region=None)`
///
/// Every console powers on as `Console(rom, ...)` does. `threads` is how many native threads
/// step the consoles (default: the machine's cores, at most `n`): the calling thread, with
/// the GIL released, and `threads - 1` that the batch starts for itself and keeps until it
/// is dropped; each call hands them the consoles one at a time, so a thread that finishes
/// early takes the consoles still waiting.
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

/// Work on console `i` (a `Nes`, or a stand-in in the tests) with its picture and its result.
type ConsoleWork<'a, T, R> = &'a (dyn Fn(usize, &mut T, &mut [u8], &mut R) + Sync);

/// The pictures of a batch as one NumPy array (`None` when nothing is rendered).
type Pictures<'py> = Option<Bound<'py, PyArrayDyn<u8>>>;

/// A batch's native threads: the calling thread and one rayon pool of `threads - 1`,
/// started by `ConsoleBatch(...)` and reused by every call (no thread is spawned per call).
#[derive(Debug)]
struct Workers {
    /// `None` with one thread: the calling thread steps the consoles alone.
    pool: Option<rayon::ThreadPool>,
    threads: usize,
    /// The process that started `pool`. A child made by `fork()` has none of its parent's
    /// threads: a call there would wait forever on a pool with nobody in it, so the child
    /// starts a pool of its own (see `Workers::ready`).
    pid: u32,
    /// Set from the start of a call to its end: tells the pool's lingering threads (see
    /// `LINGER`) that work is coming.
    calling: Arc<AtomicBool>,
}

/// How long a pool thread stays awake after a call (see `wait_awake`), ready for the next
/// one, before it goes to sleep. Waking a sleeping thread takes 50-120 us on these virtual machines
/// (measured: the pool's first console started that long after the call), paid at the start
/// of every call and again at its end if the calling thread had gone to sleep: about a tenth
/// of an 8-console call of frame-skip-4 steps. A training loop that calls again within this
/// time (the batched environment's own Python takes well under it) finds the threads awake;
/// one that takes longer costs each thread this much time awake per call (spinning, then
/// yielding to any thread that wants the core).
const LINGER: Duration = Duration::from_micros(500);

/// How long `wait_awake` spins before it yields the core between its looks.
const SPIN_BEFORE_YIELD: Duration = Duration::from_micros(50);

/// Waits until `done()` without sleeping: spinning at first, then yielding the core between
/// looks. On a machine with more runnable threads than cores (several batches, Ray workers
/// beside each other), the thread being waited for may itself be waiting for a core, and a
/// yield hands it this one; with nothing else to run, a yield returns at once, so the wait
/// still ends within microseconds of `done()`.
fn wait_awake(mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        if start.elapsed() < SPIN_BEFORE_YIELD {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

impl Workers {
    fn start(threads: usize) -> PyResult<Workers> {
        let pool = if threads > 1 {
            // The calling thread is one of the `threads`: it works on the batch too.
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads - 1)
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
            calling: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The workers, with the pool restarted first when this process is a `fork()` of the
    /// one that started it.
    fn ready(&mut self) -> PyResult<&Workers> {
        if self.pool.is_some() && self.pid != std::process::id() {
            let inherited = std::mem::replace(self, Workers::start(self.threads)?);
            // Dropping a pool signals its threads, which do not exist in this process (and
            // whose locks may have been held at the fork): it is left alone instead, a few
            // hundred bytes leaked once per forked child.
            std::mem::forget(inherited);
        }
        Ok(self)
    }

    /// Runs `work(i, console, picture, result)` for every console, each console a task of
    /// its own handed to whichever thread asks next: the calling thread and the pool's
    /// threads all take consoles until none is left, so one slow thread does not hold up a
    /// fixed share of the batch, and the calling thread starts at once instead of waiting
    /// for the pool's threads to wake (without a pool, the calling thread does them all).
    /// `pictures` holds `picture_len` bytes per console (0: none). A panic in `work` is
    /// raised again on the calling thread.
    fn for_each<T: Send, R: Send>(
        &self,
        consoles: &mut [T],
        pictures: &mut [u8],
        picture_len: usize,
        results: &mut [R],
        work: ConsoleWork<'_, T, R>,
    ) {
        // `chunks_mut(0)` panics: without pictures every console gets an empty one.
        let mut pictures = pictures.chunks_mut(picture_len.max(1));
        let tasks = consoles
            .iter_mut()
            .zip(results.iter_mut())
            .map(move |(nes, result)| (nes, result, pictures.next().unwrap_or_default()))
            .enumerate();
        let Some(pool) = &self.pool else {
            for (i, (nes, result, picture)) in tasks {
                work(i, nes, picture, result);
            }
            return;
        };
        self.calling.store(true, Ordering::Relaxed);
        let tasks = Mutex::new(tasks);
        let take_until_none_left = || loop {
            // Poisoned only by a panic in another thread's `next()`, which is re-raised
            // anyway.
            let task = tasks.lock().unwrap_or_else(PoisonError::into_inner).next();
            let Some((i, (nes, result, picture))) = task else {
                return;
            };
            work(i, nes, picture, result);
        };
        let pool_jobs = pool.current_num_threads();
        let unfinished_jobs = AtomicUsize::new(pool_jobs);
        pool.in_place_scope(|scope| {
            for _ in 0..pool_jobs {
                scope.spawn(|_| {
                    // Counted as finished even when `work` panics, so nobody waits for it
                    // forever.
                    let _finished = Finished(&unfinished_jobs);
                    take_until_none_left();
                });
            }
            take_until_none_left();
            // The scope's end waits for the pool's jobs by sleeping (this thread is not one
            // of the pool's), and a sleeping thread takes 50-120 us to wake on these virtual
            // machines (see `LINGER`): the pool's jobs are at most one console's work away,
            // so they are waited for awake, and the scope then ends at once. Waiting for
            // their consoles alone was not enough: the scope often went to sleep in the
            // moment between a job's last console and the job's end.
            wait_awake(|| unfinished_jobs.load(Ordering::Acquire) == 0);
        });
        self.calling.store(false, Ordering::Relaxed);
        for _ in 0..pool.current_num_threads() {
            let calling = Arc::clone(&self.calling);
            pool.spawn(move || {
                let deadline = Instant::now() + LINGER;
                wait_awake(|| calling.load(Ordering::Relaxed) || Instant::now() >= deadline);
            });
        }
    }
}

/// Counts one of the pool's jobs as finished when dropped.
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
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
        // Left unfilled by NumPy, not zeroed here: the workers write every byte of it, each
        // console's picture on the thread that ran it (see `unfilled_array`).
        let pictures = if picture_len > 0 {
            Some(unfilled_array::<IxDyn>(py, &self.picture_shape())?)
        } else {
            None
        };
        let mut pictures_view = pictures.as_ref().map(writable).transpose()?;
        let pictures_bytes: &mut [u8] = match &mut pictures_view {
            Some(view) => view.as_slice_mut()?,
            None => &mut [],
        };
        let mut results = vec![R::default(); n];
        let workers = self.workers.ready()?;
        let (consoles, kind, rgb) = (&mut self.consoles, self.render, &self.rgb);
        // Every console renders its picture (masked-out ones too: theirs is still the
        // observation of a console that did not step).
        let outcome = py.detach(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                workers.for_each(
                    consoles,
                    pictures_bytes,
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
        drop(pictures_view);
        self.ram_out(py)?;
        outcome.map_err(|message| {
            PyRuntimeError::new_err(format!("internal error while stepping a batch: {message}"))
        })?;
        Ok((results, pictures))
    }

    /// The shape of the pictures of all consoles as `step` returns them.
    fn picture_shape(&self) -> Vec<usize> {
        let n = self.consoles.len();
        match self.render {
            Render::Rgb => vec![n, SCREEN_HEIGHT, SCREEN_WIDTH, 3],
            _ => vec![n, SCREEN_HEIGHT, SCREEN_WIDTH],
        }
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

    /// Native threads that step the consoles: the calling thread (the GIL released) and
    /// `threads - 1` of the batch's own, started with it and kept for every call.
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

#[cfg(test)]
mod tests {
    use super::{wait_awake, Workers, SPIN_BEFORE_YIELD};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;
    use std::thread::{self, ThreadId};
    use std::time::{Duration, Instant};

    /// Every console once, with its own picture chunk and result, whichever thread runs it;
    /// returns the threads that ran them.
    fn run_all(workers: &Workers, picture_len: usize) -> Vec<ThreadId> {
        let mut consoles: Vec<u32> = (0..7).collect();
        let mut pictures = vec![0u8; consoles.len() * picture_len];
        let mut results = vec![0u32; consoles.len()];
        let runners = Mutex::new(Vec::new());
        workers.for_each(
            &mut consoles,
            &mut pictures,
            picture_len,
            &mut results,
            &|i, console: &mut u32, picture, result: &mut u32| {
                runners.lock().unwrap().push(thread::current().id());
                // With a pool, each task waits (up to 10 s) until two threads have taken
                // one, so that neither can run all seven before the other wakes.
                let deadline = Instant::now() + Duration::from_secs(10);
                while workers.pool.is_some() && Instant::now() < deadline {
                    let ids = runners.lock().unwrap().clone();
                    if ids.iter().any(|&id| id != ids[0]) {
                        break;
                    }
                    thread::sleep(Duration::from_millis(1));
                }
                assert_eq!(picture.len(), picture_len);
                picture.fill(i as u8 + 1);
                *result = *console * 10;
                *console += 100;
            },
        );
        assert_eq!(consoles, (100..107).collect::<Vec<_>>());
        assert_eq!(results, (0..70).step_by(10).collect::<Vec<_>>());
        for (i, picture) in pictures.chunks(picture_len.max(1)).enumerate() {
            assert!(picture.iter().all(|&byte| byte == i as u8 + 1));
        }
        runners.into_inner().unwrap()
    }

    #[test]
    fn the_calling_thread_and_the_pool_share_the_consoles() {
        let workers = Workers::start(2).unwrap();
        for picture_len in [0, 3] {
            let runners = run_all(&workers, picture_len);
            assert_eq!(runners.len(), 7);
            assert!(runners.contains(&thread::current().id()));
            assert!(runners.iter().any(|&id| id != thread::current().id()));
        }
    }

    #[test]
    fn a_panic_on_any_thread_is_raised_on_the_calling_thread() {
        let workers = Workers::start(2).unwrap();
        // One console's panic, then every console's: neither may leave the calling thread
        // waiting for a console that will never finish.
        for panicking in [&[4usize][..], &[0, 1, 2, 3, 4, 5]] {
            let mut consoles = [0u8; 6];
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                workers.for_each(
                    &mut consoles,
                    &mut [],
                    0,
                    &mut [(); 6],
                    &|i, console: &mut u8, _, _| {
                        thread::sleep(Duration::from_millis(2));
                        assert!(!panicking.contains(&i), "console {i}");
                        *console = 1;
                    },
                );
            }));
            assert!(outcome.is_err());
        }
        // The workers still work after it.
        assert_eq!(run_all(&workers, 1).len(), 7);
    }

    #[test]
    fn waiting_awake_ends_when_done_past_the_spinning() {
        let done = AtomicBool::new(false);
        let start = Instant::now();
        thread::scope(|scope| {
            scope.spawn(|| {
                thread::sleep(SPIN_BEFORE_YIELD * 20);
                done.store(true, Ordering::Release);
            });
            wait_awake(|| done.load(Ordering::Acquire));
        });
        assert!(start.elapsed() >= SPIN_BEFORE_YIELD * 20);
        let mut looks = 0;
        wait_awake(|| {
            looks += 1;
            true
        });
        assert_eq!(looks, 1);
    }

    #[test]
    fn without_a_pool_the_calling_thread_runs_every_console() {
        let runners = run_all(&Workers::start(1).unwrap(), 2);
        assert!(runners.iter().all(|&id| id == thread::current().id()));
    }
}
