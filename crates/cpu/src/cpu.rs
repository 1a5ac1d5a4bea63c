//! Registers, the per-cycle bus primitives, interrupt detection and polling, and the
//! reset / NMI / IRQ / BRK sequences.
//!
//! Interrupt model (NESdev wiki, "CPU interrupts"): after every cycle the CPU samples the
//! /NMI line into an edge detector (a false->true transition latches a pending NMI until it
//! is serviced) and the /IRQ line as a level. Each instruction *polls* those detectors once,
//! at the end of its penultimate cycle ([`Cpu::poll_interrupts`] is called just before the
//! instruction's last bus access); the result decides whether the next `step` runs the
//! interrupt sequence instead of an instruction. Flag changes made on an instruction's last
//! cycle (CLI, SEI, PLP) therefore only count from the next poll on, while RTI restores I
//! before its poll.

use bitflags::bitflags;
use borsh::{BorshDeserialize, BorshSerialize};

use crate::bus::{Bus, Fetch};
use crate::idle::{IdleProbe, PROBE_EVERY};

bitflags! {
    /// The processor status register P.
    ///
    /// `B` and `U` have no storage in the real 6502: they only exist in the byte pushed by
    /// PHP/BRK (both set) and by IRQ/NMI (`U` set, `B` clear). PLP and RTI store the pulled
    /// value with `B` clear and `U` set, the convention nestest traces use.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct Status: u8 {
        const C = 0x01;
        const Z = 0x02;
        const I = 0x04;
        const D = 0x08;
        const B = 0x10;
        const U = 0x20;
        const V = 0x40;
        const N = 0x80;
    }
}

// Save states store the flags as the byte PHP would push.
impl BorshSerialize for Status {
    fn serialize<W: borsh::io::Write>(&self, writer: &mut W) -> borsh::io::Result<()> {
        self.bits().serialize(writer)
    }
}

impl BorshDeserialize for Status {
    fn deserialize_reader<R: borsh::io::Read>(reader: &mut R) -> borsh::io::Result<Self> {
        Ok(Status::from_bits_retain(u8::deserialize_reader(reader)?))
    }
}

pub(crate) const NMI_VECTOR: u16 = 0xFFFA;
pub(crate) const RESET_VECTOR: u16 = 0xFFFC;
pub(crate) const IRQ_VECTOR: u16 = 0xFFFE;

/// Where a jammed CPU keeps reading: after a JAM/KIL opcode the 6502's address bus is left
/// at $FFFF with the data bus floating high.
const JAMMED_READ_ADDRESS: u16 = 0xFFFF;

/// The 2A03 CPU core: registers plus the state the cycle engine needs between steps.
///
/// Save states serialise every field (borsh); any change to the fields changes the state
/// format, so the console's state format version must be bumped with it.
#[derive(Clone, Debug, BorshSerialize, BorshDeserialize)]
pub struct Cpu {
    pub a: u8,
    pub x: u8,
    pub y: u8,
    pub s: u8,
    pub pc: u16,
    pub p: Status,
    /// Cycles run since power-on; also the DMA unit's get/put phase (see `dma.rs`).
    pub(crate) cycles: u64,
    /// The /NMI level sampled at the end of the previous cycle, for the edge detector.
    pub(crate) nmi_line_was_asserted: bool,
    /// An NMI edge was detected and the NMI has not been serviced yet.
    pub(crate) nmi_pending: bool,
    /// Result of the last interrupt poll: the next `step` runs the interrupt sequence.
    pub(crate) interrupt_due: bool,
    /// A JAM/KIL opcode halted the core; only `power_on` and `reset` revive it.
    jammed: bool,
    /// Instructions started (interrupt sequences are not instructions; a jammed CPU starts
    /// none), counted for debuggers. An observation, not machine state: save states leave it
    /// out, and the owner decides what resets it (see [`Cpu::set_instructions`]).
    #[borsh(skip)]
    pub(crate) instructions: u64,
    /// The last look for an idle loop (`idle.rs`): what the CPU was then. Derived
    /// from the run, not machine state: save states leave it out.
    #[borsh(skip)]
    pub(crate) idle: IdleProbe,
    /// Backward jumps and branches since the last look for an idle loop (`idle.rs`).
    #[borsh(skip)]
    pub(crate) loops_closed: u8,
}

