//! OAM and DMC DMA: cycle counts, access sequences, overlap, aborts and their interaction
//! with instructions and interrupts.

use crate::dma::is_get_cycle;
use crate::test_bus::{cpu_at, DmcRequest, TestBus, R, W};

const NOP: u8 = 0xEA;
const SAMPLE_ADDRESS: u16 = 0xC000;
const SAMPLE: u8 = 0x77;

fn nop_bus() -> TestBus {
    let mut bus = TestBus::with_program(0x0200, &[NOP; 8]);
    bus.memory[usize::from(SAMPLE_ADDRESS)] = SAMPLE;
    bus
}

fn dmc_request(from: usize, withdraw_at: Option<usize>) -> DmcRequest {
    DmcRequest {
        from,
        address: SAMPLE_ADDRESS,
        withdraw_at,
    }
}

/// STA $4014 (A = 3) then NOPs, with the page-3 source bytes set to a pattern.
fn oam_bus() -> TestBus {
    let mut bus = TestBus::with_program(0x0200, &[0x8D, 0x14, 0x40, NOP, NOP]);
    for i in 0..=255u8 {
        bus.memory[0x0300 + usize::from(i)] = i ^ 0x5A;
    }
    bus.memory[usize::from(SAMPLE_ADDRESS)] = SAMPLE;
    bus
}

#[test]
fn get_cycles_are_the_even_ones() {
    assert!(is_get_cycle(0));
    assert!(!is_get_cycle(7));
    assert!(is_get_cycle(8));
}

#[test]
fn oam_dma_halted_on_a_get_cycle_takes_514_cycles() {
    let mut bus = oam_bus();
    let mut cpu = cpu_at(0x0200);
    cpu.a = 3;
    cpu.step(&mut bus);
    assert_eq!(cpu.cycles(), 4);
    cpu.step(&mut bus);
    // STA (4) + halt + alignment + 512 + NOP (2).
    assert_eq!(cpu.cycles(), 4 + 514 + 2);
    assert_eq!(bus.oam_started_at, vec![4]);
    // Halt and alignment cycles repeat the halted opcode fetch.
    assert_eq!(bus.log[4..6], [R(0x0203, NOP), R(0x0203, NOP)]);
    for i in 0..=255u8 {
        let at = 6 + 2 * usize::from(i);
        let value = i ^ 0x5A;
        assert_eq!(bus.log[at], R(0x0300 + u16::from(i), value));
        assert_eq!(bus.log[at + 1], W(0x2004, value));
    }
    assert_eq!(bus.log[518..], [R(0x0203, NOP), R(0x0204, NOP)]);
}

#[test]
fn oam_dma_halted_on_a_put_cycle_takes_513_cycles() {
    let mut bus = oam_bus();
    let mut cpu = cpu_at(0x0200);
    cpu.a = 3;
    cpu.set_cycles(1);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.cycles(), 1 + 4 + 513 + 2);
    assert_eq!(bus.log[4], R(0x0203, NOP));
    assert_eq!(bus.log[5], R(0x0300, 0x5A));
}

#[test]
fn oam_dma_waits_for_a_read_and_uses_the_last_page_written() {
    // INC $4014 writes $03 then $04: the halt only comes on the next opcode fetch, once.
    let mut bus = TestBus::with_program(0x0200, &[0xEE, 0x14, 0x40, NOP]);
    bus.memory[0x4014] = 0x03;
    bus.memory[0x0400] = 0xAB;
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert_eq!(bus.log[4..], [W(0x4014, 0x03), W(0x4014, 0x04)]);
    cpu.step(&mut bus);
    assert_eq!(bus.oam_started_at, vec![6]);
    assert_eq!(bus.log[6], R(0x0203, NOP));
    // Halt at cycle 6 (get), alignment at 7, first get at 8 from page $04.
    assert_eq!(bus.log[8], R(0x0400, 0xAB));
    assert_eq!(cpu.cycles(), 6 + 514 + 2);
}

