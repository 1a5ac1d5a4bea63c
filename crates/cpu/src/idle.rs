//! Idle-loop skipping: a loop that waits for an interrupt by re-reading memory (`JMP *`,
//! `loop: LDA flag / BEQ loop`) is run for real a few times, then its repetitions up to the
//! next moment something outside the CPU may happen that the CPU could notice are counted
//! instead of executed.
//!
//! Why that is exact. `Cpu::run_until` looks at the CPU between two instructions after
//! backward jumps and branches (every `PROBE_EVERY`th). Say a look finds every register, the
//! sampled /NMI level, the pending interrupt flags and the /IRQ level as the previous look
//! found them, and nothing in between could have changed what a read returns or what the
//! console does next: no write, no register access, no DMA (the bus's [`Bus::effects`] count
//! did not move). Then the stretch between the two looks starts from the same state as the
//! one to come, makes the same reads of the same unchanged memory, sees the same interrupt
//! lines and ends in the same state; and so does every later stretch, until something the
//! CPU can notice happens outside it: a PPU catch-up (its NMI output, a frame end, a board's
//! IRQ), an APU change of the IRQ output or a DMC request. [`Bus::quiet_cycles`] says how
//! far away the first such moment is; the stretches that fit entirely before it leave no
//! trace but the time they take, so the CPU adds their cycles (and instructions) and the bus
//! runs its clocks on ([`Bus::skip_quiet_cycles`]: the APU runs its sound events on their
//! cycles, the PPU falls behind as on any cycle before its catch-up). Execution then goes
//! on cycle by cycle into the event.
//!
//! Only `run_until` skips, between instructions and after its stop condition said no, so a
//! skip never passes a stop the last instruction brought (a frame end) and single steps
//! never skip. The eager reference mode never skips (its bus has no quiet cycles), so
//! `tests/lazy_equals_eager.rs` compares skipping with plain execution on every test ROM.

use crate::{Bus, Cpu};

/// Backward jumps between two looks at the CPU. Busy code closes loops all the time, and a
/// look costs some thirty instructions; one every eighth loop costs little, and an idle loop
/// still matches its own state eight iterations later (any two looks with the same state and
/// no effect between them make a stretch that repeats, whatever it spans).
pub(crate) const PROBE_EVERY: u8 = 8;

/// What the CPU looked like at the last look: the registers and interrupt state packed into
/// one word, the bus's effect count, and the clocks.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IdleProbe {
    /// `Cpu::loop_state`, or 0 (no probe yet, or forgotten), which matches no state.
    state: u64,
    effects: u64,
    cycle: u64,
    instructions: u64,
}

impl Cpu {
    /// The registers, the sampled /NMI level and the pending interrupt flags in one word.
    #[inline(always)]
    fn loop_state(&self) -> u64 {
        u64::from(self.pc)
            | u64::from(self.a) << 16
            | u64::from(self.x) << 24
            | u64::from(self.y) << 32
            | u64::from(self.s) << 40
            | u64::from(self.p.bits()) << 48
            | u64::from(self.nmi_line_was_asserted) << 56
            | u64::from(self.nmi_pending) << 57
            | u64::from(self.interrupt_due) << 58
            | 1 << 63
    }

    /// Drops the last look: the next one starts a new comparison. For the resets, which move
    /// the CPU with reads only. (A loaded state brings a CPU without a look.)
    pub(crate) fn forget_idle_probe(&mut self) {
        self.idle = IdleProbe::default();
    }

    /// A jump or branch went backward (or to itself), ending an iteration of a loop that
    /// may be idle: every `PROBE_EVERY`th, `run_until` looks before the next instruction.
    #[inline(always)]
    pub(crate) fn looped_back(&mut self) {
        self.loops_closed = self.loops_closed.wrapping_add(1);
    }

    /// At an instruction boundary after a backward jump, with the run's stop condition just
    /// found false: compares the CPU with the last look and skips the iterations
    /// that repeat (see the module documentation). Returns whether it skipped, so the caller
    /// asks its stop condition again. Skipping only here, between instructions, keeps a
    /// skip from running past a stop the instruction's last cycle brought (a frame end).
    #[inline(never)]
    pub(crate) fn skip_idle_iterations<B: Bus>(&mut self, bus: &mut B) -> bool {
        // The /IRQ level too: a line only rises at an event and only falls at a register
        // access (an effect), so the same level at two looks with no effect between means
        // it held all along, and the iterations to come poll it as the last ones did.
        let state = self.loop_state() | u64::from(bus.irq_line()) << 59;
        let effects = bus.effects();
        let mut skipped = 0;
        if state == self.idle.state
            && effects == self.idle.effects
            && !self.nmi_pending
            && !self.interrupt_due
        {
            // Never 0 (an instruction takes two cycles or more); the counters only move
            // forward between two looks of one run (a loaded state brings a CPU without one).
            let period = self.cycles.wrapping_sub(self.idle.cycle);
            let iterations = bus.quiet_cycles().checked_div(period).unwrap_or(0);
            if iterations > 0 {
                skipped = iterations * period;
                bus.skip_quiet_cycles(skipped);
                self.cycles += skipped;
                let per_iteration = self.instructions.wrapping_sub(self.idle.instructions);
                self.instructions = self
                    .instructions
                    .wrapping_add(iterations.wrapping_mul(per_iteration));
            }
        }
        self.idle = IdleProbe {
            state,
            effects,
            cycle: self.cycles,
            instructions: self.instructions,
        };
        skipped > 0
    }
}

