//! The window: winit events, the picture through pixels, and the frame loop that ties input,
//! emulation, audio, hooks and on-screen messages together.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nes::{Palette, Region, SCREEN_HEIGHT, SCREEN_WIDTH};
use nes_headless::output::save_png;
use pixels::{Pixels, PixelsBuilder, SurfaceTexture};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{ElementState, MouseButton, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow};
use winit::keyboard::PhysicalKey;
use winit::window::{Fullscreen, Window, WindowId};

use super::audio::AudioOutput;
use super::config::{Config, PixelAspect};
use super::game::{Game, GameOptions, SLOTS};
use super::input::{Hotkey, HotkeyEvent, InputState};
use super::osd::{self, Osd};
use super::pacing::{AudioClock, DriftResampler, FramePacer, RateControl, Speed};
use super::scale::Scaler;
use super::script::Script;
use nes_lua::SpeedMode;

/// Largest share of a wake-up spent emulating when unthrottled, so the window stays
/// responsive and still shows frames.
const UNTHROTTLED_SLICE: Duration = Duration::from_millis(14);
/// Wake-ups while nothing runs (paused, no game), to poll gamepads and expire messages.
const IDLE_WAKEUP: Duration = Duration::from_millis(16);
/// Largest DRC resampling-ratio change: ±0.5%, inaudible as pitch.
const MAX_RATE_ADJUSTMENT: f64 = 0.005;

/// Options from the command line that are not in the config file.
#[derive(Debug, Clone)]
pub struct Session {
    pub palette: Palette,
    pub game_options: GameOptions,
    pub exit_after_frames: Option<u64>,
    pub screenshot: Option<PathBuf>,
    pub screenshot_osd: bool,
    pub audio: bool,
}

pub struct App {
    config: Config,
    session: Session,
    input: InputState,
    gilrs: Option<gilrs::Gilrs>,
    audio: Option<AudioOutput>,
    /// The audio device's measured clock, which paces the frames.
    audio_clock: Option<AudioClock>,
    rate_control: Option<RateControl>,
    resampler: DriftResampler,
    /// This frame's audio from the console, and after rate control (reused buffers).
    samples: Vec<f32>,
    resampled: Vec<f32>,
    game: Option<Game>,
    window: Option<Arc<Window>>,
    pixels: Option<Pixels<'static>>,
    scaler: Scaler,
    aspect: PixelAspect,
    /// The composed 256x240 picture: game, script overlay, on-screen messages.
    picture: Vec<u8>,
    osd: Osd,
    /// The Lua script (`--lua`, or a dropped .lua file): it runs the frames with the game.
    script: Option<Script>,
    /// The script's `emu.speedmode`.
    speed_mode: SpeedMode,
    /// The mouse pointer in picture pixels and its buttons (1 left, 2 right, 4 middle), for
    /// a script's `input.get()` and `zapper.read()`.
    mouse: (i32, i32),
    mouse_buttons: u8,
    pacer: FramePacer,
    paused: bool,
    advance_one: bool,
    fast_forward: bool,
    rewinding: bool,
    rewind_exhausted: bool,
    speed_toggled: bool,
    slot: u8,
    volume: u8,
    muted: bool,
    /// Frames counted while no game is loaded (for --exit-after-frames on the empty window).
    idle_frames: u64,
    needs_redraw: bool,
    error: Option<String>,
    finished: bool,
    /// Tests: the next frame panics with this message, as an emulator bug would.
    #[cfg(test)]
    panic_next_frame: Option<&'static str>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("game", &self.game.as_ref().map(Game::rom))
            .field("paused", &self.paused)
            .finish_non_exhaustive()
    }
}

impl App {
    pub fn new(
        config: Config,
        session: Session,
        input: InputState,
        game: Option<Game>,
        script: Option<Script>,
        notes: Vec<String>,
    ) -> App {
        let mut osd = Osd::default();
        for note in notes {
            eprintln!("{note}");
            osd.message(note);
        }
        let aspect = config.video.pixel_aspect;
        let scaler = Scaler::new(config.video.scale, aspect);
        let volume = config.audio.volume;
        let frame_rate = game
            .as_ref()
            .map_or(Region::Ntsc, |game| game.nes.region())
            .frame_rate_hz();
        let mut app = App {
            input,
            gilrs: None,
            audio: None,
            audio_clock: None,
            rate_control: None,
            resampler: DriftResampler::default(),
            samples: Vec::with_capacity(4096),
            resampled: Vec::with_capacity(4096),
            game,
            window: None,
            pixels: None,
            scaler,
            aspect,
            picture: vec![0; SCREEN_WIDTH * SCREEN_HEIGHT * 4],
            osd,
            script,
            speed_mode: SpeedMode::Normal,
            mouse: (0, 0),
            mouse_buttons: 0,
            pacer: FramePacer::new(Instant::now(), frame_rate),
            paused: false,
            advance_one: false,
            fast_forward: false,
            rewinding: false,
            rewind_exhausted: false,
            speed_toggled: false,
            slot: 0,
            volume,
            muted: false,
            idle_frames: 0,
            needs_redraw: true,
            error: None,
            finished: false,
            #[cfg(test)]
            panic_next_frame: None,
            config,
            session,
        };
        app.open_audio();
        app.open_gamepads();
        if let Some(game) = &mut app.game {
            if app.audio.is_some() {
                let rate = app.audio.as_ref().map_or(0, AudioOutput::sample_rate);
                game.nes.set_audio_sample_rate(rate);
            }
        }
        app.start_script();
        app
    }

