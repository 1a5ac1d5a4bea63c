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
use crate::opcode::{for_each_opcode, operand, Operand};

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
    fn read_address<B: Bus>(&mut self, bus: &mut B, mode: Operand) -> u16 {
        match mode {
            Operand::Immediate => {
                let address = self.pc;
                self.pc = self.pc.wrapping_add(1);
                address
            }
            Operand::ZeroPage => u16::from(self.fetch(bus)),
            Operand::ZeroPageX => self.zero_page_indexed(bus, self.x),
            Operand::ZeroPageY => self.zero_page_indexed(bus, self.y),
            Operand::Absolute => self.fetch_word(bus),
            Operand::AbsoluteX => {
                let base = self.fetch_word(bus);
                self.index_for_read(bus, base, self.x)
            }
            Operand::AbsoluteY => {
                let base = self.fetch_word(bus);
                self.index_for_read(bus, base, self.y)
            }
            Operand::IndirectX => self.indirect_x_address(bus),
            Operand::IndirectY => {
                let base = self.indirect_y_base(bus);
                self.index_for_read(bus, base, self.y)
            }
        }
    }

    /// All cycles of a store or read-modify-write before its data accesses.
    #[inline(always)]
    fn write_address<B: Bus>(&mut self, bus: &mut B, mode: Operand) -> u16 {
        match mode {
            Operand::AbsoluteX => {
                let base = self.fetch_word(bus);
                self.index_for_write(bus, base, self.x)
            }
            Operand::AbsoluteY => {
                let base = self.fetch_word(bus);
                self.index_for_write(bus, base, self.y)
            }
            Operand::IndirectY => {
                let base = self.indirect_y_base(bus);
                self.index_for_write(bus, base, self.y)
            }
            other => self.read_address(bus, other),
        }
    }

    /// A read instruction's operand.
    #[inline(always)]
    fn load<B: Bus>(&mut self, bus: &mut B, mode: Operand) -> u8 {
        let address = self.read_address(bus, mode);
        self.poll_interrupts(bus);
        self.read(bus, address)
    }

    /// A store instruction's cycles, ending with the write of `value`.
    #[inline(always)]
    fn store<B: Bus>(&mut self, bus: &mut B, mode: Operand, value: u8) {
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
        mode: Operand,
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
        // A taken backward branch closes a loop (see `idle.rs`).
        if offset >= 0x80 {
            self.looped_back();
        }
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
}

// ----- execution, expanded from the opcode table ------------------------------------------------

