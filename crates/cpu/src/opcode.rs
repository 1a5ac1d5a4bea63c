//! The 6502 opcode table: for each of the 256 opcodes its operation, its addressing mode and
//! whether it is one of the 151 documented ones, each written once, in [`for_each_opcode`].
//! Execution (`Cpu::execute`, expanded in `instructions.rs`) and the disassembler's
//! [`describe`] are both generated from it, so what runs and what a trace shows cannot
//! disagree. (The same idea as a decoder shared through a visitor: the table is the one
//! decoder, each consumer a macro it calls.)
//!
//! Mnemonics follow the NESdev wiki's "CPU unofficial opcodes" names (ALR, ANC, ARR, AXS,
//! LAX, SAX, DCP, ISC, RLA, RRA, SLO, SRE, SHA, SHX, SHY, TAS, LAS, ANE, LXA, JAM).

/// How an instruction names its operand, as a disassembler shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressingMode {
    /// No operand: the instruction's second cycle reads (and ignores) the next byte.
    Implied,
    /// The accumulator (`ASL A`).
    Accumulator,
    /// A signed 8-bit branch offset.
    Relative,
    /// `JMP ($nnnn)`: a pointer to the new PC.
    Indirect,
    /// An operand the CPU reads or writes through an effective address.
    Operand(Operand),
}

/// Addressing modes that form an effective address for a data access. Immediate's "address"
/// is the byte after the opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Immediate,
    ZeroPage,
    ZeroPageX,
    ZeroPageY,
    Absolute,
    AbsoluteX,
    AbsoluteY,
    /// `($nn,X)`
    IndirectX,
    /// `($nn),Y`
    IndirectY,
}

impl AddressingMode {
    /// The instruction's length in bytes, opcode included.
    pub const fn instruction_bytes(self) -> u16 {
        match self {
            AddressingMode::Implied | AddressingMode::Accumulator => 1,
            AddressingMode::Relative => 2,
            AddressingMode::Indirect => 3,
            AddressingMode::Operand(
                Operand::Absolute | Operand::AbsoluteX | Operand::AbsoluteY,
            ) => 3,
            AddressingMode::Operand(_) => 2,
        }
    }
}

/// One opcode as the table describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// The three-letter mnemonic (`"LDA"`, `"SLO"`, ...).
    pub mnemonic: &'static str,
    pub mode: AddressingMode,
    /// One of the 151 documented opcodes (nestest.log marks the others with `*`).
    pub official: bool,
}

/// The table entry of `opcode`.
pub fn describe(opcode: u8) -> Instruction {
    INSTRUCTIONS[usize::from(opcode)]
}

/// The addressing mode a table tag stands for.
macro_rules! addressing_mode {
    (imp) => {
        $crate::opcode::AddressingMode::Implied
    };
    (acc) => {
        $crate::opcode::AddressingMode::Accumulator
    };
    (rel) => {
        $crate::opcode::AddressingMode::Relative
    };
    (ind) => {
        $crate::opcode::AddressingMode::Indirect
    };
    ($operand:ident) => {
        $crate::opcode::AddressingMode::Operand($crate::opcode::operand!($operand))
    };
}

/// The effective-address mode a table tag stands for. Only tags of modes with a data
/// operand have one: execution code asking for another fails to compile.
macro_rules! operand {
    (imm) => {
        $crate::opcode::Operand::Immediate
    };
    (zp) => {
        $crate::opcode::Operand::ZeroPage
    };
    (zpx) => {
        $crate::opcode::Operand::ZeroPageX
    };
    (zpy) => {
        $crate::opcode::Operand::ZeroPageY
    };
    (abs) => {
        $crate::opcode::Operand::Absolute
    };
    (abx) => {
        $crate::opcode::Operand::AbsoluteX
    };
    (aby) => {
        $crate::opcode::Operand::AbsoluteY
    };
    (izx) => {
        $crate::opcode::Operand::IndirectX
    };
    (izy) => {
        $crate::opcode::Operand::IndirectY
    };
}

