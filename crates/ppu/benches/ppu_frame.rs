//! One PPU-heavy frame on a flat test bus: background and sprite rendering on, 64 sprites
//! (eight on many lines, so evaluation fills secondary OAM and runs the overflow search),
//! and a scroll position that changes every frame.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nes_ppu::{Ppu, PpuBus, PpuWriteBus, DOTS_PER_SCANLINE, SCANLINES_PER_FRAME};

/// `$0000-$3FFF` as one flat array: pattern tables and four nametables, no mirroring.
struct FlatBus {
    memory: Box<[u8; 0x4000]>,
}

impl PpuBus for FlatBus {
    #[inline]
    fn read(&mut self, addr: u16) -> u8 {
        self.memory[usize::from(addr & 0x3FFF)]
    }

    fn peek(&self, addr: u16) -> u8 {
        self.memory[usize::from(addr & 0x3FFF)]
    }
}

impl PpuWriteBus for FlatBus {
    #[inline]
    fn write(&mut self, addr: u16, value: u8) {
        self.memory[usize::from(addr & 0x3FFF)] = value;
    }
}

/// A deterministic byte sequence (a linear congruential generator) for scene content.
fn pseudo_random_bytes(count: usize, mut seed: u32) -> Vec<u8> {
    (0..count)
        .map(|_| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 24) as u8
        })
        .collect()
}

fn set_vram_addr(ppu: &mut Ppu, bus: &mut FlatBus, addr: u16) {
    ppu.write_register(0x2006, (addr >> 8) as u8, bus);
    ppu.write_register(0x2006, addr as u8, bus);
}

/// A PPU positioned at the start of VBlank with a busy scene loaded.
fn busy_scene() -> (Ppu, FlatBus) {
    let mut bus = FlatBus {
        memory: Box::new([0; 0x4000]),
    };
    // Random CHR and nametables: every tile has opaque and transparent pixels.
    let noise = pseudo_random_bytes(0x3000, 0x2C02);
    bus.memory[..0x3000].copy_from_slice(&noise);
    let mut ppu = Ppu::new();
    ppu.set_warmup(false);
    set_vram_addr(&mut ppu, &mut bus, 0x3F00);
    for value in pseudo_random_bytes(32, 7) {
        ppu.write_register(0x2007, value & 0x3F, &mut bus);
    }
    // 64 sprites in 8 columns of 8: lines 40-120 have eight or more sprites each.
    let attributes = pseudo_random_bytes(64, 99);
    ppu.write_register(0x2003, 0, &mut bus);
    for sprite in 0..64u8 {
        let y = 40 + (sprite % 8) * 10 + (sprite / 8);
        let tile = sprite.wrapping_mul(3);
        let x = (sprite / 8) * 30 + 4;
        for byte in [y, tile, attributes[usize::from(sprite)], x] {
            ppu.write_register(0x2004, byte, &mut bus);
        }
    }
    // Rendering on with sprites from $1000, background from $0000, no left clipping.
    ppu.write_register(0x2000, 0x08, &mut bus);
    ppu.write_register(0x2001, 0x1E, &mut bus);
    while ppu.scanline() != 241 {
        ppu.tick(&mut bus);
    }
    (ppu, bus)
}

fn frame(c: &mut Criterion) {
    let (mut ppu, mut bus) = busy_scene();
    let dots = u64::from(DOTS_PER_SCANLINE) * u64::from(SCANLINES_PER_FRAME);
    let mut scroll: u8 = 0;
    let mut group = c.benchmark_group("ppu");
    group.throughput(Throughput::Elements(dots));
    group.bench_function("busy_frame", |b| {
        b.iter(|| {
            // Per-frame scroll change during VBlank, as a game would do.
            scroll = scroll.wrapping_add(3);
            ppu.write_register(0x2005, scroll, &mut bus);
            ppu.write_register(0x2005, scroll / 2, &mut bus);
            let frame = ppu.frames_completed();
            while ppu.frames_completed() == frame {
                ppu.tick(&mut bus);
            }
            black_box(ppu.frame_buffer()[128 * 256 + 128])
        });
    });
    group.finish();
}

criterion_group!(benches, frame);
criterion_main!(benches);
