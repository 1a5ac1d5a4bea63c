//! Whatever a program does, the console must not panic: random register traffic, random code,
//! random bytes where a ROM should be. (The test profile keeps overflow checks on, so
//! arithmetic overflow counts as a panic here too.)

use nes::Nes;
use nes_workspace_tests::{ines_image, nrom_program};

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn byte(&mut self) -> u8 {
        (self.next() >> 32) as u8
    }
}

#[test]
fn random_register_traffic_never_panics() {
    // The program hammers the readable registers while the test writes random values to
    // every PPU and APU register between instructions, rendering and DMA included.
    #[rustfmt::skip]
    let code = [
        0xAD, 0x02, 0x20, // loop: LDA $2002
        0xAD, 0x04, 0x20, //       LDA $2004
        0xAD, 0x07, 0x20, //       LDA $2007
        0xAD, 0x15, 0x40, //       LDA $4015
        0xAD, 0x16, 0x40, //       LDA $4016
        0x4C, 0x00, 0x80, //       JMP loop
    ];
    let image = ines_image(0, &nrom_program(&code), &[]);
    let mut nes = Nes::from_ines(&image).unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let registers: Vec<u16> = (0x2000..=0x2007).chain(0x4000..=0x4017).collect();
    let start = nes.frame_count();
    for _ in 0..400_000 {
        let register = registers[rng.next() as usize % registers.len()];
        nes.poke(register, rng.byte());
        nes.step_instruction();
    }
    assert!(nes.frame_count() > start, "time must keep advancing");
}

#[test]
fn random_code_never_panics() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for round in 0..8 {
        let mut prg: Vec<u8> = (0..0x8000).map(|_| rng.byte()).collect();
        // Vectors into the random code, so it runs.
        prg[0x7FFA..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80, 0x00, 0x90]);
        let chr: Vec<u8> = (0..0x2000).map(|_| rng.byte()).collect();
        let mapper = [0, 1, 2, 3, 4, 7, 11, 66][round];
        let mut image = ines_image(mapper, &prg, &chr);
        image[6] |= 0x02; // battery RAM at $6000
        let mut nes = Nes::from_ines(&image).unwrap();
        for _ in 0..120 {
            nes.run_frame();
        }
        nes.soft_reset();
        nes.run_frame();
        nes.power_cycle();
        nes.run_frame();
    }
}

#[test]
fn random_images_are_errors_or_consoles_never_panics() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..2_000 {
        let len = (rng.next() % 0x12000) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.byte()).collect();
        if bytes.len() >= 4 && rng.next().is_multiple_of(2) {
            bytes[..4].copy_from_slice(b"NES\x1a");
        }
        if let Ok(mut nes) = Nes::from_ines(&bytes) {
            nes.run_frame();
        }
    }
}
