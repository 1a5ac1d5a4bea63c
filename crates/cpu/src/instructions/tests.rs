//! Per-cycle access sequences of every addressing mode, cycle counts of all 256 opcodes, and
//! the results and flags of the official and unofficial operations.

use crate::cpu::{Cpu, Status};
use crate::test_bus::{cpu_at, Access, TestBus, R, W};

const ORIGIN: u16 = 0x0200;

/// Run one instruction placed at $0200, after `setup` prepared registers and memory.
fn run(program: &[u8], setup: impl FnOnce(&mut Cpu, &mut TestBus)) -> (Cpu, TestBus) {
    let mut bus = TestBus::with_program(ORIGIN, program);
    let mut cpu = cpu_at(ORIGIN);
    setup(&mut cpu, &mut bus);
    cpu.step(&mut bus);
    (cpu, bus)
}

fn accesses(program: &[u8], setup: impl FnOnce(&mut Cpu, &mut TestBus)) -> Vec<Access> {
    run(program, setup).1.log
}

// ----- per-cycle access sequences ------------------------------------------------------------

#[test]
fn implied_and_accumulator_read_the_next_byte_on_cycle_two() {
    for opcode in [0x18, 0x0A, 0xE8, 0xAA, 0x9A, 0xEA, 0x1A] {
        let log = accesses(&[opcode, 0x77], |_, _| {});
        assert_eq!(
            log,
            vec![R(0x0200, opcode), R(0x0201, 0x77)],
            "opcode {opcode:02X}"
        );
    }
}

#[test]
fn immediate_and_zero_page() {
    let log = accesses(&[0xA9, 0x42], |_, _| {});
    assert_eq!(log, vec![R(0x0200, 0xA9), R(0x0201, 0x42)]);

    let log = accesses(&[0xA5, 0x10], |_, bus| bus.memory[0x10] = 0x33);
    assert_eq!(log, vec![R(0x0200, 0xA5), R(0x0201, 0x10), R(0x0010, 0x33)]);

    let log = accesses(&[0x85, 0x10], |cpu, _| cpu.a = 0x99);
    assert_eq!(log, vec![R(0x0200, 0x85), R(0x0201, 0x10), W(0x0010, 0x99)]);

    let log = accesses(&[0xE6, 0x10], |_, bus| bus.memory[0x10] = 0x7F);
    assert_eq!(
        log,
        vec![
            R(0x0200, 0xE6),
            R(0x0201, 0x10),
            R(0x0010, 0x7F),
            W(0x0010, 0x7F),
            W(0x0010, 0x80),
        ]
    );
}

#[test]
fn zero_page_indexed_reads_the_base_then_wraps_in_page_zero() {
    let log = accesses(&[0xB5, 0xF0], |cpu, bus| {
        cpu.x = 0x20;
        bus.memory[0xF0] = 0x01;
        bus.memory[0x10] = 0x55;
    });
    assert_eq!(
        log,
        vec![
            R(0x0200, 0xB5),
            R(0x0201, 0xF0),
            R(0x00F0, 0x01),
            R(0x0010, 0x55)
        ]
    );

    let log = accesses(&[0x96, 0xFF], |cpu, _| {
        cpu.x = 0xAB;
        cpu.y = 0x02;
    });
    assert_eq!(
        log,
        vec![
            R(0x0200, 0x96),
            R(0x0201, 0xFF),
            R(0x00FF, 0x00),
            W(0x0001, 0xAB)
        ]
    );

    let log = accesses(&[0xF6, 0x80], |cpu, bus| {
        cpu.x = 0x01;
        bus.memory[0x81] = 0x10;
    });
    assert_eq!(
        log,
        vec![
            R(0x0200, 0xF6),
            R(0x0201, 0x80),
            R(0x0080, 0x00),
            R(0x0081, 0x10),
            W(0x0081, 0x10),
            W(0x0081, 0x11),
        ]
    );
}

#[test]
fn absolute_modes() {
    let log = accesses(&[0xAD, 0x34, 0x12], |_, bus| bus.memory[0x1234] = 9);
    assert_eq!(
        log,
        vec![
            R(0x0200, 0xAD),
            R(0x0201, 0x34),
            R(0x0202, 0x12),
            R(0x1234, 9)
        ]
    );

    let log = accesses(&[0x8E, 0x34, 0x12], |cpu, _| cpu.x = 5);
    assert_eq!(
        log,
        vec![
            R(0x0200, 0x8E),
            R(0x0201, 0x34),
            R(0x0202, 0x12),
            W(0x1234, 5)
        ]
    );

    let log = accesses(&[0x4E, 0x34, 0x12], |_, bus| bus.memory[0x1234] = 3);
    assert_eq!(
        log,
        vec![
            R(0x0200, 0x4E),
            R(0x0201, 0x34),
            R(0x0202, 0x12),
            R(0x1234, 3),
            W(0x1234, 3),
            W(0x1234, 1),
        ]
    );
}

