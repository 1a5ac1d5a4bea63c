//! `nes play` as a user runs it: a real window on a virtual X screen (Xvfb, software Vulkan
//! through Mesa's lavapipe), checked through the picture it shows.
//!
//! `scripts/test.sh` installs xvfb and the runtime libraries. Without `xvfb-run` these tests
//! say so and pass, except under `CI=true`, where they fail so CI never passes vacuously.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A window test that does not finish in this time has hung.
const TIMEOUT: Duration = Duration::from_secs(120);

fn nes_binary() -> &'static str {
    env!("CARGO_BIN_EXE_nes")
}

fn have_xvfb() -> bool {
    let found = Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "xvfb-run is missing under CI: scripts/test.sh installs it"
        );
        eprintln!("xvfb-run not found: window tests skipped (bash scripts/test.sh installs it)");
    }
    found
}

/// Run a command to completion, killing it after [`TIMEOUT`].
fn run_with_timeout(command: &mut Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait works").is_some() {
            return child.wait_with_output().expect("output is readable");
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output is readable");
            panic!(
                "timed out after {TIMEOUT:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `nes play ARGS` in a window on a fresh virtual screen, with its own settings file, run
/// from `dir`.
fn play_under_xvfb(dir: &Path, args: &[&str]) -> Output {
    let runtime = dir.join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    let config = dir.join("config/config.toml");
    let mut command = Command::new("xvfb-run");
    command
        .args(["-a", "-s", "-screen 0 1024x768x24", nes_binary(), "play"])
        .args(args)
        .arg("--config")
        .arg(&config)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("WGPU_BACKEND", "vulkan")
        .env_remove("WAYLAND_DISPLAY")
        .current_dir(dir);
    run_with_timeout(&mut command)
}

fn read_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let file =
        std::fs::File::open(path).unwrap_or_else(|e| panic!("{} not written: {e}", path.display()));
    let decoder = png::Decoder::new(std::io::BufReader::new(file));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// A test ROM with a real picture: nestest's menu, from the shared test ROMs when present;
/// otherwise a generated ROM that paints the backdrop red.
fn test_rom(dir: &Path) -> PathBuf {
    if let Ok(manifest) = nes_headless::test_roms::manifest::find_manifest(None) {
        let nestest = manifest.parent().unwrap().join("cpu/nestest/nestest.nes");
        if nestest.is_file() {
            return nestest;
        }
    }
    let mut prg = vec![0xEA; 0x8000];
    #[rustfmt::skip]
    let program = [
        0xA9, 0x3F, 0x8D, 0x06, 0x20, // LDA #$3F ; STA $2006
        0xA9, 0x00, 0x8D, 0x06, 0x20, // LDA #$00 ; STA $2006
        0xA9, 0x16, 0x8D, 0x07, 0x20, // LDA #$16 ; STA $2007 (backdrop: red)
        0x4C, 0x0F, 0x80,             // JMP *
    ];
    prg[..program.len()].copy_from_slice(&program);
    prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
    let image = nes::ines_image(0, &prg, &[0; 0x2000]);
    let path = dir.join("red.nes");
    std::fs::write(&path, image).unwrap();
    path
}

#[test]
fn the_window_shows_the_same_picture_as_the_headless_run() {
    if !have_xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rom = test_rom(dir.path());
    let rom = rom.to_str().unwrap();
    let saves = dir.path().to_str().unwrap();
    let shown = dir.path().join("window.png");
    let out = play_under_xvfb(
        dir.path(),
        &[
            rom,
            "--exit-after-frames",
            "90",
            "--screenshot",
            shown.to_str().unwrap(),
            "--save-dir",
            saves,
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "nes play failed:\n{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("frames: 90"), "{stdout}\n{stderr}");
    // The settings file was created with comments on first run.
    let config = std::fs::read_to_string(dir.path().join("config/config.toml")).unwrap();
    assert!(config.starts_with("# nes play settings"));

    let expected = dir.path().join("headless.png");
    let reference = Command::new(nes_binary())
        .args([
            "run",
            rom,
            "--frames",
            "90",
            "--save-dir",
            saves,
            "--screenshot",
        ])
        .arg(&expected)
        .output()
        .unwrap();
    assert!(reference.status.success());
    let (width, height, window) = read_png(&shown);
    assert_eq!((width, height), (256, 240));
    let (_, _, headless) = read_png(&expected);
    assert!(
        window == headless,
        "the window's picture differs from `nes run`'s"
    );
    let distinct: std::collections::HashSet<&[u8]> = window.chunks_exact(4).collect();
    assert!(
        distinct.len() >= 2 || rom.ends_with("red.nes"),
        "a blank picture"
    );
}

/// The Tetris AI's way of drawing: a `gui.register` callback, every frame.
const OVERLAY_SCRIPT: &str = r##"
local f = io.open("ran.txt", "w") f:write("yes") f:close()
print("overlay script started")
emu.message("hello from Lua")
gui.register(function()
  gui.box(16, 24, 79, 63, "#00FF00FF", "#00FF00FF")
  gui.text(20, 100, "AI", "white", "black")
end)
while true do emu.frameadvance() end
"##;

#[test]
fn a_lua_overlay_shows_over_the_game_in_the_window() {
    if !have_xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rom = test_rom(dir.path());
    let rom = rom.to_str().unwrap();
    let scripts = dir.path().join("scripts");
    std::fs::create_dir(&scripts).unwrap();
    let script = scripts.join("overlay.lua");
    std::fs::write(&script, OVERLAY_SCRIPT).unwrap();
    // Relative output paths are the user's working directory's, even though the script runs
    // in its own folder.
    let out = play_under_xvfb(
        dir.path(),
        &[
            rom,
            "--exit-after-frames",
            "60",
            "--no-battery",
            "--screenshot",
            "window.png",
            "--lua",
            script.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "nes play failed:\n{stderr}");
    assert!(stdout.contains("overlay script started"), "{stdout}");
    assert!(
        stderr.contains("Lua script overlay.lua running"),
        "{stderr}"
    );
    assert!(stderr.contains("lua message: hello from Lua"), "{stderr}");
    assert!(!stderr.contains("lua error"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(scripts.join("ran.txt")).unwrap(),
        "yes"
    );

    let (width, height, window) = read_png(&dir.path().join("window.png"));
    assert_eq!((width, height), (256, 240));
    let pixel = |x: usize, y: usize| &window[(y * 256 + x) * 4..][..3];
    for (x, y) in [(16, 24), (50, 40), (79, 63)] {
        assert_eq!(
            pixel(x, y),
            [0, 255, 0],
            "inside the overlay's box at ({x}, {y})"
        );
    }
    // Outside the box the game shows through: the picture equals the headless run's with the
    // same script (which composites the overlay the same way).
    let headless = dir.path().join("headless.png");
    let reference = Command::new(nes_binary())
        .args(["run", rom, "--frames", "60", "--no-battery", "--lua"])
        .arg(&script)
        .arg("--screenshot")
        .arg(&headless)
        .output()
        .unwrap();
    assert!(
        reference.status.success(),
        "{}",
        String::from_utf8_lossy(&reference.stderr)
    );
    let (_, _, expected) = read_png(&headless);
    assert!(
        window == expected,
        "the window's picture differs from `nes run --lua`'s"
    );
    assert_ne!(pixel(8, 8), [0, 255, 0], "the game shows outside the box");
}

#[test]
fn without_a_rom_the_window_says_how_to_open_one() {
    if !have_xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shown = dir.path().join("empty.png");
    let out = play_under_xvfb(
        dir.path(),
        &[
            "--exit-after-frames",
            "10",
            "--screenshot",
            shown.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, _, picture) = read_png(&shown);
    let light = picture.chunks_exact(4).filter(|p| p[0] > 200).count();
    let dark = picture.chunks_exact(4).filter(|p| p[0] < 50).count();
    assert!(
        light > 500 && dark > 30_000,
        "text on a dark screen: {light} light, {dark} dark"
    );
}

#[test]
fn an_unreadable_rom_is_a_clear_error_before_any_window() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here.nes");
    let junk = dir.path().join("junk.nes");
    std::fs::write(&junk, b"definitely not an iNES image").unwrap();
    for rom in [&missing, &junk] {
        let out = run_with_timeout(
            Command::new(nes_binary())
                .arg("play")
                .arg(rom)
                .arg("--config")
                .arg(dir.path().join("config.toml"))
                .env_remove("DISPLAY")
                .env_remove("WAYLAND_DISPLAY"),
        );
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(
            stderr.contains(rom.file_name().unwrap().to_str().unwrap()),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn without_a_display_the_error_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_timeout(
        Command::new(nes_binary())
            .arg("play")
            .arg("--config")
            .arg(dir.path().join("config.toml"))
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY"),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no display"), "{stderr}");
}
