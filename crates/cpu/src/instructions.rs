//! Opcode decoding and execution, one bus access per cycle in the order the 6502 makes them.
//!
//! Access patterns follow the NESdev wiki's "CPU addressing modes" / 64doc per-cycle tables:
//! - read instructions with an indexed absolute or (ind),Y operand read the *unfixed*
//!   address (correct low byte, un-carried high byte) only when the index crosses a page;
//! - stores and read-modify-write instructions always make that dummy read;
//! - read-modify-write instructions read, write the old value back, then write the result;
//! - zero-page indexed modes read the unindexed zero-page address while adding the index;
//! - one-byte instructions read the byte after the opcode on their second cycle.
//!
//! Every instruction calls [`Cpu::poll_interrupts`] immediately before its last bus access
//! (taken branches are the documented exception, see [`Cpu::branch`]).

use crate::bus::Bus;
use crate::cpu::{Cpu, Status};

/// Operand addressing modes. The helpers taking a `Mode` are `#[inline(always)]` and are only
/// ever called with a literal mode, so the `match mode` folds away in each opcode's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Immediate,
    ZeroPage,
    ZeroPageX,
    ZeroPageY,
    Absolute,
    AbsoluteX,
    AbsoluteY,
    IndirectX,
    IndirectY,
}

use Mode::{
    Absolute as ABS, AbsoluteX as ABX, AbsoluteY as ABY, Immediate as IMM, IndirectX as IZX,
    IndirectY as IZY, ZeroPage as ZP, ZeroPageX as ZPX, ZeroPageY as ZPY,
};

/// ANE ($8B) computes A = (A | magic) & X & operand. The magic constant varies between chips
/// and even with temperature ($EE and $FF are the common values); test ROMs only check cases
/// where it cannot matter (operand $00 or A = $FF).
const ANE_MAGIC: u8 = 0xEE;

/// LXA ($AB) computes A = X = (A | magic) & operand. With $FF this is "load A and X with the
/// operand", the behaviour blargg's instr_test-v5 (which tests $AB) was recorded with.
const LXA_MAGIC: u8 = 0xFF;

impl Cpu {
    // ----- addressing ---------------------------------------------------------------------

    #[inline(always)]
    fn fetch_word<B: Bus>(&mut self, bus: &mut B) -> u16 {
        let low = self.fetch(bus);
        let high = self.fetch(bus);
        u16::from_le_bytes([low, high])
    }

    /// Zero page indexed: the base address is read while the index is added, and the sum
    /// wraps within the zero page.
    #[inline(always)]
    fn zero_page_indexed<B: Bus>(&mut self, bus: &mut B, index: u8) -> u16 {
        let base = self.fetch(bus);
        self.read(bus, u16::from(base));
        u16::from(base.wrapping_add(index))
    }

    /// (zp,X): the pointer is read (dummy) while X is added; both pointer bytes come from the
    /// zero page, wrapping at $FF.
    #[inline(always)]
    fn indirect_x_address<B: Bus>(&mut self, bus: &mut B) -> u16 {
        let pointer = self.fetch(bus);
        self.read(bus, u16::from(pointer));
        let pointer = pointer.wrapping_add(self.x);
        let low = self.read(bus, u16::from(pointer));
        let high = self.read(bus, u16::from(pointer.wrapping_add(1)));
        u16::from_le_bytes([low, high])
    }

    /// (zp),Y before indexing: the 16-bit base from the zero page, wrapping at $FF.
    #[inline(always)]
    fn indirect_y_base<B: Bus>(&mut self, bus: &mut B) -> u16 {
        let pointer = self.fetch(bus);
        let low = self.read(bus, u16::from(pointer));
        let high = self.read(bus, u16::from(pointer.wrapping_add(1)));
        u16::from_le_bytes([low, high])
    }

    /// Index a base for a read instruction: the ALU adds the index to the low byte first, and
    /// only when that carries does the CPU spend a cycle reading the unfixed address.
    #[inline(always)]
    fn index_for_read<B: Bus>(&mut self, bus: &mut B, base: u16, index: u8) -> u16 {
        let address = base.wrapping_add(u16::from(index));
        if (base ^ address) & 0xFF00 != 0 {
            self.read(bus, unfixed(base, address));
        }
        address
    }

    /// Index a base for a store or read-modify-write: the unfixed address is always read,
    /// since a write cannot be undone if the high byte turned out wrong.
    #[inline(always)]
    fn index_for_write<B: Bus>(&mut self, bus: &mut B, base: u16, index: u8) -> u16 {
        let address = base.wrapping_add(u16::from(index));
        self.read(bus, unfixed(base, address));
        address
    }

