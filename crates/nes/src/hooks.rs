//! Memory hooks for scripting and debugging (FCEUX's `memory.registerexec/write/read`).
//!
//! A [`FrameHooks`] implementation is lent to [`Nes::run_frame_with`] for one frame. The
//! console then runs its CPU on a [`HookedBus`], a thin wrapper around the motherboard that
//! answers the CPU's "is this address hooked?" questions from the handler's [`HookMap`] and
//! calls the handler with a [`HookMachine`] (registers and memory) when one is. Runs without
//! a handler use the plain motherboard, whose hook questions are constant `false`: they cost
//! nothing at all.

use nes_cpu::{Bus, Cpu, DmaKind, Fetch};

use crate::motherboard::Motherboard;
use crate::Nes;

/// One bit per CPU address, plus a count so "nothing hooked" is one test.
#[derive(Clone)]
pub struct AddressSet {
    bits: Box<[u64; 1024]>,
    len: u32,
}

impl std::fmt::Debug for AddressSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddressSet")
            .field("len", &self.len)
            .finish()
    }
}

impl Default for AddressSet {
    fn default() -> Self {
        AddressSet {
            bits: Box::new([0; 1024]),
            len: 0,
        }
    }
}

impl AddressSet {
    /// Whether any address is in the set.
    #[inline(always)]
    pub fn any(&self) -> bool {
        self.len != 0
    }

    #[inline(always)]
    pub fn contains(&self, addr: u16) -> bool {
        self.bits[usize::from(addr >> 6)] & (1 << (addr & 63)) != 0
    }

    /// Add (`true`) or remove `addr`.
    pub fn set(&mut self, addr: u16, present: bool) {
        let word = &mut self.bits[usize::from(addr >> 6)];
        let mask = 1u64 << (addr & 63);
        let was = *word & mask != 0;
        if present && !was {
            *word |= mask;
            self.len += 1;
        } else if !present && was {
            *word &= !mask;
            self.len -= 1;
        }
    }

    pub fn clear(&mut self) {
        self.bits.fill(0);
        self.len = 0;
    }

    /// Number of addresses in the set.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Which addresses have a hook of each kind.
#[derive(Debug, Clone, Default)]
pub struct HookMap {
    pub exec: AddressSet,
    pub write: AddressSet,
    pub read: AddressSet,
}

impl HookMap {
    pub fn clear(&mut self) {
        self.exec.clear();
        self.write.clear();
        self.read.clear();
    }
}

/// The cycles FCEUX 2.6.5 adds to its cycle count when it fetches each opcode, before the
/// opcode runs: the base cost, without the page-crossing and taken-branch cycles, which it
/// adds when they happen. Measured with `debugger.getcyclescount()` in exec hooks around
/// every opcode but the twelve jams (tests/fceux/lua/debugger.lua); it is the hardware's base
/// cost everywhere except $E2 (3 cycles for a 2-cycle NOP).
const FCEUX_OPCODE_CYCLES: [u8; 256] = [
    7, 6, 2, 8, 3, 3, 5, 5, 3, 2, 2, 2, 4, 4, 6, 6, // $00
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // $10
    6, 6, 2, 8, 3, 3, 5, 5, 4, 2, 2, 2, 4, 4, 6, 6, // $20
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // $30
    6, 6, 2, 8, 3, 3, 5, 5, 3, 2, 2, 2, 3, 4, 6, 6, // $40
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // $50
    6, 6, 2, 8, 3, 3, 5, 5, 4, 2, 2, 2, 5, 4, 6, 6, // $60
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // $70
    2, 6, 2, 6, 3, 3, 3, 3, 2, 2, 2, 2, 4, 4, 4, 4, // $80
    2, 6, 2, 6, 4, 4, 4, 4, 2, 5, 2, 5, 5, 5, 5, 5, // $90
    2, 6, 2, 6, 3, 3, 3, 3, 2, 2, 2, 2, 4, 4, 4, 4, // $A0
    2, 5, 2, 5, 4, 4, 4, 4, 2, 4, 2, 4, 4, 4, 4, 4, // $B0
    2, 6, 2, 8, 3, 3, 5, 5, 2, 2, 2, 2, 4, 4, 6, 6, // $C0
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // $D0
    2, 6, 3, 8, 3, 3, 5, 5, 2, 2, 2, 2, 4, 4, 6, 6, // $E0
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // $F0
];

/// The cycles FCEUX adds for an NMI or IRQ, before the handler's first instruction.
const FCEUX_INTERRUPT_CYCLES: u64 = 7;

/// The cycles of an OAM DMA in FCEUX, which it adds inside the $4014 write (before that
/// write's hooks run); 513 or 514 here, from the next read on.
const FCEUX_OAM_DMA_CYCLES: u64 = 512;

/// The PPU's OAM DMA register.
const OAM_DMA: u16 = 0x4014;

/// What a memory hook may touch while the CPU is stopped inside an instruction.
#[derive(Debug)]
pub struct HookMachine<'a> {
    pub(crate) cpu: &'a mut Cpu,
    pub(crate) board: &'a mut Motherboard,
    /// See [`HookMachine::fceux_cycles`].
    fceux_cycles: u64,
    /// 1 in the opcode read hook and the exec hook, which run before the CPU counts the
    /// instruction (see [`Cpu::instructions`]); FCEUX counts it before them.
    pub(crate) uncounted: u64,
}