#[test]
fn absolute_indexed_read_dummy_reads_only_on_page_cross() {
    // LDA $0310,X with X=5: no crossing, 4 cycles.
    let log = accesses(&[0xBD, 0x10, 0x03], |cpu, bus| {
        cpu.x = 5;
        bus.memory[0x0315] = 0x42;
    });
    assert_eq!(
        log,
        vec![
            R(0x0200, 0xBD),
            R(0x0201, 0x10),
            R(0x0202, 0x03),
            R(0x0315, 0x42)
        ]
    );

    // LDA $03F0,Y with Y=$20: reads the unfixed $0310 first.
    let log = accesses(&[0xB9, 0xF0, 0x03], |cpu, bus| {
        cpu.y = 0x20;
        bus.memory[0x0310] = 0xEE;
        bus.memory[0x0410] = 0x42;
    });
    assert_eq!(
        log,
        vec![
            R(0x0200, 0xB9),
            R(0x0201, 0xF0),
            R(0x0202, 0x03),
            R(0x0310, 0xEE),
            R(0x0410, 0x42),
        ]
    );

    // LDA $FFFF,X with X=1 wraps to $0000 (unfixed address $FF00).
    let log = accesses(&[0xBD, 0xFF, 0xFF], |cpu, bus| {
        cpu.x = 1;
        bus.memory[0] = 0x5A;
    });
    assert_eq!(log[3..], [R(0xFF00, 0), R(0x0000, 0x5A)]);
}

#[test]
fn absolute_indexed_store_always_dummy_reads() {
    let log = accesses(&[0x9D, 0x10, 0x03], |cpu, bus| {
        cpu.x = 5;
        cpu.a = 0x77;
        bus.memory[0x0315] = 0x11;
    });
    assert_eq!(
        log,
        vec![
            R(0x0200, 0x9D),
            R(0x0201, 0x10),
            R(0x0202, 0x03),
            R(0x0315, 0x11),
            W(0x0315, 0x77),
        ]
    );

    let log = accesses(&[0x99, 0xF0, 0x03], |cpu, _| {
        cpu.y = 0x20;
        cpu.a = 0x77;
    });
    assert_eq!(log[3..], [R(0x0310, 0), W(0x0410, 0x77)]);
}

#[test]
fn absolute_indexed_rmw_always_dummy_reads() {
    let log = accesses(&[0x1E, 0x10, 0x03], |cpu, bus| {
        cpu.x = 5;
        bus.memory[0x0315] = 0x41;
    });
    assert_eq!(
        log,
        vec![
            R(0x0200, 0x1E),
            R(0x0201, 0x10),
            R(0x0202, 0x03),
            R(0x0315, 0x41),
            R(0x0315, 0x41),
            W(0x0315, 0x41),
            W(0x0315, 0x82),
        ]
    );

    let log = accesses(&[0xFE, 0xF0, 0x03], |cpu, bus| {
        cpu.x = 0x20;
        bus.memory[0x0410] = 0x09;
    });
    assert_eq!(
        log[3..],
        [
            R(0x0310, 0),
            R(0x0410, 0x09),
            W(0x0410, 0x09),
            W(0x0410, 0x0A)
        ]
    );

    // Unofficial RMW with abs,Y: DCP $03F0,Y crossing.
    let log = accesses(&[0xDB, 0xF0, 0x03], |cpu, bus| {
        cpu.y = 0x20;
        bus.memory[0x0410] = 0x09;
    });
    assert_eq!(
        log[3..],
        [
            R(0x0310, 0),
            R(0x0410, 0x09),
            W(0x0410, 0x09),
            W(0x0410, 0x08)
        ]
    );
}

#[test]
fn indexed_indirect_x() {
    // LDA ($FE,X) with X=1: pointer $FF, high byte from $00 (zero-page wrap).
    let log = accesses(&[0xA1, 0xFE], |cpu, bus| {
        cpu.x = 1;
        bus.memory[0xFE] = 0x99;
        bus.memory[0xFF] = 0x34;
        bus.memory[0x00] = 0x12;
        bus.memory[0x1234] = 0x56;
    });
    assert_eq!(
        log,
        vec![
            R(0x0200, 0xA1),
            R(0x0201, 0xFE),
            R(0x00FE, 0x99),
            R(0x00FF, 0x34),
            R(0x0000, 0x12),
            R(0x1234, 0x56),
        ]
    );

    // STA ($10,X): no extra dummy read.
    let log = accesses(&[0x81, 0x10], |cpu, bus| {
        cpu.x = 2;
        cpu.a = 0xAA;
        bus.memory[0x12] = 0x00;
        bus.memory[0x13] = 0x05;
    });
    assert_eq!(
        log,
        vec![
            R(0x0200, 0x81),
            R(0x0201, 0x10),
            R(0x0010, 0x00),
            R(0x0012, 0x00),
            R(0x0013, 0x05),
            W(0x0500, 0xAA),
        ]
    );

    // SLO ($10,X): 8 cycles.
    let log = accesses(&[0x03, 0x10], |cpu, bus| {
        cpu.x = 2;
        bus.memory[0x12] = 0x00;
        bus.memory[0x13] = 0x05;
        bus.memory[0x0500] = 0x81;
    });
    assert_eq!(
        log[5..],
        [R(0x0500, 0x81), W(0x0500, 0x81), W(0x0500, 0x02)]
    );
}

#[test]
fn indirect_indexed_y() {
    // LDA ($FF),Y: pointer bytes from $FF and $00; no crossing: 5 cycles.
    let log = accesses(&[0xB1, 0xFF], |cpu, bus| {
        cpu.y = 0x10;
        bus.memory[0xFF] = 0x00;
        bus.memory[0x00] = 0x05;
        bus.memory[0x0510] = 0x66;
    });
    assert_eq!(
        log,
        vec![
            R(0x0200, 0xB1),
            R(0x0201, 0xFF),
            R(0x00FF, 0x00),
            R(0x0000, 0x05),
            R(0x0510, 0x66),
        ]
    );

    // Crossing: the unfixed address is read first.
    let log = accesses(&[0xB1, 0x10], |cpu, bus| {
        cpu.y = 0x20;
        bus.memory[0x10] = 0xF0;
        bus.memory[0x11] = 0x05;
    });
    assert_eq!(log[4..], [R(0x0510, 0), R(0x0610, 0)]);

    // STA ($10),Y always reads the unfixed address.
    let log = accesses(&[0x91, 0x10], |cpu, bus| {
        cpu.y = 0x01;
        cpu.a = 0x3C;
        bus.memory[0x10] = 0x00;
        bus.memory[0x11] = 0x05;
    });
    assert_eq!(log[4..], [R(0x0501, 0), W(0x0501, 0x3C)]);

    // ISC ($10),Y: 8 cycles, always with the dummy read.
    let log = accesses(&[0xF3, 0x10], |cpu, bus| {
        cpu.y = 0x01;
        bus.memory[0x10] = 0x00;
        bus.memory[0x11] = 0x05;
        bus.memory[0x0501] = 0x10;
    });
    assert_eq!(
        log[4..],
        [
            R(0x0501, 0x10),
            R(0x0501, 0x10),
            W(0x0501, 0x10),
            W(0x0501, 0x11)
        ]
    );
}

