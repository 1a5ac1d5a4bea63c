//! `nes play`'s settings: a TOML file in the platform's config directory, created with
//! comments on first run. Every field has a default, so a file may set only what it changes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use nes_headless::output::write_atomically;

/// Everything the player can configure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub video: VideoConfig,
    pub audio: AudioConfig,
    pub emulation: EmulationConfig,
    pub keyboard: KeyboardConfig,
    pub gamepad: GamepadConfig,
    pub lua: LuaConfig,
}

/// How a Lua script's output shows in the window, and its watchdog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LuaConfig {
    /// Show the script's `print` lines on screen too (they always go to the terminal).
    pub print_on_screen: bool,
    /// Stop a script that runs this many seconds without yielding to the emulator; 0: never
    /// (FCEUX's behaviour, where the window would freeze).
    pub watchdog_seconds: f64,
}

/// The watchdog's default in the window: on, since a frozen window is worse than a stopped
/// script, and long enough for any script's start-up work.
const DEFAULT_WATCHDOG_SECONDS: f64 = 5.0;

impl Default for LuaConfig {
    fn default() -> Self {
        LuaConfig {
            print_on_screen: false,
            watchdog_seconds: DEFAULT_WATCHDOG_SECONDS,
        }
    }
}

impl LuaConfig {
    /// The watchdog's limit (checked by [`Config::parse`], so a bad value is none here).
    pub fn watchdog(&self) -> Option<std::time::Duration> {
        nes_lua::watchdog_limit(self.watchdog_seconds).unwrap_or(None)
    }
}

/// How a pixel of the NES picture is shaped on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PixelAspect {
    /// Square pixels: the 256x240 picture as a 16:15 rectangle.
    Square,
    /// The NTSC console's pixels, 8:7 wide (how the picture looked on a television).
    Ntsc,
}

impl PixelAspect {
    /// Width of one pixel relative to its height.
    pub fn ratio(self) -> f64 {
        match self {
            PixelAspect::Square => 1.0,
            PixelAspect::Ntsc => 8.0 / 7.0,
        }
    }

