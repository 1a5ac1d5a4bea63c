//! An FCEUX-compatible Lua host: FCEUX scripts run unchanged on the emulator, in step with
//! FCEUX 2.6.5.
//!
//! The specification is `fceux-lua-api.md` (shared docs), with FCEUX 2.6.5's lifecycle where it
//! differs from 2.2.2's. In short: the script's main chunk is a coroutine, run once when the
//! script starts (2.6.5 runs its first slice at load) and then resumed once per frame at the
//! frame boundary where `Nes::run_frame` returns (FCEUX's, on [`nes::Timeline::Fceux`]);
//! `emu.frameadvance()` yields; memory hooks fire synchronously inside CPU instructions through
//! [`nes::FrameHooks`]; the API namespaces are `emu` (`FCEU`), `memory`, `joypad`, `gui`,
//! `savestate`, `rom`, `input`, `zapper`, `movie`, `bit` and stubs.
//!
//! Use: [`LuaHost::load`] a script, [`LuaHost::start`] it on the console, then call
//! [`LuaHost::run_frame`] instead of `Nes::run_frame` for every frame.

mod api;
mod bitlib;
mod format;
mod full_stdlib;
mod gui;
mod machine;
mod state;
mod watchdog;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use mlua::thread::ThreadStatus;
use mlua::{Function, Lua, MultiValue, Table, Thread, Value};
use nes::{Buttons, FrameHooks, HookMachine, HookMap, MemoryHooks, Nes, Palette, RomInfo};
use nes_movie::fm2::{Commands, MovieFrame};

pub use gui::Overlay;
use machine::lend;
use watchdog::Watchdog;
pub use watchdog::{parse_watchdog_seconds, watchdog_limit, WatchdogError};

/// How fast the script asked the emulator to run (`emu.speedmode`). Headless runs are
/// unthrottled whatever the mode; a window honours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpeedMode {
    #[default]
    Normal,
    NoThrottle,
    Turbo,
    Maximum,
}

impl SpeedMode {
    /// `emu.speedmode`'s argument, in any case.
    pub fn from_name(name: &str) -> Option<SpeedMode> {
        match name.to_ascii_lowercase().as_str() {
            "normal" => Some(SpeedMode::Normal),
            "nothrottle" => Some(SpeedMode::NoThrottle),
            "turbo" => Some(SpeedMode::Turbo),
            "maximum" => Some(SpeedMode::Maximum),
            _ => None,
        }
    }

    /// Whether a window paces this mode to the console's speed ("normal" only).
    pub fn is_throttled(self) -> bool {
        self == SpeedMode::Normal
    }
}

/// The input of one frame, before the script's overrides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameInput {
    /// What the user (scripted presses, keyboard) holds on pads 1 and 2.
    pub user: [Buttons; 2],
    /// This frame's line of a playing movie (none once the movie has ended). At the input
    /// latch its power/reset command runs first, then its pads replace the user's, overrides
    /// and all (FCEUX ignores `joypad.set` while a movie plays).
    pub movie: Option<MovieFrame>,
}

/// What a frame gave the game: the pads latched and the console commands carried out at the
/// latch (a movie's, or the script's `emu.poweron`/`emu.softreset` while recording), i.e.
/// the frame's line for a recording.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameOutcome {
    pub pads: [Buttons; 2],
    pub command: Commands,
}

/// Where a movie stands (`movie.mode()`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MovieMode {
    /// No movie: `movie.mode()` is nil.
    #[default]
    Inactive,
    /// Playing (`"playback"`).
    Playback,
    /// Recording (`"record"`).
    Record,
    /// Played to its end (`"finished"`): FCEUX keeps it open, so `movie.playing()` stays
    /// true and input comes from the user again.
    Finished,
}

/// The computer's keyboard and mouse as a script sees them (`input.get()`, `zapper.read()`).
/// A window sets it before each frame; headless runs leave it empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostInput {
    /// FCEUX's names of the keys held: `"A"`-`"Z"`, `"0"`-`"9"`, `"F1"`, `"shift"`,
    /// `"control"`, `"alt"`, `"up"`, `"enter"`, `"space"`, `"numpad5"`, `";"`, ... and the
    /// mouse buttons `"leftclick"`, `"rightclick"`, `"middleclick"`.
    pub keys: Vec<&'static str>,
    /// The mouse pointer in picture pixels (0-255, 0-239 over the picture; beyond when off it).
    pub mouse_x: i32,
    pub mouse_y: i32,
    /// Mouse buttons held: 1 left, 2 right, 4 middle.
    pub buttons: u8,
}

