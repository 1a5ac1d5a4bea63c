//! Synthetic ROMs made in code for the console's tests and for other crates' tests (rewind,
//! movies, the run pipeline): no commercial ROM is needed to exercise every part of the console.

/// NROM with CHR RAM whose program keeps every part of the console busy (see
/// [`board_rom`]).
pub fn busy_rom() -> Vec<u8> {
    board_rom(0, 2, 0)
}

/// A ROM for board `mapper` (`prg_16k` x 16 KiB PRG, `chr_8k` x 8 KiB CHR ROM, 0 = CHR
/// RAM, horizontal mirroring) whose program keeps every part of the console busy: the DMC
/// plays a looping sample (DMC DMA), the NMI handler runs an OAM DMA, writes CHR RAM
/// through $2006/$2007, resets the scroll and reads the controller; the main loop counts
/// in CPU RAM and PRG RAM with rendering on, and stores the count where the boards have
/// registers (the MMC3's bank select and data, the MMC1's control, the latch of the
/// discrete boards, NINA-001's CHR bank). Every 8 KiB PRG bank holds the same program, so
/// it runs on whatever the banks are.
pub fn board_rom(mapper: u8, prg_16k: u8, chr_8k: u8) -> Vec<u8> {
    #[rustfmt::skip]
    let main = [
        0x78, 0xD8, 0xA2, 0xFF, 0x9A,   // SEI; CLD; LDX #$FF; TXS
        0xA9, 0x4F, 0x8D, 0x10, 0x40,   // DMC: loop, fastest rate
        0xA9, 0x00, 0x8D, 0x12, 0x40,   // sample at $C000
        0xA9, 0xFF, 0x8D, 0x13, 0x40,   // 4081 bytes
        0xA9, 0x10, 0x8D, 0x15, 0x40,   // DMC on
        // $8019: loop (the PPU ignores $2000/$2001 during warm-up, so keep writing them)
        0xA9, 0x80, 0x8D, 0x00, 0x20,   // NMI on
        0xA9, 0x1E, 0x8D, 0x01, 0x20,   // rendering on
        0xE6, 0x10, 0xA5, 0x10,         // INC $10; LDA $10
        0x8D, 0x00, 0x60,               // STA $6000
        0x8D, 0xF0, 0x9F,               // STA $9FF0: bank select, control, latch
        0x8D, 0xF1, 0x9F,               // STA $9FF1: bank data
        0x8D, 0xFE, 0x7F,               // STA $7FFE: NINA-001 CHR bank
        0x4C, 0x19, 0x80,               // JMP $8019
    ];
    #[rustfmt::skip]
    let nmi = [
        0x48,                           // PHA
        0xA9, 0x02, 0x8D, 0x14, 0x40,   // OAM DMA from $0200
        0xEE, 0x00, 0x02,               // INC $0200
        0xA9, 0x00, 0x8D, 0x06, 0x20,   // $2006 = $00
        0xA5, 0x11, 0x8D, 0x06, 0x20,   // $2006 = [$11]
        0xA5, 0x10, 0x8D, 0x07, 0x20,   // CHR RAM byte = [$10]
        0xE6, 0x11,                     // INC $11
        0xA9, 0x00, 0x8D, 0x05, 0x20, 0x8D, 0x05, 0x20, // scroll 0, 0
        0xAD, 0x16, 0x40,               // LDA $4016
        0x68, 0x40,                     // PLA; RTI
    ];
    let mut bank = vec![0xEA; 0x2000];
    bank[..main.len()].copy_from_slice(&main);
    bank[0x100..0x100 + nmi.len()].copy_from_slice(&nmi);
    // A varied stretch the DMC sample ($C000 on) plays, so the output level moves.
    for (index, byte) in bank[0x200..0x1200].iter_mut().enumerate() {
        *byte = (index as u8).wrapping_mul(37) ^ 0x5A;
    }
    bank[0x1FFA..0x1FFC].copy_from_slice(&0x8100u16.to_le_bytes());
    bank[0x1FFC..0x1FFE].copy_from_slice(&0x8000u16.to_le_bytes());
    bank[0x1FFE..0x2000].copy_from_slice(&0x8100u16.to_le_bytes());
    let prg: Vec<u8> = (0..usize::from(prg_16k) * 2)
        .flat_map(|_| bank.iter().copied())
        .collect();
    let chr: Vec<u8> = (0..usize::from(chr_8k) * 0x2000)
        .map(|i| (i as u8).wrapping_mul(13) ^ (i >> 9) as u8)
        .collect();
    let mut image = nes_cartridge::ines_image(mapper, &prg, &chr);
    // Horizontal mirroring (flags 6 bit 0 clear), so nametable writes land on both layouts'
    // tables in the state tests.
    image[6] &= !0x01;
    image
}

/// A board of each kind the cartridge crate has, as (name, mapper, PRG 16 KiB banks, CHR
/// 8 KiB banks): [`board_rom`]'s arguments.
pub const BOARDS: [(&str, u8, u8, u8); 10] = [
    ("NROM", 0, 2, 0),
    ("MMC1", 1, 8, 0),
    ("UxROM", 2, 8, 0),
    ("CNROM", 3, 2, 4),
    ("MMC3", 4, 8, 8),
    ("AxROM", 7, 8, 0),
    ("Color Dreams", 11, 4, 8),
    ("BNROM", 34, 4, 0),
    ("NINA-001", 34, 4, 8),
    ("GxROM", 66, 4, 2),
];