/// Calls `$consumer!` with the whole opcode table: one `(opcode MNEMONIC mode)` entry per
/// opcode, `*` after the mode marking an undocumented one. Mode tags: `imp`, `acc`, `rel`,
/// `ind` (JMP), and the operand modes `imm`, `zp`, `zpx`, `zpy`, `abs`, `abx`, `aby`, `izx`
/// (`($nn,X)`), `izy` (`($nn),Y`). Consumers that `match` on the opcodes get the compiler's
/// check that all 256 are here, each once.
macro_rules! for_each_opcode {
    ($consumer:ident) => {
        $consumer! {
            (0x00 BRK imp)    (0x01 ORA izx)    (0x02 JAM imp *)  (0x03 SLO izx *)
            (0x04 NOP zp *)   (0x05 ORA zp)     (0x06 ASL zp)     (0x07 SLO zp *)
            (0x08 PHP imp)    (0x09 ORA imm)    (0x0A ASL acc)    (0x0B ANC imm *)
            (0x0C NOP abs *)  (0x0D ORA abs)    (0x0E ASL abs)    (0x0F SLO abs *)
            (0x10 BPL rel)    (0x11 ORA izy)    (0x12 JAM imp *)  (0x13 SLO izy *)
            (0x14 NOP zpx *)  (0x15 ORA zpx)    (0x16 ASL zpx)    (0x17 SLO zpx *)
            (0x18 CLC imp)    (0x19 ORA aby)    (0x1A NOP imp *)  (0x1B SLO aby *)
            (0x1C NOP abx *)  (0x1D ORA abx)    (0x1E ASL abx)    (0x1F SLO abx *)
            (0x20 JSR abs)    (0x21 AND izx)    (0x22 JAM imp *)  (0x23 RLA izx *)
            (0x24 BIT zp)     (0x25 AND zp)     (0x26 ROL zp)     (0x27 RLA zp *)
            (0x28 PLP imp)    (0x29 AND imm)    (0x2A ROL acc)    (0x2B ANC imm *)
            (0x2C BIT abs)    (0x2D AND abs)    (0x2E ROL abs)    (0x2F RLA abs *)
            (0x30 BMI rel)    (0x31 AND izy)    (0x32 JAM imp *)  (0x33 RLA izy *)
            (0x34 NOP zpx *)  (0x35 AND zpx)    (0x36 ROL zpx)    (0x37 RLA zpx *)
            (0x38 SEC imp)    (0x39 AND aby)    (0x3A NOP imp *)  (0x3B RLA aby *)
            (0x3C NOP abx *)  (0x3D AND abx)    (0x3E ROL abx)    (0x3F RLA abx *)
            (0x40 RTI imp)    (0x41 EOR izx)    (0x42 JAM imp *)  (0x43 SRE izx *)
            (0x44 NOP zp *)   (0x45 EOR zp)     (0x46 LSR zp)     (0x47 SRE zp *)
            (0x48 PHA imp)    (0x49 EOR imm)    (0x4A LSR acc)    (0x4B ALR imm *)
            (0x4C JMP abs)    (0x4D EOR abs)    (0x4E LSR abs)    (0x4F SRE abs *)
            (0x50 BVC rel)    (0x51 EOR izy)    (0x52 JAM imp *)  (0x53 SRE izy *)
            (0x54 NOP zpx *)  (0x55 EOR zpx)    (0x56 LSR zpx)    (0x57 SRE zpx *)
            (0x58 CLI imp)    (0x59 EOR aby)    (0x5A NOP imp *)  (0x5B SRE aby *)
            (0x5C NOP abx *)  (0x5D EOR abx)    (0x5E LSR abx)    (0x5F SRE abx *)
            (0x60 RTS imp)    (0x61 ADC izx)    (0x62 JAM imp *)  (0x63 RRA izx *)
            (0x64 NOP zp *)   (0x65 ADC zp)     (0x66 ROR zp)     (0x67 RRA zp *)
            (0x68 PLA imp)    (0x69 ADC imm)    (0x6A ROR acc)    (0x6B ARR imm *)
            (0x6C JMP ind)    (0x6D ADC abs)    (0x6E ROR abs)    (0x6F RRA abs *)
            (0x70 BVS rel)    (0x71 ADC izy)    (0x72 JAM imp *)  (0x73 RRA izy *)
            (0x74 NOP zpx *)  (0x75 ADC zpx)    (0x76 ROR zpx)    (0x77 RRA zpx *)
            (0x78 SEI imp)    (0x79 ADC aby)    (0x7A NOP imp *)  (0x7B RRA aby *)
            (0x7C NOP abx *)  (0x7D ADC abx)    (0x7E ROR abx)    (0x7F RRA abx *)
            (0x80 NOP imm *)  (0x81 STA izx)    (0x82 NOP imm *)  (0x83 SAX izx *)
            (0x84 STY zp)     (0x85 STA zp)     (0x86 STX zp)     (0x87 SAX zp *)
            (0x88 DEY imp)    (0x89 NOP imm *)  (0x8A TXA imp)    (0x8B ANE imm *)
            (0x8C STY abs)    (0x8D STA abs)    (0x8E STX abs)    (0x8F SAX abs *)
            (0x90 BCC rel)    (0x91 STA izy)    (0x92 JAM imp *)  (0x93 SHA izy *)
            (0x94 STY zpx)    (0x95 STA zpx)    (0x96 STX zpy)    (0x97 SAX zpy *)
            (0x98 TYA imp)    (0x99 STA aby)    (0x9A TXS imp)    (0x9B TAS aby *)
            (0x9C SHY abx *)  (0x9D STA abx)    (0x9E SHX aby *)  (0x9F SHA aby *)
            (0xA0 LDY imm)    (0xA1 LDA izx)    (0xA2 LDX imm)    (0xA3 LAX izx *)
            (0xA4 LDY zp)     (0xA5 LDA zp)     (0xA6 LDX zp)     (0xA7 LAX zp *)
            (0xA8 TAY imp)    (0xA9 LDA imm)    (0xAA TAX imp)    (0xAB LXA imm *)
            (0xAC LDY abs)    (0xAD LDA abs)    (0xAE LDX abs)    (0xAF LAX abs *)
            (0xB0 BCS rel)    (0xB1 LDA izy)    (0xB2 JAM imp *)  (0xB3 LAX izy *)
            (0xB4 LDY zpx)    (0xB5 LDA zpx)    (0xB6 LDX zpy)    (0xB7 LAX zpy *)
            (0xB8 CLV imp)    (0xB9 LDA aby)    (0xBA TSX imp)    (0xBB LAS aby *)
            (0xBC LDY abx)    (0xBD LDA abx)    (0xBE LDX aby)    (0xBF LAX aby *)
            (0xC0 CPY imm)    (0xC1 CMP izx)    (0xC2 NOP imm *)  (0xC3 DCP izx *)
            (0xC4 CPY zp)     (0xC5 CMP zp)     (0xC6 DEC zp)     (0xC7 DCP zp *)
            (0xC8 INY imp)    (0xC9 CMP imm)    (0xCA DEX imp)    (0xCB AXS imm *)
            (0xCC CPY abs)    (0xCD CMP abs)    (0xCE DEC abs)    (0xCF DCP abs *)
            (0xD0 BNE rel)    (0xD1 CMP izy)    (0xD2 JAM imp *)  (0xD3 DCP izy *)
            (0xD4 NOP zpx *)  (0xD5 CMP zpx)    (0xD6 DEC zpx)    (0xD7 DCP zpx *)
            (0xD8 CLD imp)    (0xD9 CMP aby)    (0xDA NOP imp *)  (0xDB DCP aby *)
            (0xDC NOP abx *)  (0xDD CMP abx)    (0xDE DEC abx)    (0xDF DCP abx *)
            (0xE0 CPX imm)    (0xE1 SBC izx)    (0xE2 NOP imm *)  (0xE3 ISC izx *)
            (0xE4 CPX zp)     (0xE5 SBC zp)     (0xE6 INC zp)     (0xE7 ISC zp *)
            (0xE8 INX imp)    (0xE9 SBC imm)    (0xEA NOP imp)    (0xEB SBC imm *)
            (0xEC CPX abs)    (0xED SBC abs)    (0xEE INC abs)    (0xEF ISC abs *)
            (0xF0 BEQ rel)    (0xF1 SBC izy)    (0xF2 JAM imp *)  (0xF3 ISC izy *)
            (0xF4 NOP zpx *)  (0xF5 SBC zpx)    (0xF6 INC zpx)    (0xF7 ISC zpx *)
            (0xF8 SED imp)    (0xF9 SBC aby)    (0xFA NOP imp *)  (0xFB ISC aby *)
            (0xFC NOP abx *)  (0xFD SBC abx)    (0xFE INC abx)    (0xFF ISC abx *)
        }
    };
}

