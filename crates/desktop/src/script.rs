//! A Lua script in the window: FCEUX's "Lua script" window, reduced to what players use. The
//! script starts with the game (FCEUX scripts read the ROM on their first slice), its `gui.*`
//! overlay is drawn over the picture, `print` goes to the terminal (and on screen if asked),
//! `emu.message` on screen, and `emu.speedmode` / `emu.pause` drive the window's pacing.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use nes::{Buttons, Nes, Palette};
use nes_lua::{FrameInput, HostInput, HostOptions, LuaHost, SpeedMode};
use winit::keyboard::KeyCode;

use super::game::Game;
use super::osd::Osd;

/// A script chosen by the player (`--lua`, or a `.lua` file dropped onto the window).
#[derive(Debug)]
pub struct Script {
    /// Absolute: the script runs in its own folder (FCEUX's working directory for scripts).
    path: PathBuf,
    /// The Lua global `arg`.
    arg: Option<String>,
    /// The running script; `None` until a game is loaded (or when it failed to load).
    host: Option<LuaHost>,
    /// `print` lines not yet shown on screen (they reach the terminal as they are printed).
    printed: Rc<RefCell<Vec<String>>>,
    /// The watchdog's limit for the next start ([`LuaHost::set_watchdog`]).
    watchdog: Option<Duration>,
}

/// What a frame did to the window's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptFrame {
    /// `emu.speedmode`: "normal" is throttled, the others run unthrottled.
    pub speed_mode: SpeedMode,
    /// The script called `emu.pause()`: the window pauses.
    pub pause_requested: bool,
    /// The script called `emu.exit()` or `os.exit()`: the window closes, as FCEUX quits.
    pub exit_requested: bool,
}

