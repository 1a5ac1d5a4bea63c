//! Movies, scripted input, lag frames and the RAM log, through the `nes` binary as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use md5::{Digest, Md5};
use nes::Buttons;
use nes_movie::fm2::{Movie, PortDevice};

fn nes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nes"))
        .args(args)
        .output()
        .expect("the nes binary runs")
}

fn ok(args: &[&str]) -> String {
    let out = nes(args);
    assert!(
        out.status.success(),
        "nes {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The program's PRG and CHR (what FCEUX's romChecksum hashes), and the iNES image.
fn input_rom() -> (Vec<u8>, Vec<u8>) {
    let main = [
        0x2C, 0x02, 0x20, // $8000 BIT $2002   wait for two VBlanks (PPU warm-up)
        0x10, 0xFB, //       BPL $8000
        0x2C, 0x02, 0x20, // $8005 BIT $2002
        0x10, 0xFB, //       BPL $8005
        0xA9, 0x80, //       LDA #$80          enable NMI
        0x8D, 0x00, 0x20, // STA $2000
        0x4C, 0x0F, 0x80, // $800F JMP $800F
    ];
    let nmi = [
        0xA9, 0x01, 0x8D, 0x16, 0x40, // LDA #1; STA $4016   strobe controller 1
        0xA9, 0x00, 0x8D, 0x16, 0x40, // LDA #0; STA $4016
        0xA2, 0x08, //                   LDX #8
        0xAD, 0x16, 0x40, //             $810C LDA $4016
        0x4A, //                         LSR A
        0x26, 0x01, //                   ROL $01             $01 = this frame's buttons
        0xCA, //                         DEX
        0xD0, 0xF7, //                   BNE $810C
        0xA5, 0x01, 0x18, 0x65, 0x02, 0x85, 0x02, // $02 += $01
        0xE6, 0x00, //                   INC $00             NMI count
        0xA6, 0x00, 0xA5, 0x01, //       LDX $00; LDA $01
        0x9D, 0x00, 0x02, //             STA $0200,X         button history
        0x40, //                         RTI
    ];
    let mut prg = vec![0xEA; 0x8000];
    prg[..main.len()].copy_from_slice(&main);
    prg[0x100..0x100 + nmi.len()].copy_from_slice(&nmi);
    prg[0x7FFA..0x7FFC].copy_from_slice(&0x8100u16.to_le_bytes());
    prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
    prg[0x7FFE..0x8000].copy_from_slice(&0x8125u16.to_le_bytes()); // IRQ: the RTI
    let chr: Vec<u8> = (0..0x2000u32).map(|i| (i * 7) as u8).collect();
    let image = nes::ines_image(0, &prg, &chr);
    let mut prg_chr = prg;
    prg_chr.extend_from_slice(&chr);
    (prg_chr, image)
}

fn write_rom(dir: &Path) -> PathBuf {
    let path = dir.join("input-test.nes");
    std::fs::write(&path, input_rom().1).unwrap();
    path
}

/// The result lines of `nes run` (hashes, frame and lag counts), without file notices.
fn results(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| {
            l.starts_with("frames:")
                || l.starts_with("frame sha1:")
                || l.starts_with("ram sha1:")
                || l.starts_with("lag frames:")
        })
        .collect()
}

#[test]
fn recorded_press_input_plays_back_to_identical_hashes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write_rom(dir);
    let (fm2, log_a, log_b) = (dir.join("run.fm2"), dir.join("a.ram"), dir.join("b.ram"));
    let recorded = ok(&[
        "run",
        s(&rom),
        "--frames",
        "30",
        "--press",
        "5:A:3",
        "--press",
        "10:start+right",
        "--press",
        "12:sB:2",
        "--record",
        s(&fm2),
        "--ram-log",
        s(&log_a),
    ]);
    assert!(recorded.contains("recorded: "), "{recorded}");
    // Without --frames, a movie runs for its own length.
    let played = ok(&["run", s(&rom), "--movie", s(&fm2), "--ram-log", s(&log_b)]);
    assert_eq!(results(&recorded), results(&played));
    assert_eq!(results(&played).len(), 4, "{played}");
    assert!(played.contains("frames: 30"), "{played}");

    let (a, b) = (
        std::fs::read(&log_a).unwrap(),
        std::fs::read(&log_b).unwrap(),
    );
    assert_eq!(a.len(), 30 * 2048);
    assert!(a == b, "the RAM logs differ");

    // The input really reached the game: without it the RAM ends differently.
    let idle = ok(&["run", s(&rom), "--frames", "30"]);
    assert_ne!(results(&idle)[2], results(&played)[2]);

    // Re-recording the playback gives the same input log.
    let again = dir.join("again.fm2");
    ok(&["run", s(&rom), "--movie", s(&fm2), "--record", s(&again)]);
    let first = Movie::parse(&std::fs::read_to_string(&fm2).unwrap()).unwrap();
    let second = Movie::parse(&std::fs::read_to_string(&again).unwrap()).unwrap();
    assert_eq!(first.frames, second.frames);
}