    /// All cycles of a read instruction before its final read; returns the address to read.
    /// Immediate mode's "address" is PC itself.
    #[inline(always)]
    fn read_address<B: Bus>(&mut self, bus: &mut B, mode: Mode) -> u16 {
        match mode {
            Mode::Immediate => {
                let address = self.pc;
                self.pc = self.pc.wrapping_add(1);
                address
            }
            Mode::ZeroPage => u16::from(self.fetch(bus)),
            Mode::ZeroPageX => self.zero_page_indexed(bus, self.x),
            Mode::ZeroPageY => self.zero_page_indexed(bus, self.y),
            Mode::Absolute => self.fetch_word(bus),
            Mode::AbsoluteX => {
                let base = self.fetch_word(bus);
                self.index_for_read(bus, base, self.x)
            }
            Mode::AbsoluteY => {
                let base = self.fetch_word(bus);
                self.index_for_read(bus, base, self.y)
            }
            Mode::IndirectX => self.indirect_x_address(bus),
            Mode::IndirectY => {
                let base = self.indirect_y_base(bus);
                self.index_for_read(bus, base, self.y)
            }
        }
    }

    /// All cycles of a store or read-modify-write before its data accesses.
    #[inline(always)]
    fn write_address<B: Bus>(&mut self, bus: &mut B, mode: Mode) -> u16 {
        match mode {
            Mode::AbsoluteX => {
                let base = self.fetch_word(bus);
                self.index_for_write(bus, base, self.x)
            }
            Mode::AbsoluteY => {
                let base = self.fetch_word(bus);
                self.index_for_write(bus, base, self.y)
            }
            Mode::IndirectY => {
                let base = self.indirect_y_base(bus);
                self.index_for_write(bus, base, self.y)
            }
            other => self.read_address(bus, other),
        }
    }

    /// A read instruction's operand.
    #[inline(always)]
    fn load<B: Bus>(&mut self, bus: &mut B, mode: Mode) -> u8 {
        let address = self.read_address(bus, mode);
        self.poll_interrupts(bus);
        self.read(bus, address)
    }

    /// A store instruction's cycles, ending with the write of `value`.
    #[inline(always)]
    fn store<B: Bus>(&mut self, bus: &mut B, mode: Mode, value: u8) {
        let address = self.write_address(bus, mode);
        self.poll_interrupts(bus);
        self.write(bus, address, value);
    }

    /// A read-modify-write instruction: read, write the unmodified value back while the ALU
    /// works (the "dummy write" mappers and $2007 can see), then write the result.
    #[inline(always)]
    fn modify<B: Bus>(
        &mut self,
        bus: &mut B,
        mode: Mode,
        operation: impl FnOnce(&mut Cpu, u8) -> u8,
    ) {
        let address = self.write_address(bus, mode);
        let value = self.read(bus, address);
        self.write_unhooked(bus, address, value);
        let result = operation(self, value);
        self.poll_interrupts(bus);
        self.write(bus, address, result);
    }

    /// Second cycle of a one-byte instruction: a dummy read of the byte after the opcode.
    #[inline(always)]
    fn implied<B: Bus>(&mut self, bus: &mut B) {
        self.poll_interrupts(bus);
        self.read(bus, self.pc);
    }

    /// Relative branch. Not taken: 2 cycles. Taken: a third cycle reads the next opcode's
    /// address while PCL is adjusted; crossing a page adds a fourth that reads the unfixed PC.
    ///
    /// Interrupt polling differs from other instructions: the branch polls before its operand
    /// fetch, does *not* poll again on the third cycle of a taken branch (so an interrupt
    /// arriving then waits one more instruction), and polls again before the fourth cycle of a
    /// page-crossing branch; a positive first poll is kept even if the second one is negative.
    #[inline(always)]
    fn branch<B: Bus>(&mut self, bus: &mut B, condition: bool) {
        self.poll_interrupts(bus);
        let first_poll = self.interrupt_due;
        let offset = self.fetch(bus);
        if !condition {
            return;
        }
        self.read(bus, self.pc);
        let target = self.pc.wrapping_add_signed(i16::from(offset as i8));
        if (target ^ self.pc) & 0xFF00 == 0 {
            self.pc = target;
            // A DMA halt during the branch re-polls; the quirk is that this poll does not
            // happen, so restore the first one.
            self.interrupt_due = first_poll;
            return;
        }
        self.poll_interrupts(bus);
        let due = first_poll | self.interrupt_due;
        self.read(bus, unfixed(self.pc, target));
        self.pc = target;
        self.interrupt_due = due;
    }

