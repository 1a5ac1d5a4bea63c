//! `nes trace`: a nestest.log-format trace of the instructions a ROM executes.

use std::path::Path;

use crate::hardware::HardwareChoice;
use crate::{load_rom, Error};

/// Prints `lines` trace lines from power-on (or from `start_pc`, nestest's automation entry,
/// with the registers its log expects), in chunks as it goes, stopping when the reader has
/// gone (`| head`).
pub fn trace(rom: &Path, start_pc: Option<u16>, lines: usize) -> Result<(), Error> {
    let mut nes = load_rom(rom, nes::PowerOn::HARDWARE, &HardwareChoice::default())?;
    if let Some(pc) = start_pc {
        // nestest's automation mode: registers as its log expects after power-on.
        let mut regs = nes.cpu_registers();
        regs.pc = pc;
        regs.a = 0;
        regs.x = 0;
        regs.y = 0;
        regs.p = 0x24;
        regs.s = 0xFD;
        nes.set_cpu_registers(regs);
    }
    let mut out = String::new();
    for _ in 0..lines {
        out.push_str(&nes.trace_line());
        out.push('\n');
        if out.len() >= 64 * 1024 {
            if !crate::out!("{out}") {
                return Ok(());
            }
            out.clear();
        }
        if nes.jammed_at().is_some() {
            break;
        }
        nes.step_instruction();
    }
    crate::out!("{out}");
    Ok(())
}