#[test]
fn recorded_movie_has_fceux_header_and_the_scheduled_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write_rom(dir);
    let fm2 = dir.join("header.fm2");
    ok(&[
        "run",
        s(&rom),
        "--frames",
        "20",
        "--press",
        "5:A:3",
        "--press",
        "6:U",
        "--record",
        s(&fm2),
    ]);
    let text = std::fs::read_to_string(&fm2).unwrap();
    assert!(text.starts_with("version 3\n"), "{text}");
    let movie = Movie::parse(&text).unwrap();
    let h = &movie.header;
    let md5: [u8; 16] = Md5::digest(input_rom().0).into();
    assert_eq!(h.rom_checksum, Some(md5));
    assert!(text.contains("romChecksum base64:"), "{text}");
    assert_eq!(h.rom_filename, "input-test");
    assert_eq!(h.rerecord_count, 0);
    assert_eq!(h.ports, [PortDevice::Gamepad; 2]);
    assert_eq!(h.expansion_port, 0);
    assert!(!h.fourscore && !h.pal);
    let groups: Vec<usize> = h.guid.split('-').map(str::len).collect();
    assert_eq!(groups, [8, 4, 4, 4, 12], "{}", h.guid);
    assert!(h.guid.chars().all(|c| c == '-' || c.is_ascii_hexdigit()));

    // FCEUX's header keys, in its order, the power-on RAM as FCEUX names it.
    assert!(
        text.contains("port2 0\nFDS 0\nNewPPU 0\nRAMInitOption 0\nRAMInitSeed 0\n"),
        "{text}"
    );
    // On FCEUX's timeline (a recording is FCEUX material) FM2 line k is frame k + 1.
    assert_eq!(movie.frames.len(), 20);
    let pad = |frame: usize| movie.frames[frame - 1].pads[0];
    assert_eq!(pad(4), Buttons::empty());
    assert_eq!(pad(5), Buttons::A);
    assert_eq!(pad(6), Buttons::A | Buttons::UP);
    assert_eq!(pad(7), Buttons::A);
    assert_eq!(pad(8), Buttons::empty());
    assert!(text.contains("\n|0|.......A|........||\n"), "{text}");
    assert!(text.contains("\n|0|...U...A|........||\n"), "{text}");

    // A second recording gets a new guid.
    let other = dir.join("other.fm2");
    ok(&["run", s(&rom), "--frames", "2", "--record", s(&other)]);
    let other = Movie::parse(&std::fs::read_to_string(&other).unwrap()).unwrap();
    assert_ne!(other.header.guid, h.guid);
}

