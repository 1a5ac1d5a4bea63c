//! The `nes` binary as a user runs it: good ROMs produce output, bad input a clear error.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn nes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nes"))
        .args(args)
        .output()
        .expect("the nes binary runs")
}

/// A file in a temporary folder of its own, removed (folder and all) when this is dropped,
/// also when the test fails. Derefs to the file's path.
struct TempFile {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Deref for TempFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

fn temp_file(name: &str, bytes: &[u8]) -> TempFile {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    TempFile { path, _dir: dir }
}

/// A 32 KiB NROM image whose program loops forever at $8000.
fn looping_rom() -> Vec<u8> {
    let mut prg = vec![0xEA; 0x8000];
    prg[..3].copy_from_slice(&[0x4C, 0x00, 0x80]); // JMP $8000
    prg[0x7FFC..0x7FFE].copy_from_slice(&[0x00, 0x80]);
    nes::ines_image(0, &prg, &[0; 0x2000])
}

#[test]
fn run_prints_frame_and_ram_hashes() {
    let rom = temp_file("loop.nes", &looping_rom());
    let out = nes(&["run", rom.to_str().unwrap(), "--frames", "3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("frames: 3"), "{stdout}");
    assert!(stdout.contains("frame sha1: "), "{stdout}");
    assert!(stdout.contains("ram sha1: "), "{stdout}");
}

#[test]
fn run_is_deterministic() {
    let rom = temp_file("loop-det.nes", &looping_rom());
    let first = nes(&["run", rom.to_str().unwrap(), "--frames", "5"]);
    let second = nes(&["run", rom.to_str().unwrap(), "--frames", "5"]);
    assert_eq!(first.stdout, second.stdout);
}

#[test]
fn trace_prints_nestest_columns() {
    let rom = temp_file("loop-trace.nes", &looping_rom());
    let out = nes(&["trace", rom.to_str().unwrap(), "--lines", "2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with("8000  4C 00 80  JMP $8000"),
        "{}",
        lines[0]
    );
    assert_eq!(&lines[0][48..73], "A:00 X:00 Y:00 P:34 SP:FD");
    assert_eq!(&lines[0][74..], "PPU:  0, 21 CYC:7");
    assert_eq!(&lines[1][74..], "PPU:  0, 30 CYC:10");
}

#[test]
fn missing_file_is_a_clear_error() {
    let out = nes(&["run", "/nonexistent/game.nes"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot read /nonexistent/game.nes"),
        "{stderr}"
    );
}

#[test]
fn bad_roms_are_clear_errors_not_panics() {
    let mut unsupported = looping_rom();
    unsupported[6] = 0x50; // mapper 5 (MMC5): not supported
    unsupported[7] = 0x00;
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("not-a-rom.nes", b"hello world, not a ROM".to_vec(), "magic"),
        ("short-header.nes", b"NES\x1a\x02".to_vec(), "truncated"),
        (
            "truncated-prg.nes",
            looping_rom()[..0x5000].to_vec(),
            "truncated",
        ),
        ("mmc5.nes", unsupported, "mapper 5"),
    ];
    for (name, bytes, expected) in cases {
        let rom = temp_file(name, &bytes);
        let out = nes(&["run", rom.to_str().unwrap(), "--frames", "1"]);
        let stderr = String::from_utf8_lossy(&out.stderr).to_lowercase();
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{name}: expected `{expected}` in `{stderr}`"
        );
    }
}
