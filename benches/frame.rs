//! Whole-frame emulation speed: CPU, PPU (rendering on) and APU together.
//!
//! Uses a synthetic NROM program built in code, so it runs on any machine; when the public test
//! ROMs are present, a blargg ROM is measured as well.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nes::Nes;
use nes_headless::test_roms::{find_manifest, manifest_root};
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
        // An NROM test and an MMC3 one: the MMC3 watches PPU A12, whose IRQ timing decides
        // how often the console must catch the PPU up.
        for (name, path) in [
            (
                "blargg_01_basics",
                "cpu/instr_test-v5/rom_singles/01-basics.nes",
            ),
            (
                "mmc3_test_2_details",
                "beyond/mmc3_test_2/rom_singles/2-details.nes",
            ),
        ] {
            if let Ok(bytes) = std::fs::read(manifest_root(&manifest).join(path)) {
                roms.push((name.to_owned(), bytes));
            }
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

/// Save states taken every frame (rewind, Lua `savestate.save` in loops) must stay cheap:
/// saving into a reused buffer, loading, and one rewind snapshot (save + delta + compress),
/// on a console with audio on after 120 frames of the rendering program.
fn save_states(c: &mut Criterion) {
    let mut nes = Nes::from_ines(&busy_rendering_program()).expect("benchmark ROM loads");
    nes.set_audio_sample_rate(48_000);
    let mut samples = Vec::new();
    for _ in 0..120 {
        nes.run_frame();
        nes.take_audio_samples(&mut samples);
    }
    let mut buffer = Vec::new();
    nes.save_state_into(&mut buffer);
    eprintln!("save state size: {} bytes", buffer.len());
    let mut group = c.benchmark_group("save_state");
    group.bench_function("save", |b| b.iter(|| nes.save_state_into(&mut buffer)));
    let state = buffer.clone();
    group.bench_function("load", |b| {
        b.iter(|| nes.load_state(&state).expect("state loads"))
    });
    group.bench_function("save_and_load", |b| {
        b.iter(|| {
            nes.save_state_into(&mut buffer);
            nes.load_state(&buffer).expect("state loads");
        })
    });
    let mut rewind = nes_movie::Rewind::new(64 << 20, 1);
    group.bench_function("frame_plus_rewind_snapshot", |b| {
        b.iter(|| {
            nes.run_frame();
            nes.take_audio_samples(&mut samples);
            samples.clear();
            rewind.record(&nes);
        })
    });
    eprintln!(
        "rewind: {} snapshots in {} bytes ({} bytes per snapshot)",
        rewind.len(),
        rewind.memory_used(),
        rewind.memory_used() / rewind.len().max(1)
    );
    group.finish();
}

criterion_group!(benches, frames, save_states);
criterion_main!(benches);
