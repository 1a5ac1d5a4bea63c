//! NMI is edge-triggered: /NMI falls when VBlank starts with NMI enabled (or when NMI is enabled
//! during VBlank), and rewriting $2000 with NMI already enabled is no new edge.

use nes::Nes;
use nes_workspace_tests::{ines_image, nrom_program};

/// Waits two VBlanks (the PPU ignores $2000 writes until then), enables NMI, then loops writing
/// `$80` to $2000 forever. The NMI handler at $FFF0 counts in $00.
fn nmi_counter_rom(rewrite_ctrl: bool) -> Vec<u8> {
    #[rustfmt::skip]
    let mut code = vec![
        0x2C, 0x02, 0x20, 0x10, 0xFB, // BIT $2002 ; BPL (wait for VBlank)
        0x2C, 0x02, 0x20, 0x10, 0xFB, // again: the warm-up is over
        0xA9, 0x80, 0x8D, 0x00, 0x20, // LDA #$80 ; STA $2000
    ];
    if rewrite_ctrl {
        code.extend_from_slice(&[0x8D, 0x00, 0x20, 0x4C, 0x0F, 0x80]); // loop: STA $2000 ; JMP loop
    } else {
        code.extend_from_slice(&[0x4C, 0x0F, 0x80]); // loop: JMP loop
    }
    let mut prg = nrom_program(&code);
    // NMI handler at $FFF0: INC $00 ; RTI (nrom_program points NMI there).
    prg[0x7FF0..0x7FF3].copy_from_slice(&[0xE6, 0x00, 0x40]);
    ines_image(0, &prg, &[0; 0x2000])
}

fn nmis_per_frame(rewrite_ctrl: bool) -> Vec<u8> {
    let mut nes = Nes::from_ines(&nmi_counter_rom(rewrite_ctrl)).unwrap();
    for _ in 0..5 {
        nes.run_frame();
    }
    let mut counts = Vec::new();
    for _ in 0..60 {
        let before = nes.peek(0x0000);
        nes.run_frame();
        counts.push(nes.peek(0x0000).wrapping_sub(before));
    }
    counts
}

#[test]
fn one_nmi_per_frame() {
    assert_eq!(nmis_per_frame(false), vec![1; 60]);
}

#[test]
fn rewriting_ctrl_with_nmi_enabled_raises_no_extra_nmi() {
    assert_eq!(nmis_per_frame(true), vec![1; 60]);
}