#[test]
fn indexed_rmw_and_store_variants() {
    // RRA ($10),Y crossing a page: dummy read of the unfixed address, then read/write/write.
    let log = accesses(&[0x73, 0x10], |cpu, bus| {
        cpu.y = 0x20;
        bus.memory[0x10] = 0xF0;
        bus.memory[0x11] = 0x05;
        bus.memory[0x0610] = 0x02;
    });
    assert_eq!(
        log[4..],
        [
            R(0x0510, 0),
            R(0x0610, 0x02),
            W(0x0610, 0x02),
            W(0x0610, 0x01)
        ]
    );

    // SLO $0310,Y without crossing still spends the dummy read.
    let log = accesses(&[0x1B, 0x10, 0x03], |cpu, bus| {
        cpu.y = 0x01;
        bus.memory[0x0311] = 0x40;
    });
    assert_eq!(
        log[3..],
        [
            R(0x0311, 0x40),
            R(0x0311, 0x40),
            W(0x0311, 0x40),
            W(0x0311, 0x80)
        ]
    );

    // STA $0310,Y without crossing.
    let log = accesses(&[0x99, 0x10, 0x03], |cpu, _| {
        cpu.y = 0x01;
        cpu.a = 0x12;
    });
    assert_eq!(log[3..], [R(0x0311, 0), W(0x0311, 0x12)]);

    // STA ($10),Y crossing.
    let log = accesses(&[0x91, 0x10], |cpu, bus| {
        cpu.y = 0x20;
        cpu.a = 0x34;
        bus.memory[0x10] = 0xF0;
        bus.memory[0x11] = 0x05;
    });
    assert_eq!(log[4..], [R(0x0510, 0), W(0x0610, 0x34)]);

    // LDA ($10),Y crossing from $FFxx wraps to page $00.
    let log = accesses(&[0xB1, 0x10], |cpu, bus| {
        cpu.y = 0x20;
        bus.memory[0x10] = 0xF0;
        bus.memory[0x11] = 0xFF;
        bus.memory[0x0010] = 0xF0;
    });
    assert_eq!(log[4..], [R(0xFF10, 0), R(0x0010, 0xF0)]);
}

#[test]
fn jmp_absolute_and_indirect_with_page_wrap_bug() {
    let (cpu, bus) = run(&[0x4C, 0x34, 0x12], |_, _| {});
    assert_eq!(cpu.pc, 0x1234);
    assert_eq!(bus.log.len(), 3);

    // JMP ($02FF): the high byte comes from $0200, not $0300.
    let (cpu, bus) = run(&[0x6C, 0xFF, 0x02], |_, bus| {
        bus.memory[0x02FF] = 0x34;
        bus.memory[0x0300] = 0x99;
    });
    assert_eq!(
        bus.log,
        vec![
            R(0x0200, 0x6C),
            R(0x0201, 0xFF),
            R(0x0202, 0x02),
            R(0x02FF, 0x34),
            R(0x0200, 0x6C),
        ]
    );
    assert_eq!(cpu.pc, 0x6C34);
}

#[test]
fn jsr_pushes_between_operand_fetches() {
    let (cpu, bus) = run(&[0x20, 0x00, 0x90], |_, _| {});
    assert_eq!(
        bus.log,
        vec![
            R(0x0200, 0x20),
            R(0x0201, 0x00),
            R(0x01FD, 0x00),
            W(0x01FD, 0x02),
            W(0x01FC, 0x02),
            R(0x0202, 0x90),
        ]
    );
    assert_eq!(cpu.pc, 0x9000);
    assert_eq!(cpu.s, 0xFB);
}

#[test]
fn rts_reads_the_return_address_then_increments() {
    let (cpu, bus) = run(&[0x60, 0xAA], |cpu, bus| {
        cpu.s = 0xFB;
        bus.memory[0x01FC] = 0x02;
        bus.memory[0x01FD] = 0x03;
    });
    assert_eq!(
        bus.log,
        vec![
            R(0x0200, 0x60),
            R(0x0201, 0xAA),
            R(0x01FB, 0x00),
            R(0x01FC, 0x02),
            R(0x01FD, 0x03),
            R(0x0302, 0x00),
        ]
    );
    assert_eq!(cpu.pc, 0x0303);
    assert_eq!(cpu.s, 0xFD);
}

