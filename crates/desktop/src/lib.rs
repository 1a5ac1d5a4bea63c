//! `nes play`: the desktop frontend, on top of the headless crate. A winit window showing the picture through pixels, cpal
//! audio whose clock paces the frames (with dynamic rate control), keyboard and gilrs gamepads
//! remappable in a TOML file, the usual emulator controls (pause, frame advance, states,
//! rewind, fast-forward) and FCEUX Lua scripts running with the game.

mod audio;
mod config;
mod game;
mod input;
mod osd;
mod pacing;
mod scale;
mod script;
#[cfg(test)]
mod test_rom;
mod window;

use std::path::{Path, PathBuf};

use winit::event_loop::EventLoop;

use config::{Config, PixelAspect};
use game::{Game, GameOptions};
use input::{InputMap, InputState};
use script::Script;
use window::{App, Session};

#[derive(Debug, clap::Args)]
pub struct PlayArgs {
    /// The ROM to play (.nes). Without it the window says how to open one; a .nes file
    /// dropped onto the window is loaded at any time.
    rom: Option<PathBuf>,
    /// Settings file (default: config.toml in the platform's config directory, created with
    /// comments on first run).
    #[arg(long, value_name = "TOML")]
    config: Option<PathBuf>,
    /// Start in fullscreen (F11 toggles).
    #[arg(long)]
    fullscreen: bool,
    /// Initial window size as a multiple of the picture (1-8).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=8))]
    scale: Option<u32>,
    /// Pixel shape: square, or ntsc for the television's 8:7 pixels (F9 toggles).
    #[arg(long, value_enum)]
    pixel_aspect: Option<PixelAspect>,
    /// No sound (and no audio device opened).
    #[arg(long)]
    no_audio: bool,
    /// Palette: a 192-byte (64 colours) or 1536-byte (512 colours) .pal file.
    /// Default: the built-in NTSC palette.
    #[arg(long, value_name = "PAL")]
    palette: Option<PathBuf>,
    /// Folder for battery saves (`GAME.sav`) and save states (`GAME.state0`-`9`);
    /// default: beside the ROM.
    #[arg(long, value_name = "DIR")]
    save_dir: Option<PathBuf>,
    /// Neither load nor write the battery save.
    #[arg(long)]
    no_battery: bool,
    /// Quit after this many emulated frames (the battery save and --screenshot are written
    /// as on a normal exit).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    exit_after_frames: Option<u64>,
    /// At exit, write what the window shows (the 256x240 picture with any script overlay) as
    /// a PNG.
    #[arg(long, value_name = "PNG")]
    screenshot: Option<PathBuf>,
    /// Include the on-screen messages in --screenshot.
    #[arg(long, requires = "screenshot")]
    screenshot_osd: bool,
    /// Run this FCEUX Lua script with the game (it starts when the game does, in its own
    /// folder; a .lua file dropped onto the window replaces it). Its gui drawing shows over
    /// the picture, print goes to the terminal, emu.message on screen.
    #[arg(long, value_name = "SCRIPT")]
    lua: Option<PathBuf>,
    /// The script's start-up argument (Lua global `arg`).
    #[arg(long, value_name = "TEXT", requires = "lua")]
    lua_arg: Option<String>,
    /// Show the script's print output on screen too (config: lua.print_on_screen).
    #[arg(long)]
    lua_print_on_screen: bool,
    /// Stop a script that runs this long without yielding to the emulator (emu.frameadvance()
    /// or the end of a callback); 0: never, as in FCEUX (config: lua.watchdog_seconds, 5 by
    /// default).
    #[arg(long, value_name = "SECONDS", value_parser = nes_lua::parse_watchdog_seconds)]
    lua_watchdog: Option<f64>,
    /// How the console starts (default: FCEUX's timeline with --lua, else the hardware one).
    #[command(flatten)]
    power_on: nes_headless::power_on::PowerOnArgs,
    /// Which console to emulate.
    #[command(flatten)]
    hardware: nes_headless::hardware::HardwareArgs,
}

/// Why `nes play` could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// The settings file or its key bindings.
    #[error("{0}")]
    Settings(String),
    /// A file or option given on the command line (ROM, palette, save folder, script).
    #[error("{0}")]
    Arguments(String),
    #[error(transparent)]
    Headless(#[from] nes_headless::Error),
    /// No display, or the window system failed.
    #[error("{0}")]
    Window(String),
    /// The game failed while it ran (a write the player asked for, a broken state).
    #[error("{0}")]
    Game(String),
}