#[test]
fn dmc_dma_takes_four_cycles_when_halted_on_a_put_cycle() {
    let mut bus = nop_bus();
    bus.dmc_requests.push(dmc_request(1, None));
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert_eq!(
        bus.log,
        vec![
            R(0x0200, NOP),
            R(0x0201, NOP), // halt
            R(0x0201, NOP), // dummy
            R(0x0201, NOP), // alignment
            R(SAMPLE_ADDRESS, SAMPLE),
            R(0x0201, NOP), // the NOP's own cycle 2
        ]
    );
    assert_eq!(bus.dmc_fetched, vec![(5, SAMPLE)]);
}

#[test]
fn dmc_dma_takes_three_cycles_when_halted_on_a_get_cycle() {
    let mut bus = nop_bus();
    bus.dmc_requests.push(dmc_request(2, None));
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(
        bus.log,
        vec![
            R(0x0200, NOP),
            R(0x0201, NOP),
            R(0x0201, NOP), // halt of the second NOP's opcode fetch
            R(0x0201, NOP), // dummy
            R(SAMPLE_ADDRESS, SAMPLE),
            R(0x0201, NOP),
            R(0x0202, NOP),
        ]
    );
    assert_eq!(cpu.cycles(), 7);
}

#[test]
fn dmc_dma_is_not_taken_on_a_write_cycle() {
    let mut bus = TestBus::with_program(0x0200, &[0x8D, 0x00, 0x03, NOP]);
    bus.memory[usize::from(SAMPLE_ADDRESS)] = SAMPLE;
    bus.dmc_requests.push(dmc_request(3, None));
    let mut cpu = cpu_at(0x0200);
    cpu.a = 0x99;
    cpu.step(&mut bus);
    assert_eq!(bus.log[3], W(0x0300, 0x99));
    cpu.step(&mut bus);
    assert_eq!(
        bus.log[4..],
        [
            R(0x0203, NOP),
            R(0x0203, NOP),
            R(SAMPLE_ADDRESS, SAMPLE),
            R(0x0203, NOP),
            R(0x0204, 0),
        ]
    );
}

#[test]
fn dmc_dma_during_oam_dma_usually_costs_two_cycles() {
    for request_at in [100, 101, 300] {
        let mut bus = oam_bus();
        bus.dmc_requests.push(dmc_request(request_at, None));
        let mut cpu = cpu_at(0x0200);
        cpu.a = 3;
        cpu.step(&mut bus);
        cpu.step(&mut bus);
        assert_eq!(cpu.cycles(), 4 + 514 + 2 + 2, "request at {request_at}");
        assert_eq!(bus.dmc_fetched.len(), 1);
        // All 256 OAM bytes still arrive, in order.
        let puts: Vec<u8> = bus
            .log
            .iter()
            .filter_map(|a| match *a {
                W(0x2004, v) => Some(v),
                _ => None,
            })
            .collect();
        let expected: Vec<u8> = (0..=255u8).map(|i| i ^ 0x5A).collect();
        assert_eq!(puts, expected);
    }

    // Requested on a get cycle: its halt and dummy overlap OAM cycles 100 and 101, the get
    // lands on 102 and the OAM DMA realigns on 103.
    let mut bus = oam_bus();
    bus.dmc_requests.push(dmc_request(100, None));
    let mut cpu = cpu_at(0x0200);
    cpu.a = 3;
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(bus.log[100], R(0x032F, 0x2F ^ 0x5A));
    assert_eq!(bus.log[101], W(0x2004, 0x2F ^ 0x5A));
    assert_eq!(bus.log[102], R(SAMPLE_ADDRESS, SAMPLE));
    assert_eq!(bus.log[103], R(0x0203, NOP));
    assert_eq!(bus.log[104], R(0x0330, 0x30 ^ 0x5A));
}

#[test]
fn dmc_dma_at_the_end_of_oam_dma_costs_one_or_three_cycles() {
    // The last OAM get is cycle 516 and the last put 517.
    for (request_at, extra) in [(516, 1), (517, 3), (518, 3)] {
        let mut bus = oam_bus();
        bus.dmc_requests.push(dmc_request(request_at, None));
        let mut cpu = cpu_at(0x0200);
        cpu.a = 3;
        cpu.step(&mut bus);
        cpu.step(&mut bus);
        assert_eq!(cpu.cycles(), 4 + 514 + extra + 2, "request at {request_at}");
        assert_eq!(bus.dmc_fetched.len(), 1);
    }
}