#[test]
fn rti_pulls_p_then_pc() {
    let (cpu, bus) = run(&[0x40, 0xAA], |cpu, bus| {
        cpu.s = 0xFA;
        bus.memory[0x01FB] = 0xFF;
        bus.memory[0x01FC] = 0x34;
        bus.memory[0x01FD] = 0x12;
    });
    assert_eq!(
        bus.log,
        vec![
            R(0x0200, 0x40),
            R(0x0201, 0xAA),
            R(0x01FA, 0x00),
            R(0x01FB, 0xFF),
            R(0x01FC, 0x34),
            R(0x01FD, 0x12),
        ]
    );
    assert_eq!(cpu.pc, 0x1234);
    assert_eq!(cpu.s, 0xFD);
    // B has no storage; U always reads set.
    assert_eq!(cpu.p.bits(), 0xEF);
}

#[test]
fn brk_pushes_pc_plus_two_and_p_with_b() {
    let (cpu, bus) = run(&[0x00, 0xAA], |cpu, bus| {
        cpu.p = Status::U | Status::C;
        bus.set_vector(0xFFFE, 0x8000);
    });
    assert_eq!(
        bus.log,
        vec![
            R(0x0200, 0x00),
            R(0x0201, 0xAA),
            W(0x01FD, 0x02),
            W(0x01FC, 0x02),
            W(0x01FB, 0x31),
            R(0xFFFE, 0x00),
            R(0xFFFF, 0x80),
        ]
    );
    assert_eq!(cpu.pc, 0x8000);
    assert!(cpu.p.contains(Status::I));
}

#[test]
fn stack_instructions() {
    let log = accesses(&[0x48, 0xAA], |cpu, _| cpu.a = 0x5A);
    assert_eq!(log, vec![R(0x0200, 0x48), R(0x0201, 0xAA), W(0x01FD, 0x5A)]);

    let log = accesses(&[0x08, 0xAA], |cpu, _| cpu.p = Status::U | Status::N);
    assert_eq!(log, vec![R(0x0200, 0x08), R(0x0201, 0xAA), W(0x01FD, 0xB0)]);

    let (cpu, bus) = run(&[0x68, 0xAA], |cpu, bus| {
        cpu.s = 0xFC;
        bus.memory[0x01FD] = 0x80;
    });
    assert_eq!(
        bus.log,
        vec![
            R(0x0200, 0x68),
            R(0x0201, 0xAA),
            R(0x01FC, 0),
            R(0x01FD, 0x80)
        ]
    );
    assert_eq!(cpu.a, 0x80);
    assert!(cpu.p.contains(Status::N));
    assert_eq!(cpu.s, 0xFD);

    let (cpu, bus) = run(&[0x28, 0xAA], |cpu, bus| {
        cpu.s = 0xFC;
        bus.memory[0x01FD] = 0xDB;
    });
    assert_eq!(bus.log.len(), 4);
    assert_eq!(cpu.p.bits(), 0xEB);
}

#[test]
fn branches_not_taken_taken_and_page_crossing() {
    // BNE with Z set: not taken, 2 cycles.
    let (cpu, bus) = run(&[0xD0, 0x10], |cpu, _| cpu.p.insert(Status::Z));
    assert_eq!(bus.log, vec![R(0x0200, 0xD0), R(0x0201, 0x10)]);
    assert_eq!(cpu.pc, 0x0202);

    // Taken, same page: reads the next opcode's address.
    let (cpu, bus) = run(&[0xD0, 0x10], |_, _| {});
    assert_eq!(
        bus.log,
        vec![R(0x0200, 0xD0), R(0x0201, 0x10), R(0x0202, 0)]
    );
    assert_eq!(cpu.pc, 0x0212);

    // Taken backwards across a page: the fourth cycle reads the unfixed PC.
    let (cpu, bus) = run(&[0xF0, 0xF0], |cpu, _| cpu.p.insert(Status::Z));
    assert_eq!(
        bus.log,
        vec![R(0x0200, 0xF0), R(0x0201, 0xF0), R(0x0202, 0), R(0x02F2, 0)]
    );
    assert_eq!(cpu.pc, 0x01F2);

    // Forward across a page.
    let mut bus = TestBus::with_program(0x02F0, &[0x90, 0x20]);
    let mut cpu = cpu_at(0x02F0);
    cpu.step(&mut bus);
    assert_eq!(
        bus.log,
        vec![R(0x02F0, 0x90), R(0x02F1, 0x20), R(0x02F2, 0), R(0x0212, 0)]
    );
    assert_eq!(cpu.pc, 0x0312);

    // Wrapping from page $FF to page $00.
    let mut bus = TestBus::with_program(0xFFF0, &[0x10, 0x10]);
    let mut cpu = cpu_at(0xFFF0);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, 0x0002);
    assert_eq!(bus.log[3], R(0xFF02, 0));
}

#[test]
fn pc_wraps_from_ffff_to_0000_for_operands() {
    let mut bus = TestBus::with_program(0xFFFF, &[0xA9]);
    bus.memory[0] = 0x42;
    let mut cpu = cpu_at(0xFFFF);
    cpu.step(&mut bus);
    assert_eq!(cpu.a, 0x42);
    assert_eq!(cpu.pc, 0x0001);
}

#[test]
fn nop_variants_use_their_addressing_modes() {
    let log = accesses(&[0x04, 0x10], |_, _| {});
    assert_eq!(log, vec![R(0x0200, 0x04), R(0x0201, 0x10), R(0x0010, 0)]);
    let log = accesses(&[0x14, 0x10], |cpu, _| cpu.x = 1);
    assert_eq!(log[2..], [R(0x0010, 0), R(0x0011, 0)]);
    let log = accesses(&[0x0C, 0x10, 0x03], |_, _| {});
    assert_eq!(log[3..], [R(0x0310, 0)]);
    let log = accesses(&[0x1C, 0xF0, 0x03], |cpu, _| cpu.x = 0x20);
    assert_eq!(log[3..], [R(0x0310, 0), R(0x0410, 0)]);
    let log = accesses(&[0x80, 0x10], |_, _| {});
    assert_eq!(log, vec![R(0x0200, 0x80), R(0x0201, 0x10)]);
    // No NOP touches registers or flags.
    for opcode in [0x04, 0x0C, 0x14, 0x1A, 0x1C, 0x80, 0x89, 0xEA] {
        let (cpu, _) = run(&[opcode, 0x10, 0x03], |cpu, _| {
            cpu.a = 1;
            cpu.x = 2;
            cpu.y = 3;
        });
        assert_eq!((cpu.a, cpu.x, cpu.y, cpu.s), (1, 2, 3, 0xFD));
        assert_eq!(cpu.p, Status::U);
    }
}

