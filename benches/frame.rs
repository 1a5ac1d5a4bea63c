//! Whole-frame emulation speed: CPU, PPU (rendering on) and APU together.
//!
//! Uses a synthetic NROM program built in code, so it runs on any machine; when the public test
//! ROMs are present, a blargg ROM is measured as well.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nes::Nes;
use nes_app::test_roms::{find_manifest, manifest_root};
use nes_workspace_tests::{ines_image, nrom_program};

/// A program that turns rendering and NMI on, then runs a loop of loads, stores, RMW and branches.
fn busy_rendering_program() -> Vec<u8> {
    #[rustfmt::skip]
    let code = [
        0xA9, 0x80, 0x8D, 0x00, 0x20, // LDA #$80 ; STA $2000 (NMI on)
        0xA9, 0x1E, 0x8D, 0x01, 0x20, // LDA #$1E ; STA $2001 (background + sprites on)
        0xA2, 0x00,                   // loop: LDX #0
        0xBD, 0x00, 0x03,             // inner: LDA $0300,X
        0x69, 0x01,                   // ADC #1
        0x9D, 0x00, 0x03,             // STA $0300,X
        0xFE, 0x00, 0x04,             // INC $0400,X
        0xE8,                         // INX
        0xD0, 0xF3,                   // BNE inner
        0x4C, 0x0A, 0x80,             // JMP loop
    ];
    ines_image(0, &nrom_program(&code), &[0x55; 0x2000])
}

fn frames(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame");
    group.throughput(Throughput::Elements(1));
    let mut roms = vec![("synthetic_rendering".to_owned(), busy_rendering_program())];
    if let Ok(manifest) = find_manifest(None) {
        let path = manifest_root(&manifest).join("cpu/instr_test-v5/rom_singles/01-basics.nes");
        if let Ok(bytes) = std::fs::read(path) {
            roms.push(("blargg_01_basics".to_owned(), bytes));
        }
    } else {
        eprintln!("test ROMs not found: benchmarking the synthetic ROM only");
    }
    for (name, image) in roms {
        let mut nes = Nes::from_ines(&image).expect("benchmark ROM loads");
        group.bench_function(name, |b| b.iter(|| nes.run_frame()));
    }
    group.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