    /// Start the script (afresh) on the loaded game; without a game it waits for one.
    fn start_script(&mut self) {
        let Some(script) = &mut self.script else {
            return;
        };
        let Some(game) = &mut self.game else {
            self.osd.message(format!(
                "Lua script {} starts when a game is loaded",
                script.name()
            ));
            return;
        };
        script.set_watchdog(self.config.lua.watchdog());
        let note = script.start(game, &self.session.palette);
        let note = note.unwrap_or_else(|e| e);
        eprintln!("{note}");
        self.osd.message(note);
        self.speed_mode = SpeedMode::Normal;
    }

    /// Stop the script (its `emu.registerexit` runs) on the console it ran on.
    fn stop_script(&mut self) {
        if let (Some(script), Some(game)) = (&mut self.script, &mut self.game) {
            script.stop(&mut game.nes);
            script.report(&mut self.osd, self.config.lua.print_on_screen);
        }
        self.speed_mode = SpeedMode::Normal;
    }

    /// A file dropped onto the window or chosen in the open-file dialog: a `.lua` file is a
    /// script, anything else a game.
    fn open_file(&mut self, path: &Path) {
        let is_lua = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("lua"));
        if is_lua {
            self.load_script(path);
        } else {
            self.load_game(path);
        }
    }

    /// The platform's open-file dialog (XDG desktop portal on Linux). The game waits while
    /// it is open; on a desktop without one, dropping the file onto the window still works.
    fn open_file_dialog(&mut self) {
        let mut dialog = rfd::FileDialog::new()
            .set_title("Open a game (.nes) or a Lua script (.lua)")
            .add_filter("NES game or Lua script", &["nes", "NES", "lua"])
            .add_filter("Any file", &["*"]);
        if let Some(dir) = self.game.as_ref().and_then(|game| game.rom().parent()) {
            dialog = dialog.set_directory(dir);
        }
        if let Some(window) = &self.window {
            dialog = dialog.set_parent(window.as_ref());
        }
        let chosen = dialog.pick_file();
        // Time stood still while the dialog was open: no catching up, no stale sound.
        self.pacer.restart(Instant::now());
        if let Some(audio) = &self.audio {
            audio.clear();
        }
        match chosen {
            Some(path) => self.open_file(&path),
            None => self.osd.message(
                "No file opened (without a file dialog on this desktop, drop the file onto \
                 the window)",
            ),
        }
    }

    /// Stop the running script, or start the stopped one again from the top.
    fn toggle_script(&mut self) {
        let Some(script) = &self.script else {
            self.osd
                .message("No Lua script: start one with --lua, O, or by dropping a .lua file");
            return;
        };
        if script.is_running() {
            let name = script.name();
            self.stop_script();
            eprintln!("Lua script {name} stopped");
            self.osd.message(format!("Lua script {name} stopped"));
        } else {
            self.start_script();
        }
    }

    /// A .lua file dropped onto the window replaces the running script.
    fn load_script(&mut self, path: &Path) {
        self.stop_script();
        self.script = Some(Script::new(path, None));
        self.start_script();
        self.needs_redraw = true;
    }

    /// The error that ended the session, if any.
    pub fn into_result(self) -> Result<(), String> {
        match self.error {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    fn open_audio(&mut self) {
        if !(self.session.audio && self.config.audio.enabled) {
            return;
        }
        match AudioOutput::open(self.config.audio.latency_ms) {
            Ok(audio) => {
                audio.set_volume(self.volume);
                self.rate_control = Some(RateControl::new(audio.target(), MAX_RATE_ADJUSTMENT));
                self.audio_clock = Some(AudioClock::new(audio.sample_rate(), Instant::now()));
                self.audio = Some(audio);
            }
            Err(why) => {
                eprintln!("No audio: {why}. Running silently, timed by the clock.");
                self.osd.message("No audio device: running silently");
            }
        }
    }

    fn open_gamepads(&mut self) {
        if !self.config.gamepad.enabled {
            return;
        }
        let gilrs = match gilrs::Gilrs::new() {
            Ok(gilrs) => gilrs,
            Err(gilrs::Error::NotImplemented(dummy)) => {
                eprintln!("Gamepads are not supported on this platform; keyboard only.");
                dummy
            }
            Err(e) => {
                eprintln!("Gamepads unavailable ({e}); keyboard only.");
                return;
            }
        };
        for (id, gamepad) in gilrs.gamepads() {
            if let Some(player) = self.input.gamepad_connected(id.into()) {
                let note = format!("Gamepad {} is player {player}", gamepad.name());
                eprintln!("{note}");
                self.osd.message(note);
            }
        }
        self.gilrs = Some(gilrs);
    }

    fn poll_gamepads(&mut self) {
        let Some(gilrs) = &mut self.gilrs else {
            return;
        };
        let mut hotkeys = Vec::new();
        while let Some(gilrs::Event { id, event, .. }) = gilrs.next_event() {
            let pad = usize::from(id);
            match event {
                gilrs::EventType::Connected => {
                    let name = gilrs.gamepad(id).name().to_owned();
                    match self.input.gamepad_connected(pad) {
                        Some(player) => self
                            .osd
                            .message(format!("Gamepad {name} connected: player {player}")),
                        None => self.osd.message(format!("Gamepad {name} connected")),
                    }
                }
                gilrs::EventType::Disconnected => {
                    hotkeys.extend(self.input.gamepad_disconnected(pad));
                    self.osd.message("Gamepad disconnected");
                }
                gilrs::EventType::ButtonPressed(button, _) => {
                    hotkeys.extend(self.input.gamepad_button(pad, button, true));
                }
                gilrs::EventType::ButtonReleased(button, _) => {
                    hotkeys.extend(self.input.gamepad_button(pad, button, false));
                }
                gilrs::EventType::AxisChanged(gilrs::Axis::LeftStickX, value, _) => {
                    self.input.gamepad_stick(pad, Some(value), None);
                }
                gilrs::EventType::AxisChanged(gilrs::Axis::LeftStickY, value, _) => {
                    self.input.gamepad_stick(pad, None, Some(value));
                }
                _ => {}
            }
        }
        for event in hotkeys {
            self.hotkey(event);
        }
    }

    fn create_window(&mut self, event_loop: &ActiveEventLoop) -> Result<(), String> {
        let title = self.title();
        let size = PhysicalSize::new(self.scaler.width, self.scaler.height);
        let mut attributes = Window::default_attributes()
            .with_title(title)
            .with_inner_size(size)
            .with_min_inner_size(PhysicalSize::new(SCREEN_WIDTH as u32, SCREEN_HEIGHT as u32))
            .with_resizable(true);
        if self.config.video.fullscreen {
            attributes = attributes.with_fullscreen(Some(Fullscreen::Borderless(None)));
        }
        let window = Arc::new(
            event_loop
                .create_window(attributes)
                .map_err(|e| format!("cannot open a window: {e}"))?,
        );
        let inner = window.inner_size();
        let surface =
            SurfaceTexture::new(inner.width.max(1), inner.height.max(1), Arc::clone(&window));
        self.scaler = Scaler::fit(inner.width, inner.height, self.aspect);
        let pixels = PixelsBuilder::new(self.scaler.width, self.scaler.height, surface)
            .enable_vsync(self.config.video.vsync)
            .clear_color(pixels::wgpu::Color::BLACK)
            .build()
            .map_err(|e| match e {
                pixels::Error::AdapterNotFound => "no GPU adapter found: the window needs Vulkan, \
                     Metal, DirectX 12 or OpenGL. On Linux without a GPU driver, install Mesa's \
                     software renderer (Debian: apt-get install mesa-vulkan-drivers)."
                    .to_owned(),
                pixels::Error::CreateSurface(e) => format!(
                    "no graphics driver could draw into the window ({e}). On Linux without a \
                     GPU driver, install Mesa's software renderer (Debian: apt-get install \
                     mesa-vulkan-drivers)."
                ),
                other => format!("cannot set up drawing in the window: {other}"),
            })?;
        self.window = Some(window);
        self.pixels = Some(pixels);
        Ok(())
    }

    fn title(&self) -> String {
        match &self.game {
            Some(game) => format!("{} - nes", game.name()),
            None => "nes - drop a .nes file here".to_owned(),
        }
    }

    fn fail(&mut self, event_loop: &ActiveEventLoop, message: String) {
        if self.error.is_none() {
            self.error = Some(message);
        }
        self.finished = true;
        event_loop.exit();
    }

    /// End the session: battery save, the --screenshot file, then leave the event loop.
    fn quit(&mut self, event_loop: &ActiveEventLoop) {
        if self.finished {
            return;
        }
        self.finished = true;
        // The screenshot shows the window as it is now, the script's overlay included...
        if self.session.screenshot.is_some() {
            self.compose(self.session.screenshot_osd);
        }
        // ...then the script ends (its registerexit may still write to cartridge RAM) before
        // the battery save.
        self.stop_script();
        if let Some(game) = &mut self.game {
            match game.save_battery() {
                Ok(Some(path)) => eprintln!("battery save written: {}", path.display()),
                Ok(None) => {}
                Err(e) => self.error = Some(e),
            }
        }
        if let Some(path) = &self.session.screenshot {
            match save_png(
                path,
                &self.picture,
                SCREEN_WIDTH as u32,
                SCREEN_HEIGHT as u32,
            ) {
                Ok(()) => {
                    nes_headless::outln!("screenshot: {}", path.display());
                }
                Err(e) => self.error = self.error.take().or(Some(e.to_string())),
            }
        }
        if let Some(game) = &self.game {
            nes_headless::outln!("frames: {}", game.frames);
        }
        event_loop.exit();
    }

    fn load_game(&mut self, path: &Path) {
        let mut notes = Vec::new();
        let loaded = match Game::load(path, &self.session.game_options, &mut notes) {
            Ok(mut game) => {
                self.stop_script();
                if let Some(old) = &mut self.game {
                    if let Err(e) = old.save_battery() {
                        notes.push(e);
                    }
                }
                if let Some(audio) = &self.audio {
                    game.nes.set_audio_sample_rate(audio.sample_rate());
                    audio.clear();
                }
                notes.push(format!("Loaded {}", game.name()));
                self.pacer.set_frame_rate(game.nes.region().frame_rate_hz());
                self.game = Some(game);
                self.paused = false;
                self.pacer.restart(Instant::now());
                if let Some(window) = &self.window {
                    window.set_title(&self.title());
                }
                true
            }
            Err(e) => {
                notes.push(e);
                false
            }
        };
        for note in notes {
            eprintln!("{note}");
            self.osd.message(note);
        }
        if loaded {
            // A script's state belongs to one game: it starts afresh on the new one.
            self.start_script();
        }
        self.needs_redraw = true;
    }

    fn hotkey(&mut self, event: HotkeyEvent) {
        let HotkeyEvent { hotkey, pressed } = event;
        match hotkey {
            Hotkey::FastForward => self.fast_forward = pressed,
            Hotkey::Rewind => {
                self.rewinding = pressed;
                self.rewind_exhausted = false;
                if pressed && !self.game.as_ref().is_some_and(Game::rewind_enabled) {
                    self.osd
                        .message("Rewind is off (emulation.rewind_memory_mib = 0)");
                }
                if !pressed {
                    self.pacer.restart(Instant::now());
                }
            }
            Hotkey::Pause => {
                self.paused = !self.paused;
                if let Some(script) = &mut self.script {
                    script.set_paused(self.paused);
                }
                self.pacer.restart(Instant::now());
                self.osd
                    .message(if self.paused { "Paused" } else { "Resumed" });
            }
            Hotkey::FrameAdvance => {
                if !self.paused {
                    self.paused = true;
                    if let Some(script) = &mut self.script {
                        script.set_paused(true);
                    }
                    self.osd.message("Paused (frame advance)");
                } else {
                    self.advance_one = true;
                }
            }
            Hotkey::SpeedToggle => {
                self.speed_toggled = !self.speed_toggled;
                let speed = self.config.emulation.toggle_speed;
                self.osd.message(if self.speed_toggled {
                    speed_name(Speed::from_multiplier(speed))
                } else {
                    "Normal speed".to_owned()
                });
            }
            Hotkey::NextSlot => self.select_slot((self.slot + 1) % SLOTS),
            Hotkey::PreviousSlot => self.select_slot((self.slot + SLOTS - 1) % SLOTS),
            Hotkey::SelectSlot(slot) => self.select_slot(slot),
            Hotkey::VolumeUp => self.set_volume(self.volume.saturating_add(10).min(100)),
            Hotkey::VolumeDown => self.set_volume(self.volume.saturating_sub(10)),
            Hotkey::Mute => {
                self.muted = !self.muted;
                if let Some(audio) = &self.audio {
                    audio.set_muted(self.muted);
                }
                self.osd
                    .message(if self.muted { "Muted" } else { "Sound on" });
            }
            Hotkey::Fullscreen => {
                if let Some(window) = &self.window {
                    let full = window.fullscreen().is_some();
                    window.set_fullscreen((!full).then_some(Fullscreen::Borderless(None)));
                }
            }
            Hotkey::PixelAspect => {
                self.aspect = self.aspect.toggled();
                if let Some(window) = self.window.clone() {
                    let mut size = window.inner_size();
                    if window.fullscreen().is_none() {
                        // Keep the scale: the window grows or shrinks to the new shape.
                        let scale = self.scaler.height / SCREEN_HEIGHT as u32;
                        let wanted = Scaler::new(scale, self.aspect);
                        let wanted = PhysicalSize::new(wanted.width, wanted.height);
                        // `None`: the new size arrives later as a Resized event.
                        size = window.request_inner_size(wanted).unwrap_or(size);
                    }
                    self.resize(size.width, size.height);
                }
                self.osd.message(match self.aspect {
                    PixelAspect::Square => "Square pixels",
                    PixelAspect::Ntsc => "8:7 pixels (NTSC television)",
                });
            }
            Hotkey::OpenFile => self.open_file_dialog(),
            Hotkey::ToggleScript => self.toggle_script(),
            Hotkey::Quit => {} // Handled where the event loop is at hand.
            Hotkey::SoftReset
            | Hotkey::PowerCycle
            | Hotkey::SaveState
            | Hotkey::LoadState
            | Hotkey::Screenshot => self.game_hotkey(hotkey),
        }
        self.needs_redraw = true;
    }

    fn game_hotkey(&mut self, hotkey: Hotkey) {
        let Some(game) = &mut self.game else {
            self.osd
                .message("No game: drop a .nes file onto the window");
            return;
        };
        let message = match hotkey {
            // The player's reset and power restart the frame count, as FCEUX's menu commands
            // do outside movies.
            Hotkey::SoftReset => {
                game.nes.soft_reset();
                game.nes.reset_frame_count();
                "Reset".to_owned()
            }
            Hotkey::PowerCycle => {
                game.nes.power_cycle();
                game.nes.reset_frame_count();
                game.clear_rewind();
                "Power cycled".to_owned()
            }
            Hotkey::SaveState => match game.save_state(self.slot) {
                Ok(_) => {
                    if let Some(script) = &mut self.script {
                        script.state_saved(&mut game.nes, self.slot);
                    }
                    format!("State {} saved", self.slot)
                }
                Err(e) => e,
            },
            Hotkey::LoadState => match game.load_state(self.slot) {
                Ok(()) => {
                    if let Some(audio) = &self.audio {
                        audio.clear();
                    }
                    if let Some(script) = &mut self.script {
                        script.state_loaded(&mut game.nes, self.slot);
                    }
                    format!("State {} loaded", self.slot)
                }
                Err(e) => e,
            },
            Hotkey::Screenshot => {
                let path = next_free_path(&game.files_dir(), &game.name());
                let picture = compose_picture(
                    game,
                    &self.session.palette,
                    self.script.as_ref(),
                    None,
                    &mut self.picture,
                );
                match save_png(&path, picture, SCREEN_WIDTH as u32, SCREEN_HEIGHT as u32) {
                    Ok(()) => format!("Screenshot {}", path.display()),
                    Err(e) => e.to_string(),
                }
            }
            _ => return,
        };
        eprintln!("{message}");
        self.osd.message(message);
    }

    fn select_slot(&mut self, slot: u8) {
        self.slot = slot;
        let used = self
            .game
            .as_ref()
            .is_some_and(|game| game.state_path(slot).exists());
        self.osd.message(format!(
            "Slot {slot}{}",
            if used { " (saved)" } else { " (empty)" }
        ));
    }

    fn set_volume(&mut self, volume: u8) {
        self.volume = volume;
        if let Some(audio) = &self.audio {
            audio.set_volume(volume);
        }
        self.osd.message(format!("Volume {volume}%"));
    }

    fn resize(&mut self, width: u32, height: u32) {
        if width == 0 || height == 0 {
            return; // Minimised.
        }
        let Some(pixels) = &mut self.pixels else {
            return;
        };
        self.scaler = Scaler::fit(width, height, self.aspect);
        let result = pixels
            .resize_surface(width, height)
            .and_then(|()| pixels.resize_buffer(self.scaler.width, self.scaler.height));
        if let Err(e) = result {
            self.osd.message(format!("Resize failed: {e}"));
        }
        self.needs_redraw = true;
    }

    /// The speed frames run at now.
    fn speed(&self) -> Speed {
        if !self.speed_mode.is_throttled() {
            Speed::Unthrottled
        } else if self.fast_forward {
            Speed::from_multiplier(self.config.emulation.fast_forward_speed)
        } else if self.speed_toggled {
            Speed::from_multiplier(self.config.emulation.toggle_speed)
        } else {
            Speed::Throttled(1.0)
        }
    }

    /// Run the frames that are due; returns whether the session should end.
    fn run_due_frames(&mut self, now: Instant) -> bool {
        self.pacer.set_speed(self.speed(), now);
        if self.paused && !self.advance_one {
            return false;
        }
        if self.advance_one {
            self.advance_one = false;
            return self.run_frame();
        }
        match self.pacer.speed() {
            Speed::Unthrottled => {
                while now.elapsed() < UNTHROTTLED_SLICE {
                    if self.run_frame() {
                        return true;
                    }
                }
                false
            }
            Speed::Throttled(_) => {
                for _ in 0..self.pacer.frames_due(now) {
                    if self.run_frame() {
                        return true;
                    }
                }
                false
            }
        }
    }

    /// Run one frame (or one rewind step); returns whether --exit-after-frames is reached.
    fn run_frame(&mut self) -> bool {
        self.needs_redraw = true;
        let Some(game) = &mut self.game else {
            self.idle_frames += 1;
            return self.session.exit_after_frames == Some(self.idle_frames);
        };
        if self.rewinding && game.rewind_enabled() {
            if !game.rewind_step() && !self.rewind_exhausted {
                self.rewind_exhausted = true;
                self.osd.message("Rewind: no older frames");
            }
            if let Some(audio) = &self.audio {
                audio.clear();
            }
            return false;
        }
        let user = [self.input.buttons(0), self.input.buttons(1)];
        #[cfg(test)]
        let panic_now = self.panic_next_frame.take();
        // An emulator bug must not take the window (and the player's other games) down: the
        // frame runs under `catch_unwind` (release builds unwind too).
        let stepped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            #[cfg(test)]
            if let Some(message) = panic_now {
                panic!("{message}");
            }
            // `emu.exit()` / `os.exit()`: FCEUX quits, and so does the window.
            let mut script_quits = false;
            match &mut self.script {
                Some(script) => {
                    script.set_host_input(self.input.keys_held(), self.mouse, self.mouse_buttons);
                    let frame = script.run_frame(&mut game.nes, user);
                    script.report(&mut self.osd, self.config.lua.print_on_screen);
                    self.speed_mode = frame.speed_mode;
                    script_quits = frame.exit_requested;
                    if frame.pause_requested && !self.paused {
                        self.paused = true;
                        self.osd.message("Paused by the Lua script");
                    }
                    if self.paused {
                        // After a frame advance the script waits again.
                        script.set_paused(true);
                    }
                }
                None => {
                    game.nes.set_buttons(0, user[0]);
                    game.nes.set_buttons(1, user[1]);
                    game.nes.run_frame();
                }
            }
            script_quits
        }));
        let script_quits = match stepped {
            Ok(quits) => quits,
            Err(payload) => {
                self.emulator_crashed(payload.as_ref());
                return false;
            }
        };
        if let Err(e) = game.frame_done() {
            eprintln!("{e}");
            self.osd.message(e);
        }
        if let Some(audio) = &self.audio {
            self.samples.clear();
            game.nes.take_audio_samples(&mut self.samples);
            let queued = audio.queued();
            if self.pacer.speed().is_normal() {
                let ratio = self
                    .rate_control
                    .map_or(1.0, |control| control.ratio(queued));
                self.resampled.clear();
                let resampled = &mut self.resampled;
                self.resampler
                    .process(&self.samples, ratio, |sample| resampled.push(sample));
                audio.push(&self.resampled);
            } else if queued < audio.target() {
                // Faster or slower than normal: play what fits, skip the rest, so the
                // sound stays in step with the picture.
                audio.push(&self.samples);
            }
        }
        script_quits || self.session.exit_after_frames == Some(game.frames)
    }

    /// The emulator panicked running a frame: the game is closed (the window shows the start
    /// screen and takes another game) without writing its battery save, since the console's
    /// state may be half-updated: the last periodic save is kept.
    fn emulator_crashed(&mut self, payload: &(dyn std::any::Any + Send)) {
        let name = self.game.as_ref().map(Game::name).unwrap_or_default();
        let message = format!(
            "The emulator crashed running {name} ({}); the game was closed without writing \
             its battery save",
            nes_headless::panic_message(payload)
        );
        eprintln!("{message}");
        self.osd.message(message);
        self.game = None;
        self.speed_mode = SpeedMode::Normal;
        if let Some(audio) = &self.audio {
            audio.clear();
        }
    }

    /// Compose the 256x240 picture into `self.picture`: the game (or the start screen), the
    /// overlay, and the on-screen messages if asked for.
    fn compose(&mut self, with_osd: bool) {
        let osd = (with_osd && self.config.video.messages).then_some(&self.osd);
        match &self.game {
            Some(game) => {
                compose_picture(
                    game,
                    &self.session.palette,
                    self.script.as_ref(),
                    osd,
                    &mut self.picture,
                );
            }
            None => {
                draw_start_screen(&mut self.picture);
                if let Some(osd) = osd {
                    osd.draw(&mut self.picture);
                }
            }
        }
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) {
        self.compose(true);
        let Some(pixels) = &mut self.pixels else {
            return;
        };
        self.scaler.scale(&self.picture, pixels.frame_mut());
        if let Err(e) = pixels.render() {
            self.fail(event_loop, format!("drawing the window failed: {e}"));
        }
    }

    fn update_status(&mut self) {
        let status = if self.paused {
            "PAUSED".to_owned()
        } else if self.rewinding {
            "<< REWIND".to_owned()
        } else if !self.pacer.speed().is_normal() {
            speed_name(self.pacer.speed())
        } else {
            String::new()
        };
        self.osd.set_status(&status);
    }
}