// ----- cycle counts --------------------------------------------------------------------------

/// Cycles per opcode without page crossing and with branches not taken (NESdev "6502 cycle
/// times"). JAM opcodes are listed with the 2 cycles this core spends before halting.
#[rustfmt::skip]
const BASE_CYCLES: [usize; 256] = [
//  0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F
    7, 6, 2, 8, 3, 3, 5, 5, 3, 2, 2, 2, 4, 4, 6, 6, // 0
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // 1
    6, 6, 2, 8, 3, 3, 5, 5, 4, 2, 2, 2, 4, 4, 6, 6, // 2
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // 3
    6, 6, 2, 8, 3, 3, 5, 5, 3, 2, 2, 2, 3, 4, 6, 6, // 4
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // 5
    6, 6, 2, 8, 3, 3, 5, 5, 4, 2, 2, 2, 5, 4, 6, 6, // 6
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // 7
    2, 6, 2, 6, 3, 3, 3, 3, 2, 2, 2, 2, 4, 4, 4, 4, // 8
    2, 6, 2, 6, 4, 4, 4, 4, 2, 5, 2, 5, 5, 5, 5, 5, // 9
    2, 6, 2, 6, 3, 3, 3, 3, 2, 2, 2, 2, 4, 4, 4, 4, // A
    2, 5, 2, 5, 4, 4, 4, 4, 2, 4, 2, 4, 4, 4, 4, 4, // B
    2, 6, 2, 8, 3, 3, 5, 5, 2, 2, 2, 2, 4, 4, 6, 6, // C
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // D
    2, 6, 2, 8, 3, 3, 5, 5, 2, 2, 2, 2, 4, 4, 6, 6, // E
    2, 5, 2, 8, 4, 4, 6, 6, 2, 4, 2, 7, 4, 4, 7, 7, // F
];

/// Read instructions that take one more cycle when indexing crosses a page: (ind),Y, abs,Y
/// and abs,X reads, the unofficial LAX/LAS reads and the abs,X NOPs.
const PAGE_CROSS_PENALTY: [u8; 32] = [
    0x11, 0x31, 0x51, 0x71, 0xB1, 0xD1, 0xF1, 0xB3, // (ind),Y
    0x19, 0x39, 0x59, 0x79, 0xB9, 0xD9, 0xF9, 0xBE, 0xBF, 0xBB, // abs,Y
    0x1D, 0x3D, 0x5D, 0x7D, 0xBD, 0xDD, 0xFD, 0xBC, // abs,X
    0x1C, 0x3C, 0x5C, 0x7C, 0xDC, 0xFC, // NOP abs,X
];

fn is_branch(opcode: u8) -> bool {
    opcode & 0x1F == 0x10
}

/// Flags that make a branch opcode fall through: bits 7-6 select N/V/C/Z, bit 5 the value
/// that takes the branch.
fn flags_not_taking(opcode: u8) -> Status {
    let flag = [Status::N, Status::V, Status::C, Status::Z][usize::from(opcode >> 6)];
    if opcode & 0x20 != 0 {
        Status::U
    } else {
        Status::U | flag
    }
}

fn cycles_of(opcode: u8, index: u8) -> usize {
    // Operand $0310 (or zero page $10); the pointer at $10 holds $0310 too.
    let (_, bus) = run(&[opcode, 0x10, 0x03], |cpu, bus| {
        cpu.x = index;
        cpu.y = index;
        bus.memory[0x10] = 0x10;
        bus.memory[0x11] = 0x03;
        bus.set_vector(0xFFFE, 0x8000);
        if is_branch(opcode) {
            cpu.p = flags_not_taking(opcode);
        }
    });
    bus.log.len()
}

#[test]
fn every_opcode_takes_its_documented_cycles() {
    for opcode in 0..=255u8 {
        assert_eq!(
            cycles_of(opcode, 1),
            BASE_CYCLES[usize::from(opcode)],
            "opcode {opcode:02X}"
        );
    }
}

#[test]
fn page_crossing_adds_a_cycle_to_indexed_reads_only() {
    for opcode in 0..=255u8 {
        if is_branch(opcode) {
            continue;
        }
        let penalty = usize::from(PAGE_CROSS_PENALTY.contains(&opcode));
        assert_eq!(
            cycles_of(opcode, 0xFF),
            BASE_CYCLES[usize::from(opcode)] + penalty,
            "opcode {opcode:02X}"
        );
    }
}

#[test]
fn taken_branches_take_three_or_four_cycles() {
    for opcode in (0x10..=0xF0u8).step_by(0x20) {
        let (cpu, bus) = run(&[opcode, 0x10], |cpu, _| {
            cpu.p = Status::from_bits_retain(!flags_not_taking(opcode).bits() | Status::U.bits());
        });
        assert_eq!(bus.log.len(), 3, "opcode {opcode:02X}");
        assert_eq!(cpu.pc, 0x0212);
        let (cpu, bus) = run(&[opcode, 0x80], |cpu, _| {
            cpu.p = Status::from_bits_retain(!flags_not_taking(opcode).bits() | Status::U.bits());
        });
        assert_eq!(bus.log.len(), 4, "opcode {opcode:02X}");
        assert_eq!(cpu.pc, 0x0182);
    }
}

