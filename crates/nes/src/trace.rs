//! nestest.log-style trace lines and a small 6502 disassembler for them.

use std::fmt::Write;

use crate::motherboard::Motherboard;
use nes_cpu::Cpu;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Implied,
    Accumulator,
    Immediate,
    ZeroPage,
    ZeroPageX,
    ZeroPageY,
    Absolute,
    AbsoluteX,
    AbsoluteY,
    Indirect,
    IndirectX,
    IndirectY,
    Relative,
}

impl Mode {
    fn from_tag(tag: &str) -> Mode {
        match tag {
            "acc" => Mode::Accumulator,
            "imm" => Mode::Immediate,
            "zp" => Mode::ZeroPage,
            "zpx" => Mode::ZeroPageX,
            "zpy" => Mode::ZeroPageY,
            "abs" => Mode::Absolute,
            "abx" => Mode::AbsoluteX,
            "aby" => Mode::AbsoluteY,
            "ind" => Mode::Indirect,
            "izx" => Mode::IndirectX,
            "izy" => Mode::IndirectY,
            "rel" => Mode::Relative,
            _ => Mode::Implied,
        }
    }

    /// Instruction length in bytes, opcode included.
    fn len(self) -> u16 {
        match self {
            Mode::Implied | Mode::Accumulator => 1,
            Mode::Absolute | Mode::AbsoluteX | Mode::AbsoluteY | Mode::Indirect => 3,
            _ => 2,
        }
    }
}

#[rustfmt::skip]
/// Mnemonic and addressing mode of every opcode, row by row ($00-$0F, $10-$1F, ...).
const OPCODES: [&str; 256] = [
    "BRK imp", "ORA izx", "JAM imp", "SLO izx", "NOP zp", "ORA zp", "ASL zp", "SLO zp",
    "PHP imp", "ORA imm", "ASL acc", "ANC imm", "NOP abs", "ORA abs", "ASL abs", "SLO abs",
    "BPL rel", "ORA izy", "JAM imp", "SLO izy", "NOP zpx", "ORA zpx", "ASL zpx", "SLO zpx",
    "CLC imp", "ORA aby", "NOP imp", "SLO aby", "NOP abx", "ORA abx", "ASL abx", "SLO abx",
    "JSR abs", "AND izx", "JAM imp", "RLA izx", "BIT zp", "AND zp", "ROL zp", "RLA zp",
    "PLP imp", "AND imm", "ROL acc", "ANC imm", "BIT abs", "AND abs", "ROL abs", "RLA abs",
    "BMI rel", "AND izy", "JAM imp", "RLA izy", "NOP zpx", "AND zpx", "ROL zpx", "RLA zpx",
    "SEC imp", "AND aby", "NOP imp", "RLA aby", "NOP abx", "AND abx", "ROL abx", "RLA abx",
    "RTI imp", "EOR izx", "JAM imp", "SRE izx", "NOP zp", "EOR zp", "LSR zp", "SRE zp",
    "PHA imp", "EOR imm", "LSR acc", "ALR imm", "JMP abs", "EOR abs", "LSR abs", "SRE abs",
    "BVC rel", "EOR izy", "JAM imp", "SRE izy", "NOP zpx", "EOR zpx", "LSR zpx", "SRE zpx",
    "CLI imp", "EOR aby", "NOP imp", "SRE aby", "NOP abx", "EOR abx", "LSR abx", "SRE abx",
    "RTS imp", "ADC izx", "JAM imp", "RRA izx", "NOP zp", "ADC zp", "ROR zp", "RRA zp",
    "PLA imp", "ADC imm", "ROR acc", "ARR imm", "JMP ind", "ADC abs", "ROR abs", "RRA abs",
    "BVS rel", "ADC izy", "JAM imp", "RRA izy", "NOP zpx", "ADC zpx", "ROR zpx", "RRA zpx",
    "SEI imp", "ADC aby", "NOP imp", "RRA aby", "NOP abx", "ADC abx", "ROR abx", "RRA abx",
    "NOP imm", "STA izx", "NOP imm", "SAX izx", "STY zp", "STA zp", "STX zp", "SAX zp",
    "DEY imp", "NOP imm", "TXA imp", "ANE imm", "STY abs", "STA abs", "STX abs", "SAX abs",
    "BCC rel", "STA izy", "JAM imp", "SHA izy", "STY zpx", "STA zpx", "STX zpy", "SAX zpy",
    "TYA imp", "STA aby", "TXS imp", "TAS aby", "SHY abx", "STA abx", "SHX aby", "SHA aby",
    "LDY imm", "LDA izx", "LDX imm", "LAX izx", "LDY zp", "LDA zp", "LDX zp", "LAX zp",
    "TAY imp", "LDA imm", "TAX imp", "LXA imm", "LDY abs", "LDA abs", "LDX abs", "LAX abs",
    "BCS rel", "LDA izy", "JAM imp", "LAX izy", "LDY zpx", "LDA zpx", "LDX zpy", "LAX zpy",
    "CLV imp", "LDA aby", "TSX imp", "LAS aby", "LDY abx", "LDA abx", "LDX aby", "LAX aby",
    "CPY imm", "CMP izx", "NOP imm", "DCP izx", "CPY zp", "CMP zp", "DEC zp", "DCP zp",
    "INY imp", "CMP imm", "DEX imp", "AXS imm", "CPY abs", "CMP abs", "DEC abs", "DCP abs",
    "BNE rel", "CMP izy", "JAM imp", "DCP izy", "NOP zpx", "CMP zpx", "DEC zpx", "DCP zpx",
    "CLD imp", "CMP aby", "NOP imp", "DCP aby", "NOP abx", "CMP abx", "DEC abx", "DCP abx",
    "CPX imm", "SBC izx", "NOP imm", "ISC izx", "CPX zp", "SBC zp", "INC zp", "ISC zp",
    "INX imp", "SBC imm", "NOP imp", "SBC imm", "CPX abs", "SBC abs", "INC abs", "ISC abs",
    "BEQ rel", "SBC izy", "JAM imp", "ISC izy", "NOP zpx", "SBC zpx", "INC zpx", "ISC zpx",
    "SED imp", "SBC aby", "NOP imp", "ISC aby", "NOP abx", "SBC abx", "INC abx", "ISC abx",
];