    /// SHA / SHX / SHY / SHS: the stored value is ANDed with the base address's high byte
    /// plus one, and when the index crosses a page the same value replaces the target
    /// address's high byte (both come from one internal bus on the RP2A03G). If a DMA halts
    /// the CPU on the dummy read just before the write (RDY low two cycles before it), the
    /// "& (H+1)" term drops out and the register value is stored as is.
    #[inline(always)]
    fn store_and_high<B: Bus>(&mut self, bus: &mut B, base: u16, index: u8, value: u8) {
        let target = base.wrapping_add(u16::from(index));
        let cycle_before = self.cycles;
        self.read(bus, unfixed(base, target));
        let halted_by_dma = self.cycles.wrapping_sub(cycle_before) > 1;
        let stored = if halted_by_dma {
            value
        } else {
            value & base.to_be_bytes()[0].wrapping_add(1)
        };
        let address = if (base ^ target) & 0xFF00 != 0 {
            u16::from_le_bytes([target.to_le_bytes()[0], stored])
        } else {
            target
        };
        self.poll_interrupts(bus);
        self.write(bus, address, stored);
    }

    // ----- ALU ----------------------------------------------------------------------------

    #[inline(always)]
    fn carry(&self) -> u8 {
        self.p.bits() & Status::C.bits()
    }

    #[inline(always)]
    fn ora(&mut self, value: u8) {
        self.a |= value;
        self.set_nz(self.a);
    }

    #[inline(always)]
    fn and(&mut self, value: u8) {
        self.a &= value;
        self.set_nz(self.a);
    }

    #[inline(always)]
    fn eor(&mut self, value: u8) {
        self.a ^= value;
        self.set_nz(self.a);
    }

    /// Binary add with carry: the 2A03 has no decimal mode, D is ignored.
    #[inline(always)]
    fn adc(&mut self, value: u8) {
        let sum = u16::from(self.a) + u16::from(value) + u16::from(self.carry());
        let result = sum.to_le_bytes()[0];
        let overflow = (!(self.a ^ value) & (self.a ^ result) & 0x80) != 0;
        self.p.set(Status::C, sum > 0xFF);
        self.p.set(Status::V, overflow);
        self.a = result;
        self.set_nz(result);
    }

    /// Subtract with borrow is addition of the complement.
    #[inline(always)]
    fn sbc(&mut self, value: u8) {
        self.adc(!value);
    }

    #[inline(always)]
    fn compare(&mut self, register: u8, value: u8) {
        self.p.set(Status::C, register >= value);
        self.set_nz(register.wrapping_sub(value));
    }

    #[inline(always)]
    fn bit(&mut self, value: u8) {
        self.p.set(Status::Z, self.a & value == 0);
        self.p.set(Status::N, value & 0x80 != 0);
        self.p.set(Status::V, value & 0x40 != 0);
    }

    #[inline(always)]
    fn asl(&mut self, value: u8) -> u8 {
        self.p.set(Status::C, value & 0x80 != 0);
        let result = value << 1;
        self.set_nz(result);
        result
    }

    #[inline(always)]
    fn lsr(&mut self, value: u8) -> u8 {
        self.p.set(Status::C, value & 0x01 != 0);
        let result = value >> 1;
        self.set_nz(result);
        result
    }

    #[inline(always)]
    fn rol(&mut self, value: u8) -> u8 {
        let result = (value << 1) | self.carry();
        self.p.set(Status::C, value & 0x80 != 0);
        self.set_nz(result);
        result
    }

    #[inline(always)]
    fn ror(&mut self, value: u8) -> u8 {
        let result = (value >> 1) | (self.carry() << 7);
        self.p.set(Status::C, value & 0x01 != 0);
        self.set_nz(result);
        result
    }

    #[inline(always)]
    fn inc(&mut self, value: u8) -> u8 {
        let result = value.wrapping_add(1);
        self.set_nz(result);
        result
    }

    #[inline(always)]
    fn dec(&mut self, value: u8) -> u8 {
        let result = value.wrapping_sub(1);
        self.set_nz(result);
        result
    }

    // Unofficial combined operations.

    /// SLO: ASL the operand, then ORA it.
    #[inline(always)]
    fn slo(&mut self, value: u8) -> u8 {
        let result = self.asl(value);
        self.ora(result);
        result
    }

    /// RLA: ROL the operand, then AND it.
    #[inline(always)]
    fn rla(&mut self, value: u8) -> u8 {
        let result = self.rol(value);
        self.and(result);
        result
    }

    /// SRE: LSR the operand, then EOR it.
    #[inline(always)]
    fn sre(&mut self, value: u8) -> u8 {
        let result = self.lsr(value);
        self.eor(result);
        result
    }

