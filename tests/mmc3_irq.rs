//! The MMC3 scanline IRQ chain, link by link, against a model written from the documents
//! rather than from the emulator (issue 17 part 3):
//!
//! 1. with sprites at $1000 and the background at $0000, PPU A12 rises once per rendering line,
//!    on dot 261, where the first sprite slot presents its pattern address (NESdev "PPU
//!    rendering": sprite fetches, cycle 5 of each 8-dot slot; "MMC3": "the IRQ occurs after
//!    PPU cycle 260"), on lines 0-239 and the pre-render line;
//! 2. each such rise clocks the counter, which reloads from $C000 when 0 or after a $C001
//!    write and otherwise decrements; an MMC3B raises /IRQ when the counter is then 0 (NESdev
//!    "MMC3", mmc3_test_2's readme), on the same dot;
//! 3. the CPU's level detector sees /IRQ by the end of the cycle holding that dot, and each
//!    instruction polls it at the end of its penultimate cycle (NESdev "CPU interrupts"): an
//!    IRQ raised on an instruction's last cycle waits for the next instruction's poll;
//! 4. the interrupt sequence then takes 7 cycles before the handler's first opcode.
//!
//! The program idles in a loop of NOPs and a JMP, so the rise lands on every dot of a CPU
//! cycle and on first, middle and last cycles of instructions across the frames; every IRQ
//! must arrive on exactly the instruction the model predicts, with lazy and eager PPU alike.

use nes::Nes;
use nes_workspace_tests::{ines_image, nrom_program};

/// The IRQ handler's address.
const HANDLER: u16 = 0x9000;
/// The idle loop's first instruction.
const LOOP: u16 = 0x8026;
/// The address of the `STA $C001` that requests the first reload.
const RELOAD_WRITE: u16 = 0x801F;
/// Dot of each rendering line on which the first sprite pattern fetch raises A12.
const A12_RISE_DOT: u32 = 261;
const DOTS_PER_LINE: u32 = 341;
const DOTS_PER_CPU_CYCLE: u32 = 3;
const INTERRUPT_SEQUENCE_CYCLES: u32 = 7;

/// An MMC3 (mapper 4) image: wait for the PPU, sprites at $1000, rendering on, IRQ latch
/// `latch`, reload, enable, CLI, then idle. The handler acknowledges and re-enables.
fn mmc3_irq_rom(latch: u8) -> Vec<u8> {
    #[rustfmt::skip]
    let mut code = vec![
        0x78,             // SEI
        0xA9, 0x40,       // LDA #$40
        0x8D, 0x17, 0x40, // STA $4017: no APU frame IRQ
        0x2C, 0x02, 0x20, // BIT $2002
        0x10, 0xFB,       // BPL (wait for VBlank)
        0x2C, 0x02, 0x20, // BIT $2002
        0x10, 0xFB,       // BPL: the PPU's warm-up is over
        0xA9, 0x08,       // LDA #$08
        0x8D, 0x00, 0x20, // STA $2000: 8x8 sprites at $1000, background at $0000
        0xA9, 0x18,       // LDA #$18
        0x8D, 0x01, 0x20, // STA $2001: background and sprites on
        0xA9, latch,      // LDA #latch
        0x8D, 0x00, 0xC0, // STA $C000: latch
        0x8D, 0x01, 0xC0, // STA $C001: reload on the next clock
        0x8D, 0x01, 0xE0, // STA $E001: IRQ enabled
        0x58,             // CLI
    ];
    assert_eq!(0x8000 + code.len() as u16, LOOP);
    code.extend_from_slice(&[0xEA; 9]); // NOP x 9
    code.extend_from_slice(&[0x4C, 0x26, 0x80]); // JMP LOOP
    let mut prg = nrom_program(&code);
    let handler = usize::from(HANDLER - 0x8000);
    #[rustfmt::skip]
    prg[handler..handler + 7].copy_from_slice(&[
        0x8D, 0x00, 0xE0, // STA $E000: acknowledge
        0x8D, 0x01, 0xE0, // STA $E001: enable again
        0x40,             // RTI
    ]);
    prg[0x7FFE..0x8000].copy_from_slice(&HANDLER.to_le_bytes());
    // MMC3 at power-on maps PRG banks 0, 1, 2 (second last) and 3 (last): the NROM layout.
    ines_image(4, &prg, &[0; 0x2000])
}

/// The MMC3B counter as NESdev "MMC3" describes it.
struct CounterModel {
    latch: u8,
    counter: u8,
    reload: bool,
}

impl CounterModel {
    /// Clocks the counter; true when the IRQ is raised.
    fn clock(&mut self) -> bool {
        if self.counter == 0 || self.reload {
            self.counter = self.latch;
        } else {
            self.counter -= 1;
        }
        self.reload = false;
        self.counter == 0
    }
}

