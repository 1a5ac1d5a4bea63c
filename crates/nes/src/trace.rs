//! nestest.log-style trace lines, disassembled with the CPU's own opcode table
//! ([`nes_cpu::describe`]).

use std::fmt::Write;

use crate::motherboard::Motherboard;
use nes_cpu::{describe, AddressingMode, Cpu, Operand};

/// One line in nestest.log's fixed columns for the instruction at the CPU's PC.
pub(crate) fn format_line(cpu: &Cpu, bus: &Motherboard) -> String {
    let pc = cpu.pc;
    let opcode = bus.peek(pc);
    let instruction = describe(opcode);
    let mnemonic = instruction.mnemonic;
    let operand_lo = bus.peek(pc.wrapping_add(1));
    let operand_hi = bus.peek(pc.wrapping_add(2));
    let word = u16::from_le_bytes([operand_lo, operand_hi]);

    let mut line = String::with_capacity(96);
    let _ = write!(line, "{pc:04X}  {opcode:02X}");
    match instruction.mode.instruction_bytes() {
        1 => line.push_str("      "),
        2 => {
            let _ = write!(line, " {operand_lo:02X}   ");
        }
        _ => {
            let _ = write!(line, " {operand_lo:02X} {operand_hi:02X}");
        }
    }
    line.push(' ');
    line.push(if instruction.official { ' ' } else { '*' });
    let operand = match instruction.mode {
        AddressingMode::Implied => String::new(),
        AddressingMode::Accumulator => "A".to_owned(),
        AddressingMode::Indirect => format!("(${word:04X})"),
        AddressingMode::Relative => {
            let target = pc.wrapping_add(2).wrapping_add(operand_lo as i8 as u16);
            format!("${target:04X}")
        }
        AddressingMode::Operand(operand) => match operand {
            Operand::Immediate => format!("#${operand_lo:02X}"),
            Operand::ZeroPage => format!("${operand_lo:02X}"),
            Operand::ZeroPageX => format!("${operand_lo:02X},X"),
            Operand::ZeroPageY => format!("${operand_lo:02X},Y"),
            Operand::Absolute => format!("${word:04X}"),
            Operand::AbsoluteX => format!("${word:04X},X"),
            Operand::AbsoluteY => format!("${word:04X},Y"),
            Operand::IndirectX => format!("(${operand_lo:02X},X)"),
            Operand::IndirectY => format!("(${operand_lo:02X}),Y"),
        },
    };
    let disassembly = if operand.is_empty() {
        mnemonic.to_owned()
    } else {
        format!("{mnemonic} {operand}")
    };
    let _ = write!(line, "{disassembly:<32}");
    let (scanline, dot) = (bus.ppu.scanline(), bus.ppu.dot());
    let _ = write!(
        line,
        "A:{:02X} X:{:02X} Y:{:02X} P:{:02X} SP:{:02X} PPU:{:3},{:3} CYC:{}",
        cpu.a,
        cpu.x,
        cpu.y,
        cpu.p.bits(),
        cpu.s,
        scanline,
        dot,
        cpu.cycles()
    );
    line
}