    /// RRA: ROR the operand, then ADC it (with the carry the rotate produced).
    #[inline(always)]
    fn rra(&mut self, value: u8) -> u8 {
        let result = self.ror(value);
        self.adc(result);
        result
    }

    /// DCP: DEC the operand, then CMP it with A.
    #[inline(always)]
    fn dcp(&mut self, value: u8) -> u8 {
        let result = value.wrapping_sub(1);
        self.compare(self.a, result);
        result
    }

    /// ISC: INC the operand, then SBC it.
    #[inline(always)]
    fn isc(&mut self, value: u8) -> u8 {
        let result = value.wrapping_add(1);
        self.sbc(result);
        result
    }

    #[inline(always)]
    fn lax(&mut self, value: u8) {
        self.a = value;
        self.x = value;
        self.set_nz(value);
    }

    /// ANC: AND, then C = N (the result's bit 7 goes through the shifter's carry path).
    #[inline(always)]
    fn anc(&mut self, value: u8) {
        self.and(value);
        self.p.set(Status::C, self.a & 0x80 != 0);
    }

    /// ALR (ASR): AND, then LSR A.
    #[inline(always)]
    fn alr(&mut self, value: u8) {
        let anded = self.a & value;
        self.a = self.lsr(anded);
    }

    /// ARR: AND, then ROR A, with C = bit 6 and V = bit 6 xor bit 5 of the result (binary
    /// mode; the adder's overflow logic sees the pre-rotate value).
    #[inline(always)]
    fn arr(&mut self, value: u8) {
        let result = ((self.a & value) >> 1) | (self.carry() << 7);
        self.a = result;
        self.set_nz(result);
        self.p.set(Status::C, result & 0x40 != 0);
        self.p
            .set(Status::V, ((result >> 6) ^ (result >> 5)) & 1 != 0);
    }

    /// SBX (AXS): X = (A & X) - operand, flags as CMP (no borrow in, V untouched).
    #[inline(always)]
    fn sbx(&mut self, value: u8) {
        let anded = self.a & self.x;
        self.compare(anded, value);
        self.x = anded.wrapping_sub(value);
    }

    /// LAS (LAE): A = X = S = operand & S.
    #[inline(always)]
    fn las(&mut self, value: u8) {
        let result = value & self.s;
        self.a = result;
        self.x = result;
        self.s = result;
        self.set_nz(result);
    }

    #[inline(always)]
    fn flag(&self, flag: Status) -> bool {
        self.p.contains(flag)
    }

    // ----- decode -------------------------------------------------------------------------