fn speed_name(speed: Speed) -> String {
    match speed {
        Speed::Unthrottled => ">> FAST".to_owned(),
        Speed::Throttled(multiplier) => format!("SPEED {:.0}%", multiplier * 100.0),
    }
}

/// `<dir>/<name>-<n>.png` with the first n not yet used.
fn next_free_path(dir: &Path, name: &str) -> PathBuf {
    (1u32..)
        .map(|n| dir.join(format!("{name}-{n}.png")))
        .find(|path| !path.exists())
        .unwrap_or_else(|| dir.join(format!("{name}.png")))
}

fn compose_picture<'a>(
    game: &Game,
    palette: &Palette,
    script: Option<&Script>,
    osd: Option<&Osd>,
    picture: &'a mut [u8],
) -> &'a [u8] {
    palette.to_rgba(game.nes.frame_buffer(), picture);
    if let Some(script) = script {
        script.composite_overlay(picture);
    }
    if let Some(osd) = osd {
        osd.draw(picture);
    }
    picture
}

/// The empty window's picture: how to open a game.
fn draw_start_screen(picture: &mut [u8]) {
    for pixel in picture.chunks_exact_mut(4) {
        pixel.copy_from_slice(&[24, 24, 40, 255]);
    }
    let lines = [
        "NES",
        "",
        "DROP A .NES FILE ONTO THIS WINDOW",
        "OR PRESS O TO OPEN ONE",
        "(A .LUA FILE RUNS A SCRIPT)",
        "",
        "OR START WITH:",
        "NES PLAY GAME.NES",
        "",
        "ESC QUITS",
    ];
    let top = 80;
    for (row, line) in lines.iter().enumerate() {
        let width = line.chars().count() * 6;
        let x = (SCREEN_WIDTH - width) / 2;
        if !line.is_empty() {
            osd::draw_text(picture, x, top + row * 10, line, [230, 230, 255]);
        }
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() || self.finished {
            return;
        }
        if let Err(e) = self.create_window(event_loop) {
            self.fail(event_loop, e);
            return;
        }
        self.pacer.restart(Instant::now());
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => self.quit(event_loop),
            WindowEvent::Resized(size) => self.resize(size.width, size.height),
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            WindowEvent::DroppedFile(path) => self.open_file(&path),
            WindowEvent::CursorMoved { position, .. } => {
                if let Some(pixels) = &self.pixels {
                    // Window position to a pixel of the scaled picture (outside it: beyond
                    // its edges), then to a picture pixel.
                    let (x, y) = pixels
                        .window_pos_to_pixel((position.x as f32, position.y as f32))
                        .map_or_else(|(x, y)| (x as i64, y as i64), |(x, y)| (x as i64, y as i64));
                    let to_picture = |at: i64, scaled: u32, size: usize| {
                        (at * size as i64).div_euclid(i64::from(scaled.max(1))) as i32
                    };
                    self.mouse = (
                        to_picture(x, self.scaler.width, SCREEN_WIDTH),
                        to_picture(y, self.scaler.height, SCREEN_HEIGHT),
                    );
                }
            }
            WindowEvent::MouseInput { state, button, .. } => {
                let bit = match button {
                    MouseButton::Left => 1,
                    MouseButton::Right => 2,
                    MouseButton::Middle => 4,
                    _ => 0,
                };
                if state == ElementState::Pressed {
                    self.mouse_buttons |= bit;
                } else {
                    self.mouse_buttons &= !bit;
                }
            }
            WindowEvent::Focused(false) => {
                self.mouse_buttons = 0;
                for event in self.input.release_all_keys() {
                    self.hotkey(event);
                }
            }
            WindowEvent::KeyboardInput { event, .. } => {
                let PhysicalKey::Code(key) = event.physical_key else {
                    return;
                };
                let pressed = event.state == ElementState::Pressed;
                for hotkey in self.input.key(key, pressed, event.repeat) {
                    if hotkey.hotkey == Hotkey::Quit {
                        self.quit(event_loop);
                        return;
                    }
                    self.hotkey(hotkey);
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if self.finished {
            return;
        }
        self.poll_gamepads();
        let now = Instant::now();
        if let (Some(clock), Some(audio)) = (&mut self.audio_clock, &self.audio) {
            clock.observe(now, audio.played());
            self.pacer.set_clock_speed(clock.speed());
        }
        if self.run_due_frames(now) {
            // Show the last frame before leaving.
            self.redraw(event_loop);
            self.quit(event_loop);
            return;
        }
        self.update_status();
        let before = self.osd.message_count();
        self.osd.expire(now);
        if self.osd.message_count() != before {
            self.needs_redraw = true;
        }
        if self.needs_redraw {
            self.needs_redraw = false;
            if let Some(window) = &self.window {
                window.request_redraw();
            }
        }
        let idle = now + IDLE_WAKEUP;
        let running = !self.paused || self.advance_one;
        match self.pacer.next_deadline() {
            None if running => event_loop.set_control_flow(ControlFlow::Poll),
            Some(deadline) if running => {
                event_loop.set_control_flow(ControlFlow::WaitUntil(deadline.min(idle)))
            }
            _ => event_loop.set_control_flow(ControlFlow::WaitUntil(idle)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::input::InputMap;
    use super::super::test_rom::nmi_rom;
    use super::*;

    /// The window's state without a window: no audio, no gamepads, the game and the script
    /// from `dir`.
    fn app(dir: &Path, script_source: &str) -> App {
        let mut config = Config::default();
        config.gamepad.enabled = false;
        config.audio.enabled = false;
        let game_options = GameOptions {
            power_on: nes::PowerOn::FCEUX,
            hardware: Default::default(),
            save_dir: Some(dir.to_owned()),
            battery: false,
            rewind_bytes: 0,
            rewind_interval: 1,
        };
        let rom = nmi_rom(dir, "loop.nes", &[]);
        let game = Game::load(&rom, &game_options, &mut Vec::new()).unwrap();
        let script_path = dir.join("first.lua");
        std::fs::write(&script_path, script_source).unwrap();
        let session = Session {
            palette: Palette::ntsc(),
            game_options,
            exit_after_frames: None,
            screenshot: None,
            screenshot_osd: false,
            audio: false,
        };
        let input = InputState::new(InputMap::from_config(&config).unwrap(), 0.5);
        let script = Script::new(&script_path, None);
        App::new(config, session, input, Some(game), Some(script), Vec::new())
    }

    fn press(app: &mut App, hotkey: Hotkey) {
        app.hotkey(HotkeyEvent {
            hotkey,
            pressed: true,
        });
    }

    fn peek(app: &App, addr: u16) -> u8 {
        app.game.as_ref().unwrap().nes.peek(addr)
    }

    const PAUSING_SCRIPT: &str = r##"
        emu.registerexit(function() memory.writebyte(0x0300, 0x42) end)
        gui.register(function() gui.box(0, 0, 9, 9, "#0000FFFF", "#0000FFFF") end)
        for i = 1, 3 do emu.frameadvance() end
        emu.pause()
        while true do memory.writebyte(0x0301, emu.framecount()) emu.frameadvance() end
    "##;

    #[test]
    fn an_emulator_panic_closes_the_game_and_the_window_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app(dir.path(), "while true do emu.frameadvance() end");
        app.run_frame();
        app.panic_next_frame = Some("mapper exploded");
        assert!(!app.run_frame());
        assert!(app.game.is_none());
        // The message, wrapped into on-screen lines.
        let shown = app.osd.messages().collect::<Vec<_>>().join(" ");
        assert!(
            shown.contains("crashed running loop (mapper exploded)"),
            "{shown}"
        );
        // The empty window runs on, and takes another game.
        app.run_frame();
        app.load_game(&dir.path().join("loop.nes"));
        assert!(app.game.is_some());
        app.run_frame();
        assert!(app.into_result().is_ok());
    }

    #[test]
    fn the_script_draws_pauses_the_window_and_stops_and_restarts_on_f8() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app(dir.path(), PAUSING_SCRIPT);
        // The script's first slice ran as it started; the boundary slice of the third frame
        // calls emu.pause().
        for _ in 0..2 {
            app.run_frame();
            assert!(!app.paused);
        }
        app.run_frame();
        assert!(app.paused, "emu.pause() pauses the window");
        app.compose(false);
        assert_eq!(&app.picture[..4], &[0, 0, 255, 255], "the overlay is drawn");

        // The player resumes: the script's loop runs again.
        press(&mut app, Hotkey::Pause);
        assert!(!app.paused);
        app.run_frame();
        // Three input latches before this slice (framecount counts them, FCEUX's way).
        assert_eq!(peek(&app, 0x0301), 3);

        // F8 stops it (its registerexit runs) and restarts it from the top.
        press(&mut app, Hotkey::ToggleScript);
        assert!(!app.script.as_ref().unwrap().is_running());
        assert_eq!(peek(&app, 0x0300), 0x42);
        app.compose(false);
        assert_ne!(
            &app.picture[..4],
            &[0, 0, 255, 255],
            "no overlay once stopped"
        );
        press(&mut app, Hotkey::ToggleScript);
        assert!(app.script.as_ref().unwrap().is_running());
    }

    #[test]
    fn a_dropped_script_replaces_the_running_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app(dir.path(), PAUSING_SCRIPT);
        app.run_frame();
        app.run_frame();
        let second = dir.path().join("second.lua");
        std::fs::write(
            &second,
            "emu.speedmode('maximum') while true do emu.frameadvance() end",
        )
        .unwrap();
        app.open_file(&second);
        assert_eq!(
            peek(&app, 0x0300),
            0x42,
            "the first script's registerexit ran"
        );
        let script = app.script.as_ref().unwrap();
        assert_eq!(script.name(), "second.lua");
        assert!(script.is_running());
        app.run_frame();
        assert_eq!(app.speed(), Speed::Unthrottled, "emu.speedmode unthrottles");
    }

    #[test]
    fn another_game_restarts_the_script_on_it_and_a_bad_one_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app(
            dir.path(),
            "while true do memory.writebyte(0x0301, emu.framecount()) emu.frameadvance() end",
        );
        // The boundary slices before frames 1-3 write 0, 1, 2.
        for _ in 0..3 {
            app.run_frame();
        }
        assert_eq!(peek(&app, 0x0301), 2);
        let junk = dir.path().join("junk.nes");
        std::fs::write(&junk, b"not a ROM").unwrap();
        app.open_file(&junk);
        assert_eq!(app.game.as_ref().unwrap().name(), "loop");
        app.run_frame();
        assert_eq!(peek(&app, 0x0301), 3, "the script goes on undisturbed");

        let other = dir.path().join("other.nes");
        std::fs::copy(dir.path().join("loop.nes"), &other).unwrap();
        app.open_file(&other);
        assert_eq!(app.game.as_ref().unwrap().name(), "other");
        assert!(app.script.as_ref().unwrap().is_running());
        // The restarted script counts from 0 again on the new console.
        for _ in 0..3 {
            app.run_frame();
        }
        assert_eq!(peek(&app, 0x0301), 2);
    }

    #[test]
    fn state_slots_call_the_script_s_save_and_load_callbacks() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app(
            dir.path(),
            r#"
            savestate.registersave(function(slot) return slot * 2 end)
            savestate.registerload(function(slot, doubled) memory.writebyte(0x0302, doubled) end)
            while true do emu.frameadvance() end
            "#,
        );
        for _ in 0..3 {
            app.run_frame();
        }
        press(&mut app, Hotkey::SelectSlot(3));
        press(&mut app, Hotkey::SaveState);
        assert!(dir.path().join("loop.state3").is_file());
        press(&mut app, Hotkey::LoadState);
        assert_eq!(peek(&app, 0x0302), 6);
    }
}