/// What one table entry `(MNEMONIC mode)` does, in bus-cycle order. Each operation is written
/// here once for all its modes; the mode tag picks the addressing helpers, and the few whose
/// cycles differ by mode (the accumulator shifts, implied vs operand NOPs, JMP, the SH*
/// stores) have an arm per mode.
macro_rules! operation {
    // --- loads
    ($cpu:ident, $bus:ident, LDA, $mode:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.a = v;
        $cpu.set_nz(v);
    }};
    ($cpu:ident, $bus:ident, LDX, $mode:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.x = v;
        $cpu.set_nz(v);
    }};
    ($cpu:ident, $bus:ident, LDY, $mode:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.y = v;
        $cpu.set_nz(v);
    }};
    ($cpu:ident, $bus:ident, LAX, $mode:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.lax(v);
    }};
    ($cpu:ident, $bus:ident, LAS, $mode:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.las(v);
    }};

    // --- stores
    ($cpu:ident, $bus:ident, STA, $mode:ident) => {
        $cpu.store($bus, operand!($mode), $cpu.a)
    };
    ($cpu:ident, $bus:ident, STX, $mode:ident) => {
        $cpu.store($bus, operand!($mode), $cpu.x)
    };
    ($cpu:ident, $bus:ident, STY, $mode:ident) => {
        $cpu.store($bus, operand!($mode), $cpu.y)
    };
    ($cpu:ident, $bus:ident, SAX, $mode:ident) => {
        $cpu.store($bus, operand!($mode), $cpu.a & $cpu.x)
    };

    // --- ALU with a memory or immediate operand
    ($cpu:ident, $bus:ident, ORA, $mode:ident) => { operation!(@read $cpu, $bus, $mode, ora) };
    ($cpu:ident, $bus:ident, AND, $mode:ident) => { operation!(@read $cpu, $bus, $mode, and) };
    ($cpu:ident, $bus:ident, EOR, $mode:ident) => { operation!(@read $cpu, $bus, $mode, eor) };
    ($cpu:ident, $bus:ident, ADC, $mode:ident) => { operation!(@read $cpu, $bus, $mode, adc) };
    ($cpu:ident, $bus:ident, SBC, $mode:ident) => { operation!(@read $cpu, $bus, $mode, sbc) };
    ($cpu:ident, $bus:ident, BIT, $mode:ident) => { operation!(@read $cpu, $bus, $mode, bit) };
    ($cpu:ident, $bus:ident, ANC, $mode:ident) => { operation!(@read $cpu, $bus, $mode, anc) };
    ($cpu:ident, $bus:ident, ALR, $mode:ident) => { operation!(@read $cpu, $bus, $mode, alr) };
    ($cpu:ident, $bus:ident, ARR, $mode:ident) => { operation!(@read $cpu, $bus, $mode, arr) };
    ($cpu:ident, $bus:ident, AXS, $mode:ident) => { operation!(@read $cpu, $bus, $mode, sbx) };
    ($cpu:ident, $bus:ident, CMP, $mode:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.compare($cpu.a, v);
    }};
    ($cpu:ident, $bus:ident, CPX, $mode:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.compare($cpu.x, v);
    }};
    ($cpu:ident, $bus:ident, CPY, $mode:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.compare($cpu.y, v);
    }};
    ($cpu:ident, $bus:ident, ANE, $mode:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.a = ($cpu.a | ANE_MAGIC) & $cpu.x & v;
        $cpu.set_nz($cpu.a);
    }};
    ($cpu:ident, $bus:ident, LXA, $mode:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.lax(($cpu.a | LXA_MAGIC) & v);
    }};
    (@read $cpu:ident, $bus:ident, $mode:ident, $alu:ident) => {{
        let v = $cpu.load($bus, operand!($mode));
        $cpu.$alu(v);
    }};

    // --- read-modify-write: on A (two cycles) or on memory
    ($cpu:ident, $bus:ident, ASL, acc) => {{ $cpu.implied($bus); $cpu.a = $cpu.asl($cpu.a); }};
    ($cpu:ident, $bus:ident, LSR, acc) => {{ $cpu.implied($bus); $cpu.a = $cpu.lsr($cpu.a); }};
    ($cpu:ident, $bus:ident, ROL, acc) => {{ $cpu.implied($bus); $cpu.a = $cpu.rol($cpu.a); }};
    ($cpu:ident, $bus:ident, ROR, acc) => {{ $cpu.implied($bus); $cpu.a = $cpu.ror($cpu.a); }};
    ($cpu:ident, $bus:ident, ASL, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::asl) };
    ($cpu:ident, $bus:ident, LSR, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::lsr) };
    ($cpu:ident, $bus:ident, ROL, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::rol) };
    ($cpu:ident, $bus:ident, ROR, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::ror) };
    ($cpu:ident, $bus:ident, INC, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::inc) };
    ($cpu:ident, $bus:ident, DEC, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::dec) };
    ($cpu:ident, $bus:ident, SLO, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::slo) };
    ($cpu:ident, $bus:ident, RLA, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::rla) };
    ($cpu:ident, $bus:ident, SRE, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::sre) };
    ($cpu:ident, $bus:ident, RRA, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::rra) };
    ($cpu:ident, $bus:ident, DCP, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::dcp) };
    ($cpu:ident, $bus:ident, ISC, $mode:ident) => { $cpu.modify($bus, operand!($mode), Cpu::isc) };

    // --- register-only
    ($cpu:ident, $bus:ident, INX, imp) => {{
        $cpu.implied($bus);
        $cpu.x = $cpu.x.wrapping_add(1);
        $cpu.set_nz($cpu.x);
    }};
    ($cpu:ident, $bus:ident, INY, imp) => {{
        $cpu.implied($bus);
        $cpu.y = $cpu.y.wrapping_add(1);
        $cpu.set_nz($cpu.y);
    }};
    ($cpu:ident, $bus:ident, DEX, imp) => {{
        $cpu.implied($bus);
        $cpu.x = $cpu.x.wrapping_sub(1);
        $cpu.set_nz($cpu.x);
    }};
    ($cpu:ident, $bus:ident, DEY, imp) => {{
        $cpu.implied($bus);
        $cpu.y = $cpu.y.wrapping_sub(1);
        $cpu.set_nz($cpu.y);
    }};
    ($cpu:ident, $bus:ident, TAX, imp) => { operation!(@transfer $cpu, $bus, a, x) };
    ($cpu:ident, $bus:ident, TAY, imp) => { operation!(@transfer $cpu, $bus, a, y) };
    ($cpu:ident, $bus:ident, TXA, imp) => { operation!(@transfer $cpu, $bus, x, a) };
    ($cpu:ident, $bus:ident, TYA, imp) => { operation!(@transfer $cpu, $bus, y, a) };
    ($cpu:ident, $bus:ident, TSX, imp) => { operation!(@transfer $cpu, $bus, s, x) };
    // TXS is the one transfer that leaves the flags alone.
    ($cpu:ident, $bus:ident, TXS, imp) => {{ $cpu.implied($bus); $cpu.s = $cpu.x; }};
    (@transfer $cpu:ident, $bus:ident, $from:ident, $to:ident) => {{
        $cpu.implied($bus);
        $cpu.$to = $cpu.$from;
        $cpu.set_nz($cpu.$to);
    }};

    // --- flags (changed on the last cycle, after the poll: CLI/SEI act one instruction late
    // for IRQs)
    ($cpu:ident, $bus:ident, CLC, imp) => {{ $cpu.implied($bus); $cpu.p.remove(Status::C); }};
    ($cpu:ident, $bus:ident, SEC, imp) => {{ $cpu.implied($bus); $cpu.p.insert(Status::C); }};
    ($cpu:ident, $bus:ident, CLI, imp) => {{ $cpu.implied($bus); $cpu.p.remove(Status::I); }};
    ($cpu:ident, $bus:ident, SEI, imp) => {{ $cpu.implied($bus); $cpu.p.insert(Status::I); }};
    ($cpu:ident, $bus:ident, CLV, imp) => {{ $cpu.implied($bus); $cpu.p.remove(Status::V); }};
    ($cpu:ident, $bus:ident, CLD, imp) => {{ $cpu.implied($bus); $cpu.p.remove(Status::D); }};
    ($cpu:ident, $bus:ident, SED, imp) => {{ $cpu.implied($bus); $cpu.p.insert(Status::D); }};

    // --- stack
    ($cpu:ident, $bus:ident, PHA, imp) => {{
        $cpu.read($bus, $cpu.pc);
        $cpu.poll_interrupts($bus);
        $cpu.push($bus, $cpu.a);
    }};
    ($cpu:ident, $bus:ident, PHP, imp) => {{
        $cpu.read($bus, $cpu.pc);
        $cpu.poll_interrupts($bus);
        $cpu.push($bus, $cpu.p.bits() | Status::B.bits() | Status::U.bits());
    }};
    ($cpu:ident, $bus:ident, PLA, imp) => {{
        $cpu.read($bus, $cpu.pc);
        $cpu.stack_dummy_read($bus);
        $cpu.poll_interrupts($bus);
        let v = $cpu.pull($bus);
        $cpu.a = v;
        $cpu.set_nz(v);
    }};
    ($cpu:ident, $bus:ident, PLP, imp) => {{
        $cpu.read($bus, $cpu.pc);
        $cpu.stack_dummy_read($bus);
        $cpu.poll_interrupts($bus);
        let v = $cpu.pull($bus);
        $cpu.set_p_from_stack(v);
    }};

    // --- jumps, calls, returns
    ($cpu:ident, $bus:ident, JMP, abs) => {{
        let opcode_addr = $cpu.pc.wrapping_sub(1);
        let low = $cpu.fetch($bus);
        $cpu.poll_interrupts($bus);
        let high = $cpu.read($bus, $cpu.pc);
        $cpu.pc = u16::from_le_bytes([low, high]);
        // `JMP *` and the jumps that close longer loops.
        if $cpu.pc <= opcode_addr {
            $cpu.looped_back();
        }
    }};
    ($cpu:ident, $bus:ident, JMP, ind) => {{
        // The pointer's high byte is read from the same page: the 6502 does not carry into
        // the pointer's high byte.
        let pointer = $cpu.fetch_word($bus);
        let low = $cpu.read($bus, pointer);
        $cpu.poll_interrupts($bus);
        let high = $cpu.read($bus, unfixed(pointer, pointer.wrapping_add(1)));
        $cpu.pc = u16::from_le_bytes([low, high]);
    }};
    ($cpu:ident, $bus:ident, JSR, abs) => {{
        // The return address (last byte of the JSR) is pushed between the two operand
        // fetches, so the high byte is read last.
        let low = $cpu.fetch($bus);
        $cpu.stack_dummy_read($bus);
        let [pc_low, pc_high] = $cpu.pc.to_le_bytes();
        $cpu.push($bus, pc_high);
        $cpu.push($bus, pc_low);
        $cpu.poll_interrupts($bus);
        let high = $cpu.read($bus, $cpu.pc);
        $cpu.pc = u16::from_le_bytes([low, high]);
    }};
    ($cpu:ident, $bus:ident, RTS, imp) => {{
        $cpu.read($bus, $cpu.pc);
        $cpu.stack_dummy_read($bus);
        let low = $cpu.pull($bus);
        let high = $cpu.pull($bus);
        $cpu.pc = u16::from_le_bytes([low, high]);
        $cpu.poll_interrupts($bus);
        $cpu.read($bus, $cpu.pc);
        $cpu.pc = $cpu.pc.wrapping_add(1);
    }};
    ($cpu:ident, $bus:ident, RTI, imp) => {{
        // RTI restores P (and so I) before its poll.
        $cpu.read($bus, $cpu.pc);
        $cpu.stack_dummy_read($bus);
        let p = $cpu.pull($bus);
        $cpu.set_p_from_stack(p);
        let low = $cpu.pull($bus);
        $cpu.poll_interrupts($bus);
        let high = $cpu.pull($bus);
        $cpu.pc = u16::from_le_bytes([low, high]);
    }};
    ($cpu:ident, $bus:ident, BRK, imp) => { $cpu.brk($bus) };

    // --- branches
    ($cpu:ident, $bus:ident, BPL, rel) => {{ let c = !$cpu.flag(Status::N); $cpu.branch($bus, c); }};
    ($cpu:ident, $bus:ident, BMI, rel) => {{ let c = $cpu.flag(Status::N); $cpu.branch($bus, c); }};
    ($cpu:ident, $bus:ident, BVC, rel) => {{ let c = !$cpu.flag(Status::V); $cpu.branch($bus, c); }};
    ($cpu:ident, $bus:ident, BVS, rel) => {{ let c = $cpu.flag(Status::V); $cpu.branch($bus, c); }};
    ($cpu:ident, $bus:ident, BCC, rel) => {{ let c = !$cpu.flag(Status::C); $cpu.branch($bus, c); }};
    ($cpu:ident, $bus:ident, BCS, rel) => {{ let c = $cpu.flag(Status::C); $cpu.branch($bus, c); }};
    ($cpu:ident, $bus:ident, BNE, rel) => {{ let c = !$cpu.flag(Status::Z); $cpu.branch($bus, c); }};
    ($cpu:ident, $bus:ident, BEQ, rel) => {{ let c = $cpu.flag(Status::Z); $cpu.branch($bus, c); }};

    // --- NOPs, documented and not, with their operand reads
    ($cpu:ident, $bus:ident, NOP, imp) => { $cpu.implied($bus) };
    ($cpu:ident, $bus:ident, NOP, $mode:ident) => {{ $cpu.load($bus, operand!($mode)); }};

    // --- JAM (KIL)
    ($cpu:ident, $bus:ident, JAM, imp) => { $cpu.jam($bus) };

    // --- unstable "AND with high byte + 1" stores
    ($cpu:ident, $bus:ident, SHA, izy) => {{
        let base = $cpu.indirect_y_base($bus);
        $cpu.store_and_high($bus, base, $cpu.y, $cpu.a & $cpu.x);
    }};
    ($cpu:ident, $bus:ident, SHA, aby) => {{
        let base = $cpu.fetch_word($bus);
        $cpu.store_and_high($bus, base, $cpu.y, $cpu.a & $cpu.x);
    }};
    ($cpu:ident, $bus:ident, TAS, aby) => {{
        // S = A & X, then store S & (H+1).
        let base = $cpu.fetch_word($bus);
        $cpu.s = $cpu.a & $cpu.x;
        $cpu.store_and_high($bus, base, $cpu.y, $cpu.s);
    }};
    ($cpu:ident, $bus:ident, SHY, abx) => {{
        let base = $cpu.fetch_word($bus);
        $cpu.store_and_high($bus, base, $cpu.x, $cpu.y);
    }};
    ($cpu:ident, $bus:ident, SHX, aby) => {{
        let base = $cpu.fetch_word($bus);
        $cpu.store_and_high($bus, base, $cpu.y, $cpu.x);
    }};
}

/// `Cpu::execute`: one `match` arm per table entry, each the inlined code of its operation
/// and mode (no run-time table lookup on the hot path).
macro_rules! execute_opcodes {
    ($( ($opcode:literal $mnemonic:ident $mode:ident $($unofficial:tt)?) )*) => {
        impl Cpu {
            /// Execute the instruction whose opcode was just fetched (PC points past the
            /// opcode).
            #[inline(always)]
            pub(crate) fn execute<B: Bus>(&mut self, bus: &mut B, opcode: u8) {
                match opcode {
                    $( $opcode => operation!(self, bus, $mnemonic, $mode), )*
                }
            }
        }
    };
}

for_each_opcode!(execute_opcodes);

/// The address the 6502 puts on the bus before the index's carry reaches the high byte:
/// the final low byte with the base's high byte.
#[inline(always)]
fn unfixed(base: u16, address: u16) -> u16 {
    (base & 0xFF00) | (address & 0x00FF)
}

#[cfg(test)]
mod tests;
