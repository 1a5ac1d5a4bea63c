//! The CPU's view of the outside world.
//!
//! Every call to [`Bus::read`] or [`Bus::write`] is exactly one CPU cycle: the
//! implementation advances every other chip (PPU dots, APU, mapper timers) by one
//! CPU cycle around the access. After each cycle the CPU samples /NMI through
//! [`Bus::nmi_line`], as the 6502 does during phi2. /IRQ is a level the 6502 only acts on
//! when it polls, so the CPU reads [`Bus::irq_line`] at the poll (between two cycles, with
//! I clear) instead of after every cycle: the value is the line as of the end of the last
//! cycle either way.
//!
//! Order of calls for one CPU cycle N (`Cpu::cycles() == N` throughout):
//! 1. before a read only: `dma_requested()`; if true the DMA unit runs first (its cycles
//!    are numbered N, N+1, ... and each is a `read`/`write` followed by step 3), and the
//!    CPU's own read then happens on the cycle after the last DMA cycle;
//! 2. `read(addr)` or `write(addr, value)`;
//! 3. `nmi_line()`; then, if the instruction polls for interrupts before its next cycle
//!    and I is clear, `irq_line()`.
//!
//! So a DMA request, or a change of an interrupt line, made while the console runs cycle N
//! (inside `read`/`write`) is seen by the CPU at the end of cycle N / before cycle N+1.

use crate::Cpu;

/// Which DMA unit performs a DMA get cycle (see [`Bus::dma_read`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmaKind {
    /// The OAM DMA's read of `$XX00 + i`; the byte is then written to $2004.
    Oam,
    /// The DMC's sample fetch.
    Dmc,
}

/// What the first read of a [`crate::Cpu::step`] fetched (see [`Bus::fetched`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fetch {
    /// The opcode of the instruction the step runs.
    Opcode(u8),
    /// The discarded opcode fetch that starts an NMI or IRQ sequence.
    Interrupt,
}

/// What the CPU is connected to. Implemented by the console (and by flat test memories).
///
/// All methods are called from the hot path: implementations should be `#[inline]`
/// and cheap. The CPU is generic over this trait so calls monomorphise.
pub trait Bus {
    /// One CPU read cycle at `addr` (dummy reads included).
    fn read(&mut self, addr: u16) -> u8;

    /// One CPU write cycle (dummy writes included).
    fn write(&mut self, addr: u16, value: u8);

    /// Level of the /NMI input after the current cycle: `true` while the line is
    /// asserted (pulled low). The CPU does the edge detection itself.
    fn nmi_line(&self) -> bool;

    /// Level of the /IRQ input after the current cycle: `true` while any source
    /// asserts it. The CPU masks it with the I flag itself, and only asks when it polls
    /// (so it must not depend on how often it is called).
    fn irq_line(&self) -> bool;

    /// 2A03 only: `true` while a DMA unit wants the CPU halted (RDY low): an OAM DMA
    /// was requested by a $4014 write, or the DMC needs a sample byte. Checked before
    /// every read cycle; the 2A03 ignores RDY during write cycles, so a request made
    /// during a write waits for the next read (and one withdrawn before that read never
    /// halts the CPU at all). The default (plain 6502, test memories) never requests DMA.
    ///
    /// DMA get/put phase: CPU cycle N is a get cycle when
    /// `N % 2 == `[`crate::DMA_GET_CYCLE_PARITY`] (0: even cycles); the APU must use the
    /// same phase for its DMC timing.
    #[inline]
    fn dma_requested(&self) -> bool {
        false
    }

    /// 2A03 only: a DMA get cycle: the DMA unit reads `addr` while the halted 6502 keeps
    /// `halted_cpu_addr` on its own address bus. One CPU cycle, like `read`. The 2A03 decodes
    /// its internal registers ($4015-$4017) from the 6502's address, so the console can model
    /// the resulting register conflicts (NESdev "DMA", register conflicts). The default is a
    /// plain read of `addr`.
    #[inline]
    fn dma_read(&mut self, addr: u16, _halted_cpu_addr: u16, _kind: DmaKind) -> u8 {
        self.read(addr)
    }

    /// 2A03 only: the pending OAM DMA's source page (`$XX00`), if one is pending.
    #[inline]
    fn oam_dma_page(&self) -> Option<u8> {
        None
    }