    pub fn toggled(self) -> PixelAspect {
        match self {
            PixelAspect::Square => PixelAspect::Ntsc,
            PixelAspect::Ntsc => PixelAspect::Square,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VideoConfig {
    /// Initial window size as a multiple of the NES picture (1-8).
    pub scale: u32,
    pub pixel_aspect: PixelAspect,
    pub fullscreen: bool,
    /// Wait for the display's refresh when presenting (no tearing).
    pub vsync: bool,
    /// Show on-screen messages ("State 3 saved").
    pub messages: bool,
}

impl Default for VideoConfig {
    fn default() -> Self {
        VideoConfig {
            scale: 3,
            pixel_aspect: PixelAspect::Square,
            fullscreen: false,
            vsync: true,
            messages: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AudioConfig {
    pub enabled: bool,
    /// 0-100.
    pub volume: u8,
    /// Audio queued ahead of the speakers, in milliseconds: lower reacts faster, higher is
    /// safer against crackling on a busy machine.
    pub latency_ms: u32,
}

impl Default for AudioConfig {
    fn default() -> Self {
        AudioConfig {
            enabled: true,
            volume: 100,
            latency_ms: 64,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmulationConfig {
    /// Speed while fast-forward is held: a multiple of normal speed, 0 for as fast as possible.
    pub fast_forward_speed: f64,
    /// The speed the speed toggle switches to (and back from): a multiple of normal speed.
    pub toggle_speed: f64,
    /// Memory the rewind buffer may use, in MiB (0 turns rewind off).
    pub rewind_memory_mib: u32,
    /// A rewind snapshot every this many frames.
    pub rewind_interval_frames: u32,
}

impl Default for EmulationConfig {
    fn default() -> Self {
        EmulationConfig {
            fast_forward_speed: 0.0,
            toggle_speed: 0.5,
            rewind_memory_mib: 64,
            rewind_interval_frames: 2,
        }
    }
}

/// Keys (or gamepad buttons) for the eight controller buttons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct PadBindings {
    pub a: Vec<String>,
    pub b: Vec<String>,
    pub select: Vec<String>,
    pub start: Vec<String>,
    pub up: Vec<String>,
    pub down: Vec<String>,
    pub left: Vec<String>,
    pub right: Vec<String>,
}

/// Keys (or gamepad buttons) for the frontend's own controls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct HotkeyBindings {
    pub pause: Vec<String>,
    pub frame_advance: Vec<String>,
    pub soft_reset: Vec<String>,
    pub power_cycle: Vec<String>,
    pub fast_forward: Vec<String>,
    pub speed_toggle: Vec<String>,
    pub save_state: Vec<String>,
    pub load_state: Vec<String>,
    pub next_slot: Vec<String>,
    pub previous_slot: Vec<String>,
    /// Ten entries: the key that selects slot 0, slot 1, ... slot 9 ("" for none).
    pub slots: Vec<String>,
    pub rewind: Vec<String>,
    pub screenshot: Vec<String>,
    pub volume_up: Vec<String>,
    pub volume_down: Vec<String>,
    pub mute: Vec<String>,
    pub fullscreen: Vec<String>,
    pub pixel_aspect: Vec<String>,
    pub open_file: Vec<String>,
    pub lua_script: Vec<String>,
    pub quit: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KeyboardConfig {
    pub player1: PadBindings,
    pub player2: PadBindings,
    pub hotkeys: HotkeyBindings,
}

fn keys(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

impl Default for KeyboardConfig {
    fn default() -> Self {
        KeyboardConfig {
            player1: PadBindings {
                a: keys(&["X"]),
                b: keys(&["Z"]),
                select: keys(&["RShift"]),
                start: keys(&["Enter"]),
                up: keys(&["Up"]),
                down: keys(&["Down"]),
                left: keys(&["Left"]),
                right: keys(&["Right"]),
            },
            player2: PadBindings::default(),
            hotkeys: HotkeyBindings {
                pause: keys(&["P", "Pause"]),
                frame_advance: keys(&["Backslash"]),
                soft_reset: keys(&["F2"]),
                power_cycle: keys(&["F3"]),
                fast_forward: keys(&["Tab"]),
                speed_toggle: keys(&["Backquote"]),
                save_state: keys(&["F5"]),
                load_state: keys(&["F7"]),
                next_slot: keys(&["F6"]),
                previous_slot: keys(&["F4"]),
                slots: keys(&["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]),
                rewind: keys(&["Backspace"]),
                screenshot: keys(&["F12"]),
                volume_up: keys(&["Equal"]),
                volume_down: keys(&["Minus"]),
                mute: keys(&["M"]),
                fullscreen: keys(&["F11"]),
                pixel_aspect: keys(&["F9"]),
                open_file: keys(&["O"]),
                lua_script: keys(&["F8"]),
                quit: keys(&["Escape"]),
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GamepadConfig {
    pub enabled: bool,
    /// The left stick also works as the d-pad, past this deflection (0.1-0.9).
    pub stick_threshold: f32,
    /// Controller buttons for every gamepad (the first connected pad is player 1, the second
    /// player 2).
    pub buttons: PadBindings,
    pub hotkeys: HotkeyBindings,
}

impl Default for GamepadConfig {
    fn default() -> Self {
        GamepadConfig {
            enabled: true,
            stick_threshold: 0.5,
            buttons: PadBindings {
                a: keys(&["East"]),
                b: keys(&["South", "West"]),
                select: keys(&["Select"]),
                start: keys(&["Start"]),
                up: keys(&["DPadUp"]),
                down: keys(&["DPadDown"]),
                left: keys(&["DPadLeft"]),
                right: keys(&["DPadRight"]),
            },
            hotkeys: HotkeyBindings {
                fast_forward: keys(&["RightTrigger2"]),
                rewind: keys(&["LeftTrigger2"]),
                save_state: keys(&["RightTrigger"]),
                load_state: keys(&["LeftTrigger"]),
                pause: keys(&["Mode"]),
                ..HotkeyBindings::default()
            },
        }
    }
}

/// The file written on first run: the defaults, with comments. A unit test checks that it
/// parses to exactly `Config::default()`.
pub const DEFAULT_CONFIG_TOML: &str = r#"# nes play settings. Delete this file to get the defaults back (it is recreated).
#
# Keys are named after the key's position on a US keyboard: letters "A".."Z", digits "0".."9",
# "F1".."F12", "Up" "Down" "Left" "Right", "Enter" "Space" "Tab" "Backspace" "Escape",
# "LShift" "RShift" "LCtrl" "RCtrl" "LAlt" "RAlt", "Minus" "Equal" "Backquote" "Backslash"
# "BracketLeft" "BracketRight" "Semicolon" "Quote" "Comma" "Period" "Slash", "Insert"
# "Delete" "Home" "End" "PageUp" "PageDown" "Pause", "Numpad0".."Numpad9" "NumpadEnter"
# "NumpadAdd" "NumpadSubtract". Every action takes a list: [] for none, ["X", "K"] for two.
#
# Gamepad buttons (SDL-style layout; gamepads are recognised through the SDL controller
# database, and SDL_GAMECONTROLLERCONFIG adds mappings): "South" "East" "North" "West"
# "LeftTrigger" "LeftTrigger2" "RightTrigger" "RightTrigger2" "Select" "Start" "Mode"
# "LeftThumb" "RightThumb" "DPadUp" "DPadDown" "DPadLeft" "DPadRight".

[video]
# Initial window size as a multiple of the 256x240 picture (1-8). The picture always
# scales by whole multiples to fit the window.
scale = 3
# "square" pixels, or "ntsc" for the 8:7 pixels of a television picture.
pixel_aspect = "square"
fullscreen = false
vsync = true
# On-screen messages ("State 3 saved").
messages = true

[audio]
enabled = true
# 0-100
volume = 100
# Audio queued ahead of the speakers, in milliseconds.
latency_ms = 64

[emulation]
# Speed while fast-forward is held, as a multiple of normal; 0 = as fast as possible.
fast_forward_speed = 0.0
# The speed toggle switches between normal speed and this one.
toggle_speed = 0.5
# Memory for rewind, in MiB (0 = no rewind), and a snapshot every N frames.
rewind_memory_mib = 64
rewind_interval_frames = 2

[keyboard.player1]
a = ["X"]
b = ["Z"]
select = ["RShift"]
start = ["Enter"]
up = ["Up"]
down = ["Down"]
left = ["Left"]
right = ["Right"]

[keyboard.player2]
a = []
b = []
select = []
start = []
up = []
down = []
left = []
right = []

[keyboard.hotkeys]
pause = ["P", "Pause"]
# While paused: run exactly one frame.
frame_advance = ["Backslash"]
soft_reset = ["F2"]
power_cycle = ["F3"]
# Held.
fast_forward = ["Tab"]
speed_toggle = ["Backquote"]
save_state = ["F5"]
load_state = ["F7"]
next_slot = ["F6"]
previous_slot = ["F4"]
# The keys that select slots 0 to 9, in order.
slots = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]
# Held: the game runs backwards.
rewind = ["Backspace"]
screenshot = ["F12"]
volume_up = ["Equal"]
volume_down = ["Minus"]
mute = ["M"]
fullscreen = ["F11"]
pixel_aspect = ["F9"]
# The open-file dialog: a game (.nes) or a Lua script (.lua).
open_file = ["O"]
# Stop the Lua script (its emu.registerexit runs), or restart it from the top.
lua_script = ["F8"]
quit = ["Escape"]

[gamepad]
enabled = true
# The left stick works as the d-pad past this deflection (0.1-0.9).
stick_threshold = 0.5

[gamepad.buttons]
a = ["East"]
b = ["South", "West"]
select = ["Select"]
start = ["Start"]
up = ["DPadUp"]
down = ["DPadDown"]
left = ["DPadLeft"]
right = ["DPadRight"]

# Any of the keyboard's hotkey names can be bound to gamepad buttons here too.
[gamepad.hotkeys]
fast_forward = ["RightTrigger2"]
rewind = ["LeftTrigger2"]
save_state = ["RightTrigger"]
load_state = ["LeftTrigger"]
pause = ["Mode"]

[lua]
# A Lua script's print() output always goes to the terminal; also show it on screen?
# (emu.message() and script errors are always shown.)
print_on_screen = false
# Stop a script that runs this many seconds without yielding to the emulator
# (emu.frameadvance() or the end of a callback), e.g. one stuck in an endless loop;
# 0: never, as in FCEUX (the window freezes).
watchdog_seconds = 5.0
"#;

impl Config {
    /// Parse a config file's text; the error names what is wrong.
    pub fn parse(text: &str) -> Result<Config, String> {
        // Merge the file over the defaults key by key, so a table that sets one key (say
        // `[keyboard.player1] a = ["K"]`) keeps the defaults of its other keys.
        let file: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut merged = toml::Table::try_from(Config::default()).map_err(|e| e.to_string())?;
        merge_tables(&mut merged, file);
        let config: Config = merged
            .try_into()
            .map_err(|e: toml::de::Error| e.to_string())?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        nes_lua::watchdog_limit(self.lua.watchdog_seconds)
            .map_err(|e| format!("lua.watchdog_seconds: {e}"))?;
        if !(1..=8).contains(&self.video.scale) {
            return Err(format!("video.scale must be 1-8, not {}", self.video.scale));
        }
        if self.audio.volume > 100 {
            return Err(format!(
                "audio.volume must be 0-100, not {}",
                self.audio.volume
            ));
        }
        if !(10..=1000).contains(&self.audio.latency_ms) {
            return Err(format!(
                "audio.latency_ms must be 10-1000, not {}",
                self.audio.latency_ms
            ));
        }
        let speeds = [
            (
                "emulation.fast_forward_speed",
                self.emulation.fast_forward_speed,
            ),
            ("emulation.toggle_speed", self.emulation.toggle_speed),
        ];
        for (name, speed) in speeds {
            if !(speed == 0.0 || (0.05..=100.0).contains(&speed)) {
                return Err(format!(
                    "{name} must be 0 (unthrottled) or 0.05-100, not {speed}"
                ));
            }
        }
        if self.emulation.rewind_interval_frames == 0 {
            return Err("emulation.rewind_interval_frames must be at least 1".into());
        }
        if !(0.1..=0.9).contains(&self.gamepad.stick_threshold) {
            return Err(format!(
                "gamepad.stick_threshold must be 0.1-0.9, not {}",
                self.gamepad.stick_threshold
            ));
        }
        if self.keyboard.hotkeys.slots.len() > 10 || self.gamepad.hotkeys.slots.len() > 10 {
            return Err("hotkeys.slots has at most ten entries (slots 0-9)".into());
        }
        Ok(())
    }

    /// The config file's usual place: `config.toml` in the platform's config directory
    /// (`$XDG_CONFIG_HOME/nes` or `~/.config/nes` on Linux).
    pub fn default_path() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "nes")
            .map(|dirs| dirs.config_dir().join("config.toml"))
    }

    /// Load `path`, creating it with the commented defaults when it does not exist.
    /// Returns the config and, when the file was created, a note saying so.
    pub fn load_or_create(path: &Path) -> Result<(Config, Option<String>), String> {
        match nes_headless::limits::read_text_limited(path, &nes_headless::limits::CONFIG) {
            Ok(text) => {
                let config =
                    Config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
                Ok((config, None))
            }
            Err(e) if e.is_not_found() => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                }
                write_atomically(path, DEFAULT_CONFIG_TOML.as_bytes())
                    .map_err(|e| e.to_string())?;
                Ok((
                    Config::default(),
                    Some(format!("created the settings file {}", path.display())),
                ))
            }
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Overwrite `base` with `overlay`, descending into tables present in both.
fn merge_tables(base: &mut toml::Table, overlay: toml::Table) {
    for (key, value) in overlay {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(base_table)), toml::Value::Table(overlay_table)) => {
                merge_tables(base_table, overlay_table)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commented_default_file_is_the_default_config() {
        assert_eq!(
            Config::parse(DEFAULT_CONFIG_TOML).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn a_partial_file_keeps_the_other_defaults() {
        let config =
            Config::parse("[video]\nscale = 5\n[keyboard.player1]\na = [\"K\"]\n").unwrap();
        assert_eq!(config.video.scale, 5);
        assert_eq!(config.keyboard.player1.a, ["K"]);
        assert_eq!(config.keyboard.player1.b, ["Z"]);
        assert_eq!(config.audio, AudioConfig::default());
        assert_eq!(config.gamepad, GamepadConfig::default());
    }

    #[test]
    fn serialised_config_round_trips() {
        let mut config = Config::default();
        config.video.pixel_aspect = PixelAspect::Ntsc;
        config.audio.volume = 35;
        config.emulation.toggle_speed = 3.0;
        config.keyboard.player2.start = vec!["NumpadEnter".into()];
        config.lua.print_on_screen = true;
        let text = toml::to_string(&config).unwrap();
        assert_eq!(Config::parse(&text).unwrap(), config);
    }

    #[test]
    fn the_lua_watchdog_is_on_by_default_and_0_turns_it_off() {
        let default = Config::default();
        assert_eq!(
            default.lua.watchdog(),
            Some(std::time::Duration::from_secs(5))
        );
        let off = Config::parse("[lua]\nwatchdog_seconds = 0\n").unwrap();
        assert_eq!(off.lua.watchdog(), None);
        let whole = Config::parse("[lua]\nwatchdog_seconds = 2\n").unwrap();
        assert_eq!(
            whole.lua.watchdog(),
            Some(std::time::Duration::from_secs(2))
        );
    }

    #[test]
    fn bad_values_are_reported_by_name() {
        let err = Config::parse("[video]\nscale = 0\n").unwrap_err();
        assert!(err.contains("video.scale"), "{err}");
        let err = Config::parse("[audio]\nvolume = 101\n").unwrap_err();
        assert!(err.contains("audio.volume"), "{err}");
        let err = Config::parse("[lua]\nwatchdog_seconds = -1\n").unwrap_err();
        assert!(err.contains("lua.watchdog_seconds"), "{err}");
        let err = Config::parse("[video]\npixel_aspect = \"wide\"\n").unwrap_err();
        assert!(err.contains("pixel_aspect"), "{err}");
        let err = Config::parse("[video]\nscael = 2\n").unwrap_err();
        assert!(err.contains("scael"), "unknown fields are named: {err}");
    }

    #[test]
    fn first_run_creates_the_commented_file_and_later_runs_read_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nes/config.toml");
        let (config, note) = Config::load_or_create(&path).unwrap();
        assert_eq!(config, Config::default());
        assert!(note.unwrap().contains("config.toml"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# nes play settings"));
        std::fs::write(&path, text.replace("volume = 100", "volume = 40")).unwrap();
        let (config, note) = Config::load_or_create(&path).unwrap();
        assert_eq!(config.audio.volume, 40);
        assert!(note.is_none());
    }

    #[test]
    fn ntsc_pixels_are_eight_sevenths_wide() {
        assert_eq!(PixelAspect::Ntsc.ratio() * 7.0, 8.0);
        assert_eq!(PixelAspect::Square.toggled(), PixelAspect::Ntsc);
    }
}