/// Where the host keeps files and how it reports.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// Folder for `savestate` slot files (`<rom stem>.state<N>`).
    pub save_dir: PathBuf,
    /// The ROM file's name without extension (slot file names, `rom.getfilename`).
    pub rom_stem: String,
    /// The ROM's header and identity, as the cartridge read them (`rom.readbyte` below offset
    /// 16, `rom.gethash`): [`nes::Nes::rom_info`].
    pub rom: RomInfo,
    /// The start-up argument (`arg`).
    pub arg: Option<String>,
    /// The palette `emu.getscreenpixel` and `P00`-`P3F` colours use.
    pub palette: Palette,
}

/// The largest script [`LuaHost::load`] reads. The biggest real FCEUX scripts (bots with
/// tables of data) are well under a megabyte; the bound keeps `--lua /dev/zero` or a wrong
/// file from filling memory before Lua even parses it.
pub const MAX_SCRIPT_BYTES: u64 = 64 << 20;

/// A script could not be started.
#[derive(Debug)]
pub enum LoadError {
    Read(PathBuf, std::io::Error),
    /// The file is larger than [`MAX_SCRIPT_BYTES`].
    TooLarge(PathBuf),
    /// A Lua error (a compile error reads `name.lua:LINE: message`).
    Lua(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Read(path, e) => write!(f, "cannot read {}: {e}", path.display()),
            LoadError::TooLarge(path) => write!(
                f,
                "cannot read {}: script too large (over {} MiB)",
                path.display(),
                MAX_SCRIPT_BYTES >> 20
            ),
            LoadError::Lua(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for LoadError {}

/// One pad's overrides from `joypad.set` (bit masks, `BUTTON` order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PadOverride {
    pub(crate) on: u8,
    pub(crate) off: u8,
    pub(crate) invert: u8,
}

impl PadOverride {
    pub(crate) fn apply(self, user: u8) -> u8 {
        ((user ^ self.invert) & !self.off) | self.on
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookKind {
    Exec,
    Write,
    Read,
}

/// The hook (un)registrations not yet applied to the CPU's bitmaps: the last state asked for
/// each address of each kind, which is what applying every change in order would leave. (A
/// list of the changes grew by 65,536 entries for each `memory.register*` of a large range,
/// without bound while a script kept registering within one slice.)
#[derive(Debug, Default)]
pub(crate) struct HookChanges {
    /// Per kind and address (`kind * 0x10000 + addr`): 0 unchanged, 1 off, 2 on; allocated at
    /// the first change.
    wanted: Vec<u8>,
    /// The indices into `wanted` that are not 0.
    touched: Vec<u32>,
}

impl HookChanges {
    const KINDS: [HookKind; 3] = [HookKind::Exec, HookKind::Write, HookKind::Read];

    fn index(kind: HookKind, addr: u16) -> usize {
        let kind = Self::KINDS.iter().position(|k| *k == kind).unwrap_or(0);
        kind << 16 | usize::from(addr)
    }

    /// Ask for the hook of `kind` at `addr` to be live or not.
    pub(crate) fn set(&mut self, kind: HookKind, addr: u16, live: bool) {
        if self.wanted.is_empty() {
            self.wanted = vec![0; Self::KINDS.len() << 16];
        }
        let i = Self::index(kind, addr);
        if self.wanted[i] == 0 {
            self.touched.push(i as u32);
        }
        self.wanted[i] = 1 + u8::from(live);
    }

    /// The changes asked for since the last call, each address once.
    fn take(&mut self) -> impl Iterator<Item = (HookKind, u16, bool)> + '_ {
        let wanted = &mut self.wanted;
        self.touched.drain(..).map(move |i| {
            let i = i as usize;
            let live = wanted[i] == 2;
            wanted[i] = 0;
            (Self::KINDS[i >> 16], i as u16, live)
        })
    }

    fn clear(&mut self) {
        self.take().for_each(drop);
    }

    /// The changes held.
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        self.touched.len()
    }
}

/// State the API functions share with the host (Lua closures hold an `Rc` of it).
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub(crate) hook_changes: HookChanges,
    pub(crate) output: Vec<String>,
    pub(crate) messages: Vec<String>,
    pub(crate) overrides: [PadOverride; 4],
    /// The pads as latched for the last frame (user input and overrides combined).
    pub(crate) latched: [u8; 4],
    /// `emu.framecount()`: the console's frame count, brought up to date at each entry into
    /// Lua; during a frame (from `registerbefore` on) it is the number of that frame, as FCEUX
    /// counts the frame at its input latch.
    pub(crate) frame_count: u64,
    /// `emu.lagcount()`, from the console at each boundary and after each frame.
    pub(crate) lag_count: u64,
    /// Console commands (`emu.poweron`/`emu.softreset`) to record with the next latch.
    pub(crate) commands: Commands,
    /// `emu.exit()` or `os.exit()` was called.
    pub(crate) exit_requested: bool,
    /// The status `os.exit` asked for: the script is unwinding, and nothing catches it.
    pub(crate) exit_status: Option<i32>,
    /// FCEUX's `frameAdvanceWaiting`: `emu.frameadvance()` was called since the main
    /// coroutine was last resumed. A main coroutine that yields with it set waits for the next
    /// frame; one that yields without it has died (as in FCEUX). See `api/emu.rs`.
    pub(crate) frame_advance_waiting: bool,
    /// Where `print` lines go as they are printed (else they wait in `output`).
    pub(crate) print_sink: Option<PrintSink>,
    pub(crate) paused: bool,
    pub(crate) speed: SpeedMode,
    pub(crate) overlay: Overlay,
    pub(crate) save_dir: PathBuf,
    pub(crate) rom_stem: String,
    /// The iNES header, which `rom.readbyte` reads below offset 16 (the rest comes from the
    /// cartridge, patches included).
    pub(crate) rom_header: [u8; 16],
    /// FCEUX's ROM hash (`rom.gethash("md5")`): [`RomInfo::prg_chr_md5`] in hex digits.
    pub(crate) rom_md5: String,
    pub(crate) palette: Option<Palette>,
    pub(crate) movie: MovieStatus,
    /// FCEUX's movie read-only toggle (`emu.readonly`), on when a script loads.
    pub(crate) readonly: bool,
    pub(crate) cycle_base: u64,
    pub(crate) host_input: HostInput,
}

/// A receiver of `print` lines (without the line end), called as the script prints.
pub(crate) struct PrintSink(Box<PrintFn>);

/// What a print sink does with one printed line (without its newline).
type PrintFn = dyn FnMut(&[u8]);

impl std::fmt::Debug for PrintSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrintSink")
    }
}