impl Default for Cpu {
    fn default() -> Self {
        Cpu::new()
    }
}

impl Cpu {
    /// A CPU before power is applied: A = X = Y = S = 0, PC = 0, P = $30 (only the two bits
    /// without storage read as set). `power_on` runs the reset sequence from this state.
    pub fn new() -> Cpu {
        Cpu {
            a: 0,
            x: 0,
            y: 0,
            s: 0,
            pc: 0,
            p: Status::U | Status::B,
            cycles: 0,
            nmi_line_was_asserted: false,
            nmi_pending: false,
            interrupt_due: false,
            jammed: false,
            instructions: 0,
            idle: IdleProbe::default(),
            loops_closed: 0,
        }
    }

    /// Apply power: every register returns to its pre-power state, the cycle and instruction
    /// counters to 0, then the 7-cycle reset sequence runs. Afterwards S = $FD (three suppressed pushes from
    /// S = 0), P = $34, PC = the reset vector and `cycles() == 7`.
    pub fn power_on<B: Bus>(&mut self, bus: &mut B) {
        *self = Cpu::new();
        self.reset_sequence(bus);
    }

    /// The reset button: the 7-cycle reset sequence runs now. It is the interrupt sequence
    /// with its three stack writes turned into reads (S still drops by 3); I is set, A/X/Y and
    /// the other flags are kept. Clears the jammed state and any pending interrupt.
    pub fn reset<B: Bus>(&mut self, bus: &mut B) {
        self.reset_sequence(bus);
    }

    /// A reset that takes no time: PC loaded from `vector` (the reset vector's content), I set
    /// and every other flag cleared, S and A/X/Y untouched, the jammed state and any pending
    /// interrupt cleared, no bus cycle. This is how FCEUX resets its 6502, for consoles that
    /// follow its timeline; a 6502 runs the seven cycles of `reset`.
    pub fn instant_reset(&mut self, vector: u16) {
        self.forget_idle_probe();
        self.jammed = false;
        self.nmi_pending = false;
        self.interrupt_due = false;
        self.p = (self.p & (Status::U | Status::B)) | Status::I;
        self.pc = vector;
    }

    /// Run one whole instruction, or the NMI/IRQ sequence if the last poll asked for one.
    /// A jammed CPU performs exactly one read cycle (of $FFFF) per call instead.
    ///
    /// Kept out of line on purpose: inlined into a caller's loop, LLVM hoists the address
    /// computations of the whole instruction engine out of the loop and spills them, which
    /// measured ~4% more instructions per CPU cycle than paying this call's prologue.
    #[inline(never)]
    pub fn step<B: Bus>(&mut self, bus: &mut B) {
        self.run_one(bus);
    }

    /// Runs instructions, as [`Cpu::step`] does, until `done` (asked before each) says to
    /// stop. One call for a whole frame keeps the instruction engine's register saves and
    /// restores out of the per-instruction path.
    ///
    /// Idle loops are skipped here (see `idle.rs`) where the bus allows it: `done` must then
    /// only turn true on its own at a cycle the bus's [`Bus::quiet_cycles`] stops short of.
    #[inline(never)]
    pub fn run_until<B: Bus>(&mut self, bus: &mut B, mut done: impl FnMut(&Cpu, &B) -> bool) {
        while !done(self, bus) {
            if self.loops_closed >= PROBE_EVERY {
                self.loops_closed = 0;
                if self.skip_idle_iterations(bus) {
                    continue;
                }
            }
            self.run_one(bus);
        }
    }