impl Script {
    pub fn new(path: &Path, arg: Option<String>) -> Script {
        Script {
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_owned()),
            arg,
            host: None,
            printed: Rc::default(),
            watchdog: None,
        }
    }

    /// Stop the script, from its next start on, when it runs for `limit` without yielding to
    /// the emulator (`None`: never, as in FCEUX).
    pub fn set_watchdog(&mut self, limit: Option<Duration>) {
        self.watchdog = limit;
    }

    /// The script's file name, for messages.
    pub fn name(&self) -> String {
        self.path.file_name().map_or_else(
            || "script".into(),
            |name| name.to_string_lossy().into_owned(),
        )
    }

    pub fn is_running(&self) -> bool {
        self.host.as_ref().is_some_and(LuaHost::running)
    }

    /// Start the script afresh for `game` (a script's state belongs to one game: its ROM
    /// tables, its hooks, its slot files) in its own folder: its first slice runs now, as
    /// FCEUX runs a script's first slice when it loads it. Any earlier run of it must be
    /// stopped first ([`Script::stop`]) with the console it ran on. Returns the message for
    /// the player.
    pub fn start(&mut self, game: &mut Game, palette: &Palette) -> Result<String, String> {
        self.host = None;
        let options = HostOptions {
            save_dir: game.files_dir(),
            rom_stem: game.name(),
            rom: game.nes.rom_info().clone(),
            arg: self.arg.clone(),
            palette: palette.clone(),
        };
        let mut host = LuaHost::load(&self.path, options)
            .map_err(|e| format!("Lua script not loaded: {e}"))?;
        host.set_watchdog(self.watchdog);
        let printed = self.printed.clone();
        host.set_print_sink(move |line| {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(line);
            let _ = out.write_all(b"\n");
            let _ = out.flush();
            printed
                .borrow_mut()
                .push(String::from_utf8_lossy(line).into_owned());
        });
        self.enter_folder()?;
        host.start(&mut game.nes);
        self.host = Some(host);
        Ok(format!("Lua script {} running", self.name()))
    }

    /// Make the script's folder the working directory: FCEUX runs scripts there, and scripts
    /// open their data files by relative paths. (Every path the window keeps is absolute.)
    fn enter_folder(&self) -> Result<(), String> {
        let Some(dir) = self.path.parent() else {
            return Ok(());
        };
        std::env::set_current_dir(dir).map_err(|e| {
            format!(
                "cannot enter the Lua script's folder {}: {e}",
                dir.display()
            )
        })
    }

    /// Stop the script (its `emu.registerexit` callback runs); it can be started again.
    pub fn stop(&mut self, nes: &mut Nes) {
        if let Some(host) = &mut self.host {
            host.stop(nes);
        }
    }

    /// Run one frame of the console with the script: from one FCEUX frame boundary to the
    /// next, input latched at the boundary (`user` plus the script's `joypad.set`).
    pub fn run_frame(&mut self, nes: &mut Nes, user: [Buttons; 2]) -> ScriptFrame {
        let Some(host) = self.host.as_mut() else {
            nes.set_buttons(0, user[0]);
            nes.set_buttons(1, user[1]);
            nes.run_frame();
            return ScriptFrame {
                speed_mode: self.speed_mode(),
                pause_requested: false,
                exit_requested: false,
            };
        };
        // The window only runs frames while it is not paused (or to advance one frame), so
        // the script sees the emulator running for this frame.
        host.set_paused(false);
        host.run_frame(nes, FrameInput { user, movie: None });
        ScriptFrame {
            speed_mode: host.speed_mode(),
            pause_requested: host.paused(),
            exit_requested: host.exit_requested(),
        }
    }

    /// What `input.get()` and `zapper.read()` report: the keys held, and the mouse over the
    /// picture (`mouse` in picture pixels, `buttons` 1 left, 2 right, 4 middle).
    pub fn set_host_input(&mut self, keys: &[KeyCode], mouse: (i32, i32), buttons: u8) {
        let Some(host) = &mut self.host else {
            return;
        };
        let mut names: Vec<&'static str> = Vec::with_capacity(keys.len() + 3);
        for name in keys.iter().filter_map(|&key| fceux_key_name(key)) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        for (bit, name) in [(1, "leftclick"), (2, "rightclick"), (4, "middleclick")] {
            if buttons & bit != 0 {
                names.push(name);
            }
        }
        host.set_host_input(HostInput {
            keys: names,
            mouse_x: mouse.0,
            mouse_y: mouse.1,
            buttons,
        });
    }

    /// Mirror the window's pause state into `emu.paused()` (and let a paused script wait).
    pub fn set_paused(&mut self, paused: bool) {
        if let Some(host) = &mut self.host {
            host.set_paused(paused);
        }
    }

    pub fn speed_mode(&self) -> SpeedMode {
        self.host
            .as_ref()
            .map_or(SpeedMode::Normal, LuaHost::speed_mode)
    }

    /// Pass the script's output on: `print` lines on screen when `print_on_screen` (they
    /// reached the terminal as they were printed), `emu.message` on screen, errors
    /// (`name.lua:LINE: message`) to both.
    pub fn report(&mut self, osd: &mut Osd, print_on_screen: bool) {
        let Some(host) = &mut self.host else {
            return;
        };
        for line in self.printed.take() {
            if print_on_screen {
                osd.message(line);
            }
        }
        for message in host.take_messages() {
            eprintln!("lua message: {message}");
            osd.message(message);
        }
        for error in host.take_errors() {
            eprintln!("lua error: {error}");
            osd.message(format!("Lua error: {error}"));
        }
    }

    /// Draw the script's overlay (its `gui.*` drawing of the last frame) over `rgba`.
    pub fn composite_overlay(&self, rgba: &mut [u8]) {
        if let Some(host) = &self.host {
            host.composite_overlay(rgba);
        }
    }

    /// The player saved state slot `slot`: `savestate.registersave` runs.
    pub fn state_saved(&mut self, nes: &mut Nes, slot: u8) {
        if let Some(host) = &mut self.host {
            host.user_saved_slot(nes, slot);
        }
    }

    /// The player loaded state slot `slot`: `savestate.registerload` runs.
    pub fn state_loaded(&mut self, nes: &mut Nes, slot: u8) {
        if let Some(host) = &mut self.host {
            host.user_loaded_slot(nes, slot);
        }
    }
}

