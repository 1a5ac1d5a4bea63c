//! CPU core throughput on a flat 64 KiB RAM bus: how many instructions (and CPU cycles) per
//! second the instruction engine manages when the bus costs next to nothing.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nes_cpu::{Bus, Cpu};

/// 64 KiB of RAM, no side effects, interrupt lines idle.
struct FlatRam {
    memory: Box<[u8; 0x10000]>,
}

impl Bus for FlatRam {
    #[inline]
    fn read(&mut self, addr: u16) -> u8 {
        self.memory[usize::from(addr)]
    }

    #[inline]
    fn write(&mut self, addr: u16, value: u8) {
        self.memory[usize::from(addr)] = value;
    }

    #[inline]
    fn nmi_line(&self) -> bool {
        false
    }

    #[inline]
    fn irq_line(&self) -> bool {
        false
    }
}

/// A loop mixing the common instruction shapes: immediate/zero-page/absolute-indexed loads
/// and stores, an (ind),Y load, a read-modify-write, ALU ops, a JSR/RTS pair and branches.
const PROGRAM: &[u8] = &[
    0xA2, 0x00, //       $8000 LDX #$00
    0xA0, 0x00, //       $8002 LDY #$00
    0xBD, 0x00, 0x03, // $8004 loop: LDA $0300,X
    0x69, 0x01, //       $8007 ADC #$01
    0x9D, 0x00, 0x04, // $8009 STA $0400,X
    0x85, 0x10, //       $800C STA $10
    0xB1, 0x20, //       $800E LDA ($20),Y
    0xE6, 0x11, //       $8010 INC $11
    0x45, 0x10, //       $8012 EOR $10
    0x20, 0x00, 0x90, // $8014 JSR $9000
    0xE8, //             $8017 INX
    0xC8, //             $8018 INY
    0xD0, 0xE9, //       $8019 BNE loop ($8004)
    0x4C, 0x00, 0x80, // $801B JMP $8000
];

const SUBROUTINE: &[u8] = &[
    0x48, //       PHA
    0x0A, //       ASL A
    0x68, //       PLA
    0x60, //       RTS
];

fn setup() -> (Cpu, FlatRam) {
    let mut memory = Box::new([0u8; 0x10000]);
    memory[0x8000..0x8000 + PROGRAM.len()].copy_from_slice(PROGRAM);
    memory[0x9000..0x9000 + SUBROUTINE.len()].copy_from_slice(SUBROUTINE);
    memory[0x20] = 0x00;
    memory[0x21] = 0x05;
    memory[0xFFFC] = 0x00;
    memory[0xFFFD] = 0x80;
    let mut bus = FlatRam { memory };
    let mut cpu = Cpu::new();
    cpu.power_on(&mut bus);
    (cpu, bus)
}

fn throughput(c: &mut Criterion) {
    const INSTRUCTIONS: u64 = 100_000;

    // Cycles per batch, measured once so criterion can also report cycles per second.
    let (mut cpu, mut bus) = setup();
    let start = cpu.cycles();
    for _ in 0..INSTRUCTIONS {
        cpu.step(&mut bus);
    }
    let cycles_per_batch = cpu.cycles() - start;

    let mut group = c.benchmark_group("cpu_throughput");
    group.throughput(Throughput::Elements(INSTRUCTIONS));
    group.bench_function("instructions", |b| {
        let (mut cpu, mut bus) = setup();
        b.iter(|| {
            for _ in 0..INSTRUCTIONS {
                cpu.step(black_box(&mut bus));
            }
        });
    });
    group.throughput(Throughput::Elements(cycles_per_batch));
    group.bench_function("cycles", |b| {
        let (mut cpu, mut bus) = setup();
        b.iter(|| {
            for _ in 0..INSTRUCTIONS {
                cpu.step(black_box(&mut bus));
            }
        });
    });
    group.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