    #[inline(always)]
    fn run_one<B: Bus>(&mut self, bus: &mut B) {
        if self.jammed {
            self.read(bus, JAMMED_READ_ADDRESS);
            return;
        }
        if self.interrupt_due {
            self.hardware_interrupt(bus);
            return;
        }
        // PC stays in a register from the fetch to the increment unless a hook may have moved
        // it: read back from `self.pc`, it compiled to a 4-byte load over the 2-byte field,
        // which waits for the previous instruction's store to PC or a neighbouring register
        // to be written out (a load wider than the store it needs is not forwarded from it).
        let mut pc = self.pc;
        let opcode = self.read_unreported(bus, pc);
        bus.fetched(self, Fetch::Opcode(opcode));
        if self.report_read(bus, pc, opcode) {
            pc = self.pc;
        }
        // Exec hooks (FCEUX `memory.registerexec` semantics): the opcode has been fetched and
        // PC still holds its address; whatever PC the hook leaves, the fetched opcode runs
        // with its operands read from PC + 1.
        if bus.exec_hooked(pc) {
            bus.exec_hook(self);
            pc = self.pc;
        }
        self.pc = pc.wrapping_add(1);
        // Counted here, after the exec hook, rather than before the fetch: before it, the add
        // made `step` about 40% slower in `cargo bench -p nes-cpu` (code layout), here a few
        // percent. A debugger that wants the count to include the instruction in its opcode
        // read and exec hooks adds the one this step has not counted yet.
        self.instructions = self.instructions.wrapping_add(1);
        self.execute(bus, opcode);
    }

    /// CPU cycles since power-on, DMA cycles included; 7 right after `power_on`.
    #[inline]
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Overwrite the cycle counter (nestest automation starts it at 7). The counter's parity
    /// is the DMA get/put phase, so moving it by an odd amount flips that phase.
    #[inline]
    pub fn set_cycles(&mut self, n: u64) {
        self.cycles = n;
    }

    /// Instructions started since power-on (or the last [`Cpu::set_instructions`]): each
    /// `step` that runs an opcode counts one after its opcode fetch and exec hook, before its
    /// operands are read (so its opcode read hook and exec hook see it uncounted, its other
    /// hooks counted); NMI, IRQ and reset sequences and a jammed CPU's steps count none.
    #[inline]
    pub fn instructions(&self) -> u64 {
        self.instructions
    }

    /// Overwrite the instruction counter. Save states do not carry it (a loaded `Cpu` counts
    /// from 0), so a debugger that wants it to run on across loads puts it back.
    #[inline]
    pub fn set_instructions(&mut self, n: u64) {
        self.instructions = n;
    }

    /// A JAM/KIL opcode ran. Each `step` now performs one read of $FFFF; only `power_on` or
    /// `reset` clears this. PC is left at the address of the JAM opcode.
    #[inline]
    pub fn jammed(&self) -> bool {
        self.jammed
    }

    // ----- per-cycle bus primitives -------------------------------------------------------

    /// One read cycle. The 2A03 DMA unit can only halt the CPU on a read: if it wants the
    /// bus, it runs first (repeating this read as its halt/dummy cycles), then the read
    /// happens.
    #[inline(always)]
    pub(crate) fn read<B: Bus>(&mut self, bus: &mut B, addr: u16) -> u8 {
        let value = self.read_unreported(bus, addr);
        self.report_read(bus, addr, value);
        value
    }

    /// [`Cpu::read`] without its read hook, for the first read of a step, which is reported
    /// only after the bus has been told what it fetched ([`Bus::fetched`]).
    #[inline(always)]
    fn read_unreported<B: Bus>(&mut self, bus: &mut B, addr: u16) -> u8 {
        if bus.dma_requested() {
            self.run_dma(bus, addr);
        }
        let value = bus.read(addr);
        self.end_cycle(bus);
        value
    }