// ----- flags and results -----------------------------------------------------------------------

fn with_a(opcode: u8, operand: u8, a: u8, p: Status) -> Cpu {
    run(&[opcode, operand], |cpu, _| {
        cpu.a = a;
        cpu.p = p | Status::U;
    })
    .0
}

fn flags(cpu: &Cpu) -> Status {
    cpu.p - Status::U
}

#[test]
fn adc_is_binary_and_sets_carry_overflow() {
    let cpu = with_a(0x69, 0x50, 0x50, Status::empty());
    assert_eq!((cpu.a, flags(&cpu)), (0xA0, Status::V | Status::N));
    let cpu = with_a(0x69, 0x01, 0xFF, Status::empty());
    assert_eq!((cpu.a, flags(&cpu)), (0x00, Status::Z | Status::C));
    let cpu = with_a(0x69, 0x80, 0x80, Status::C);
    assert_eq!((cpu.a, flags(&cpu)), (0x01, Status::C | Status::V));
    // Decimal mode does nothing on the 2A03 (but D stays set).
    let cpu = with_a(0x69, 0x01, 0x09, Status::D);
    assert_eq!((cpu.a, flags(&cpu)), (0x0A, Status::D));
}

#[test]
fn sbc_borrows_through_carry() {
    let cpu = with_a(0xE9, 0xF0, 0x50, Status::C);
    assert_eq!((cpu.a, flags(&cpu)), (0x60, Status::empty()));
    let cpu = with_a(0xE9, 0xB0, 0x50, Status::C);
    assert_eq!((cpu.a, flags(&cpu)), (0xA0, Status::V | Status::N));
    let cpu = with_a(0xE9, 0x01, 0x01, Status::empty());
    assert_eq!((cpu.a, flags(&cpu)), (0xFF, Status::N));
    let cpu = with_a(0xE9, 0x30, 0x50, Status::C | Status::D);
    assert_eq!((cpu.a, flags(&cpu)), (0x20, Status::C | Status::D));
    // $EB is the same operation (AccuracyCoin vector: A=$52, #$EE, C clear -> $63).
    let cpu = with_a(0xEB, 0xEE, 0x52, Status::I);
    assert_eq!((cpu.a, flags(&cpu)), (0x63, Status::I));
}

#[test]
fn compare_and_bit() {
    let cpu = with_a(0xC9, 0x40, 0x40, Status::empty());
    assert_eq!(flags(&cpu), Status::Z | Status::C);
    let cpu = with_a(0xC9, 0x41, 0x40, Status::empty());
    assert_eq!(flags(&cpu), Status::N);
    let cpu = with_a(0xC9, 0x10, 0x40, Status::empty());
    assert_eq!(flags(&cpu), Status::C);
    let (cpu, _) = run(&[0xE0, 0x05], |cpu, _| cpu.x = 0x04);
    assert_eq!(flags(&cpu), Status::N);
    let (cpu, _) = run(&[0xC0, 0x05], |cpu, _| cpu.y = 0x05);
    assert_eq!(flags(&cpu), Status::Z | Status::C);

    let (cpu, _) = run(&[0x24, 0x10], |cpu, bus| {
        cpu.a = 0x01;
        bus.memory[0x10] = 0xC0;
    });
    assert_eq!(flags(&cpu), Status::Z | Status::N | Status::V);
    let (cpu, _) = run(&[0x2C, 0x10, 0x03], |cpu, bus| {
        cpu.a = 0x01;
        cpu.p = Status::U | Status::V | Status::N;
        bus.memory[0x0310] = 0x01;
    });
    assert_eq!(flags(&cpu), Status::empty());
}

#[test]
fn shifts_and_rotates() {
    let cpu = with_a(0x0A, 0, 0x80, Status::empty());
    assert_eq!((cpu.a, flags(&cpu)), (0x00, Status::Z | Status::C));
    let cpu = with_a(0x4A, 0, 0x03, Status::empty());
    assert_eq!((cpu.a, flags(&cpu)), (0x01, Status::C));
    let cpu = with_a(0x2A, 0, 0x40, Status::C);
    assert_eq!((cpu.a, flags(&cpu)), (0x81, Status::N));
    let cpu = with_a(0x6A, 0, 0x01, Status::C);
    assert_eq!((cpu.a, flags(&cpu)), (0x80, Status::C | Status::N));
    let (cpu, bus) = run(&[0x66, 0x10], |cpu, bus| {
        cpu.p = Status::U;
        bus.memory[0x10] = 0x02;
    });
    assert_eq!((bus.memory[0x10], flags(&cpu)), (0x01, Status::empty()));
}

#[test]
fn loads_transfers_and_counters_set_n_and_z() {
    let cpu = with_a(0xA9, 0x00, 0x55, Status::N);
    assert_eq!((cpu.a, flags(&cpu)), (0x00, Status::Z));
    let (cpu, _) = run(&[0xAA], |cpu, _| cpu.a = 0x90);
    assert_eq!((cpu.x, flags(&cpu)), (0x90, Status::N));
    let (cpu, _) = run(&[0xCA], |cpu, _| cpu.x = 0x01);
    assert_eq!((cpu.x, flags(&cpu)), (0x00, Status::Z));
    let (cpu, _) = run(&[0xC8], |cpu, _| cpu.y = 0xFF);
    assert_eq!((cpu.y, flags(&cpu)), (0x00, Status::Z));
    // TXS changes no flag; TSX does.
    let (cpu, _) = run(&[0x9A], |cpu, _| cpu.x = 0x00);
    assert_eq!((cpu.s, flags(&cpu)), (0x00, Status::empty()));
    let (cpu, _) = run(&[0xBA], |cpu, _| cpu.s = 0x80);
    assert_eq!((cpu.x, flags(&cpu)), (0x80, Status::N));
}