impl HookMachine<'_> {
    /// The CPU cycle count as FCEUX's debugger has it at this point of the instruction (Lua's
    /// `debugger.getcyclescount()`, before its base is taken off). FCEUX charges an opcode's
    /// whole base cost (its cycle table) when it fetches it and the page-crossing and branch
    /// cycles as they happen, which is after every memory access FCEUX can hook: so in an exec
    /// or write hook the count is the instruction's start plus its opcode's base cost, and in
    /// an NMI or IRQ sequence's pushes the sequence's start plus 7. The start includes the
    /// DMA cycles that halted the fetch. A $4014 write hook also counts the OAM DMA, which
    /// FCEUX runs inside that write. (Read hooks, which FCEUX 2.6.5 does not have, see the
    /// same count as the instruction's write hooks.) Between instructions it is
    /// [`Nes::cpu_cycles`].
    pub fn fceux_cycles(&self) -> u64 {
        self.fceux_cycles
    }
}

/// A memory-hook handler (the Lua host). The console asks `map()` on every CPU access, so it
/// should return a field.
pub trait MemoryHooks {
    fn map(&self) -> &HookMap;
    /// The opcode at `machine.cpu_registers().pc` was fetched and is about to execute.
    fn on_exec(&mut self, machine: &mut HookMachine<'_>, addr: u16);
    /// `value` was stored at `addr`.
    fn on_write(&mut self, machine: &mut HookMachine<'_>, addr: u16, value: u8);
    /// `value` was read from `addr`.
    fn on_read(&mut self, machine: &mut HookMachine<'_>, addr: u16, value: u8);
}

/// What a frame run with [`Nes::run_frame_with`] lets its caller do at FCEUX's points of the
/// frame: a Lua host's `registerbefore` and `registerafter`, and memory hooks.
pub trait FrameHooks: MemoryHooks {
    /// After the lag flag is set, before the frame's first instruction.
    fn before_frame(&mut self, _nes: &mut Nes) {}
    /// After the frame's last instruction, before its lag frame is counted.
    fn after_frame(&mut self, _nes: &mut Nes) {}
}

/// The system bus with a hook handler attached (see the module docs).
pub(crate) struct HookedBus<'a, H: MemoryHooks> {
    pub(crate) board: &'a mut Motherboard,
    pub(crate) hooks: &'a mut H,
    /// FCEUX's cycle count during the current instruction (see [`HookMachine::fceux_cycles`]),
    /// set when its first read completes.
    fceux_cycles: u64,
    /// Between an opcode fetch and the exec-hook question that follows it: a read hook now is
    /// the opcode's, before the CPU counts the instruction.
    opcode_read: std::cell::Cell<bool>,
}

impl<'a, H: MemoryHooks> HookedBus<'a, H> {
    pub(crate) fn new(board: &'a mut Motherboard, hooks: &'a mut H) -> Self {
        HookedBus {
            board,
            hooks,
            fceux_cycles: 0,
            opcode_read: std::cell::Cell::new(false),
        }
    }
}

impl<H: MemoryHooks> Bus for HookedBus<'_, H> {
    #[inline(always)]
    fn read(&mut self, addr: u16) -> u8 {
        self.board.read(addr)
    }
    #[inline(always)]
    fn write(&mut self, addr: u16, value: u8) {
        self.board.write(addr, value)
    }
    #[inline(always)]
    fn nmi_line(&self) -> bool {
        self.board.nmi_line()
    }
    #[inline(always)]
    fn irq_line(&self) -> bool {
        self.board.irq_line()
    }
    #[inline(always)]
    fn dma_requested(&self) -> bool {
        self.board.dma_requested()
    }
    #[inline]
    fn dma_read(&mut self, addr: u16, halted_cpu_addr: u16, kind: DmaKind) -> u8 {
        self.board.dma_read(addr, halted_cpu_addr, kind)
    }
    #[inline]
    fn oam_dma_page(&self) -> Option<u8> {
        self.board.oam_dma_page()
    }
    #[inline]
    fn oam_dma_started(&mut self) {
        self.board.oam_dma_started()
    }
    #[inline]
    fn dmc_dma_address(&self) -> Option<u16> {
        self.board.dmc_dma_address()
    }
    #[inline]
    fn dmc_dma_complete(&mut self, value: u8) {
        self.board.dmc_dma_complete(value)
    }

    #[inline(always)]
    fn fetched(&mut self, cpu: &Cpu, fetch: Fetch) {
        // The step's first cycle has run: the instruction started one cycle ago.
        let start = cpu.cycles().wrapping_sub(1);
        let charged = match fetch {
            Fetch::Opcode(opcode) => u64::from(FCEUX_OPCODE_CYCLES[usize::from(opcode)]),
            Fetch::Interrupt => FCEUX_INTERRUPT_CYCLES,
        };
        self.fceux_cycles = start.wrapping_add(charged);
        self.opcode_read.set(matches!(fetch, Fetch::Opcode(_)));
    }
    #[inline(always)]
    fn exec_hooked(&self, addr: u16) -> bool {
        self.opcode_read.set(false);
        let set = &self.hooks.map().exec;
        set.any() && set.contains(addr)
    }
    #[inline(never)]
    fn exec_hook(&mut self, cpu: &mut Cpu) {
        let addr = cpu.pc;
        // The PPU runs lazily: bring it up to this cycle so the hook sees its real state.
        self.board.sync_ppu();
        let mut machine = HookMachine {
            cpu,
            board: self.board,
            fceux_cycles: self.fceux_cycles,
            uncounted: 1,
        };
        self.hooks.on_exec(&mut machine, addr);
        // The hook may have changed any chip.
        self.board.resync();
    }
    #[inline(always)]
    fn write_hooked(&self, addr: u16) -> bool {
        let set = &self.hooks.map().write;
        set.any() && set.contains(addr)
    }
    #[inline(never)]
    fn write_hook(&mut self, cpu: &mut Cpu, addr: u16, value: u8) {
        // The PPU runs lazily: bring it up to this cycle so the hook sees its real state.
        self.board.sync_ppu();
        let dma = if addr == OAM_DMA {
            FCEUX_OAM_DMA_CYCLES
        } else {
            0
        };
        let mut machine = HookMachine {
            cpu,
            board: self.board,
            fceux_cycles: self.fceux_cycles.wrapping_add(dma),
            uncounted: 0,
        };
        self.hooks.on_write(&mut machine, addr, value);
        // The hook may have changed any chip.
        self.board.resync();
    }
    #[inline(always)]
    fn read_hooked(&self, addr: u16) -> bool {
        let set = &self.hooks.map().read;
        set.any() && set.contains(addr)
    }
    #[inline(never)]
    fn read_hook(&mut self, cpu: &mut Cpu, addr: u16, value: u8) {
        // The PPU runs lazily: bring it up to this cycle so the hook sees its real state.
        self.board.sync_ppu();
        let mut machine = HookMachine {
            cpu,
            board: self.board,
            fceux_cycles: self.fceux_cycles,
            uncounted: u64::from(self.opcode_read.get()),
        };
        self.hooks.on_read(&mut machine, addr, value);
        // The hook may have changed any chip.
        self.board.resync();
    }
}

impl Nes {
    /// Runs instructions on the hooked bus until the PPU has completed `target` frames:
    /// `hooks` is called at every hooked access (see [`Nes::run_frame_with`]).
    pub(crate) fn run_hooked_until<H: MemoryHooks>(&mut self, target: u64, hooks: &mut H) {
        self.board.resync();
        let mut bus = HookedBus::new(&mut self.board, hooks);
        while bus.board.ppu.frames_completed() < target {
            self.cpu.step(&mut bus);
        }
        self.board.sync_ppu();
    }

