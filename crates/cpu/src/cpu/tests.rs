//! Power-on and reset sequences, interrupt sequences, interrupt latency and hijacking.

use crate::cpu::{Cpu, Status};
use crate::test_bus::{cpu_at, TestBus, R, W};

const IRQ_HANDLER: u16 = 0x0400;
const NMI_HANDLER: u16 = 0x0500;
const NOP: u8 = 0xEA;

/// `program` at $0200, NOP sleds at $0300 and at the IRQ and NMI handlers.
fn interrupt_bus(program: &[u8]) -> TestBus {
    let mut bus = TestBus::with_program(0x0200, program);
    bus.load(0x0300, &[NOP; 16]);
    bus.load(IRQ_HANDLER, &[NOP; 16]);
    bus.load(NMI_HANDLER, &[NOP; 16]);
    bus.set_vector(0xFFFE, IRQ_HANDLER);
    bus.set_vector(0xFFFA, NMI_HANDLER);
    bus
}

/// The return address and P an interrupt sequence pushed from S = $FD.
fn pushed_frame(bus: &TestBus) -> (u16, u8) {
    let pc = u16::from_le_bytes([bus.memory[0x01FC], bus.memory[0x01FD]]);
    (pc, bus.memory[0x01FB])
}

#[test]
fn power_on_runs_the_reset_sequence() {
    let mut bus = TestBus::new();
    bus.set_vector(0xFFFC, 0x8000);
    let mut cpu = Cpu::new();
    cpu.power_on(&mut bus);
    assert_eq!(
        bus.log,
        vec![
            R(0x0000, 0),
            R(0x0000, 0),
            R(0x0100, 0),
            R(0x01FF, 0),
            R(0x01FE, 0),
            R(0xFFFC, 0x00),
            R(0xFFFD, 0x80),
        ]
    );
    assert_eq!(
        (cpu.a, cpu.x, cpu.y, cpu.s, cpu.pc),
        (0, 0, 0, 0xFD, 0x8000)
    );
    assert_eq!(cpu.p.bits(), 0x34);
    assert_eq!(cpu.cycles(), 7);
    assert!(!cpu.jammed());
}

#[test]
fn power_on_forgets_previous_state() {
    let mut bus = TestBus::new();
    let mut cpu = cpu_at(0x1234);
    cpu.a = 9;
    cpu.set_cycles(1000);
    cpu.power_on(&mut bus);
    assert_eq!((cpu.a, cpu.s, cpu.cycles()), (0, 0xFD, 7));
}

#[test]
fn reset_reads_instead_of_pushing_and_keeps_registers() {
    let mut bus = TestBus::new();
    bus.set_vector(0xFFFC, 0x9000);
    let mut cpu = cpu_at(0x0300);
    cpu.a = 1;
    cpu.x = 2;
    cpu.y = 3;
    cpu.s = 0xF0;
    cpu.p = Status::U | Status::C | Status::N;
    cpu.set_cycles(100);
    cpu.reset(&mut bus);
    assert_eq!(
        bus.log,
        vec![
            R(0x0300, 0),
            R(0x0300, 0),
            R(0x01F0, 0),
            R(0x01EF, 0),
            R(0x01EE, 0),
            R(0xFFFC, 0x00),
            R(0xFFFD, 0x90),
        ]
    );
    assert_eq!(
        (cpu.a, cpu.x, cpu.y, cpu.s, cpu.pc),
        (1, 2, 3, 0xED, 0x9000)
    );
    assert_eq!(cpu.p, Status::U | Status::C | Status::N | Status::I);
    assert_eq!(cpu.cycles(), 107);
}

#[test]
fn irq_sequence_accesses_and_pushed_flags() {
    let mut bus = interrupt_bus(&[NOP, NOP]);
    bus.irq_asserted.push(0..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.p = Status::U | Status::C;
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(
        bus.log,
        vec![
            R(0x0200, NOP),
            R(0x0201, NOP),
            R(0x0201, NOP),
            R(0x0201, NOP),
            W(0x01FD, 0x02),
            W(0x01FC, 0x01),
            W(0x01FB, 0x21),
            R(0xFFFE, 0x00),
            R(0xFFFF, 0x04),
        ]
    );
    assert_eq!(cpu.pc, IRQ_HANDLER);
    assert!(cpu.p.contains(Status::I));
    // I is now set: the held IRQ line is ignored.
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, IRQ_HANDLER + 2);
}