#[test]
fn flag_instructions() {
    let all = Status::all() - Status::B;
    for (opcode, changed, set) in [
        (0x18, Status::C, false),
        (0x38, Status::C, true),
        (0x58, Status::I, false),
        (0x78, Status::I, true),
        (0xB8, Status::V, false),
        (0xD8, Status::D, false),
        (0xF8, Status::D, true),
    ] {
        let start = if set { Status::U } else { all };
        let (cpu, _) = run(&[opcode], |cpu, _| cpu.p = start);
        let expected = if set {
            start | changed
        } else {
            start - changed
        };
        assert_eq!(cpu.p, expected, "opcode {opcode:02X}");
    }
}

// ----- unofficial opcodes ----------------------------------------------------------------------

#[test]
fn unofficial_rmw_combinations() {
    let zp = |opcode: u8, a: u8, m: u8, p: Status| {
        let (cpu, bus) = run(&[opcode, 0x10], |cpu, bus| {
            cpu.a = a;
            cpu.p = p | Status::U;
            bus.memory[0x10] = m;
        });
        (cpu.a, bus.memory[0x10], flags(&cpu))
    };
    // SLO: ASL then ORA.
    assert_eq!(
        zp(0x07, 0x01, 0x81, Status::empty()),
        (0x03, 0x02, Status::C)
    );
    // RLA: ROL then AND.
    assert_eq!(zp(0x27, 0xFF, 0x80, Status::C), (0x01, 0x01, Status::C));
    // SRE: LSR then EOR.
    assert_eq!(
        zp(0x47, 0x81, 0x03, Status::empty()),
        (0x80, 0x01, Status::C | Status::N)
    );
    // RRA: ROR then ADC with the rotated-out carry.
    assert_eq!(
        zp(0x67, 0x10, 0x03, Status::empty()),
        (0x12, 0x01, Status::empty())
    );
    // DCP: DEC then CMP.
    assert_eq!(
        zp(0xC7, 0x40, 0x41, Status::empty()),
        (0x40, 0x40, Status::Z | Status::C)
    );
    // ISC: INC then SBC.
    assert_eq!(
        zp(0xE7, 0x10, 0x0F, Status::C),
        (0x00, 0x10, Status::Z | Status::C)
    );
}

#[test]
fn unofficial_loads_and_stores() {
    let (cpu, _) = run(&[0xA7, 0x10], |_, bus| bus.memory[0x10] = 0x8F);
    assert_eq!((cpu.a, cpu.x, flags(&cpu)), (0x8F, 0x8F, Status::N));

    let (cpu, bus) = run(&[0xB7, 0x10], |cpu, bus| {
        cpu.y = 2;
        bus.memory[0x12] = 0x00;
    });
    assert_eq!((cpu.a, cpu.x, flags(&cpu)), (0, 0, Status::Z));
    assert_eq!(bus.log[2], R(0x0010, 0));

    let (cpu, bus) = run(&[0x87, 0x10], |cpu, _| {
        cpu.a = 0xF0;
        cpu.x = 0x3C;
        cpu.p = Status::U;
    });
    assert_eq!(bus.memory[0x10], 0x30);
    assert_eq!(flags(&cpu), Status::empty());

    // LAS: A = X = S = M & S.
    let (cpu, _) = run(&[0xBB, 0x10, 0x03], |cpu, bus| {
        cpu.s = 0xF3;
        cpu.y = 1;
        bus.memory[0x0311] = 0x9E;
    });
    assert_eq!(
        (cpu.a, cpu.x, cpu.s, flags(&cpu)),
        (0x92, 0x92, 0x92, Status::N)
    );
}

fn immediate(opcode: u8, operand: u8, a: u8, x: u8, p: Status) -> (u8, u8, Status) {
    let (cpu, _) = run(&[opcode, operand], |cpu, _| {
        cpu.a = a;
        cpu.x = x;
        cpu.p = p | Status::U;
    });
    (cpu.a, cpu.x, flags(&cpu))
}

#[test]
fn unofficial_immediates() {
    let i = Status::I;
    // ANC: AND, C = N.
    assert_eq!(
        immediate(0x0B, 0x80, 0xFF, 0, i),
        (0x80, 0, i | Status::N | Status::C)
    );
    assert_eq!(immediate(0x2B, 0x7F, 0xFF, 0, i | Status::C), (0x7F, 0, i));
    // ALR: AND then LSR.
    assert_eq!(immediate(0x4B, 0x03, 0xFF, 0, i), (0x01, 0, i | Status::C));
    // ARR vectors from AccuracyCoin's ARR test.
    assert_eq!(
        immediate(0x6B, 0xF2, 0xEE, 0x64, i | Status::Z | Status::V),
        (0x71, 0x64, i | Status::C)
    );
    assert_eq!(
        immediate(0x6B, 0x01, 0x59, 0x64, i | Status::Z),
        (0x00, 0x64, i | Status::Z)
    );
    assert_eq!(
        immediate(0x6B, 0x4F, 0xF3, 0x64, i | Status::Z | Status::C),
        (0xA1, 0x64, i | Status::V | Status::N)
    );
    // ANE with A = $FF, where the magic constant cannot matter.
    assert_eq!(
        immediate(0x8B, 0xCF, 0xFF, 0x9F, i | Status::Z | Status::V),
        (0x8F, 0x9F, i | Status::N | Status::V)
    );
    // LXA with A = $FF.
    assert_eq!(
        immediate(0xAB, 0xA5, 0xFF, 0x8F, i | Status::Z | Status::V),
        (0xA5, 0xA5, i | Status::N | Status::V)
    );
    // AXS: X = (A & X) - imm, CMP-style flags, V untouched.
    assert_eq!(
        immediate(0xCB, 0x10, 0xF0, 0xB0, i | Status::Z | Status::C),
        (0xF0, 0xA0, i | Status::C | Status::N)
    );
    assert_eq!(
        immediate(
            0xCB,
            0xE5,
            0x00,
            0x66,
            i | Status::Z | Status::C | Status::V
        ),
        (0x00, 0x1B, i | Status::V)
    );
}