#[test]
fn withdrawn_dmc_request_aborts_the_fetch() {
    // Withdrawn right after the halt cycle: a one-cycle DMA.
    let mut bus = nop_bus();
    bus.dmc_requests.push(dmc_request(2, Some(3)));
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.cycles(), 5);
    assert_eq!(
        bus.log[2..],
        [R(0x0201, NOP), R(0x0201, NOP), R(0x0202, NOP)]
    );
    assert!(bus.dmc_fetched.is_empty());

    // Withdrawn after the dummy cycle: the fetch is committed and the get still happens
    // (AccuracyCoin "Explicit DMA Abort": a late $4015 disable costs the whole DMA).
    let mut bus = nop_bus();
    bus.dmc_requests.push(dmc_request(2, Some(4)));
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.cycles(), 7);
    assert_eq!(bus.log[4], R(SAMPLE_ADDRESS, SAMPLE));
    assert_eq!(bus.dmc_fetched.len(), 1);

    // Withdrawn during an OAM DMA before its dummy cycle: the OAM DMA is unaffected.
    let mut bus = oam_bus();
    bus.dmc_requests.push(dmc_request(100, Some(101)));
    let mut cpu = cpu_at(0x0200);
    cpu.a = 3;
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.cycles(), 4 + 514 + 2);
    assert!(bus.dmc_fetched.is_empty());
}

#[test]
fn dmc_request_withdrawn_during_a_write_never_halts() {
    let mut bus = TestBus::with_program(0x0200, &[0x8D, 0x00, 0x03, NOP]);
    bus.dmc_requests.push(dmc_request(3, Some(4)));
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    cpu.step(&mut bus);
    assert_eq!(cpu.cycles(), 6);
}

#[test]
fn sh_store_loses_the_high_byte_and_when_dma_halts_its_dummy_read() {
    // SHX $0310,Y with X = $FF: normally stores X & $04.
    let program = [0x9E, 0x10, 0x03, NOP];
    let mut bus = TestBus::with_program(0x0200, &program);
    bus.dmc_requests.push(dmc_request(2, None));
    let mut cpu = cpu_at(0x0200);
    cpu.x = 0xFF;
    cpu.y = 1;
    cpu.step(&mut bus);
    // DMA before the high operand byte: no effect on the value.
    assert_eq!(*bus.log.last().unwrap(), W(0x0311, 0x04));

    // DMA halting the dummy read (two cycles before the write): X is stored unmasked.
    let mut bus = TestBus::with_program(0x0200, &program);
    bus.dmc_requests.push(dmc_request(3, None));
    let mut cpu = cpu_at(0x0200);
    cpu.x = 0xFF;
    cpu.y = 1;
    cpu.step(&mut bus);
    assert_eq!(*bus.log.last().unwrap(), W(0x0311, 0xFF));
    assert_eq!(bus.dmc_fetched.len(), 1);
}

#[test]
fn interrupt_lines_are_polled_during_dma_before_a_final_cycle() {
    // The DMC DMA halts the first NOP's final cycle; an IRQ raised during the DMA is taken
    // right after that NOP.
    let mut bus = nop_bus();
    bus.set_vector(0xFFFE, 0x0400);
    bus.dmc_requests.push(dmc_request(1, None));
    bus.irq_asserted.push(3..usize::MAX);
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert!(cpu.interrupt_due);
    cpu.step(&mut bus);
    assert_eq!(cpu.pc, 0x0400);
    assert_eq!(bus.memory[0x01FC], 0x01);
}

#[test]
fn jammed_cpu_still_runs_dma() {
    let mut bus = TestBus::with_program(0x0200, &[0x02]);
    bus.memory[usize::from(SAMPLE_ADDRESS)] = SAMPLE;
    let mut cpu = cpu_at(0x0200);
    cpu.step(&mut bus);
    assert!(cpu.jammed());
    bus.dmc_requests.push(dmc_request(2, None));
    cpu.step(&mut bus);
    // Halt (cycle 2, get), dummy, get, then the jammed read itself.
    assert_eq!(bus.dmc_fetched, vec![(5, SAMPLE)]);
    assert_eq!(cpu.cycles(), 6);
}