pub(crate) use {for_each_opcode, operand};

/// `true` for a documented opcode (an entry without `*`).
macro_rules! official {
    () => {
        true
    };
    (*) => {
        false
    };
}

/// The disassembler's view of the table.
macro_rules! instruction_table {
    ($( ($opcode:literal $mnemonic:ident $mode:ident $($unofficial:tt)?) )*) => {
        const INSTRUCTIONS: [Instruction; 256] = {
            let mut table = [Instruction {
                mnemonic: "",
                mode: AddressingMode::Implied,
                official: false,
            }; 256];
            $(
                table[$opcode] = Instruction {
                    mnemonic: stringify!($mnemonic),
                    mode: addressing_mode!($mode),
                    official: official!($($unofficial)?),
                };
            )*
            table
        };
    };
}

for_each_opcode!(instruction_table);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_modes_lengths_and_documented_opcodes() {
        let lda = describe(0xB1);
        assert_eq!(lda.mnemonic, "LDA");
        assert_eq!(lda.mode, AddressingMode::Operand(Operand::IndirectY));
        assert!(lda.official);
        assert_eq!(describe(0x4C).mode.instruction_bytes(), 3);
        assert_eq!(describe(0x6C).mode, AddressingMode::Indirect);
        assert_eq!(describe(0xD0).mode.instruction_bytes(), 2);
        assert_eq!(describe(0x0A).mode, AddressingMode::Accumulator);
        assert_eq!(
            describe(0x96).mode,
            AddressingMode::Operand(Operand::ZeroPageY)
        );
        // $EA is the one documented NOP; $EB duplicates SBC #imm undocumented.
        assert!(describe(0xEA).official);
        assert!(!describe(0x1A).official);
        assert!(describe(0xE9).official);
        assert!(!describe(0xEB).official);
        assert_eq!(describe(0xA7).mnemonic, "LAX");
        assert!(!describe(0xA7).official);
    }

    #[test]
    fn every_opcode_is_described_and_151_are_documented() {
        let documented = (0..=255u8).filter(|&op| describe(op).official).count();
        assert_eq!(documented, 151);
        assert!((0..=255u8).all(|op| describe(op).mnemonic.len() == 3));
    }
}