    /// 2A03 only: the OAM DMA was taken up by the DMA unit (called once, just before its
    /// halt cycle); clear the request. A second $4014 write before this point only
    /// changes the page: one DMA runs, from the last page written.
    #[inline]
    fn oam_dma_started(&mut self) {}

    /// 2A03 only: the address of the DMC sample byte wanted, if the DMC has a
    /// fetch pending. Asked before every DMA cycle. May become `None` between cycles
    /// (e.g. $4015 disabled the DMC while the CPU was being halted): before the fetch's
    /// dummy cycle the DMA unit then abandons it; after it the fetch is committed and still
    /// happens (and `dmc_dma_complete` is called). A request that appears while an OAM DMA
    /// runs is served inside it (its halt and dummy cycles overlap OAM cycles).
    #[inline]
    fn dmc_dma_address(&self) -> Option<u16> {
        None
    }

    /// 2A03 only: the DMC's sample byte was read on the cycle that just ended (after its
    /// `read` and the interrupt-line sampling); hand it over and clear the request. A DMC
    /// IRQ raised here is therefore first seen at the end of the next cycle.
    #[inline]
    fn dmc_dma_complete(&mut self, _value: u8) {}

    // ----- idle-loop skipping (see `idle.rs`) ----------------------------------------------

    /// A count that moves whenever something the CPU did may have changed what a later read
    /// returns or what the console does next: every write cycle, every read of a register
    /// (anything but plain RAM and ROM), every DMA cycle, every change from outside the CPU's
    /// cycles. Only compared for equality, between two backward jumps.
    #[inline(always)]
    fn effects(&self) -> u64 {
        0
    }

    /// How many CPU cycles, from the next one, are sure to pass with nothing happening outside
    /// the CPU that the CPU could notice: no interrupt line change, no DMA request, no change
    /// of what it reads, and no limit of the run in progress reached. 0, the default, turns
    /// idle-loop skipping off.
    #[inline(always)]
    fn quiet_cycles(&self) -> u64 {
        0
    }

    /// `cycles` (at most `quiet_cycles()`) CPU cycles pass in which the CPU only repeats reads
    /// that have no effect: run the rest of the console through them.
    #[inline(always)]
    fn skip_quiet_cycles(&mut self, _cycles: u64) {}

    // ----- memory hooks (debuggers, scripting) ---------------------------------------------

    /// Called after the first read of every instruction and of every NMI/IRQ sequence (DMA
    /// cycles that halted that read are already in `cpu.cycles()`), before that read's hooks:
    /// where a debugger starts accounting for the instruction. Called on every instruction,
    /// so the default does nothing and a bus without hooks compiles to what it had before.
    #[inline(always)]
    fn fetched(&mut self, _cpu: &Cpu, _fetch: Fetch) {}
    //
    // The CPU asks `*_hooked(addr)` after each access and calls the matching `*_hook` only when
    // it says yes. The defaults answer a constant `false`, so a bus without hooks compiles to
    // exactly the code it had before; a hooking bus should answer from a bitmap with an "any"
    // flag first, so an unhooked access costs one well-predicted branch. The hook gets the
    // whole CPU: it may read and change registers (and the bus it is called on).

    /// Whether an exec hook wants the opcode fetch at `addr`.
    #[inline(always)]
    fn exec_hooked(&self, _addr: u16) -> bool {
        false
    }

    /// Called right after an opcode fetch from `cpu.pc` (PC still at the opcode). Changes the
    /// hook makes to the registers apply to the fetched instruction; a new PC does not cancel
    /// the fetched opcode: its operands are read from the new PC + 1.
    #[inline(always)]
    fn exec_hook(&mut self, _cpu: &mut Cpu) {}

    /// Whether a write hook wants a store to `addr`.
    #[inline(always)]
    fn write_hooked(&self, _addr: u16) -> bool {
        false
    }

    /// Called after a CPU store of `value` to `addr` has completed (once per store: the dummy
    /// write of a read-modify-write instruction is not reported, DMA writes neither).
    #[inline(always)]
    fn write_hook(&mut self, _cpu: &mut Cpu, _addr: u16, _value: u8) {}

    /// Whether a read hook wants a CPU read of `addr`.
    #[inline(always)]
    fn read_hooked(&self, _addr: u16) -> bool {
        false
    }

    /// Called after a CPU read cycle (dummy reads included, DMA reads not) of `addr` returned
    /// `value`.
    #[inline(always)]
    fn read_hook(&mut self, _cpu: &mut Cpu, _addr: u16, _value: u8) {}
}