    /// The read hook of a read cycle that has completed; whether it ran (a hook may change
    /// the registers).
    #[inline(always)]
    fn report_read<B: Bus>(&mut self, bus: &mut B, addr: u16, value: u8) -> bool {
        let hooked = bus.read_hooked(addr);
        if hooked {
            bus.read_hook(self, addr, value);
        }
        hooked
    }

    /// One write cycle. RDY is ignored during writes, so DMA never starts here.
    #[inline(always)]
    pub(crate) fn write<B: Bus>(&mut self, bus: &mut B, addr: u16, value: u8) {
        self.write_unhooked(bus, addr, value);
        if bus.write_hooked(addr) {
            bus.write_hook(self, addr, value);
        }
    }

    /// A write cycle that memory hooks do not report: the dummy write of a read-modify-write
    /// instruction (hooks see its final write only, as FCEUX reports stores).
    #[inline(always)]
    pub(crate) fn write_unhooked<B: Bus>(&mut self, bus: &mut B, addr: u16, value: u8) {
        bus.write(addr, value);
        self.end_cycle(bus);
    }

    /// Close a cycle: count it and sample /NMI during phi2 into the edge detector, as the
    /// 6502 does on every cycle (a pulse shorter than an instruction still latches an NMI).
    ///
    /// The IRQ level detector also samples every cycle, but its output is only ever used by
    /// the next poll, and polls happen between cycles (nothing touches the bus between a
    /// cycle's end and the poll that follows it). So the poll reads the /IRQ line itself: the
    /// same level this cycle's sample would have held, without a per-cycle query.
    #[inline(always)]
    pub(crate) fn end_cycle<B: Bus>(&mut self, bus: &B) {
        self.cycles = self.cycles.wrapping_add(1);
        let nmi = bus.nmi_line();
        // Nothing to do while the line holds its level (nearly every cycle).
        if nmi != self.nmi_line_was_asserted {
            self.nmi_line_was_asserted = nmi;
            self.nmi_pending |= nmi;
        }
    }

    /// Interrupt poll: decide from the detectors' current outputs whether an interrupt is
    /// taken after this instruction. Called right before an instruction's final cycle, so it
    /// sees the lines as sampled at the end of the penultimate cycle, with I as it is then.
    /// /IRQ is read here rather than sampled in `end_cycle` (see there): the level as of the
    /// end of the last cycle. I is tested first so a masked IRQ costs no bus query.
    #[inline(always)]
    pub(crate) fn poll_interrupts<B: Bus>(&mut self, bus: &B) {
        self.interrupt_due = self.nmi_pending || (!self.p.contains(Status::I) && bus.irq_line());
    }

    /// Read the byte at PC and advance PC.
    #[inline(always)]
    pub(crate) fn fetch<B: Bus>(&mut self, bus: &mut B) -> u8 {
        let value = self.read(bus, self.pc);
        self.pc = self.pc.wrapping_add(1);
        value
    }

    #[inline(always)]
    pub(crate) fn push<B: Bus>(&mut self, bus: &mut B, value: u8) {
        self.write(bus, 0x0100 | u16::from(self.s), value);
        self.s = self.s.wrapping_sub(1);
    }

    /// The read half of a pull: increment S, then read the stack (the 6502 pre-increments).
    #[inline(always)]
    pub(crate) fn pull<B: Bus>(&mut self, bus: &mut B) -> u8 {
        self.s = self.s.wrapping_add(1);
        self.read(bus, 0x0100 | u16::from(self.s))
    }

    /// The dummy read of the stack that precedes pulls (and JSR's pushes): the 6502 puts
    /// the current stack address on the bus while it increments S internally.
    #[inline(always)]
    pub(crate) fn stack_dummy_read<B: Bus>(&mut self, bus: &mut B) {
        self.read(bus, 0x0100 | u16::from(self.s));
    }

    /// Store a pulled byte into P (PLP, RTI): B has no storage and U always reads as set.
    #[inline(always)]
    pub(crate) fn set_p_from_stack(&mut self, value: u8) {
        self.p = Status::from_bits_retain((value & !Status::B.bits()) | Status::U.bits());
    }