#[cfg(test)]
mod tests {
    use crate::test_bus::cpu_at;
    use crate::{Bus, Cpu};

    /// Flat memory; every access a cycle; writes are effects; quiet until `quiet_until`.
    struct QuietBus {
        memory: Vec<u8>,
        cycle: u64,
        effects: u64,
        quiet_until: u64,
        skipped: u64,
    }

    impl QuietBus {
        fn new(program: &[u8], quiet_until: u64) -> QuietBus {
            let mut memory = vec![0; 0x10000];
            memory[0x8000..0x8000 + program.len()].copy_from_slice(program);
            QuietBus {
                memory,
                cycle: 0,
                effects: 0,
                quiet_until,
                skipped: 0,
            }
        }
    }

    impl Bus for QuietBus {
        fn read(&mut self, addr: u16) -> u8 {
            self.cycle += 1;
            self.memory[usize::from(addr)]
        }

        fn write(&mut self, addr: u16, value: u8) {
            self.cycle += 1;
            self.effects += 1;
            self.memory[usize::from(addr)] = value;
        }

        fn nmi_line(&self) -> bool {
            false
        }

        fn irq_line(&self) -> bool {
            false
        }

        fn effects(&self) -> u64 {
            self.effects
        }

        fn quiet_cycles(&self) -> u64 {
            self.quiet_until.saturating_sub(self.cycle)
        }

        fn skip_quiet_cycles(&mut self, cycles: u64) {
            assert!(
                cycles <= self.quiet_cycles(),
                "skipped past the quiet cycles"
            );
            self.cycle += cycles;
            self.skipped += cycles;
        }
    }

    /// Runs `program` from $8000 until `until` cycles have passed, once on a bus that lets
    /// idle loops be skipped until `quiet_until` and once on one that never does; both must
    /// stop on the same cycle in the same state. Returns the cycles skipped.
    fn skipped_running(program: &[u8], quiet_until: u64, until: u64) -> u64 {
        let run = |quiet_until| {
            let mut bus = QuietBus::new(program, quiet_until);
            let mut cpu = cpu_at(0x8000);
            cpu.run_until(&mut bus, |cpu, bus| {
                assert_eq!(
                    cpu.cycles(),
                    bus.cycle,
                    "the CPU's and the bus's clocks agree"
                );
                cpu.cycles() >= until
            });
            (cpu, bus)
        };
        let (skipping, skipping_bus) = run(quiet_until);
        let (stepping, stepping_bus) = run(0);
        let registers = |cpu: &Cpu| (cpu.pc, cpu.a, cpu.x, cpu.y, cpu.s, cpu.p, cpu.cycles());
        assert_eq!(registers(&skipping), registers(&stepping));
        assert_eq!(skipping.instructions(), stepping.instructions());
        assert!(skipping_bus.memory == stepping_bus.memory);
        skipping_bus.skipped
    }

    #[test]
    fn a_jump_to_itself_is_skipped_up_to_the_quiet_limit() {
        // JMP $8000: 3 cycles per iteration; the limit leaves a partial iteration over.
        let skipped = skipped_running(&[0x4C, 0x00, 0x80], 1_000, 1_000);
        assert!(skipped > 900 && skipped.is_multiple_of(3), "{skipped}");
    }

    #[test]
    fn a_flag_polling_loop_is_skipped() {
        // loop: LDA $10 / BEQ loop (the flag stays 0): 3 + 3 cycles.
        let skipped = skipped_running(&[0xA5, 0x10, 0xF0, 0xFC], 5_000, 5_000);
        assert!(skipped > 4_800 && skipped.is_multiple_of(6), "{skipped}");
    }

    #[test]
    fn loops_that_change_something_are_run() {
        // loop: INC $10 / JMP loop: a write every iteration.
        assert_eq!(
            skipped_running(&[0xE6, 0x10, 0x4C, 0x00, 0x80], 5_000, 5_000),
            0
        );
        // loop: DEX / BNE loop: X differs on every arrival.
        assert_eq!(skipped_running(&[0xCA, 0xD0, 0xFD], 5_000, 5_000), 0);
    }

    #[test]
    fn only_the_innermost_loop_is_watched() {
        // lap: INX / CPX #$00 / BNE lap ... JMP lap, pure, repeats once per lap of 256 inner
        // iterations; but only the last backward jump is remembered, and the inner branch
        // (X differs each time) comes between two of the JMP's. A lost chance, never a wrong
        // skip.
        let program = [0xE8, 0xE0, 0x00, 0xD0, 0xFB, 0x4C, 0x00, 0x80];
        assert_eq!(skipped_running(&program, 20_000, 20_000), 0);
    }

    #[test]
    fn nothing_is_skipped_without_quiet_cycles() {
        assert_eq!(skipped_running(&[0x4C, 0x00, 0x80], 0, 1_000), 0);
    }
}