/// FCEUX's `input.get()` name of a key (its Windows build's names, which scripts test for);
/// both Shift keys are "shift", both Ctrl keys "control".
fn fceux_key_name(key: KeyCode) -> Option<&'static str> {
    use KeyCode as K;
    Some(match key {
        K::KeyA => "A",
        K::KeyB => "B",
        K::KeyC => "C",
        K::KeyD => "D",
        K::KeyE => "E",
        K::KeyF => "F",
        K::KeyG => "G",
        K::KeyH => "H",
        K::KeyI => "I",
        K::KeyJ => "J",
        K::KeyK => "K",
        K::KeyL => "L",
        K::KeyM => "M",
        K::KeyN => "N",
        K::KeyO => "O",
        K::KeyP => "P",
        K::KeyQ => "Q",
        K::KeyR => "R",
        K::KeyS => "S",
        K::KeyT => "T",
        K::KeyU => "U",
        K::KeyV => "V",
        K::KeyW => "W",
        K::KeyX => "X",
        K::KeyY => "Y",
        K::KeyZ => "Z",
        K::Digit0 => "0",
        K::Digit1 => "1",
        K::Digit2 => "2",
        K::Digit3 => "3",
        K::Digit4 => "4",
        K::Digit5 => "5",
        K::Digit6 => "6",
        K::Digit7 => "7",
        K::Digit8 => "8",
        K::Digit9 => "9",
        K::Numpad0 => "numpad0",
        K::Numpad1 => "numpad1",
        K::Numpad2 => "numpad2",
        K::Numpad3 => "numpad3",
        K::Numpad4 => "numpad4",
        K::Numpad5 => "numpad5",
        K::Numpad6 => "numpad6",
        K::Numpad7 => "numpad7",
        K::Numpad8 => "numpad8",
        K::Numpad9 => "numpad9",
        K::F1 => "F1",
        K::F2 => "F2",
        K::F3 => "F3",
        K::F4 => "F4",
        K::F5 => "F5",
        K::F6 => "F6",
        K::F7 => "F7",
        K::F8 => "F8",
        K::F9 => "F9",
        K::F10 => "F10",
        K::F11 => "F11",
        K::F12 => "F12",
        K::ShiftLeft | K::ShiftRight => "shift",
        K::ControlLeft | K::ControlRight => "control",
        K::AltLeft | K::AltRight => "alt",
        K::Backspace => "backspace",
        K::Tab => "tab",
        K::Enter | K::NumpadEnter => "enter",
        K::Pause => "pause",
        K::CapsLock => "capslock",
        K::Escape => "escape",
        K::Space => "space",
        K::PageUp => "pageup",
        K::PageDown => "pagedown",
        K::End => "end",
        K::Home => "home",
        K::ArrowLeft => "left",
        K::ArrowUp => "up",
        K::ArrowRight => "right",
        K::ArrowDown => "down",
        K::Insert => "insert",
        K::Delete => "delete",
        K::NumpadMultiply => "numpad*",
        K::NumpadAdd => "numpad+",
        K::NumpadSubtract => "numpad-",
        K::NumpadDecimal => "numpad.",
        K::NumpadDivide => "numpad/",
        K::NumLock => "numlock",
        K::ScrollLock => "scrolllock",
        K::Semicolon => ";",
        K::Equal => "=",
        K::Comma => ",",
        K::Minus => "-",
        K::Period => ".",
        K::Slash => "/",
        K::Backquote => "`",
        K::BracketLeft => "[",
        K::Backslash => "\\",
        K::BracketRight => "]",
        K::Quote => "'",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::game::GameOptions;
    use super::super::test_rom::nmi_rom;
    use super::*;
    use nes::{SCREEN_HEIGHT, SCREEN_WIDTH};

    /// NROM that polls the pads each NMI and stores pad 1's bits at $10 (lag-free, so
    /// `joypad.set` and user input reach RAM).
    fn rom(dir: &Path) -> PathBuf {
        #[rustfmt::skip]
        let nmi = [
            0xA9, 0x01, 0x8D, 0x16, 0x40, // LDA #1; STA $4016 (strobe)
            0xA9, 0x00, 0x8D, 0x16, 0x40, // LDA #0; STA $4016
            0xA2, 0x08,                   // LDX #8
            0xAD, 0x16, 0x40,             // loop: LDA $4016
            0x4A, 0x26, 0x10,             // LSR A; ROL $10
            0xCA, 0xD0, 0xF7,             // DEX; BNE loop
        ];
        nmi_rom(dir, "pads.nes", &nmi)
    }

    fn game(dir: &Path) -> Game {
        let options = GameOptions {
            // What `nes play --lua` uses.
            power_on: nes::PowerOn::FCEUX,
            hardware: Default::default(),
            save_dir: Some(dir.to_owned()),
            battery: false,
            rewind_bytes: 0,
            rewind_interval: 1,
        };
        Game::load(&rom(dir), &options, &mut Vec::new()).unwrap()
    }

    fn script(dir: &Path, source: &str) -> Script {
        let path = dir.join("test.lua");
        std::fs::write(&path, source).unwrap();
        Script::new(&path, Some("hello".into()))
    }

    #[test]
    fn a_script_draws_prints_and_steers_speed_and_pause() {
        let dir = tempfile::tempdir().unwrap();
        let mut game = game(dir.path());
        let mut script = script(
            dir.path(),
            "print('arg', arg)\n\
             emu.message('hi there')\n\
             emu.speedmode('turbo')\n\
             gui.register(function() gui.box(10, 20, 30, 40, 'red', 'red') end)\n\
             for i = 1, 3 do emu.frameadvance() end\n\
             emu.pause()\n\
             emu.frameadvance()",
        );
        assert_eq!(
            script.start(&mut game, &Palette::ntsc()).unwrap(),
            "Lua script test.lua running"
        );
        // The first slice ran at the start, up to the loop's first frameadvance.
        assert_eq!(script.speed_mode(), SpeedMode::Turbo);
        let mut osd = Osd::default();
        let frame = script.run_frame(&mut game.nes, [Buttons::empty(); 2]);
        assert_eq!(frame.speed_mode, SpeedMode::Turbo);
        assert!(!frame.pause_requested);
        script.report(&mut osd, true);
        let shown: Vec<String> = osd.messages().collect();
        assert_eq!(shown, ["arg hello", "hi there"]);

        let mut picture = vec![0u8; SCREEN_WIDTH * SCREEN_HEIGHT * 4];
        script.composite_overlay(&mut picture);
        let pixel = |x: usize, y: usize| &picture[(y * SCREEN_WIDTH + x) * 4..][..3];
        assert_eq!(pixel(20, 30), [255, 0, 0], "inside the box");
        assert_eq!(pixel(5, 5), [0, 0, 0], "outside the box");

        // The loop's third frameadvance, then the pause.
        let frame = script.run_frame(&mut game.nes, [Buttons::empty(); 2]);
        assert!(!frame.pause_requested);
        let frame = script.run_frame(&mut game.nes, [Buttons::empty(); 2]);
        assert!(frame.pause_requested, "emu.pause() pauses the window");
    }

    #[test]
    fn user_input_and_script_overrides_reach_the_game() {
        let dir = tempfile::tempdir().unwrap();
        let mut game = game(dir.path());
        let mut script = script(
            dir.path(),
            "while true do joypad.set(1, {select = true}) emu.frameadvance() end",
        );
        script.start(&mut game, &Palette::ntsc()).unwrap();
        for _ in 0..6 {
            script.run_frame(&mut game.nes, [Buttons::A, Buttons::empty()]);
        }
        // Pad bits as read: A first (bit 7 after eight ROLs), Select third.
        assert_eq!(game.nes.peek(0x10), 0b1010_0000);
    }

    #[test]
    fn input_get_sees_fceux_key_names_and_the_mouse() {
        let dir = tempfile::tempdir().unwrap();
        let mut game = game(dir.path());
        let mut script = script(
            dir.path(),
            "while true do\n\
               local i = input.get()\n\
               print(i.A, i.shift, i.F1, i[';'], i.leftclick, i.rightclick, i.xmouse, i.ymouse)\n\
               emu.frameadvance()\n\
             end",
        );
        script.start(&mut game, &Palette::ntsc()).unwrap();
        let keys = [
            KeyCode::KeyA,
            KeyCode::ShiftLeft,
            KeyCode::ShiftRight,
            KeyCode::F1,
            KeyCode::Semicolon,
            KeyCode::LaunchMail,
        ];
        let mut osd = Osd::default();
        // The first slice, at the start, saw no keys yet.
        script.report(&mut osd, true);
        assert_eq!(
            osd.messages().collect::<Vec<_>>(),
            ["nil nil nil nil nil nil 0 0"]
        );
        let mut osd = Osd::default();
        script.set_host_input(&keys, (128, 200), 2);
        script.run_frame(&mut game.nes, [Buttons::empty(); 2]);
        script.report(&mut osd, true);
        assert_eq!(
            osd.messages().collect::<Vec<_>>(),
            ["true true true true nil true 128 200"]
        );
        assert_eq!(fceux_key_name(KeyCode::ControlRight), Some("control"));
        assert_eq!(fceux_key_name(KeyCode::Backslash), Some("\\"));
        assert_eq!(fceux_key_name(KeyCode::LaunchMail), None);
    }

    #[test]
    fn the_watchdog_stops_an_endless_script_and_the_game_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let mut game = game(dir.path());
        let mut script = script(dir.path(), "emu.frameadvance()\nwhile true do end");
        script.set_watchdog(Some(Duration::from_millis(100)));
        script.start(&mut game, &Palette::ntsc()).unwrap();
        for _ in 0..3 {
            script.run_frame(&mut game.nes, [Buttons::empty(); 2]);
        }
        assert!(!script.is_running());
        assert_eq!(game.nes.frame_count(), 3, "the game ran every frame");
        let mut osd = Osd::default();
        script.report(&mut osd, false);
        // The long message is wrapped on screen (and its first lines may scroll away).
        let shown = osd.messages().collect::<Vec<String>>().join(" ");
        assert!(
            shown.contains("stopped by the watchdog: the script ran for 0.1 s"),
            "{shown}"
        );
    }

    #[test]
    fn errors_name_the_file_and_line_and_stop_the_script() {
        let dir = tempfile::tempdir().unwrap();
        let mut game = game(dir.path());
        let mut script = script(dir.path(), "emu.frameadvance()\nlocal x = nil + 1");
        script.start(&mut game, &Palette::ntsc()).unwrap();
        for _ in 0..3 {
            script.run_frame(&mut game.nes, [Buttons::empty(); 2]);
        }
        let mut osd = Osd::default();
        script.report(&mut osd, false);
        let shown: Vec<String> = osd.messages().collect();
        // The chunk is named by the script's absolute path, as in FCEUX.
        let expected = format!("Lua error: {}:2:", dir.path().join("test.lua").display());
        assert!(shown[0].starts_with(&expected), "{shown:?}");
        assert!(!script.is_running());

        let mut broken = Script::new(&dir.path().join("missing.lua"), None);
        let err = broken.start(&mut game, &Palette::ntsc()).unwrap_err();
        assert!(err.contains("missing.lua"), "{err}");
    }
}