fn decode(opcode: u8) -> (&'static str, Mode) {
    let entry = OPCODES[usize::from(opcode)];
    let (mnemonic, tag) = entry.split_once(' ').unwrap_or((entry, "imp"));
    (mnemonic, Mode::from_tag(tag))
}

/// Opcodes outside the documented 151; nestest marks them with `*`.
fn is_unofficial(opcode: u8, mnemonic: &str) -> bool {
    const OFFICIAL: &[&str] = &[
        "ADC", "AND", "ASL", "BCC", "BCS", "BEQ", "BIT", "BMI", "BNE", "BPL", "BRK", "BVC", "BVS",
        "CLC", "CLD", "CLI", "CLV", "CMP", "CPX", "CPY", "DEC", "DEX", "DEY", "EOR", "INC", "INX",
        "INY", "JMP", "JSR", "LDA", "LDX", "LDY", "LSR", "PHA", "PHP", "PLA", "PLP", "ROL", "ROR",
        "RTI", "RTS", "SBC", "SEC", "SED", "SEI", "STA", "STX", "STY", "TAX", "TAY", "TSX", "TXA",
        "TXS", "TYA",
    ];
    // $EB is an unofficial duplicate of SBC #imm, $EA the one official NOP.
    opcode == 0xEB || (opcode != 0xEA && !OFFICIAL.contains(&mnemonic))
}

/// One line in nestest.log's fixed columns for the instruction at the CPU's PC.
pub(crate) fn format_line(cpu: &Cpu, bus: &Motherboard) -> String {
    let pc = cpu.pc;
    let opcode = bus.peek(pc);
    let (mnemonic, mode) = decode(opcode);
    let operand_lo = bus.peek(pc.wrapping_add(1));
    let operand_hi = bus.peek(pc.wrapping_add(2));
    let word = u16::from_le_bytes([operand_lo, operand_hi]);

    let mut line = String::with_capacity(96);
    let _ = write!(line, "{pc:04X}  {opcode:02X}");
    match mode.len() {
        1 => line.push_str("      "),
        2 => {
            let _ = write!(line, " {operand_lo:02X}   ");
        }
        _ => {
            let _ = write!(line, " {operand_lo:02X} {operand_hi:02X}");
        }
    }
    line.push(' ');
    line.push(if is_unofficial(opcode, mnemonic) {
        '*'
    } else {
        ' '
    });
    let operand = match mode {
        Mode::Implied => String::new(),
        Mode::Accumulator => "A".to_owned(),
        Mode::Immediate => format!("#${operand_lo:02X}"),
        Mode::ZeroPage => format!("${operand_lo:02X}"),
        Mode::ZeroPageX => format!("${operand_lo:02X},X"),
        Mode::ZeroPageY => format!("${operand_lo:02X},Y"),
        Mode::Absolute => format!("${word:04X}"),
        Mode::AbsoluteX => format!("${word:04X},X"),
        Mode::AbsoluteY => format!("${word:04X},Y"),
        Mode::Indirect => format!("(${word:04X})"),
        Mode::IndirectX => format!("(${operand_lo:02X},X)"),
        Mode::IndirectY => format!("(${operand_lo:02X}),Y"),
        Mode::Relative => {
            let target = pc.wrapping_add(2).wrapping_add(operand_lo as i8 as u16);
            format!("${target:04X}")
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_modes_and_lengths() {
        assert_eq!(decode(0x4C), ("JMP", Mode::Absolute));
        assert_eq!(decode(0xB1), ("LDA", Mode::IndirectY));
        assert_eq!(decode(0x96), ("STX", Mode::ZeroPageY));
        assert_eq!(decode(0x6C).1.len(), 3);
        assert_eq!(decode(0xD0).1.len(), 2);
        assert_eq!(decode(0x0A).1, Mode::Accumulator);
    }

    #[test]
    fn marks_unofficial_opcodes() {
        assert!(!is_unofficial(0xEA, "NOP"));
        assert!(is_unofficial(0x04, "NOP"));
        assert!(is_unofficial(0xEB, "SBC"));
        assert!(!is_unofficial(0xE9, "SBC"));
        assert!(is_unofficial(0xA7, "LAX"));
    }
}