#[test]
fn sh_stores_and_with_high_byte_plus_one() {
    // SHX $0310,Y (Y=1): X & $04 written to $0311.
    let (_, bus) = run(&[0x9E, 0x10, 0x03], |cpu, _| {
        cpu.x = 0xFF;
        cpu.y = 1;
    });
    assert_eq!(bus.log[3..], [R(0x0311, 0), W(0x0311, 0x04)]);

    // Crossing: the stored value also replaces the target's high byte ($F3 & $04 = 0).
    let (_, bus) = run(&[0x9E, 0xF0, 0x03], |cpu, _| {
        cpu.x = 0xF3;
        cpu.y = 0x20;
    });
    assert_eq!(bus.log[3..], [R(0x0310, 0), W(0x0010, 0x00)]);

    // SHY $0310,X.
    let (_, bus) = run(&[0x9C, 0x10, 0x03], |cpu, _| {
        cpu.y = 0x0F;
        cpu.x = 2;
    });
    assert_eq!(bus.log[4], W(0x0312, 0x04));

    // SHA $0310,Y stores A & X & (H+1).
    let (_, bus) = run(&[0x9F, 0x10, 0x03], |cpu, _| {
        cpu.a = 0x0C;
        cpu.x = 0x06;
        cpu.y = 1;
    });
    assert_eq!(bus.log[4], W(0x0311, 0x04));

    // SHA ($10),Y.
    let (_, bus) = run(&[0x93, 0x10], |cpu, bus| {
        cpu.a = 0xFF;
        cpu.x = 0xFF;
        cpu.y = 1;
        bus.memory[0x10] = 0x00;
        bus.memory[0x11] = 0x07;
    });
    assert_eq!(bus.log[4..], [R(0x0701, 0), W(0x0701, 0x08)]);

    // SHS: S = A & X, then store S & (H+1).
    let (cpu, bus) = run(&[0x9B, 0x10, 0x03], |cpu, _| {
        cpu.a = 0xF7;
        cpu.x = 0x3E;
        cpu.y = 1;
    });
    assert_eq!(cpu.s, 0x36);
    assert_eq!(bus.log[4], W(0x0311, 0x04));
}

#[test]
fn jam_halts_with_one_read_of_ffff_per_step() {
    for opcode in [
        0x02, 0x12, 0x22, 0x32, 0x42, 0x52, 0x62, 0x72, 0x92, 0xB2, 0xD2, 0xF2,
    ] {
        let mut bus = TestBus::with_program(ORIGIN, &[opcode, 0xEA, 0xEA]);
        let mut cpu = cpu_at(ORIGIN);
        cpu.step(&mut bus);
        assert!(cpu.jammed());
        assert_eq!(cpu.pc, ORIGIN);
        // Even a pending NMI is ignored.
        bus.nmi_asserted.push(0..usize::MAX);
        for _ in 0..3 {
            cpu.step(&mut bus);
        }
        assert_eq!(bus.log[2..], [R(0xFFFF, 0), R(0xFFFF, 0), R(0xFFFF, 0)]);
        assert_eq!(cpu.cycles(), 5);
        assert!(cpu.jammed());
        cpu.reset(&mut bus);
        assert!(!cpu.jammed());
    }
}

// ----- the opcode table against execution ------------------------------------------------------

/// What the disassembler says of each opcode (its length) is what execution does: every
/// instruction that does not jump moves PC past exactly the bytes its mode names (branches
/// not taken included), and every opcode whose mode has no operand spends its second cycle
/// reading the byte after the opcode.
#[test]
fn every_opcode_executes_as_the_table_describes_it() {
    use crate::opcode::{describe, AddressingMode};
    for opcode in 0..=255u8 {
        let instruction = describe(opcode);
        let (cpu, bus) = run(&[opcode, 0x10, 0x03], |cpu, bus| {
            bus.memory[0x10] = 0x10;
            bus.memory[0x11] = 0x03;
            if is_branch(opcode) {
                cpu.p = flags_not_taking(opcode);
            }
        });
        let jumps = matches!(
            instruction.mnemonic,
            "JMP" | "JSR" | "RTS" | "RTI" | "BRK" | "JAM"
        );
        if !jumps {
            assert_eq!(
                cpu.pc,
                ORIGIN + instruction.mode.instruction_bytes(),
                "opcode {opcode:02X} ({instruction:?})"
            );
        }
        if matches!(
            instruction.mode,
            AddressingMode::Implied | AddressingMode::Accumulator
        ) {
            assert_eq!(bus.log[1], R(ORIGIN + 1, 0x10), "opcode {opcode:02X}");
        }
        assert_eq!(
            is_branch(opcode),
            instruction.mode == AddressingMode::Relative
        );
    }
}