    /// Set N and Z from a result.
    #[inline(always)]
    pub(crate) fn set_nz(&mut self, value: u8) {
        let mut bits = self.p.bits() & !(Status::N.bits() | Status::Z.bits());
        bits |= value & Status::N.bits();
        if value == 0 {
            bits |= Status::Z.bits();
        }
        self.p = Status::from_bits_retain(bits);
    }

    /// A JAM/KIL opcode: the 6502 reads the byte after the opcode, then its timing logic
    /// locks up. Cold and out of line: twelve opcodes name it, and none runs in a working
    /// program.
    #[cold]
    #[inline(never)]
    pub(crate) fn jam<B: Bus>(&mut self, bus: &mut B) {
        self.read(bus, self.pc);
        self.pc = self.pc.wrapping_sub(1);
        self.jammed = true;
        self.interrupt_due = false;
    }

    // ----- interrupt sequences ------------------------------------------------------------

    /// IRQ or NMI: the opcode fetch happens but is discarded (PC is not incremented), a
    /// second dummy read of PC follows, then the common push/vector tail.
    fn hardware_interrupt<B: Bus>(&mut self, bus: &mut B) {
        let discarded = self.read_unreported(bus, self.pc);
        bus.fetched(self, Fetch::Interrupt);
        self.report_read(bus, self.pc, discarded);
        self.read(bus, self.pc);
        self.interrupt_tail(bus, false);
    }

    /// BRK after its opcode fetch: the padding byte is read (and skipped), then the tail.
    pub(crate) fn brk<B: Bus>(&mut self, bus: &mut B) {
        self.fetch(bus);
        self.interrupt_tail(bus, true);
    }

    /// Cycles 3-7 shared by BRK, IRQ and NMI: push PC and P, set I, load the vector.
    ///
    /// The vector is chosen after PCL is pushed: an NMI whose edge was detected by the end of
    /// cycle 4 hijacks a BRK or IRQ sequence (the pushed B bit still tells BRK from IRQ),
    /// and is thereby serviced. An NMI detected later stays pending; the handler's first
    /// instruction always runs before it, since the sequence ends without a poll.
    fn interrupt_tail<B: Bus>(&mut self, bus: &mut B, from_brk: bool) {
        let [pc_low, pc_high] = self.pc.to_le_bytes();
        self.push(bus, pc_high);
        self.push(bus, pc_low);
        let vector = if self.nmi_pending {
            self.nmi_pending = false;
            NMI_VECTOR
        } else {
            IRQ_VECTOR
        };
        let pushed = if from_brk {
            self.p.bits() | Status::B.bits() | Status::U.bits()
        } else {
            (self.p.bits() & !Status::B.bits()) | Status::U.bits()
        };
        self.push(bus, pushed);
        self.p.insert(Status::I);
        let low = self.read(bus, vector);
        let high = self.read(bus, vector.wrapping_add(1));
        self.pc = u16::from_le_bytes([low, high]);
        self.interrupt_due = false;
    }

    /// The reset sequence: like an interrupt sequence with the three pushes turned into reads
    /// of the stack (S still decrements), I set, PC loaded from $FFFC.
    fn reset_sequence<B: Bus>(&mut self, bus: &mut B) {
        self.forget_idle_probe();
        self.jammed = false;
        self.nmi_pending = false;
        self.interrupt_due = false;
        self.read(bus, self.pc);
        self.read(bus, self.pc);
        for _ in 0..3 {
            self.stack_dummy_read(bus);
            self.s = self.s.wrapping_sub(1);
        }
        self.p.insert(Status::I);
        let low = self.read(bus, RESET_VECTOR);
        let high = self.read(bus, RESET_VECTOR.wrapping_add(1));
        self.pc = u16::from_le_bytes([low, high]);
        self.interrupt_due = false;
    }
}

#[cfg(test)]
mod tests;