#[test]
fn input_file_matches_the_same_presses_on_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write_rom(dir);
    let script = dir.join("script.txt");
    std::fs::write(&script, "# demo\n5:A:3   # jump\n\n10:start+right\n").unwrap();
    let from_file = ok(&["run", s(&rom), "--frames", "20", "--input", s(&script)]);
    let from_args = ok(&[
        "run",
        s(&rom),
        "--frames",
        "20",
        "--press",
        "5:A:3",
        "--press",
        "10:start+right",
    ]);
    assert_eq!(results(&from_file), results(&from_args));

    std::fs::write(&script, "5:A\n\n6:jump\n").unwrap();
    let out = nes(&["run", s(&rom), "--frames", "5", "--input", s(&script)]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("script.txt: line 3: "), "{stderr}");
    assert!(stderr.contains("jump"), "{stderr}");

    let out = nes(&["run", s(&rom), "--press", "0:A"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("counted from 1"));
}

#[test]
fn a_movie_ends_with_input_released_and_the_run_continues() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write_rom(dir);
    let header = "version 3\nemuVersion 22020\nport0 1\nport1 1\nport2 0\n";
    let short = dir.join("short.fm2");
    let mut text = header.to_owned();
    for _ in 0..10 {
        text.push_str("|0|.......A|........||\n");
    }
    std::fs::write(&short, &text).unwrap();
    let long = dir.join("long.fm2");
    for _ in 0..10 {
        text.push_str("|0|........|........||\n");
    }
    std::fs::write(&long, &text).unwrap();
    let short_run = ok(&["run", s(&rom), "--movie", s(&short), "--frames", "20"]);
    let long_run = ok(&["run", s(&rom), "--movie", s(&long)]);
    assert!(short_run.contains("frames: 20"), "{short_run}");
    assert_eq!(results(&short_run), results(&long_run));
}

#[test]
fn movie_reset_and_power_commands_are_applied() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write_rom(dir);
    // Twelve frames holding A; `command` on frame 7.
    let movie = |command: u8| {
        let mut text = "version 3\nport0 1\nport1 1\nport2 0\n".to_owned();
        for frame in 1..=12 {
            let bits = if frame == 7 { command } else { 0 };
            text.push_str(&format!("|{bits}|.......A|........||\n"));
        }
        text
    };
    let plain_path = dir.join("plain.fm2");
    let reset_path = dir.join("reset.fm2");
    let power_path = dir.join("power.fm2");
    std::fs::write(&plain_path, movie(0)).unwrap();
    std::fs::write(&reset_path, movie(1)).unwrap();
    std::fs::write(&power_path, movie(2)).unwrap();
    let plain_run = ok(&["run", s(&rom), "--movie", s(&plain_path)]);
    let reset_run = ok(&["run", s(&rom), "--movie", s(&reset_path)]);
    let power_run = ok(&["run", s(&rom), "--movie", s(&power_path)]);
    // A movie runs its own length, commands or not: one line a frame.
    assert!(plain_run.contains("frames: 12"), "{plain_run}");
    assert!(reset_run.contains("frames: 12"), "{reset_run}");
    assert!(power_run.contains("frames: 12"), "{power_run}");
    // A reset restarts the program (a VBlank wait, then NMIs again) but keeps RAM; a power
    // cycle clears RAM: all three end differently.
    let ram = |out: &str| results(out)[2].to_owned();
    assert_ne!(ram(&plain_run), ram(&reset_run));
    assert_ne!(ram(&plain_run), ram(&power_run));
    assert_ne!(ram(&reset_run), ram(&power_run));

    // Recording a playback with a power command gives back the same lines and the same run.
    let rerecorded = dir.join("power-again.fm2");
    let again = ok(&[
        "run",
        s(&rom),
        "--movie",
        s(&power_path),
        "--record",
        s(&rerecorded),
    ]);
    assert_eq!(results(&again), results(&power_run));
    let original = Movie::parse(&movie(2)).unwrap();
    let copy = Movie::parse(&std::fs::read_to_string(&rerecorded).unwrap()).unwrap();
    assert_eq!(copy.frames, original.frames);
}