impl Shared {
    /// Bring the frame and lag counts the API reports up to the console's.
    pub(crate) fn sync_counts(&mut self, nes: &Nes) {
        self.frame_count = nes.frame_count();
        self.lag_count = nes.lag_count();
    }

    /// One `print` line: to the sink if there is one, else kept for [`LuaHost::take_output`].
    pub(crate) fn print_line(&mut self, line: &[u8]) {
        match &mut self.print_sink {
            Some(PrintSink(sink)) => sink(line),
            None => self.output.push(String::from_utf8_lossy(line).into_owned()),
        }
    }
}

/// What the app tells the host about movie playback (`movie.*`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MovieStatus {
    /// The host moves a playback on to `Finished` at the first latch without a movie line,
    /// and counts a recording's frames into `length`.
    pub mode: MovieMode,
    /// Frames in the movie (`movie.length()`).
    pub length: u64,
    pub name: String,
    pub rerecords: u64,
}

impl MovieStatus {
    /// A movie is open (`movie.active()`): playing, recording or finished.
    pub(crate) fn active(&self) -> bool {
        self.mode != MovieMode::Inactive
    }
}

/// Lua-visible registries, kept in the Lua state.
#[derive(Debug, Clone)]
pub(crate) struct Registries {
    pub(crate) exec: Table,
    pub(crate) write: Table,
    pub(crate) read: Table,
    /// `before`, `after`, `exit`, `gui`, `save`, `load`.
    pub(crate) callbacks: Table,
}

