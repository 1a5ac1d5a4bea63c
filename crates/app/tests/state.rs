//! `nes run --save-state / --load-state / --power-on-ram` as a user runs them.

use std::path::Path;
use std::process::{Command, Output};

fn nes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nes"))
        .args(args)
        .output()
        .expect("the nes binary runs")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

/// NROM whose program keeps changing RAM: a 16-bit counter at $00-$01 and a running sum of
/// the counter and the previous power-on content at $02.
fn counting_rom(variant: u8) -> Vec<u8> {
    #[rustfmt::skip]
    let code = [
        0xE6, 0x00, 0xD0, 0x02, 0xE6, 0x01, // INC $00; BNE +2; INC $01
        0xA5, 0x00, 0x65, 0x02, 0x85, 0x02, // LDA $00; ADC $02; STA $02
        0x4C, 0x00, 0x80,                   // JMP $8000
    ];
    let mut prg = vec![0xEA; 0x8000];
    prg[..code.len()].copy_from_slice(&code);
    prg[0x100] = variant;
    prg[0x7FFC..0x7FFE].copy_from_slice(&[0x00, 0x80]);
    nes::ines_image(0, &prg, &[0; 0x2000])
}

fn stdout_of(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn line<'a>(stdout: &'a str, key: &str) -> &'a str {
    stdout
        .lines()
        .find(|line| line.starts_with(key))
        .unwrap_or_else(|| panic!("no `{key}` in {stdout}"))
}

#[test]
fn a_saved_state_continues_exactly_like_the_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write(dir, "count.nes", &counting_rom(0));
    let state = dir.join("count.state");
    let state = state.to_str().unwrap();
    let whole = stdout_of(&nes(&["run", &rom, "--frames", "50", "--no-battery"]));
    let first = stdout_of(&nes(&[
        "run",
        &rom,
        "--frames",
        "20",
        "--save-state",
        state,
    ]));
    assert!(first.contains("state: "), "{first}");
    let rest = stdout_of(&nes(&[
        "run",
        &rom,
        "--frames",
        "50",
        "--load-state",
        state,
    ]));
    assert_eq!(line(&rest, "ram sha1"), line(&whole, "ram sha1"));
    assert_eq!(line(&rest, "frame sha1"), line(&whole, "frame sha1"));
}

#[test]
fn bad_state_files_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write(dir, "count-bad.nes", &counting_rom(0));
    let other_rom = write(dir, "count-other.nes", &counting_rom(1));
    let state_path = dir.join("good.state");
    let state = state_path.to_str().unwrap();
    stdout_of(&nes(&["run", &rom, "--frames", "5", "--save-state", state]));
    let good = std::fs::read(&state_path).unwrap();

    let mut corrupt = good.clone();
    let middle = corrupt.len() / 2;
    corrupt[middle] ^= 1;
    let cases = [
        (write(dir, "corrupt.state", &corrupt), "corrupt", &rom),
        (
            write(dir, "short.state", &good[..good.len() - 10]),
            "truncated",
            &rom,
        ),
        (write(dir, "text.state", b"hello"), "not a save state", &rom),
        (state.to_owned(), "another ROM", &other_rom),
    ];
    for (path, message, rom) in cases {
        let out = nes(&["run", rom, "--frames", "10", "--load-state", &path]);
        assert!(!out.status.success(), "{path} was accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{path}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_state_past_the_last_frame_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write(dir, "count-late.nes", &counting_rom(0));
    let state = dir.join("late.state");
    let state = state.to_str().unwrap();
    stdout_of(&nes(&[
        "run",
        &rom,
        "--frames",
        "30",
        "--save-state",
        state,
    ]));
    let out = nes(&["run", &rom, "--frames", "10", "--load-state", state]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("past the last frame"));
}

#[test]
fn seeded_random_power_on_ram_is_reproducible() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write(dir, "count-ram.nes", &counting_rom(0));
    let run = |choice: &str| {
        let out = nes(&["run", &rom, "--frames", "3", "--power-on-ram", choice]);
        line(&stdout_of(&out), "ram sha1").to_owned()
    };
    let seeded = run("random:7");
    assert_eq!(run("random:7"), seeded);
    assert_ne!(run("random:8"), seeded);
    assert_ne!(run("zero"), seeded);
    let out = nes(&["run", &rom, "--power-on-ram", "random:x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("seed"));
}