    /// [`Nes::step_instruction`] with memory hooks.
    pub fn step_instruction_hooked<H: MemoryHooks>(&mut self, hooks: &mut H) {
        self.board.resync();
        let mut bus = HookedBus::new(&mut self.board, hooks);
        self.cpu.step(&mut bus);
        self.board.sync_ppu();
    }

    /// CPU cycles since power-on.
    pub fn cpu_cycles(&self) -> u64 {
        self.cpu.cycles()
    }

    /// Instructions executed (NMI and IRQ sequences are not instructions) since the console
    /// was made or [`Nes::reset_instruction_count`]: FCEUX's debugger counter (Lua's
    /// `debugger.getinstructionscount()`), which goes on through power cycles, resets and
    /// save-state loads, as FCEUX's does.
    pub fn instruction_count(&self) -> u64 {
        self.cpu.instructions()
    }

    /// Count instructions from 0 again.
    pub fn reset_instruction_count(&mut self) {
        self.cpu.set_instructions(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Inspect;

    #[test]
    fn address_set_counts_members_once() {
        let mut set = AddressSet::default();
        assert!(!set.any());
        set.set(0x8000, true);
        set.set(0x8000, true);
        set.set(0xFFFF, true);
        assert_eq!(set.len(), 2);
        assert!(set.contains(0x8000) && set.contains(0xFFFF) && !set.contains(0x8001));
        set.set(0x8000, false);
        set.set(0x1234, false);
        assert_eq!(set.len(), 1);
        set.clear();
        assert!(set.is_empty() && !set.contains(0xFFFF));
    }

    /// Records every hook call; an exec hook at $8002 sets X before `CPX`.
    #[derive(Default)]
    struct Recorder {
        map: HookMap,
        calls: Vec<(char, u16, u8, u16)>,
    }

    impl MemoryHooks for Recorder {
        fn map(&self) -> &HookMap {
            &self.map
        }
        fn on_exec(&mut self, machine: &mut HookMachine<'_>, addr: u16) {
            let mut regs = machine.cpu_registers();
            self.calls.push(('x', addr, 0, regs.pc));
            regs.x = 0x1E;
            machine.set_cpu_registers(regs);
        }
        fn on_write(&mut self, machine: &mut HookMachine<'_>, addr: u16, value: u8) {
            self.calls
                .push(('w', addr, value, machine.cpu_registers().pc));
        }
        fn on_read(&mut self, _: &mut HookMachine<'_>, addr: u16, value: u8) {
            self.calls.push(('r', addr, value, 0));
        }
    }

    #[test]
    fn hooks_fire_after_the_access_with_fceux_timing() {
        // $8000: LDX #0; $8002: CPX #$1E; $8004: BNE +2; $8006: INC $10; $8008: JMP $8008.
        let code = [
            0xA2, 0x00, 0xE0, 0x1E, 0xD0, 0x02, 0xE6, 0x10, 0x4C, 0x08, 0x80,
        ];
        let mut prg = vec![0xEA; 0x8000];
        prg[..code.len()].copy_from_slice(&code);
        prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
        let image = crate::ines_image(0, &prg, &[0; 0x2000]);
        let mut nes = Nes::from_ines(&image).unwrap();
        let mut hooks = Recorder::default();
        hooks.map.exec.set(0x8002, true);
        hooks.map.write.set(0x0010, true);
        hooks.map.read.set(0x0010, true);
        for _ in 0..6 {
            nes.step_instruction_hooked(&mut hooks);
        }
        assert_eq!(
            hooks.calls,
            vec![
                // PC still at the opcode; the CPX then sees X = $1E, so BNE falls through.
                ('x', 0x8002, 0, 0x8002),
                // INC $10: the read, then one write (the final one), PC past the operand.
                ('r', 0x0010, 0, 0),
                ('w', 0x0010, 1, 0x8008),
            ]
        );
        assert_eq!(nes.peek(0x10), 1);
    }
}