#[test]
fn bad_movies_are_clear_errors_naming_the_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write_rom(dir);
    let cases: [(&str, &str, &[&str]); 4] = [
        (
            "bad-column.fm2",
            "version 3\nport0 1\nport1 1\n|0|........|........||\n|0|RLDU|........||\n",
            &["bad-column.fm2: line 5: ", "8 columns"],
        ),
        (
            "junk.fm2",
            "version 3\n|0|........|........||\nthis is not input\n",
            &["junk.fm2: line 3: ", "expected an input line"],
        ),
        (
            "anchored.fm2",
            "version 3\nemuVersion 22020\nsavestate 0011aabb\n|0|........|........||\n",
            &["anchored.fm2: line 3: ", "savestate"],
        ),
        (
            "not-a-movie.fm2",
            "hello\n",
            &["not-a-movie.fm2: line 1: ", "version"],
        ),
    ];
    for (name, text, needles) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = nes(&["run", s(&rom), "--movie", s(&path)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        for needle in needles {
            assert!(
                stderr.contains(needle),
                "{name}: expected `{needle}` in `{stderr}`"
            );
        }
    }
    // --movie and scripted input are exclusive.
    let path = dir.join("bad-column.fm2");
    let out = nes(&["run", s(&rom), "--movie", s(&path), "--press", "1:A"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}

#[test]
fn lag_frames_are_counted_and_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write_rom(dir);
    let out = ok(&["run", s(&rom), "--frames", "10"]);
    // The program reads the pad in its NMI handler, once VBlank NMIs are on: only the frames
    // of the start-up VBlank wait (before the first NMI) lag.
    let lag: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("lag frames: "))
        .expect("a lag frames line")
        .parse()
        .unwrap();
    assert!((2..=4).contains(&lag), "{out}");
}

#[test]
fn fm2_line_k_is_the_input_of_frame_k_plus_1() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write_rom(dir);
    // Only line 6 (from 0) holds A: frame 7's input (FCEUX's timeline, as for any movie).
    let mut text = "version 3\nport0 1\nport1 1\nport2 0\n".to_owned();
    for line in 0..9 {
        text.push_str(if line == 6 {
            "|0|.......A|........||\n"
        } else {
            "|0|........|........||\n"
        });
    }
    let (fm2, log) = (dir.join("align.fm2"), dir.join("align.ram"));
    std::fs::write(&fm2, text).unwrap();
    let out = ok(&["run", s(&rom), "--movie", s(&fm2), "--ram-log", s(&log)]);
    assert!(out.contains("frames: 9"), "{out}");
    let log = std::fs::read(&log).unwrap();
    assert_eq!(log.len(), 9 * 2048);
    // $01 holds the buttons the NMI handler read (A ends up in bit 7), after each frame.
    let buttons_after = |frame: usize| log[(frame - 1) * 2048 + 1];
    assert_eq!(buttons_after(6), 0x00);
    assert_eq!(buttons_after(7), 0x80);
    assert_eq!(buttons_after(8), 0x00);
}

#[test]
fn movies_play_on_fceuxs_timeline_unless_told_otherwise() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = write_rom(dir);
    let mut text = "version 3\nport0 1\nport1 1\nport2 0\n".to_owned();
    for _ in 0..12 {
        text.push_str("|0|.......A|........||\n");
    }
    let fm2 = dir.join("timeline.fm2");
    std::fs::write(&fm2, text).unwrap();
    let default = ok(&["run", s(&rom), "--movie", s(&fm2)]);
    let fceux = ok(&["run", s(&rom), "--movie", s(&fm2), "--power-on", "fceux"]);
    let hardware = ok(&["run", s(&rom), "--movie", s(&fm2), "--power-on", "hardware"]);
    assert_eq!(results(&default), results(&fceux));
    // The hardware's first VBlank comes a frame earlier: one NMI more in the same frames.
    assert_ne!(results(&default)[2], results(&hardware)[2]);
    // Without a movie (or script, or recording) the hardware's is the default.
    let plain = ok(&["run", s(&rom), "--frames", "12"]);
    let plain_hardware = ok(&["run", s(&rom), "--frames", "12", "--power-on", "hardware"]);
    assert_eq!(results(&plain), results(&plain_hardware));
    let out = nes(&["run", s(&rom), "--power-on", "famicom"]);
    assert_eq!(out.status.code(), Some(2));
}