#[test]
fn irq_is_polled_at_the_end_of_the_penultimate_cycle() {
    // Asserted by the end of the NOP's first cycle: taken right after it.
    let mut bus = interrupt_bus(&[NOP, NOP, NOP]);
    bus.irq_asserted.push(1..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert!(cpu.interrupt_due);

    // Asserted one cycle later: the first NOP misses it, the second takes it.
    let mut bus = interrupt_bus(&[NOP, NOP, NOP]);
    bus.irq_asserted.push(2..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert!(!cpu.interrupt_due);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, IRQ_HANDLER);
    assert_eq!(pushed_frame(&bus).0, 0x0202);
}

#[test]
fn irq_dropped_before_the_poll_is_not_taken() {
    let mut bus = interrupt_bus(&[NOP, NOP, NOP]);
    bus.irq_asserted.push(2..3);
    let mut cpu = cpu_at(0x0200);
    for _ in 0..3 {
        cpu.step(&mut bus);
    }
    assert_eq!(cpu.pc, 0x0203);
}

#[test]
fn cli_lets_an_irq_in_only_after_the_next_instruction() {
    let mut bus = interrupt_bus(&[0x58, NOP, NOP]);
    bus.irq_asserted.push(0..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.p = Status::U | Status::I;
    cpu.step(&mut bus);
    assert!(!cpu.interrupt_due);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, IRQ_HANDLER);
    assert_eq!(pushed_frame(&bus), (0x0202, 0x20));
}

#[test]
fn sei_still_takes_an_irq_pending_at_its_poll() {
    let mut bus = interrupt_bus(&[0x78, NOP]);
    bus.irq_asserted.push(0..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, IRQ_HANDLER);
    // The pushed P already has I set by SEI.
    assert_eq!(pushed_frame(&bus), (0x0201, 0x24));
}

#[test]
fn plp_changes_i_after_its_poll() {
    let mut bus = interrupt_bus(&[0x28, NOP, NOP]);
    bus.irq_asserted.push(0..usize::MAX);
    bus.memory[0x01FD] = 0x00;
    let mut cpu = cpu_at(0x0200);
    cpu.s = 0xFC;
    cpu.p = Status::U | Status::I;
    cpu.step(&mut bus);
    assert!(!cpu.interrupt_due);
    assert!(!cpu.p.contains(Status::I));
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, IRQ_HANDLER);
    assert_eq!(pushed_frame(&bus).0, 0x0202);
}

#[test]
fn rti_restores_i_before_its_poll() {
    let mut bus = interrupt_bus(&[0x40]);
    bus.irq_asserted.push(0..usize::MAX);
    bus.load(0x01FB, &[0x00, 0x00, 0x03]);
    let mut cpu = cpu_at(0x0200);
    cpu.s = 0xFA;
    cpu.p = Status::U | Status::I;
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, 0x0300);
    assert!(cpu.interrupt_due);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, IRQ_HANDLER);
    assert_eq!(pushed_frame(&bus), (0x0300, 0x20));
}

#[test]
fn taken_branch_without_page_cross_delays_an_irq() {
    // IRQ seen at the end of cycle 2: a 3-cycle LDA zp takes it right after...
    let mut bus = interrupt_bus(&[0xA5, 0x10, NOP]);
    bus.irq_asserted.push(2..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert!(cpu.interrupt_due);

    // ...but a taken branch does not poll there, so one more instruction runs first.
    let mut bus = interrupt_bus(&[0xD0, 0x00, NOP, NOP]);
    bus.irq_asserted.push(2..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, 0x0202);
    assert!(!cpu.interrupt_due);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, IRQ_HANDLER);
    assert_eq!(pushed_frame(&bus).0, 0x0203);
}

