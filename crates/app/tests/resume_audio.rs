//! `nes run --load-state --wav`: audio resumed from a save state continues the straight run's
//! audio bit for bit (the state carries the resampler, and setting the output rate must not
//! restart it).

use std::path::Path;
use std::process::Command;

fn nes(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_nes"))
        .args(args)
        .output()
        .expect("the nes binary runs");
    assert!(
        out.status.success(),
        "nes {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// NROM playing a pulse tone whose period sweeps every frame (the NMI handler rewrites
/// $4002), and a triangle: audio that changes all the time, so a lost or moved sample shows.
fn tone_rom() -> Vec<u8> {
    #[rustfmt::skip]
    let reset = [
        0x78, 0xA2, 0xFF, 0x9A,         // SEI; LDX #$FF; TXS
        0xA9, 0x0F, 0x8D, 0x15, 0x40,   // channels on
        0xA9, 0xBF, 0x8D, 0x00, 0x40,   // pulse 1: duty 2, constant volume 15
        0xA9, 0x02, 0x8D, 0x03, 0x40,   // pulse 1 period high, length
        0xA9, 0xFF, 0x8D, 0x08, 0x40,   // triangle: linear counter on
        0xA9, 0x30, 0x8D, 0x0A, 0x40,   // triangle period low
        0xA9, 0x01, 0x8D, 0x0B, 0x40,   // triangle period high, length
        0xA9, 0x80, 0x8D, 0x00, 0x20,   // NMI on
        0x4C, 0x28, 0x80,               // $8028: JMP $8028
    ];
    #[rustfmt::skip]
    let nmi = [
        0xE6, 0x10, 0xA5, 0x10,         // INC $10; LDA $10
        0x8D, 0x02, 0x40,               // pulse 1 period low = frame counter
        0x40,                           // RTI
    ];
    let mut prg = vec![0xEA; 0x8000];
    prg[..reset.len()].copy_from_slice(&reset);
    prg[0x100..0x100 + nmi.len()].copy_from_slice(&nmi);
    prg[0x7FFA..0x7FFC].copy_from_slice(&0x8100u16.to_le_bytes());
    prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
    prg[0x7FFE..0x8000].copy_from_slice(&0x8100u16.to_le_bytes());
    nes::ines_image(0, &prg, &[0; 0x2000])
}

/// The PCM samples of a 16-bit mono WAV file written by `nes run --wav`.
fn samples(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    let data = bytes
        .windows(4)
        .position(|window| window == b"data")
        .expect("a data chunk");
    bytes[data + 8..].to_vec()
}

#[test]
fn audio_resumed_from_a_state_continues_the_straight_run_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rom = dir.join("tone.nes");
    std::fs::write(&rom, tone_rom()).unwrap();
    let rom = rom.to_str().unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_owned();

    nes(&["run", rom, "--frames", "90", "--wav", &path("straight.wav")]);
    nes(&[
        "run",
        rom,
        "--frames",
        "37",
        "--wav",
        &path("first.wav"),
        "--save-state",
        &path("at37.state"),
    ]);
    nes(&[
        "run",
        rom,
        "--load-state",
        &path("at37.state"),
        "--frames",
        "90",
        "--wav",
        &path("resumed.wav"),
    ]);

    let straight = samples(Path::new(&path("straight.wav")));
    let first = samples(Path::new(&path("first.wav")));
    let resumed = samples(Path::new(&path("resumed.wav")));
    assert!(first.chunks(2).any(|s| s != [0, 0]), "the ROM makes sound");
    assert_eq!(
        first.len() + resumed.len(),
        straight.len(),
        "no sample lost or added at the resume point"
    );
    assert!(straight[..first.len()] == first[..], "the first part");
    assert!(
        straight[first.len()..] == resumed[..],
        "the resumed audio continues the straight run bit for bit"
    );
}