impl Registries {
    pub(crate) fn hooks(&self, kind: HookKind) -> &Table {
        match kind {
            HookKind::Exec => &self.exec,
            HookKind::Write => &self.write,
            HookKind::Read => &self.read,
        }
    }
}

/// A loaded script and its Lua state.
pub struct LuaHost {
    lua: Lua,
    shared: Rc<RefCell<Shared>>,
    registries: Registries,
    /// The bitmaps the CPU consults on every access (synced from `Shared::hook_changes`).
    map: HookMap,
    /// The main chunk, until [`LuaHost::start`] makes it the main coroutine (then, so that the
    /// coroutine gets the watchdog's hook if [`LuaHost::set_watchdog`] set one).
    chunk: Option<Function>,
    main: Option<Thread>,
    watchdog: Rc<Watchdog>,
    /// The script was stopped (error or `stop`): nothing of it runs any more.
    stopped: bool,
    /// A memory hook failed during the current frame: stop after the instruction and frame.
    stop_pending: bool,
    /// The first slice ran (see [`LuaHost::start`]).
    started: bool,
    errors: Vec<String>,
    script_name: String,
}

impl std::fmt::Debug for LuaHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LuaHost")
            .field("script", &self.script_name)
            .field("stopped", &self.stopped)
            .finish_non_exhaustive()
    }
}