#[test]
fn branch_polls_before_cycles_two_and_four() {
    // Seen only by the first poll (end of cycle 1): still taken after a 3-cycle branch.
    let mut bus = interrupt_bus(&[0xD0, 0x00]);
    bus.irq_asserted.push(1..2);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert!(cpu.interrupt_due);

    // Page-crossing branch: the poll before cycle 4 sees an IRQ raised at the end of cycle 3.
    let mut bus = interrupt_bus(&[0xF0, 0x80]);
    bus.irq_asserted.push(3..usize::MAX);
    bus.load(0x0182, &[NOP; 4]);
    let mut cpu = cpu_at(0x0200);
    cpu.p.insert(Status::Z);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, 0x0182);
    assert!(cpu.interrupt_due);

    // Page-crossing branch: positive first poll, line gone by the second: still taken.
    let mut bus = interrupt_bus(&[0xF0, 0x80]);
    bus.irq_asserted.push(1..2);
    let mut cpu = cpu_at(0x0200);
    cpu.p.insert(Status::Z);
    cpu.step(&mut bus);
    assert!(cpu.interrupt_due);

    // Not taken: an ordinary 2-cycle instruction.
    let mut bus = interrupt_bus(&[0xF0, 0x80]);
    bus.irq_asserted.push(1..2);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, 0x0202);
    assert!(cpu.interrupt_due);
}

#[test]
fn nmi_is_edge_triggered_and_pushes_b_clear() {
    let mut bus = interrupt_bus(&[NOP, NOP, NOP]);
    bus.nmi_asserted.push(1..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.p = Status::U | Status::I;
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, NMI_HANDLER);
    assert_eq!(pushed_frame(&bus), (0x0201, 0x24));
    // The line stays asserted: no new edge, no second NMI.
    for _ in 0..4 {
        cpu.step(&mut bus);
    }
    assert_eq!(cpu.pc, NMI_HANDLER + 4);
}

#[test]
fn nmi_pulse_between_polls_is_remembered() {
    let mut bus = interrupt_bus(&[NOP, NOP, NOP]);
    bus.nmi_asserted.push(2..3);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert!(!cpu.interrupt_due);
    cpu.step(&mut bus);
    assert!(cpu.interrupt_due);
}

#[test]
fn nmi_early_in_brk_hijacks_the_vector() {
    let mut bus = interrupt_bus(&[0x00, 0xFF]);
    // Edge seen at the end of BRK's 4th cycle (the PCL push).
    bus.nmi_asserted.push(4..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, NMI_HANDLER);
    // BRK's B flag is still pushed, and the return address skips the padding byte.
    assert_eq!(pushed_frame(&bus), (0x0202, 0x30));
    assert!(!cpu.nmi_pending);
    // The handler's first instruction runs; no second NMI.
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, NMI_HANDLER + 2);
}

#[test]
fn nmi_late_in_brk_runs_after_the_first_handler_instruction() {
    let mut bus = interrupt_bus(&[0x00, 0xFF]);
    bus.nmi_asserted.push(5..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, IRQ_HANDLER);
    assert!(!cpu.interrupt_due);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, IRQ_HANDLER + 1);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, NMI_HANDLER);
    assert_eq!(bus.memory[0x01F9], IRQ_HANDLER.to_le_bytes()[0] + 1);
}

#[test]
fn nmi_hijacks_an_irq_sequence() {
    let mut bus = interrupt_bus(&[NOP, NOP]);
    bus.irq_asserted.push(0..usize::MAX);
    // The IRQ sequence runs on accesses 2..9; its 4th cycle ends with 6 accesses logged.
    bus.nmi_asserted.push(6..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, NMI_HANDLER);
    assert_eq!(pushed_frame(&bus), (0x0201, 0x20));

    // One cycle later the IRQ completes; the NMI follows after one handler instruction.
    let mut bus = interrupt_bus(&[NOP, NOP]);
    bus.irq_asserted.push(0..usize::MAX);
    bus.nmi_asserted.push(7..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, IRQ_HANDLER);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, NMI_HANDLER);
}

#[test]
fn an_interrupt_at_a_boundary_takes_seven_cycles() {
    let mut bus = interrupt_bus(&[NOP]);
    bus.nmi_asserted.push(1..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    let before = cpu.cycles();
    cpu.step(&mut bus);
    assert_eq!(cpu.cycles() - before, 7);
}