/// One `step_instruction`: the dots it ran, as [start, end) within the frame (scanline *
/// 341 + dot), and where the CPU was before and after.
struct Step {
    start: u32,
    end: u32,
    pc_before: u16,
    pc_after: u16,
}

fn frame_dot(position: (u16, u16)) -> u32 {
    u32::from(position.0) * DOTS_PER_LINE + u32::from(position.1)
}

fn is_rendering_line(line: u32) -> bool {
    line <= 239 || line == 261
}

/// What the chain looked like over the run: IRQs checked, and how the rises fell.
#[derive(Default)]
struct Coverage {
    irqs: usize,
    /// IRQs per dot (0-2) of the CPU cycle the rise fell on.
    dot_in_cycle: [usize; 3],
    /// IRQs raised on an instruction's last cycle, which wait one instruction more.
    missed_poll: usize,
}

fn check_chain(latch: u8, eager: bool, frames: u64) -> Coverage {
    let mut nes = Nes::from_ines(&mmc3_irq_rom(latch)).unwrap();
    nes.set_eager_ppu(eager);
    let mut steps: Vec<Step> = Vec::new();
    while nes.frame_count() < frames {
        let start = frame_dot(nes.ppu_position());
        let pc_before = nes.cpu_registers().pc;
        nes.step_instruction();
        let end = frame_dot(nes.ppu_position());
        steps.push(Step {
            start,
            end,
            pc_before,
            pc_after: nes.cpu_registers().pc,
        });
    }
    let first = steps
        .iter()
        .position(|s| s.pc_before == RELOAD_WRITE)
        .expect("the program requests a reload")
        + 1;
    let mut model = CounterModel {
        latch,
        counter: 0,
        reload: true,
    };
    let mut coverage = Coverage::default();
    // The step where the model expects the IRQ sequence, checked when reached.
    let mut expected_entry: Option<usize> = None;
    for (index, step) in steps.iter().enumerate().skip(first) {
        let entered = step.pc_after == HANDLER && step.pc_before != HANDLER;
        if let Some(expected) = expected_entry {
            if index == expected {
                assert!(
                    entered,
                    "latch {latch}, eager {eager}: the IRQ sequence was due at step {index} \
                     (from ${:04X}, dots {}..{}) but the CPU went to ${:04X}",
                    step.pc_before, step.start, step.end, step.pc_after
                );
                assert_eq!(
                    step.end - step.start,
                    INTERRUPT_SEQUENCE_CYCLES * DOTS_PER_CPU_CYCLE,
                    "the IRQ sequence takes 7 cycles"
                );
                expected_entry = None;
                continue;
            }
        }
        assert!(
            !entered,
            "latch {latch}, eager {eager}: unexpected IRQ at step {index} (dots {}..{})",
            step.start, step.end
        );
        if step.end < step.start {
            continue; // the frame wrapped inside the step (at dot 340 of the pre-render line)
        }
        // Dot 261 of a rendering line inside this step's dots?
        let line = step.start / DOTS_PER_LINE;
        for line in [line, line + 1] {
            let rise = line * DOTS_PER_LINE + A12_RISE_DOT;
            if !is_rendering_line(line) || rise < step.start || rise >= step.end {
                continue;
            }
            if !model.clock() {
                continue;
            }
            let cycles = (step.end - step.start) / DOTS_PER_CPU_CYCLE;
            let cycle = (rise - step.start) / DOTS_PER_CPU_CYCLE;
            // The poll ends the penultimate cycle: a rise on the last one is seen by the
            // next instruction's poll.
            let seen_now = cycle + 2 <= cycles;
            coverage.irqs += 1;
            coverage.dot_in_cycle[((rise - step.start) % DOTS_PER_CPU_CYCLE) as usize] += 1;
            if !seen_now {
                coverage.missed_poll += 1;
            }
            assert!(expected_entry.is_none(), "two IRQs pending at once");
            expected_entry = Some(index + if seen_now { 1 } else { 2 });
        }
    }
    coverage
}

#[test]
fn each_irq_arrives_where_the_documented_chain_puts_it() {
    for eager in [false, true] {
        for latch in [7, 30, 100] {
            let coverage = check_chain(latch, eager, 30);
            let per_frame = 241 / (usize::from(latch) + 1);
            assert!(
                coverage.irqs >= 25 * per_frame,
                "latch {latch}: only {} IRQs checked",
                coverage.irqs
            );
            if latch == 7 {
                // The run covers every phase the chain distinguishes.
                assert!(
                    coverage.dot_in_cycle.iter().all(|&n| n > 0),
                    "rise dots within the CPU cycle: {:?}",
                    coverage.dot_in_cycle
                );
                assert!(coverage.missed_poll > 0 && coverage.missed_poll < coverage.irqs);
            }
        }
    }
}