/// The text of a Lua error: the innermost message, without mlua's wrapping or traceback.
pub(crate) fn error_text(error: &mlua::Error) -> String {
    let text = match error {
        mlua::Error::CallbackError { cause, .. } => return error_text(cause),
        mlua::Error::RuntimeError(msg) | mlua::Error::SyntaxError { message: msg, .. } => {
            msg.clone()
        }
        mlua::Error::WithContext { cause, .. } => return error_text(cause),
        other => other.to_string(),
    };
    match text.find("\nstack traceback:") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

impl LuaHost {
    /// Load the script at `path` (nothing runs until the first [`LuaHost::run_frame`]).
    pub fn load(path: &Path, options: HostOptions) -> Result<LuaHost, LoadError> {
        let source = read_bounded(path, MAX_SCRIPT_BYTES)
            .map_err(|e| LoadError::Read(path.to_path_buf(), e))?
            .ok_or_else(|| LoadError::TooLarge(path.to_path_buf()))?;
        // FCEUX 2.6.5 names the chunk by the script's absolute path (symlinks not resolved):
        // errors read `/home/me/ai.lua:12: ...` and `debug.getinfo(1).source` is `@` and that
        // path, which scripts use to find files beside them.
        let name = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        LuaHost::load_source(&name.to_string_lossy(), &source, options)
    }

    /// Load a script from memory; `name` is its chunk name (a path), as errors show it.
    pub fn load_source(
        name: &str,
        source: &[u8],
        options: HostOptions,
    ) -> Result<LuaHost, LoadError> {
        let lua_error = |e: mlua::Error| LoadError::Lua(error_text(&e));
        // FCEUX's libraries, `debug` included (mlua leaves it out by default).
        let lua = full_stdlib::lua_with_fceux_libraries().map_err(lua_error)?;
        let rom_header = options.rom.header;
        let rom_md5 = options
            .rom
            .prg_chr_md5
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        let shared = Rc::new(RefCell::new(Shared {
            save_dir: options.save_dir,
            rom_stem: options.rom_stem,
            rom_header,
            rom_md5,
            palette: Some(options.palette),
            readonly: true,
            ..Shared::default()
        }));
        let registries = Registries {
            exec: lua.create_table().map_err(lua_error)?,
            write: lua.create_table().map_err(lua_error)?,
            read: lua.create_table().map_err(lua_error)?,
            callbacks: lua.create_table().map_err(lua_error)?,
        };
        api::install(&lua, &shared, &registries, options.arg.as_deref()).map_err(lua_error)?;
        let chunk = lua
            .load(source)
            .set_name(format!("@{name}"))
            .into_function()
            .map_err(lua_error)?;
        let watchdog = Rc::new(Watchdog::default());
        lua.set_app_data(watchdog.clone());
        Ok(LuaHost {
            lua,
            shared,
            registries,
            map: HookMap::default(),
            chunk: Some(chunk),
            main: None,
            watchdog,
            stopped: false,
            stop_pending: false,
            started: false,
            errors: Vec::new(),
            script_name: name.to_string(),
        })
    }

    /// Start the script on `nes`: its main chunk runs up to its first `emu.frameadvance()`,
    /// as FCEUX 2.6.5 runs a script's first slice when it loads it. (The first
    /// [`LuaHost::run_frame`] starts the script if this was not called.)
    pub fn start(&mut self, nes: &mut Nes) {
        if self.started {
            return;
        }
        self.started = true;
        if let Some(chunk) = self.chunk.take() {
            match self.lua.create_thread(chunk) {
                Ok(main) => self.main = Some(main),
                Err(error) => {
                    self.report(&error);
                    self.stop(nes);
                    return;
                }
            }
        }
        self.sync_counts(nes);
        self.resume_main(nes);
    }

    /// Stop the script when it runs for `limit` without yielding to the emulator (returning
    /// from a callback or hook, or calling `emu.frameadvance()`), with an error like any
    /// other (`FILE:LINE: stopped by the watchdog: ...`); the emulator goes on. `None` (or
    /// zero) is FCEUX's behaviour, the default: such a script freezes the emulator. Call it
    /// before [`LuaHost::start`] (coroutines created earlier are not watched). See
    /// `watchdog.rs` for what it can and cannot interrupt.
    pub fn set_watchdog(&mut self, limit: Option<Duration>) {
        watchdog::configure(&self.lua, &self.watchdog, limit);
    }

    /// Run `body` (Lua code) with `machine` lent to the API, as one host entry: the
    /// watchdog's clock runs from here until it returns.
    fn enter<R>(
        &self,
        machine: &mut dyn machine::Machine,
        body: impl FnOnce() -> mlua::Result<R>,
    ) -> mlua::Result<R> {
        self.watchdog.enter();
        let result = lend(&self.lua, machine, body);
        self.watchdog.leave();
        watchdog::settle(&self.lua, &self.watchdog);
        result
    }

    /// Whether the last error must stop the script even where FCEUX would keep it (dropping
    /// only the failing callback): `os.exit` unwinding, or the watchdog.
    fn must_stop(&self) -> bool {
        self.shared.borrow().exit_status.is_some() || self.watchdog.fired()
    }

    /// Run one frame the FCEUX way (spec section 2): the boundary slice of the main coroutine,
    /// the input latch (a movie's command and pads, or the user's input with the script's
    /// overrides), `registerbefore`, the frame with memory hooks, `gui.register` and the
    /// overlay, `registerafter`, lag accounting.
    pub fn run_frame(&mut self, nes: &mut Nes, input: FrameInput) -> FrameOutcome {
        self.start(nes);
        // 1. Boundary.
        self.sync_counts(nes);
        self.resume_main(nes);
        // 2. Input latch.
        let outcome = self.latch(nes, input);
        // 3-6. registerbefore, the frame, gui.register and registerafter, lag accounting.
        nes.run_frame_with(self);
        self.sync_counts(nes);
        outcome
    }

    /// FCEUX's input latch (`FCEU_UpdateInput`): a playing movie's power/reset command and
    /// pads, else the user's input with the script's overrides (which it consumes); the
    /// frame count goes up.
    fn latch(&mut self, nes: &mut Nes, input: FrameInput) -> FrameOutcome {
        let mut shared = self.shared.borrow_mut();
        let user = [input.user[0].bits(), input.user[1].bits(), 0, 0];
        let mut latched = [0u8; 4];
        for (i, pad) in latched.iter_mut().enumerate() {
            *pad = if self.stopped {
                user[i]
            } else {
                shared.overrides[i].apply(user[i])
            };
        }
        shared.overrides = [PadOverride::default(); 4];
        let mut command = std::mem::take(&mut shared.commands);
        match (shared.movie.mode, input.movie) {
            (MovieMode::Playback, None) => shared.movie.mode = MovieMode::Finished,
            (MovieMode::Record, _) => shared.movie.length += 1,
            _ => {}
        }
        if let Some(line) = input.movie {
            command = line.command;
            command.apply(nes);
            latched[0] = line.pads[0].bits();
            latched[1] = line.pads[1].bits();
        }
        shared.latched = latched;
        let pads = [
            Buttons::from_bits_retain(latched[0]),
            Buttons::from_bits_retain(latched[1]),
        ];
        nes.set_buttons(0, pads[0]);
        nes.set_buttons(1, pads[1]);
        shared.frame_count = nes.frame_count() + 1;
        FrameOutcome { pads, command }
    }

    /// Bring the counts the API reports up to the console's.
    fn sync_counts(&mut self, nes: &Nes) {
        self.shared.borrow_mut().sync_counts(nes);
    }

    /// Resume the main coroutine for its boundary slice.
    fn resume_main(&mut self, nes: &mut Nes) {
        let Some(main) = self.main.clone() else {
            return;
        };
        if self.shared.borrow().paused || main.status() != ThreadStatus::Resumable {
            return;
        }
        self.shared.borrow_mut().frame_advance_waiting = false;
        let result = self.enter(nes, || main.resume::<()>(()));
        self.sync_hooks();
        match result {
            Err(error) => {
                self.report(&error);
                self.stop(nes);
            }
            Ok(()) => {
                let frameadvance = main.status() == ThreadStatus::Resumable
                    && self.shared.borrow().frame_advance_waiting;
                if !frameadvance {
                    // Returned, or a bare yield: "died of natural causes". Hooks stay live.
                    self.main = None;
                    let mut shared = self.shared.borrow_mut();
                    shared.overrides = [PadOverride::default(); 4];
                    shared.speed = SpeedMode::Normal;
                    shared.overlay.clear_pending();
                }
            }
        }
    }

    /// Call one of the frame callbacks (`before`, `after`, `gui`) if registered.
    fn run_frame_callback(&mut self, nes: &mut Nes, which: &str) {
        if self.stopped {
            return;
        }
        let callback: Option<Function> = self.registries.callbacks.raw_get(which).ok().flatten();
        let Some(callback) = callback else {
            return;
        };
        let result = self.enter(nes, || callback.call::<()>(()));
        self.sync_hooks();
        if let Err(error) = result {
            self.report(&error);
            if which == "gui" && !self.must_stop() {
                // FCEUX drops a failing gui.register callback and keeps the script.
                let _ = self.registries.callbacks.raw_set(which, Value::Nil);
            } else {
                self.stop(nes);
            }
        }
    }

    /// Keep an error for [`LuaHost::take_errors`]; the unwinding of `os.exit` is none.
    fn report(&mut self, error: &mlua::Error) {
        if self.shared.borrow().exit_status.is_none() {
            self.errors.push(error_text(error));
        }
    }

    /// Apply the hook (un)registrations the script made to the CPU's bitmaps.
    fn sync_hooks(&mut self) {
        let mut shared = self.shared.borrow_mut();
        for (kind, addr, present) in shared.hook_changes.take() {
            let set = match kind {
                HookKind::Exec => &mut self.map.exec,
                HookKind::Write => &mut self.map.write,
                HookKind::Read => &mut self.map.read,
            };
            set.set(addr, present);
        }
    }

    /// Stop the script (user request or error): `registerexit` runs once (unless the script
    /// called `os.exit`, which ends FCEUX's process at once), hooks and callbacks are dropped,
    /// overrides and speed reset.
    pub fn stop(&mut self, nes: &mut Nes) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        self.stop_pending = false;
        self.map.clear();
        self.chunk = None;
        self.main = None;
        let exit: Option<Function> = if self.shared.borrow().exit_status.is_some() {
            None
        } else {
            self.registries.callbacks.raw_get("exit").ok().flatten()
        };
        if let Some(exit) = exit {
            let result = self.enter(nes, || exit.call::<()>(()));
            if let Err(error) = result {
                self.report(&error);
            }
        }
        for table in [
            &self.registries.exec,
            &self.registries.write,
            &self.registries.read,
            &self.registries.callbacks,
        ] {
            let _ = table.clear();
        }
        let mut shared = self.shared.borrow_mut();
        shared.hook_changes.clear();
        shared.overrides = [PadOverride::default(); 4];
        shared.speed = SpeedMode::Normal;
        shared.paused = false;
        shared.overlay = Overlay::default();
    }

    /// Bytes the script's data takes: its Lua state's memory, savestate objects included
    /// (their states are Lua strings).
    pub fn memory_used(&self) -> usize {
        self.lua.used_memory()
    }

    /// Whether the script still runs (not stopped by an error or [`LuaHost::stop`]).
    pub fn running(&self) -> bool {
        !self.stopped
    }

    /// Whether the main coroutine is still alive (it has not returned or failed).
    pub fn main_alive(&self) -> bool {
        self.main.is_some() || self.chunk.is_some()
    }

    /// Lines the script printed since the last call.
    pub fn take_output(&mut self) -> Vec<String> {
        std::mem::take(&mut self.shared.borrow_mut().output)
    }

    /// Error reports (`name.lua:LINE: message`) since the last call.
    pub fn take_errors(&mut self) -> Vec<String> {
        std::mem::take(&mut self.errors)
    }

    /// `emu.message` texts since the last call.
    pub fn take_messages(&mut self) -> Vec<String> {
        std::mem::take(&mut self.shared.borrow_mut().messages)
    }

    pub fn speed_mode(&self) -> SpeedMode {
        self.shared.borrow().speed
    }

    /// `emu.pause()` was called and `emu.unpause()` not yet.
    pub fn paused(&self) -> bool {
        self.shared.borrow().paused
    }

    /// Tell the script whether the emulator is paused (`emu.paused()`): a window mirrors its
    /// pause state here, so a paused script waits at `frameadvance` and a user unpause (or a
    /// frame advance) lets it run again, as in FCEUX.
    pub fn set_paused(&mut self, paused: bool) {
        self.shared.borrow_mut().paused = paused;
    }

    /// The keyboard and mouse `input.get()` and `zapper.read()` report from now on.
    pub fn set_host_input(&mut self, input: HostInput) {
        self.shared.borrow_mut().host_input = input;
    }

    /// `emu.exit()` or `os.exit()` was called: the emulator should end the run (after the
    /// current frame), as FCEUX quits.
    pub fn exit_requested(&self) -> bool {
        self.shared.borrow().exit_requested
    }

    /// The exit status `os.exit(code)` asked for (`emu.exit()` asks for none).
    pub fn exit_status(&self) -> Option<i32> {
        self.shared.borrow().exit_status
    }

    /// Send `print` lines to `sink` as they are printed (each without its line end) instead
    /// of keeping them for [`LuaHost::take_output`], so nothing printed is lost or late.
    pub fn set_print_sink(&mut self, sink: impl FnMut(&[u8]) + 'static) {
        self.shared.borrow_mut().print_sink = Some(PrintSink(Box::new(sink)));
    }

    /// Tell the host about movie playback or recording (`movie.*`).
    pub fn set_movie_status(&mut self, status: MovieStatus) {
        self.shared.borrow_mut().movie = status;
    }

    /// Draw the overlay of the last frame over `rgba` (256x240 RGBA, e.g. `Nes::frame_rgba`).
    pub fn composite_overlay(&self, rgba: &mut [u8]) {
        self.shared.borrow().overlay.composite(rgba);
    }

    /// The overlay shown over the last frame: 256x240 RGBA, straight alpha.
    pub fn overlay_rgba(&self) -> Vec<u8> {
        self.shared.borrow().overlay.shown().to_vec()
    }

    /// A user save to slot `slot` (0-9): fires `savestate.registersave`; returns its values
    /// serialised for [`LuaHost::user_loaded_slot`] (kept inside the host).
    pub fn user_saved_slot(&mut self, nes: &mut Nes, slot: u8) {
        let callback: Option<Function> = self.registries.callbacks.raw_get("save").ok().flatten();
        let Some(callback) = callback else { return };
        let result = self.enter(nes, || callback.call::<MultiValue>(slot));
        match result {
            Ok(values) => {
                if let Ok(saved) = self.lua.create_sequence_from(values) {
                    let _ = self
                        .registries
                        .callbacks
                        .raw_set(format!("saved{slot}"), saved);
                }
            }
            Err(error) => {
                self.report(&error);
                let _ = self.registries.callbacks.raw_set("save", Value::Nil);
                self.stop_if_exiting(nes);
            }
        }
    }

    /// After a callback failed: the failure was `os.exit` unwinding or the watchdog, so the
    /// script ends.
    fn stop_if_exiting(&mut self, nes: &mut Nes) {
        if self.must_stop() {
            self.stop(nes);
        }
    }

    /// A user load of slot `slot`: fires `savestate.registerload` with the slot number and the
    /// values the save callback returned for that slot.
    pub fn user_loaded_slot(&mut self, nes: &mut Nes, slot: u8) {
        let callback: Option<Function> = self.registries.callbacks.raw_get("load").ok().flatten();
        let Some(callback) = callback else { return };
        let saved: Option<Table> = self
            .registries
            .callbacks
            .raw_get(format!("saved{slot}"))
            .ok()
            .flatten();
        let mut args = MultiValue::new();
        args.push_back(Value::Integer(i64::from(slot)));
        if let Some(saved) = saved {
            for value in saved.sequence_values::<Value>().flatten() {
                args.push_back(value);
            }
        }
        let result = self.enter(nes, || callback.call::<()>(args));
        if let Err(error) = result {
            self.report(&error);
            let _ = self.registries.callbacks.raw_set("load", Value::Nil);
            self.stop_if_exiting(nes);
        }
    }

    /// Dispatch one memory hook.
    fn dispatch(&mut self, kind: HookKind, machine: &mut HookMachine<'_>, addr: u16, value: u8) {
        if self.stop_pending || self.stopped {
            return;
        }
        let callback: Option<Function> = self.registries.hooks(kind).raw_get(addr).ok().flatten();
        let Some(callback) = callback else {
            return;
        };
        let result = self.enter(machine, || callback.call::<()>((addr, 1, value)));
        self.sync_hooks();
        if let Err(error) = result {
            self.report(&error);
            // Dispatch stops at once; the instruction finishes, then the script is stopped.
            self.stop_pending = true;
            self.map.clear();
        }
    }
}

