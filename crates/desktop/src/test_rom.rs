//! Synthetic ROMs for the window's unit tests.

use std::path::{Path, PathBuf};

/// Writes `<dir>/<name>`: an NROM program that waits for the PPU to warm up (it ignores
/// `$2000` until then), turns NMI on and loops, with `nmi` as the NMI handler (an RTI is
/// appended).
pub fn nmi_rom(dir: &Path, name: &str, nmi: &[u8]) -> PathBuf {
    let mut prg = vec![0xEA; 0x8000];
    #[rustfmt::skip]
    let main = [
        0x2C, 0x02, 0x20, 0x10, 0xFB, // BIT $2002; BPL (wait for vblank)
        0x2C, 0x02, 0x20, 0x10, 0xFB, // again
        0xA9, 0x80, 0x8D, 0x00, 0x20, // LDA #$80; STA $2000
        0x4C, 0x0F, 0x80,             // JMP *
    ];
    prg[..main.len()].copy_from_slice(&main);
    prg[0x100..0x100 + nmi.len()].copy_from_slice(nmi);
    prg[0x100 + nmi.len()] = 0x40; // RTI
    prg[0x7FFA..0x7FFC].copy_from_slice(&0x8100u16.to_le_bytes());
    prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
    let path = dir.join(name);
    std::fs::write(&path, nes::ines_image(0, &prg, &[])).unwrap();
    path
}