/// `nes play`: opens the window and runs until the player quits.
pub fn play(args: &PlayArgs) -> Result<(), PlayError> {
    let mut notes = Vec::new();
    let mut config = match args.config.clone().or_else(Config::default_path) {
        Some(path) => {
            let (config, note) = Config::load_or_create(&path).map_err(PlayError::Settings)?;
            notes.extend(note);
            config
        }
        None => {
            notes.push("no config directory found: using the default settings".to_owned());
            Config::default()
        }
    };
    if args.fullscreen {
        config.video.fullscreen = true;
    }
    if let Some(scale) = args.scale {
        config.video.scale = scale;
    }
    if let Some(aspect) = args.pixel_aspect {
        config.video.pixel_aspect = aspect;
    }
    if args.lua_print_on_screen {
        config.lua.print_on_screen = true;
    }
    if let Some(seconds) = args.lua_watchdog {
        config.lua.watchdog_seconds = seconds;
    }
    let input = InputState::new(
        InputMap::from_config(&config).map_err(PlayError::Settings)?,
        config.gamepad.stick_threshold,
    );
    let palette = nes_headless::capture::load_palette(args.palette.as_deref())?;
    // Absolute paths: a Lua script makes its own folder the working directory.
    let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let game_options = GameOptions {
        // A Lua script is FCEUX material: its frames must be FCEUX's.
        power_on: args.power_on.resolve(args.lua.is_some()),
        hardware: args.hardware.resolve(),
        save_dir: args.save_dir.as_deref().map(absolute),
        battery: !args.no_battery,
        rewind_bytes: config.emulation.rewind_memory_mib as usize * 1024 * 1024,
        rewind_interval: config.emulation.rewind_interval_frames,
    };
    if let Some(dir) = &args.save_dir {
        if !dir.is_dir() {
            return Err(PlayError::Arguments(format!(
                "--save-dir {} is not a folder",
                dir.display()
            )));
        }
    }
    // A bad ROM or a missing script is reported before any window opens.
    let game = args
        .rom
        .as_deref()
        .map(|rom| Game::load(rom, &game_options, &mut notes))
        .transpose()
        .map_err(PlayError::Arguments)?;
    let script = match &args.lua {
        Some(path) if !path.is_file() => {
            return Err(PlayError::Arguments(format!(
                "--lua {}: no such script file",
                path.display()
            )))
        }
        Some(path) => Some(Script::new(path, args.lua_arg.clone())),
        None => None,
    };
    check_display().map_err(PlayError::Window)?;
    let event_loop =
        EventLoop::new().map_err(|e| PlayError::Window(format!("cannot open a window: {e}")))?;
    let session = Session {
        palette,
        game_options,
        exit_after_frames: args.exit_after_frames,
        screenshot: args.screenshot.as_deref().map(absolute),
        screenshot_osd: args.screenshot_osd,
        audio: !args.no_audio,
    };
    let mut app = App::new(config, session, input, game, script, notes);
    event_loop
        .run_app(&mut app)
        .map_err(|e| PlayError::Window(format!("the window's event loop failed: {e}")))?;
    app.into_result().map_err(PlayError::Game)
}

/// Check what winit needs but would panic (not return an error) without: a display to talk
/// to, and on Linux the xkbcommon libraries it loads at run time.
fn check_display() -> Result<(), String> {
    if !cfg!(all(unix, not(target_os = "macos"))) {
        return Ok(());
    }
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty());
    let x11 = std::env::var_os("DISPLAY").is_some_and(|v| !v.is_empty());
    if !wayland && !x11 {
        return Err(
            "no display: neither DISPLAY nor WAYLAND_DISPLAY is set. Run `nes play` in \
                    a desktop session (or under xvfb-run for a virtual screen)."
                .into(),
        );
    }
    let mut needed = vec!["libxkbcommon.so.0"];
    if !wayland {
        needed.push("libxkbcommon-x11.so.0");
    }
    let missing: Vec<&str> = needed
        .into_iter()
        .filter(|library| !library_installed(library))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the window needs {} (keyboard handling), which is not installed. On Debian/Ubuntu: \
             apt-get install libxkbcommon0 libxkbcommon-x11-0",
            missing.join(" and ")
        ))
    }
}

/// Whether the dynamic loader can find `library`: in the loader cache (which names every
/// library installed in the system folders) or in a folder of LD_LIBRARY_PATH.
fn library_installed(library: &str) -> bool {
    let in_folder = |dir: &Path| dir.join(library).exists();
    if let Some(paths) = std::env::var_os("LD_LIBRARY_PATH") {
        if std::env::split_paths(&paths).any(|dir| in_folder(&dir)) {
            return true;
        }
    }
    let cache = nes_headless::limits::read_limited(
        Path::new("/etc/ld.so.cache"),
        &nes_headless::limits::LOADER_CACHE,
    );
    if let Ok(cache) = cache {
        let name = library.as_bytes();
        if cache.windows(name.len()).any(|window| window == name) {
            return true;
        }
    }
    let system_dirs = [
        "/lib",
        "/usr/lib",
        "/lib64",
        "/usr/lib64",
        "/usr/local/lib",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib/aarch64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
    ];
    system_dirs.iter().any(|dir| in_folder(Path::new(dir)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_libraries_through_ld_library_path_and_misses_made_up_ones() {
        assert!(!library_installed("libdoes-not-exist-anywhere.so.9"));
        // The C library is always installed.
        assert!(library_installed("libc.so.6"));
    }
}
