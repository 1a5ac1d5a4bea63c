//! Runs the FCEUX-style scripts in `tests/lua/` on a synthetic NROM built here.
//!
//! The ROM ("scripts.nes" to the scripts):
//! - $8000: main loop enabling NMI (`LDA #$80; STA $2000; JMP $8000`);
//! - $8100: NMI: strobe pad 1 and shift its buttons into $00 (A ends in bit 7); if Start is
//!   held, game mode $C0 = 4; `INC $41`; level compare `LDX $44; CPX #$1D` at $8121/$8123 whose
//!   carry is stored to $45; `INC $10`; RTI;
//! - $9000: a table: byte i = 3*i for i = 0..15, then $F0 $34 $12.

use std::path::{Path, PathBuf};

use nes::{Buttons, Nes, Palette};
use nes_lua::{FrameInput, HostOptions, LuaHost};

fn script_rom() -> Vec<u8> {
    let mut prg = vec![0xEA; 0x8000];
    prg[..8].copy_from_slice(&[0xA9, 0x80, 0x8D, 0x00, 0x20, 0x4C, 0x00, 0x80]);
    let nmi: &[u8] = &[
        0xA9, 0x01, 0x8D, 0x16, 0x40, // LDA #1; STA $4016
        0xA9, 0x00, 0x8D, 0x16, 0x40, // LDA #0; STA $4016
        0xA2, 0x08, // LDX #8
        0xAD, 0x16, 0x40, // read: LDA $4016
        0x4A, // LSR A
        0x26, 0x00, // ROL $00
        0xCA, // DEX
        0xD0, 0xF7, // BNE read
        0xA5, 0x00, // $8115: LDA $00
        0x29, 0x10, // AND #$10 (Start)
        0xF0, 0x04, // BEQ +4
        0xA9, 0x04, // LDA #4
        0x85, 0xC0, // STA $C0
        0xE6, 0x41, // $811F: INC $41
        0xA6, 0x44, // $8121: LDX $44
        0xE0, 0x1D, // $8123: CPX #$1D
        0xA9, 0x00, // $8125: LDA #0
        0x2A, // ROL A (the carry)
        0x85, 0x45, // STA $45
        0xE6, 0x10, // INC $10
        0x40, // RTI
    ];
    prg[0x100..0x100 + nmi.len()].copy_from_slice(nmi);
    for i in 0..16 {
        prg[0x1000 + i] = (3 * i) as u8;
    }
    prg[0x1010..0x1013].copy_from_slice(&[0xF0, 0x34, 0x12]);
    prg[0x7FF0] = 0x40;
    prg[0x7FFA..0x7FFC].copy_from_slice(&0x8100u16.to_le_bytes());
    prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
    prg[0x7FFE..0x8000].copy_from_slice(&0xFFF0u16.to_le_bytes());
    nes::ines_image(0, &prg, &[])
}

fn script_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/lua")
        .join(name)
}

struct Outcome {
    output: Vec<String>,
    errors: Vec<String>,
    running: bool,
}

/// Start `name` and run it for `frames` frames with the user holding Select on pad 1, then
/// stop it.
fn run_script(name: &str, frames: usize) -> Outcome {
    let rom = script_rom();
    let dir = tempfile::tempdir().expect("temporary folder");
    let options = HostOptions {
        save_dir: dir.path().to_path_buf(),
        rom_stem: "scripts".to_string(),
        rom: nes::Cartridge::from_ines(&rom)
            .expect("valid ROM")
            .info()
            .clone(),
        arg: Some(dir.path().display().to_string()),
        palette: Palette::ntsc(),
    };
    let mut host = LuaHost::load(&script_path(name), options).unwrap_or_else(|e| panic!("{e}"));
    let cart = nes::Cartridge::from_ines(&rom).expect("valid ROM");
    // As `nes run --lua` runs scripts: FCEUX's timeline, the first slice at the start.
    let mut nes = Nes::with_power_on(cart, nes::PowerOn::FCEUX);
    host.start(&mut nes);
    let input = FrameInput {
        user: [Buttons::SELECT, Buttons::empty()],
        movie: None,
    };
    let mut output = Vec::new();
    for _ in 0..frames {
        host.run_frame(&mut nes, input);
        output.extend(host.take_output());
    }
    let running = host.running();
    host.stop(&mut nes);
    output.extend(host.take_output());
    Outcome {
        output,
        errors: host.take_errors(),
        running,
    }
}

fn assert_passes(name: &str, frames: usize) -> Outcome {
    let outcome = run_script(name, frames);
    assert!(outcome.errors.is_empty(), "{name}: {:?}", outcome.errors);
    assert!(
        outcome.output.iter().any(|line| line == "PASS"),
        "{name} did not finish: {:?}",
        outcome.output
    );
    outcome
}

#[test]
fn memory_script() {
    assert_passes("memory.lua", 20);
}

#[test]
fn joypad_script() {
    assert_passes("joypad.lua", 20);
}

#[test]
fn emu_script() {
    let outcome = assert_passes("emu.lua", 20);
    assert!(outcome.output.contains(&"printed 1".to_string()));
    let exits = outcome.output.iter().filter(|l| *l == "exit ran").count();
    assert_eq!(exits, 1, "registerexit runs once, at stop");
}

#[test]
fn gui_script() {
    assert_passes("gui.lua", 10);
}

#[test]
fn savestate_script() {
    assert_passes("savestate.lua", 10);
}

#[test]
fn misc_script() {
    assert_passes("misc.lua", 5);
}

#[test]
fn ai_like_script() {
    let outcome = assert_passes("ai_like.lua", 60);
    assert!(
        outcome.running,
        "the script keeps running after its main chunk ends"
    );
}

#[test]
fn an_error_in_a_write_hook_reports_file_and_line() {
    let outcome = run_script("error_in_write_hook.lua", 10);
    assert!(!outcome.running);
    // The chunk is named by the script's path (Lua shortens a long one to "...tail").
    assert_eq!(outcome.errors.len(), 1, "{:?}", outcome.errors);
    assert!(
        outcome.errors[0].ends_with("/error_in_write_hook.lua:4: bad value at 16"),
        "{:?}",
        outcome.errors
    );
    assert_eq!(outcome.output, vec!["exit".to_string()]);
}
