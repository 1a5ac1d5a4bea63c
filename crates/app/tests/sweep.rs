//! Frame capture and screenshot sweeps, end to end through the `nes` binary: frame numbering,
//! the raw9 files, verdicts for broken ROMs, repeatability over the public test ROMs, and
//! palettes changing PNGs but never raw hashes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nes_headless::capture::{parse_raw9, sha256_hex, PIXELS};
use nes_headless::sweep::{SweepReport, Verdict};
use sha1::{Digest, Sha1};

fn nes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nes"))
        .args(args)
        .output()
        .expect("the nes binary runs")
}

fn succeeded(output: &Output) -> String {
    assert!(
        output.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// A 32 KiB NROM image (8 KiB CHR ROM of zeros): `main` at $8000, `nmi` at $8100, `data` at
/// $8200; rendering stays off, so every pixel shows the backdrop colour ($3F00).
fn nrom(main: &[u8], nmi: &[u8], data: &[u8]) -> Vec<u8> {
    let mut prg = vec![0xEA; 0x8000];
    prg[..main.len()].copy_from_slice(main);
    prg[0x100..0x100 + nmi.len()].copy_from_slice(nmi);
    prg[0x200..0x200 + data.len()].copy_from_slice(data);
    prg[0x7FFA..0x7FFC].copy_from_slice(&0x8100u16.to_le_bytes());
    prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
    prg[0x7FFE..0x8000].copy_from_slice(&0x8100u16.to_le_bytes());
    nes::ines_image(0, &prg, &[0; 0x2000])
}

/// Main loop: keep enabling NMI (the PPU ignores $2000 writes while it warms up).
const MAIN: [u8; 11] = [
    0x78, 0xD8, 0xA2, 0xFF, 0x9A, // SEI, CLD, LDX #$FF, TXS
    0xA9, 0x80, 0x8D, 0x00, 0x20, // $8005: LDA #$80, STA $2000
    0x4C, // JMP $8005 (operand follows)
];

fn main_loop() -> Vec<u8> {
    let mut code = MAIN.to_vec();
    code.extend_from_slice(&[0x05, 0x80]);
    code
}

/// NMI tail: write the colour in A to $3F00, point v back at $0000 (with rendering off, a v
/// inside the palette would show that entry instead of $3F00), count the NMI at $00, return.
fn set_backdrop_from_a() -> Vec<u8> {
    vec![
        0x48, // PHA
        0xAD, 0x02, 0x20, // LDA $2002 (reset the $2006 latch)
        0xA9, 0x3F, 0x8D, 0x06, 0x20, // LDA #$3F, STA $2006
        0xA9, 0x00, 0x8D, 0x06, 0x20, // LDA #$00, STA $2006
        0x68, // PLA
        0x8D, 0x07, 0x20, // STA $2007
        0xA9, 0x00, 0x8D, 0x06, 0x20, 0x8D, 0x06, 0x20, // v = $0000
        0xE6, 0x00, // INC $00
        0x40, // RTI
    ]
}

const BLUE: u16 = 0x12;
const RED: u16 = 0x16;

/// A ROM whose backdrop is red for a picture produced while A is held, else blue: its NMI (in
/// the vblank before each picture) reads controller 1.
fn colour_on_a_rom() -> Vec<u8> {
    let mut nmi = vec![
        0xA9, 0x01, 0x8D, 0x16, 0x40, // strobe: LDA #1, STA $4016
        0xA9, 0x00, 0x8D, 0x16, 0x40, // LDA #0, STA $4016
        0xAD, 0x16, 0x40, 0x29, 0x01, 0xAA, // LDA $4016, AND #1, TAX (X = A button)
        0xBD, 0x00, 0x82, // LDA $8200,X
    ];
    nmi.extend(set_backdrop_from_a());
    nrom(&main_loop(), &nmi, &[BLUE as u8, RED as u8])
}

/// A ROM whose backdrop colour is its NMI count (mod 64), the count being kept at $00.
fn colour_is_nmi_count_rom() -> Vec<u8> {
    let mut nmi = vec![
        0xA5, 0x00, 0x18, 0x69, 0x01, 0x29, 0x3F, // LDA $00, CLC, ADC #1, AND #$3F
    ];
    nmi.extend(set_backdrop_from_a());
    nrom(&main_loop(), &nmi, &[])
}

/// A ROM that executes a JAM opcode ($02) at $8004 right after start-up.
fn jam_rom() -> Vec<u8> {
    nrom(&[0x78, 0xD8, 0xEA, 0xEA, 0x02], &[0x40], &[])
}

fn uniform_colour(raw9: &Path) -> u16 {
    let pixels = parse_raw9(&std::fs::read(raw9).unwrap()).unwrap();
    assert_eq!(pixels.len(), PIXELS);
    assert!(
        pixels.iter().all(|&pixel| pixel == pixels[0]),
        "{} is one colour",
        raw9.display()
    );
    pixels[0]
}

#[test]
fn capture_numbering_matches_press_frames() {
    let dir = tempfile::tempdir().unwrap();
    let rom = dir.path().join("colour.nes");
    std::fs::write(&rom, colour_on_a_rom()).unwrap();
    let captures = dir.path().join("caps");
    // A held for frames 20 and 21 (HOLD 2): exactly pictures 20 and 21 are red.
    let stdout = succeeded(&nes(&[
        "run",
        path_str(&rom),
        "--press",
        "20:A:2",
        "--capture",
        "19,20,21,22",
        "--capture-dir",
        path_str(&captures),
    ]));
    let colour = |frame: u64| uniform_colour(&captures.join(format!("colour_f{frame}.raw9")));
    assert_eq!(colour(19), BLUE, "the frame before the press");
    assert_eq!(colour(20), RED, "the pressed frame");
    assert_eq!(colour(21), RED, "HOLD 2 covers frame 21");
    assert_eq!(colour(22), BLUE, "released again");
    // Without --frames the run lasts the default 60 frames (captures beyond it would extend
    // it); one hash line per capture.
    assert!(stdout.contains("frames: 60"), "{stdout}");
    for frame in [19, 20, 21, 22] {
        let raw = std::fs::read(captures.join(format!("colour_f{frame}.raw9"))).unwrap();
        let line = format!("capture f{frame}: sha256 {}", sha256_hex(&raw));
        assert!(stdout.contains(&line), "`{line}` in {stdout}");
        assert!(captures.join(format!("colour_f{frame}.png")).is_file());
    }
}

#[test]
fn capture_frames_ram_log_and_final_frame_agree() {
    let dir = tempfile::tempdir().unwrap();
    let rom = dir.path().join("count.nes");
    std::fs::write(&rom, colour_is_nmi_count_rom()).unwrap();
    let captures = dir.path().join("caps");
    let ram_log = dir.path().join("ram.bin");
    let stdout = succeeded(&nes(&[
        "run",
        path_str(&rom),
        "--frames",
        "40",
        "--capture",
        "10,25,40",
        "--capture-dir",
        path_str(&captures),
        "--ram-log",
        path_str(&ram_log),
    ]));
    let log = std::fs::read(&ram_log).unwrap();
    assert_eq!(log.len(), 40 * 2048);
    for frame in [10usize, 25, 40] {
        // Picture N shows the count the NMI before it set; the RAM log's entry N is RAM at
        // the end of frame N, before the next NMI: the same count.
        let count = log[(frame - 1) * 2048];
        assert!(count > 0, "NMIs are running by frame {frame}");
        let raw = captures.join(format!("count_f{frame}.raw9"));
        assert_eq!(
            uniform_colour(&raw),
            u16::from(count & 0x3F),
            "frame {frame}"
        );
    }
    // `--frames 40` hashes the same picture as capture 40 (SHA-1 of the same raw bytes).
    let last = std::fs::read(captures.join("count_f40.raw9")).unwrap();
    let sha1: String = Sha1::digest(&last)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    assert!(stdout.contains(&format!("frame sha1: {sha1}")), "{stdout}");
}

#[test]
fn capture_needs_a_folder_and_frames_in_range() {
    let dir = tempfile::tempdir().unwrap();
    let rom = dir.path().join("count.nes");
    std::fs::write(&rom, colour_is_nmi_count_rom()).unwrap();
    let out = nes(&["run", path_str(&rom), "--capture", "5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--capture-dir"));
    let caps = dir.path().join("caps");
    let out = nes(&[
        "run",
        path_str(&rom),
        "--frames",
        "3",
        "--capture",
        "5",
        "--capture-dir",
        path_str(&caps),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("frame 5") && stderr.contains("frame 3"),
        "{stderr}"
    );
    let out = nes(&[
        "run",
        path_str(&rom),
        "--capture",
        "0",
        "--capture-dir",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

fn load_report(out: &Path) -> SweepReport {
    let text = std::fs::read_to_string(out.join("sweep.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn record<'a>(report: &'a SweepReport, rom: &str) -> &'a nes_headless::sweep::RomRecord {
    report
        .roms
        .iter()
        .find(|record| record.rom == rom)
        .unwrap_or_else(|| panic!("{rom} in the report"))
}

/// A folder of synthetic ROMs, good and bad.
fn synthetic_library(dir: &Path) -> PathBuf {
    let roms = dir.join("roms");
    std::fs::create_dir_all(roms.join("sub")).unwrap();
    std::fs::write(roms.join("colour.nes"), colour_on_a_rom()).unwrap();
    std::fs::write(roms.join("sub/count.nes"), colour_is_nmi_count_rom()).unwrap();
    std::fs::write(roms.join("jam.nes"), jam_rom()).unwrap();
    std::fs::write(roms.join("broken.nes"), b"this is not an iNES image").unwrap();
    let mut mmc5 = colour_is_nmi_count_rom();
    mmc5[6] = 0x50; // mapper 5: no such board here
    std::fs::write(roms.join("mmc5.nes"), mmc5).unwrap();
    roms
}

#[test]
fn sweep_reports_every_rom_and_failures_never_stop_it() {
    let dir = tempfile::tempdir().unwrap();
    let roms = synthetic_library(dir.path());
    let spec = dir.path().join("input.toml");
    std::fs::write(&spec, "[roms]\n\"colour.nes\" = [\"30:A\"]\n").unwrap();
    let out = dir.path().join("out");
    let stdout = succeeded(&nes(&[
        "sweep",
        "--roms",
        path_str(&roms),
        "--out",
        path_str(&out),
        "--frames",
        "40",
        "--capture",
        "29,30",
        "--input-file",
        path_str(&spec),
        "--jobs",
        "2",
    ]));
    let report = load_report(&out);
    let keys: Vec<&str> = report
        .roms
        .iter()
        .map(|record| record.rom.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "broken.nes",
            "colour.nes",
            "jam.nes",
            "mmc5.nes",
            "sub/count.nes"
        ]
    );
    assert_eq!(report.frames, 40);
    assert_eq!(report.capture_frames, [29, 30]);

    let mmc5 = record(&report, "mmc5.nes");
    assert_eq!(mmc5.verdict, Verdict::LoadError);
    assert_eq!(mmc5.mapper, Some(5), "the header's mapper is reported");
    assert!(
        mmc5.detail.contains("unsupported mapper 5"),
        "{}",
        mmc5.detail
    );

    let broken = record(&report, "broken.nes");
    assert_eq!(broken.verdict, Verdict::LoadError);
    assert!(!broken.detail.is_empty());
    assert!(broken.captures.is_empty());
    assert_eq!(
        broken.md5.as_deref(),
        Some("73e63dba60ed5aaa9a0ceed3f190e7d3")
    );

    let jam = record(&report, "jam.nes");
    assert_eq!(jam.verdict, Verdict::Jam);
    assert_eq!(jam.jam_pc.as_deref(), Some("$8004"));
    assert_eq!(jam.frames_run, 1, "stops after the frame it jammed in");
    assert_eq!(jam.captures.len(), 1, "the last picture is still shown");
    assert!(!jam.captures[0].requested);

    let colour = record(&report, "colour.nes");
    assert_eq!(colour.verdict, Verdict::Ok);
    assert_eq!(colour.mapper, Some(0));
    assert_eq!(colour.input, ["30:A:1"]);
    assert_eq!(colour.frames_run, 40);
    let frames: Vec<u64> = colour
        .captures
        .iter()
        .map(|capture| capture.frame)
        .collect();
    assert_eq!(frames, [29, 30]);
    // The sweep numbers frames and applies input exactly as `nes run` does.
    assert_eq!(uniform_colour(&out.join(&colour.captures[0].raw9)), BLUE);
    assert_eq!(uniform_colour(&out.join(&colour.captures[1].raw9)), RED);
    for capture in &colour.captures {
        let raw = std::fs::read(out.join(&capture.raw9)).unwrap();
        assert_eq!(capture.sha256, sha256_hex(&raw));
        assert!(out.join(&capture.png).is_file());
    }
    assert_eq!(
        record(&report, "sub/count.nes").captures[0].png,
        "captures/sub/count_f29.png"
    );
    assert_eq!(report.counts.get(&Verdict::Ok), Some(&2));

    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    for needle in [
        "src=\"captures/colour_f30.png\"",
        "src=\"captures/sub/count_f29.png\"",
        "load error",
        "JAM",
        "$8004",
        colour.captures[1].sha256.as_str(),
    ] {
        assert!(html.contains(needle), "index.html lacks {needle}");
    }
    assert!(stdout.contains("jam.nes: JAM"), "{stdout}");
    assert!(stdout.contains("broken.nes: load error"), "{stdout}");
}

#[test]
fn a_stalled_frame_is_reported_as_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let roms = dir.path().join("roms");
    std::fs::create_dir_all(&roms).unwrap();
    std::fs::write(roms.join("count.nes"), colour_is_nmi_count_rom()).unwrap();
    let out = dir.path().join("out");
    // A budget far below the 29,781 cycles of a frame: frame 1 can never finish in it.
    succeeded(&nes(&[
        "sweep",
        "--roms",
        path_str(&roms),
        "--out",
        path_str(&out),
        "--frames",
        "5",
        "--hang-cycles",
        "5000",
    ]));
    let report = load_report(&out);
    let count = record(&report, "count.nes");
    assert_eq!(count.verdict, Verdict::Hang);
    assert_eq!(count.frames_run, 0);
    assert!(count.captures.is_empty(), "no complete picture to show");
    assert!(
        count.detail.contains("frame 1 did not complete"),
        "{}",
        count.detail
    );
}

#[test]
fn compare_finds_changed_pixels_and_draws_diffs() {
    let dir = tempfile::tempdir().unwrap();
    let roms = synthetic_library(dir.path());
    let sweep = |out: &Path, spec: Option<&Path>, compare: Option<&Path>| {
        let mut args = vec![
            "sweep".to_owned(),
            "--roms".into(),
            path_str(&roms).into(),
            "--out".into(),
            path_str(out).into(),
            "--frames".into(),
            "30".into(),
        ];
        if let Some(spec) = spec {
            args.extend(["--input-file".into(), path_str(spec).into()]);
        }
        if let Some(old) = compare {
            args.extend(["--compare".into(), path_str(old).into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        nes(&args)
    };
    let old = dir.path().join("old");
    succeeded(&sweep(&old, None, None));
    let spec = dir.path().join("input.toml");
    std::fs::write(&spec, "default = [\"30:A\"]\n").unwrap();
    let new = dir.path().join("new");
    let output = sweep(&new, Some(&spec), Some(&old));
    assert_eq!(output.status.code(), Some(1), "changes found: exit 1");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("changed colour.nes f30: 61440 pixels"),
        "{stdout}"
    );
    let report = load_report(&new);
    let compare = report.compare.as_ref().unwrap();
    assert_eq!(
        compare.changed.len(),
        1,
        "only the ROM that reads A changed"
    );
    let change = &compare.changed[0];
    assert_eq!((change.rom.as_str(), change.frame), ("colour.nes", 30));
    assert_eq!(change.changed_pixels, PIXELS);
    assert_eq!(change.changed_area, Some([0, 0, 255, 239]));
    let diff = new.join(change.diff_png.as_ref().unwrap());
    assert!(diff.is_file());
    let decoder = png::Decoder::new(std::io::Cursor::new(std::fs::read(&diff).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut rgba = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut rgba).unwrap();
    assert_eq!(
        &rgba[..4],
        &[255, 0, 255, 255],
        "changed pixels highlighted"
    );
    assert_eq!(compare.unchanged, 2, "count.nes and jam.nes are the same");
    let html = std::fs::read_to_string(new.join("index.html")).unwrap();
    assert!(html.contains("src=\"diffs/colour_f30.png\""));
    assert!(html.contains("src=\"../old/captures/colour_f30.png\""));

    // Comparing against itself is refused rather than overwriting the old captures.
    let same = sweep(&old, None, Some(&old));
    assert_eq!(same.status.code(), Some(2));
}

/// A 64-colour .pal file unlike the built-in palette.
fn odd_palette() -> Vec<u8> {
    (0..192u32).map(|index| (index * 37 % 251) as u8).collect()
}

#[test]
fn a_changed_palette_changes_pngs_but_not_raw_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let roms = synthetic_library(dir.path());
    let palette = dir.path().join("odd.pal");
    std::fs::write(&palette, odd_palette()).unwrap();
    let plain = dir.path().join("plain");
    let args = |out: &Path| {
        vec![
            "sweep".to_owned(),
            "--roms".into(),
            path_str(&roms).into(),
            "--out".into(),
            path_str(out).into(),
            "--frames".into(),
            "20".into(),
        ]
    };
    let plain_args = args(&plain);
    succeeded(&nes(&plain_args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()));
    let tinted = dir.path().join("tinted");
    let mut tinted_args = args(&tinted);
    tinted_args.extend([
        "--palette".into(),
        path_str(&palette).into(),
        "--compare".into(),
        path_str(&plain).into(),
    ]);
    let output = nes(&tinted_args.iter().map(String::as_str).collect::<Vec<_>>());
    succeeded(&output);
    let (before, after) = (load_report(&plain), load_report(&tinted));
    let mut compared = 0;
    for old in &before.roms {
        let new = record(&after, &old.rom);
        for (a, b) in old.captures.iter().zip(&new.captures) {
            assert_eq!(a.sha256, b.sha256, "{} raw hash", old.rom);
            let png_a = std::fs::read(plain.join(&a.png)).unwrap();
            let png_b = std::fs::read(tinted.join(&b.png)).unwrap();
            assert_ne!(png_a, png_b, "{} PNG", old.rom);
            compared += 1;
        }
    }
    assert_eq!(
        compared, 3,
        "colour, count and the jammed ROM's last picture"
    );
    let compare = after.compare.as_ref().unwrap();
    assert!(compare.changed.is_empty() && compare.missing.is_empty());
    assert_eq!(compare.unchanged, 3);
}

/// The public test ROMs, or `None` (with a note) when they are not installed; under `CI=true`
/// their absence is a failure, so CI never passes vacuously.
fn suite_roms() -> Option<PathBuf> {
    match nes_headless::test_roms::find_manifest(None) {
        Ok(manifest) => Some(nes_headless::test_roms::manifest_root(&manifest)),
        Err(error) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but the test ROMs are missing: {error}"
            );
            eprintln!("skipped: the public test ROMs are not installed ({error})");
            None
        }
    }
}

#[test]
fn sweeping_suite_roms_twice_changes_nothing() {
    let Some(suite) = suite_roms() else { return };
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("roms.txt");
    let picks = [
        "cpu/nestest/nestest.nes",
        "ppu/ppu_vbl_nmi/rom_singles/01-vbl_basics.nes",
        "mapper/holy-mapperel/M1_P128K_C32K.nes",
    ];
    let mut text = String::from("# a few public test ROMs\n");
    for pick in picks {
        let path = suite.join(pick);
        assert!(path.is_file(), "{} is in the suite", path.display());
        text.push_str(&format!("{}\n", path.display()));
    }
    std::fs::write(&list, text).unwrap();
    let sweep = |out: &Path, compare: Option<&Path>| {
        let mut args = vec![
            "sweep",
            "--roms",
            path_str(&list),
            "--out",
            path_str(out),
            "--frames",
            "180",
            "--capture",
            "60,180",
        ];
        if let Some(old) = compare {
            args.extend(["--compare", path_str(old)]);
        }
        nes(&args)
    };
    let first = dir.path().join("first");
    succeeded(&sweep(&first, None));
    let second = dir.path().join("second");
    let stdout = succeeded(&sweep(&second, Some(&first)));
    assert!(
        stdout.contains("0 changed, 0 missing, 6 unchanged"),
        "{stdout}"
    );
    let report = load_report(&second);
    assert!(report
        .roms
        .iter()
        .all(|record| record.verdict == Verdict::Ok));
    assert_eq!(report.compare.unwrap().unchanged, 6);
}

#[test]
fn captures_after_a_loaded_state_keep_the_frame_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let rom = dir.path().join("count.nes");
    std::fs::write(&rom, colour_is_nmi_count_rom()).unwrap();
    let straight = dir.path().join("straight");
    succeeded(&nes(&[
        "run",
        path_str(&rom),
        "--frames",
        "30",
        "--capture",
        "25,30",
        "--capture-dir",
        path_str(&straight),
    ]));
    let state = dir.path().join("f20.state");
    succeeded(&nes(&[
        "run",
        path_str(&rom),
        "--frames",
        "20",
        "--save-state",
        path_str(&state),
    ]));
    let resumed = dir.path().join("resumed");
    succeeded(&nes(&[
        "run",
        path_str(&rom),
        "--load-state",
        path_str(&state),
        "--frames",
        "30",
        "--capture",
        "25,30",
        "--capture-dir",
        path_str(&resumed),
    ]));
    for name in ["count_f25.raw9", "count_f30.raw9"] {
        assert_eq!(
            std::fs::read(straight.join(name)).unwrap(),
            std::fs::read(resumed.join(name)).unwrap(),
            "{name}: frame numbers continue from the state's"
        );
    }
}

#[test]
fn the_power_on_options_choose_the_start_and_the_report_records_it() {
    // The backdrop shows RAM byte $04, which the program never writes: FCEUX's pattern has
    // $FF there, zeroed RAM $00.
    let mut nmi = vec![0xA5, 0x04, 0x29, 0x3F]; // LDA $04, AND #$3F
    nmi.extend(set_backdrop_from_a());
    let dir = tempfile::tempdir().unwrap();
    let roms = dir.path().join("roms");
    std::fs::create_dir_all(&roms).unwrap();
    std::fs::write(roms.join("ram.nes"), nrom(&main_loop(), &nmi, &[])).unwrap();
    for (options, timeline, ram_option, colour) in [
        (&[][..], "hardware", 2, 0x00),
        (&["--power-on", "fceux"][..], "fceux", 0, 0x3F),
        (&["--power-on-ram", "ones"][..], "hardware", 1, 0x3F),
    ] {
        let out = dir.path().join(format!("out-{timeline}-{ram_option}"));
        let mut args = vec![
            "sweep",
            "--roms",
            path_str(&roms),
            "--out",
            path_str(&out),
            "--capture",
            "8",
            "--jobs",
            "1",
        ];
        args.extend_from_slice(options);
        succeeded(&nes(&args));
        let report = load_report(&out);
        let record = serde_json::to_value(report.power_on).unwrap();
        assert_eq!(record["timeline"], timeline, "{options:?}");
        assert_eq!(record["ram_init_option"], ram_option, "{options:?}");
        let raw9 = out.join("captures/ram_f8.raw9");
        assert_eq!(uniform_colour(&raw9), colour, "{options:?}");
    }
}