    /// Execute the instruction whose opcode was just fetched (PC points past the opcode).
    #[rustfmt::skip]
    #[inline(always)]
    pub(crate) fn execute<B: Bus>(&mut self, bus: &mut B, opcode: u8) {
        match opcode {
            // --- loads
            0xA9 => { let v = self.load(bus, IMM); self.a = v; self.set_nz(v); }
            0xA5 => { let v = self.load(bus, ZP); self.a = v; self.set_nz(v); }
            0xB5 => { let v = self.load(bus, ZPX); self.a = v; self.set_nz(v); }
            0xAD => { let v = self.load(bus, ABS); self.a = v; self.set_nz(v); }
            0xBD => { let v = self.load(bus, ABX); self.a = v; self.set_nz(v); }
            0xB9 => { let v = self.load(bus, ABY); self.a = v; self.set_nz(v); }
            0xA1 => { let v = self.load(bus, IZX); self.a = v; self.set_nz(v); }
            0xB1 => { let v = self.load(bus, IZY); self.a = v; self.set_nz(v); }
            0xA2 => { let v = self.load(bus, IMM); self.x = v; self.set_nz(v); }
            0xA6 => { let v = self.load(bus, ZP); self.x = v; self.set_nz(v); }
            0xB6 => { let v = self.load(bus, ZPY); self.x = v; self.set_nz(v); }
            0xAE => { let v = self.load(bus, ABS); self.x = v; self.set_nz(v); }
            0xBE => { let v = self.load(bus, ABY); self.x = v; self.set_nz(v); }
            0xA0 => { let v = self.load(bus, IMM); self.y = v; self.set_nz(v); }
            0xA4 => { let v = self.load(bus, ZP); self.y = v; self.set_nz(v); }
            0xB4 => { let v = self.load(bus, ZPX); self.y = v; self.set_nz(v); }
            0xAC => { let v = self.load(bus, ABS); self.y = v; self.set_nz(v); }
            0xBC => { let v = self.load(bus, ABX); self.y = v; self.set_nz(v); }

            // --- stores
            0x85 => self.store(bus, ZP, self.a),
            0x95 => self.store(bus, ZPX, self.a),
            0x8D => self.store(bus, ABS, self.a),
            0x9D => self.store(bus, ABX, self.a),
            0x99 => self.store(bus, ABY, self.a),
            0x81 => self.store(bus, IZX, self.a),
            0x91 => self.store(bus, IZY, self.a),
            0x86 => self.store(bus, ZP, self.x),
            0x96 => self.store(bus, ZPY, self.x),
            0x8E => self.store(bus, ABS, self.x),
            0x84 => self.store(bus, ZP, self.y),
            0x94 => self.store(bus, ZPX, self.y),
            0x8C => self.store(bus, ABS, self.y),

            // --- ALU with memory / immediate operands
            0x09 => { let v = self.load(bus, IMM); self.ora(v); }
            0x05 => { let v = self.load(bus, ZP); self.ora(v); }
            0x15 => { let v = self.load(bus, ZPX); self.ora(v); }
            0x0D => { let v = self.load(bus, ABS); self.ora(v); }
            0x1D => { let v = self.load(bus, ABX); self.ora(v); }
            0x19 => { let v = self.load(bus, ABY); self.ora(v); }
            0x01 => { let v = self.load(bus, IZX); self.ora(v); }
            0x11 => { let v = self.load(bus, IZY); self.ora(v); }
            0x29 => { let v = self.load(bus, IMM); self.and(v); }
            0x25 => { let v = self.load(bus, ZP); self.and(v); }
            0x35 => { let v = self.load(bus, ZPX); self.and(v); }
            0x2D => { let v = self.load(bus, ABS); self.and(v); }
            0x3D => { let v = self.load(bus, ABX); self.and(v); }
            0x39 => { let v = self.load(bus, ABY); self.and(v); }
            0x21 => { let v = self.load(bus, IZX); self.and(v); }
            0x31 => { let v = self.load(bus, IZY); self.and(v); }
            0x49 => { let v = self.load(bus, IMM); self.eor(v); }
            0x45 => { let v = self.load(bus, ZP); self.eor(v); }
            0x55 => { let v = self.load(bus, ZPX); self.eor(v); }
            0x4D => { let v = self.load(bus, ABS); self.eor(v); }
            0x5D => { let v = self.load(bus, ABX); self.eor(v); }
            0x59 => { let v = self.load(bus, ABY); self.eor(v); }
            0x41 => { let v = self.load(bus, IZX); self.eor(v); }
            0x51 => { let v = self.load(bus, IZY); self.eor(v); }
            0x69 => { let v = self.load(bus, IMM); self.adc(v); }
            0x65 => { let v = self.load(bus, ZP); self.adc(v); }
            0x75 => { let v = self.load(bus, ZPX); self.adc(v); }
            0x6D => { let v = self.load(bus, ABS); self.adc(v); }
            0x7D => { let v = self.load(bus, ABX); self.adc(v); }
            0x79 => { let v = self.load(bus, ABY); self.adc(v); }
            0x61 => { let v = self.load(bus, IZX); self.adc(v); }
            0x71 => { let v = self.load(bus, IZY); self.adc(v); }
            0xE9 | 0xEB => { let v = self.load(bus, IMM); self.sbc(v); }
            0xE5 => { let v = self.load(bus, ZP); self.sbc(v); }
            0xF5 => { let v = self.load(bus, ZPX); self.sbc(v); }
            0xED => { let v = self.load(bus, ABS); self.sbc(v); }
            0xFD => { let v = self.load(bus, ABX); self.sbc(v); }
            0xF9 => { let v = self.load(bus, ABY); self.sbc(v); }
            0xE1 => { let v = self.load(bus, IZX); self.sbc(v); }
            0xF1 => { let v = self.load(bus, IZY); self.sbc(v); }
            0xC9 => { let v = self.load(bus, IMM); self.compare(self.a, v); }
            0xC5 => { let v = self.load(bus, ZP); self.compare(self.a, v); }
            0xD5 => { let v = self.load(bus, ZPX); self.compare(self.a, v); }
            0xCD => { let v = self.load(bus, ABS); self.compare(self.a, v); }
            0xDD => { let v = self.load(bus, ABX); self.compare(self.a, v); }
            0xD9 => { let v = self.load(bus, ABY); self.compare(self.a, v); }
            0xC1 => { let v = self.load(bus, IZX); self.compare(self.a, v); }
            0xD1 => { let v = self.load(bus, IZY); self.compare(self.a, v); }
            0xE0 => { let v = self.load(bus, IMM); self.compare(self.x, v); }
            0xE4 => { let v = self.load(bus, ZP); self.compare(self.x, v); }
            0xEC => { let v = self.load(bus, ABS); self.compare(self.x, v); }
            0xC0 => { let v = self.load(bus, IMM); self.compare(self.y, v); }
            0xC4 => { let v = self.load(bus, ZP); self.compare(self.y, v); }
            0xCC => { let v = self.load(bus, ABS); self.compare(self.y, v); }
            0x24 => { let v = self.load(bus, ZP); self.bit(v); }
            0x2C => { let v = self.load(bus, ABS); self.bit(v); }

            // --- read-modify-write
            0x0A => { self.implied(bus); self.a = self.asl(self.a); }
            0x06 => self.modify(bus, ZP, Cpu::asl),
            0x16 => self.modify(bus, ZPX, Cpu::asl),
            0x0E => self.modify(bus, ABS, Cpu::asl),
            0x1E => self.modify(bus, ABX, Cpu::asl),
            0x4A => { self.implied(bus); self.a = self.lsr(self.a); }
            0x46 => self.modify(bus, ZP, Cpu::lsr),
            0x56 => self.modify(bus, ZPX, Cpu::lsr),
            0x4E => self.modify(bus, ABS, Cpu::lsr),
            0x5E => self.modify(bus, ABX, Cpu::lsr),
            0x2A => { self.implied(bus); self.a = self.rol(self.a); }
            0x26 => self.modify(bus, ZP, Cpu::rol),
            0x36 => self.modify(bus, ZPX, Cpu::rol),
            0x2E => self.modify(bus, ABS, Cpu::rol),
            0x3E => self.modify(bus, ABX, Cpu::rol),
            0x6A => { self.implied(bus); self.a = self.ror(self.a); }
            0x66 => self.modify(bus, ZP, Cpu::ror),
            0x76 => self.modify(bus, ZPX, Cpu::ror),
            0x6E => self.modify(bus, ABS, Cpu::ror),
            0x7E => self.modify(bus, ABX, Cpu::ror),
            0xE6 => self.modify(bus, ZP, Cpu::inc),
            0xF6 => self.modify(bus, ZPX, Cpu::inc),
            0xEE => self.modify(bus, ABS, Cpu::inc),
            0xFE => self.modify(bus, ABX, Cpu::inc),
            0xC6 => self.modify(bus, ZP, Cpu::dec),
            0xD6 => self.modify(bus, ZPX, Cpu::dec),
            0xCE => self.modify(bus, ABS, Cpu::dec),
            0xDE => self.modify(bus, ABX, Cpu::dec),

            // --- register-only
            0xE8 => { self.implied(bus); self.x = self.x.wrapping_add(1); self.set_nz(self.x); }
            0xC8 => { self.implied(bus); self.y = self.y.wrapping_add(1); self.set_nz(self.y); }
            0xCA => { self.implied(bus); self.x = self.x.wrapping_sub(1); self.set_nz(self.x); }
            0x88 => { self.implied(bus); self.y = self.y.wrapping_sub(1); self.set_nz(self.y); }
            0xAA => { self.implied(bus); self.x = self.a; self.set_nz(self.x); }
            0xA8 => { self.implied(bus); self.y = self.a; self.set_nz(self.y); }
            0x8A => { self.implied(bus); self.a = self.x; self.set_nz(self.a); }
            0x98 => { self.implied(bus); self.a = self.y; self.set_nz(self.a); }
            0xBA => { self.implied(bus); self.x = self.s; self.set_nz(self.x); }
            0x9A => { self.implied(bus); self.s = self.x; }

            // --- flags (changed on the last cycle, after the poll: CLI/SEI act one
            // instruction late for IRQs)
            0x18 => { self.implied(bus); self.p.remove(Status::C); }
            0x38 => { self.implied(bus); self.p.insert(Status::C); }
            0x58 => { self.implied(bus); self.p.remove(Status::I); }
            0x78 => { self.implied(bus); self.p.insert(Status::I); }
            0xB8 => { self.implied(bus); self.p.remove(Status::V); }
            0xD8 => { self.implied(bus); self.p.remove(Status::D); }
            0xF8 => { self.implied(bus); self.p.insert(Status::D); }

            // --- stack
            0x48 => {
                self.read(bus, self.pc);
                self.poll_interrupts(bus);
                self.push(bus, self.a);
            }
            0x08 => {
                self.read(bus, self.pc);
                self.poll_interrupts(bus);
                self.push(bus, self.p.bits() | Status::B.bits() | Status::U.bits());
            }
            0x68 => {
                self.read(bus, self.pc);
                self.stack_dummy_read(bus);
                self.poll_interrupts(bus);
                let v = self.pull(bus);
                self.a = v;
                self.set_nz(v);
            }
            0x28 => {
                self.read(bus, self.pc);
                self.stack_dummy_read(bus);
                self.poll_interrupts(bus);
                let v = self.pull(bus);
                self.set_p_from_stack(v);
            }

            // --- jumps, calls, returns
            0x4C => {
                let low = self.fetch(bus);
                self.poll_interrupts(bus);
                let high = self.read(bus, self.pc);
                self.pc = u16::from_le_bytes([low, high]);
            }
            0x6C => {
                // JMP (ind): the pointer's high byte is read from the same page (the 6502
                // does not carry into the pointer's high byte).
                let pointer = self.fetch_word(bus);
                let low = self.read(bus, pointer);
                self.poll_interrupts(bus);
                let high = self.read(bus, unfixed(pointer, pointer.wrapping_add(1)));
                self.pc = u16::from_le_bytes([low, high]);
            }
            0x20 => {
                // JSR: the return address (last byte of the JSR) is pushed between the two
                // operand fetches, so the high byte is read last.
                let low = self.fetch(bus);
                self.stack_dummy_read(bus);
                let [pc_low, pc_high] = self.pc.to_le_bytes();
                self.push(bus, pc_high);
                self.push(bus, pc_low);
                self.poll_interrupts(bus);
                let high = self.read(bus, self.pc);
                self.pc = u16::from_le_bytes([low, high]);
            }
            0x60 => {
                self.read(bus, self.pc);
                self.stack_dummy_read(bus);
                let low = self.pull(bus);
                let high = self.pull(bus);
                self.pc = u16::from_le_bytes([low, high]);
                self.poll_interrupts(bus);
                self.read(bus, self.pc);
                self.pc = self.pc.wrapping_add(1);
            }
            0x40 => {
                // RTI restores P (and so I) before its poll.
                self.read(bus, self.pc);
                self.stack_dummy_read(bus);
                let p = self.pull(bus);
                self.set_p_from_stack(p);
                let low = self.pull(bus);
                self.poll_interrupts(bus);
                let high = self.pull(bus);
                self.pc = u16::from_le_bytes([low, high]);
            }
            0x00 => self.brk(bus),

            // --- branches
            0x10 => { let c = !self.flag(Status::N); self.branch(bus, c); }
            0x30 => { let c = self.flag(Status::N); self.branch(bus, c); }
            0x50 => { let c = !self.flag(Status::V); self.branch(bus, c); }
            0x70 => { let c = self.flag(Status::V); self.branch(bus, c); }
            0x90 => { let c = !self.flag(Status::C); self.branch(bus, c); }
            0xB0 => { let c = self.flag(Status::C); self.branch(bus, c); }
            0xD0 => { let c = !self.flag(Status::Z); self.branch(bus, c); }
            0xF0 => { let c = self.flag(Status::Z); self.branch(bus, c); }

            // --- NOPs, official and not, with their operand reads
            0xEA | 0x1A | 0x3A | 0x5A | 0x7A | 0xDA | 0xFA => self.implied(bus),
            0x80 | 0x82 | 0x89 | 0xC2 | 0xE2 => { self.load(bus, IMM); }
            0x04 | 0x44 | 0x64 => { self.load(bus, ZP); }
            0x14 | 0x34 | 0x54 | 0x74 | 0xD4 | 0xF4 => { self.load(bus, ZPX); }
            0x0C => { self.load(bus, ABS); }
            0x1C | 0x3C | 0x5C | 0x7C | 0xDC | 0xFC => { self.load(bus, ABX); }

            // --- JAM / KIL
            0x02 | 0x12 | 0x22 | 0x32 | 0x42 | 0x52 | 0x62 | 0x72 | 0x92 | 0xB2 | 0xD2
            | 0xF2 => self.jam(bus),

            // --- unofficial read-modify-write combinations
            0x03 => self.modify(bus, IZX, Cpu::slo),
            0x07 => self.modify(bus, ZP, Cpu::slo),
            0x0F => self.modify(bus, ABS, Cpu::slo),
            0x13 => self.modify(bus, IZY, Cpu::slo),
            0x17 => self.modify(bus, ZPX, Cpu::slo),
            0x1B => self.modify(bus, ABY, Cpu::slo),
            0x1F => self.modify(bus, ABX, Cpu::slo),
            0x23 => self.modify(bus, IZX, Cpu::rla),
            0x27 => self.modify(bus, ZP, Cpu::rla),
            0x2F => self.modify(bus, ABS, Cpu::rla),
            0x33 => self.modify(bus, IZY, Cpu::rla),
            0x37 => self.modify(bus, ZPX, Cpu::rla),
            0x3B => self.modify(bus, ABY, Cpu::rla),
            0x3F => self.modify(bus, ABX, Cpu::rla),
            0x43 => self.modify(bus, IZX, Cpu::sre),
            0x47 => self.modify(bus, ZP, Cpu::sre),
            0x4F => self.modify(bus, ABS, Cpu::sre),
            0x53 => self.modify(bus, IZY, Cpu::sre),
            0x57 => self.modify(bus, ZPX, Cpu::sre),
            0x5B => self.modify(bus, ABY, Cpu::sre),
            0x5F => self.modify(bus, ABX, Cpu::sre),
            0x63 => self.modify(bus, IZX, Cpu::rra),
            0x67 => self.modify(bus, ZP, Cpu::rra),
            0x6F => self.modify(bus, ABS, Cpu::rra),
            0x73 => self.modify(bus, IZY, Cpu::rra),
            0x77 => self.modify(bus, ZPX, Cpu::rra),
            0x7B => self.modify(bus, ABY, Cpu::rra),
            0x7F => self.modify(bus, ABX, Cpu::rra),
            0xC3 => self.modify(bus, IZX, Cpu::dcp),
            0xC7 => self.modify(bus, ZP, Cpu::dcp),
            0xCF => self.modify(bus, ABS, Cpu::dcp),
            0xD3 => self.modify(bus, IZY, Cpu::dcp),
            0xD7 => self.modify(bus, ZPX, Cpu::dcp),
            0xDB => self.modify(bus, ABY, Cpu::dcp),
            0xDF => self.modify(bus, ABX, Cpu::dcp),
            0xE3 => self.modify(bus, IZX, Cpu::isc),
            0xE7 => self.modify(bus, ZP, Cpu::isc),
            0xEF => self.modify(bus, ABS, Cpu::isc),
            0xF3 => self.modify(bus, IZY, Cpu::isc),
            0xF7 => self.modify(bus, ZPX, Cpu::isc),
            0xFB => self.modify(bus, ABY, Cpu::isc),
            0xFF => self.modify(bus, ABX, Cpu::isc),

            // --- unofficial loads and stores
            0x83 => self.store(bus, IZX, self.a & self.x),
            0x87 => self.store(bus, ZP, self.a & self.x),
            0x8F => self.store(bus, ABS, self.a & self.x),
            0x97 => self.store(bus, ZPY, self.a & self.x),
            0xA3 => { let v = self.load(bus, IZX); self.lax(v); }
            0xA7 => { let v = self.load(bus, ZP); self.lax(v); }
            0xAF => { let v = self.load(bus, ABS); self.lax(v); }
            0xB3 => { let v = self.load(bus, IZY); self.lax(v); }
            0xB7 => { let v = self.load(bus, ZPY); self.lax(v); }
            0xBF => { let v = self.load(bus, ABY); self.lax(v); }
            0xBB => { let v = self.load(bus, ABY); self.las(v); }

            // --- unofficial immediates
            0x0B | 0x2B => { let v = self.load(bus, IMM); self.anc(v); }
            0x4B => { let v = self.load(bus, IMM); self.alr(v); }
            0x6B => { let v = self.load(bus, IMM); self.arr(v); }
            0x8B => {
                let v = self.load(bus, IMM);
                self.a = (self.a | ANE_MAGIC) & self.x & v;
                self.set_nz(self.a);
            }
            0xAB => {
                let v = self.load(bus, IMM);
                let result = (self.a | LXA_MAGIC) & v;
                self.lax(result);
            }
            0xCB => { let v = self.load(bus, IMM); self.sbx(v); }

            // --- unstable "AND with high byte + 1" stores
            0x93 => {
                let base = self.indirect_y_base(bus);
                self.store_and_high(bus, base, self.y, self.a & self.x);
            }
            0x9F => {
                let base = self.fetch_word(bus);
                self.store_and_high(bus, base, self.y, self.a & self.x);
            }
            0x9B => {
                // SHS (TAS): S = A & X, then store S & (H+1).
                let base = self.fetch_word(bus);
                self.s = self.a & self.x;
                self.store_and_high(bus, base, self.y, self.s);
            }
            0x9C => {
                let base = self.fetch_word(bus);
                self.store_and_high(bus, base, self.x, self.y);
            }
            0x9E => {
                let base = self.fetch_word(bus);
                self.store_and_high(bus, base, self.y, self.x);
            }
        }
    }
}

/// The address the 6502 puts on the bus before the index's carry reaches the high byte:
/// the final low byte with the base's high byte.
#[inline(always)]
fn unfixed(base: u16, address: u16) -> u16 {
    (base & 0xFF00) | (address & 0x00FF)
}

#[cfg(test)]
mod tests;