impl FrameHooks for LuaHost {
    fn before_frame(&mut self, nes: &mut Nes) {
        self.run_frame_callback(nes, "before");
        if !self.stopped && (self.map.exec.any() || self.map.write.any() || self.map.read.any()) {}
    }

    fn after_frame(&mut self, nes: &mut Nes) {
        if self.stop_pending {
            self.stop(nes);
        }
        if self.stopped {
            return;
        }
        // 5. gui.register, then the overlay is composited over the frame's picture.
        self.run_frame_callback(nes, "gui");
        {
            let shared = &mut *self.shared.borrow_mut();
            let (palette, frame) = (shared.palette.as_ref(), nes.frame_buffer());
            shared
                .overlay
                .present(|i| palette.map_or([0; 3], |palette| palette.rgb(frame[i])));
        }
        // 6. registerafter (the lag frame is counted after it).
        self.run_frame_callback(nes, "after");
    }
}

impl MemoryHooks for LuaHost {
    #[inline(always)]
    fn map(&self) -> &HookMap {
        &self.map
    }

    fn on_exec(&mut self, machine: &mut HookMachine<'_>, addr: u16) {
        self.dispatch(HookKind::Exec, machine, addr, 0);
    }

    fn on_write(&mut self, machine: &mut HookMachine<'_>, addr: u16, value: u8) {
        self.dispatch(HookKind::Write, machine, addr, value);
    }

    fn on_read(&mut self, machine: &mut HookMachine<'_>, addr: u16, value: u8) {
        self.dispatch(HookKind::Read, machine, addr, value);
    }
}

/// The file at `path`, or `None` if it is longer than `limit` bytes (of which at most
/// `limit + 1` are read: the file may be endless, like `/dev/zero`).
pub(crate) fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

#[cfg(test)]
mod tests;
