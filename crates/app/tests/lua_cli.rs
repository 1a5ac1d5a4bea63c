//! `nes run --lua`: the script's output, scripted input through joypad rules, the overlay in
//! screenshots, and error reports that leave the run going.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn nes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nes"))
        .args(args)
        .output()
        .expect("the nes binary runs")
}

/// NROM: main loop enables NMI; the NMI shifts pad 1's buttons into $00 (A in bit 7).
fn pad_rom() -> Vec<u8> {
    let mut prg = vec![0xEA; 0x8000];
    prg[..8].copy_from_slice(&[0xA9, 0x80, 0x8D, 0x00, 0x20, 0x4C, 0x00, 0x80]);
    let nmi = [
        0xA9, 0x01, 0x8D, 0x16, 0x40, 0xA9, 0x00, 0x8D, 0x16, 0x40, 0xA2, 0x08, 0xAD, 0x16, 0x40,
        0x4A, 0x26, 0x00, 0xCA, 0xD0, 0xF7, 0x40,
    ];
    prg[0x100..0x100 + nmi.len()].copy_from_slice(&nmi);
    prg[0x7FFA..0x7FFC].copy_from_slice(&0x8100u16.to_le_bytes());
    prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
    nes::ines_image(0, &prg, &[0; 0x2000])
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn script_output_input_and_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let rom = write(dir.path(), "game.nes", &pad_rom());
    let script = write(
        dir.path(),
        "show.lua",
        b"print('arg', arg)\n\
          gui.register(function() gui.box(0, 0, 255, 239, 'red', 'red') end)\n\
          for i = 1, 8 do\n\
            emu.frameadvance()\n\
            print(emu.framecount(), memory.readbyte(0))\n\
          end\n",
    );
    let shot = dir.path().join("shot.png");
    let out = nes(&[
        "run",
        rom.to_str().unwrap(),
        "--frames",
        "10",
        "--press",
        "4:S:2",
        "--lua",
        script.to_str().unwrap(),
        "--lua-arg",
        "hello",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("arg hello\n"), "{stdout}");
    // Frames 4 and 5 hold Start: their NMIs store it as $10, seen after each frame. (The
    // script's first frameadvance returns before frame 1, as in FCEUX 2.6.5.)
    assert!(stdout.contains("arg hello\n0 0\n1 0\n"), "{stdout}");
    assert!(
        stdout.contains("\n4 16\n") && stdout.contains("\n5 16\n"),
        "{stdout}"
    );
    assert!(stdout.contains("\n6 0\n"), "{stdout}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut pixels).unwrap();
    assert_eq!(
        &pixels[..3],
        &[255, 0, 0],
        "the overlay is in the screenshot"
    );
}

#[test]
fn a_script_error_is_reported_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let rom = write(dir.path(), "game.nes", &pad_rom());
    let script = write(
        dir.path(),
        "broken.lua",
        b"emu.frameadvance()\nlocal x = nil .. 'text'\n",
    );
    let out = nes(&[
        "run",
        rom.to_str().unwrap(),
        "--frames",
        "5",
        "--lua",
        script.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let expected = format!(
        "lua error: {}:2: ",
        std::path::absolute(&script).unwrap().display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("frames: 5"));
}

#[test]
fn a_missing_script_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let rom = write(dir.path(), "game.nes", &pad_rom());
    let out = nes(&["run", rom.to_str().unwrap(), "--lua", "/nonexistent/x.lua"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/x.lua"));
}

#[test]
fn the_lua_watchdog_stops_an_endless_script_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let rom = write(dir.path(), "game.nes", &pad_rom());
    let script = write(
        dir.path(),
        "stuck.lua",
        b"emu.frameadvance()\nwhile true do end\n",
    );
    let out = nes(&[
        "run",
        rom.to_str().unwrap(),
        "--frames",
        "5",
        "--lua",
        script.to_str().unwrap(),
        "--lua-watchdog",
        "0.2",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let expected = format!(
        "lua error: {}:2: stopped by the watchdog: the script ran for 0.2 s without yielding",
        std::path::absolute(&script).unwrap().display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("frames: 5"));
    // Bad values are refused by name.
    let out = nes(&[
        "run",
        rom.to_str().unwrap(),
        "--lua",
        script.to_str().unwrap(),
        "--lua-watchdog=-1",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--lua-watchdog") && stderr.contains("positive number of seconds"),
        "{stderr}"
    );
}

#[test]
fn an_endless_script_file_is_refused_as_too_large() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rom = write(dir.path(), "game.nes", &pad_rom());
    let out = nes(&["run", rom.to_str().unwrap(), "--lua", "/dev/zero"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot read /dev/zero: script too large (over 64 MiB)"),
        "{stderr}"
    );
}
