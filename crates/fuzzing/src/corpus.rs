//! Seed inputs: synthetic cartridge images built in code, and images drawn from the public test
//! ROMs (`$NES_TEST_ROMS`, else `shared/test-roms` beside the workspace). The ROMs are never
//! copied into the repository: `scripts/fuzz.sh` writes the seed corpora into `fuzz/corpus/`
//! (ignored by git), and the smoke tests read the ROMs in place.

use std::path::PathBuf;

/// The test-ROM folder, if it exists.
pub fn test_rom_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("NES_TEST_ROMS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/test-roms"),
    };
    dir.is_dir().then_some(dir)
}

/// Up to `limit` test-ROM images (`.nes` files, smallest first, so the seeds stay quick),
/// each at most `max_len` bytes. Empty without the test ROMs.
pub fn test_rom_images(limit: usize, max_len: u64) -> Vec<Vec<u8>> {
    let Some(dir) = test_rom_dir() else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let mut pending = vec![dir];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                pending.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("nes"))
                && meta.len() <= max_len
            {
                files.push((meta.len(), path));
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .take(limit)
        .filter_map(|(_, path)| std::fs::read(path).ok())
        .collect()
}

/// For a smoke test whose seeds include test ROMs: says loudly that those seeds are skipped
/// when the test ROMs are missing (a folder without a single `.nes` file counts as missing),
/// and fails under `CI` (set by CI runners), where the test must never pass on synthetic seeds
/// alone.
pub fn expect_test_roms(target: &str) {
    if !test_rom_images(1, u64::MAX).is_empty() {
        return;
    }
    let message = format!(
        "{target} smoke: no test ROMs (set NES_TEST_ROMS or put them in shared/test-roms \
         beside the workspace; {:?} has none): their seeds are skipped, synthetic seeds \
         still run",
        test_rom_dir()
    );
    assert!(
        std::env::var_os("CI").is_none(),
        "{message}; CI is set, and CI must run them"
    );
    eprintln!("warning: {message}");
}

/// The test program every synthetic image runs, assembled for $FF00 (offset $1F00 of an 8 KiB
/// PRG bank, so it runs whichever bank a board maps at $E000). It touches what fuzzed images
/// and inputs should reach: the board's registers (a counter written to every register
/// address the boards here decode, MMC1's serial port included), PRG RAM, the PPU (NMI,
/// rendering, $2006/$2007 into CHR RAM, OAM DMA), the APU (a pulse tone, the DMC level, the
/// frame IRQ) and both controller ports.
#[rustfmt::skip]
const PROGRAM: [u8; 0x86] = [
    // $FF00 reset
    0x78,             // SEI
    0xD8,             // CLD
    0xA2, 0xFF,       // LDX #$FF
    0x9A,             // TXS
    0xA9, 0x0F,       // LDA #$0F
    0x8D, 0x15, 0x40, // STA $4015   channels on
    0xA9, 0xBF,       // LDA #$BF
    0x8D, 0x00, 0x40, // STA $4000   pulse 1: duty 2, constant volume 15
    0xA9, 0xFD,       // LDA #$FD
    0x8D, 0x02, 0x40, // STA $4002
    0xA9, 0x08,       // LDA #$08
    0x8D, 0x03, 0x40, // STA $4003
    0xA9, 0x00,       // LDA #$00
    0x8D, 0x17, 0x40, // STA $4017   4-step sequence, frame IRQ on
    0x58,             // CLI
    // $FF1F loop (the PPU ignores $2000/$2001 during its warm-up: write them every time)
    0xA9, 0x80,       // LDA #$80
    0x8D, 0x00, 0x20, // STA $2000   NMI on
    0xA9, 0x1E,       // LDA #$1E
    0x8D, 0x01, 0x20, // STA $2001   rendering on
    0xE6, 0x00,       // INC $00
    0xA5, 0x00,       // LDA $00
    0x8D, 0x00, 0x80, // STA $8000
    0x8D, 0x01, 0x80, // STA $8001
    0x8D, 0x00, 0xA0, // STA $A000
    0x8D, 0x01, 0xA0, // STA $A001
    0x8D, 0x00, 0xC0, // STA $C000
    0x8D, 0x01, 0xC0, // STA $C001
    0x8D, 0x01, 0xE0, // STA $E001   MMC3 IRQ on
    0x8D, 0x00, 0x60, // STA $6000
    0x8D, 0x11, 0x40, // STA $4011
    0xA9, 0x01,       // LDA #$01
    0x8D, 0x16, 0x40, // STA $4016   strobe
    0xA9, 0x00,       // LDA #$00
    0x8D, 0x16, 0x40, // STA $4016
    0xAD, 0x16, 0x40, // LDA $4016
    0xAD, 0x17, 0x40, // LDA $4017
    0x85, 0x01,       // STA $01
    0x4C, 0x1F, 0xFF, // JMP loop
    // $FF5D NMI
    0x48,             // PHA
    0xE6, 0x02,       // INC $02
    0xAD, 0x02, 0x20, // LDA $2002
    0xA5, 0x00,       // LDA $00
    0x8D, 0x06, 0x20, // STA $2006
    0x8D, 0x06, 0x20, // STA $2006
    0x8D, 0x07, 0x20, // STA $2007
    0xA9, 0x00,       // LDA #$00
    0x8D, 0x05, 0x20, // STA $2005
    0x8D, 0x05, 0x20, // STA $2005
    0xA9, 0x02,       // LDA #$02
    0x8D, 0x14, 0x40, // STA $4014   OAM DMA from $0200
    0x68,             // PLA
    0x40,             // RTI
    // $FF7D IRQ
    0x48,             // PHA
    0x8D, 0x00, 0xE0, // STA $E000   MMC3: acknowledge
    0xAD, 0x15, 0x40, // LDA $4015   APU: acknowledge the frame IRQ
    0x68,             // PLA
    0x40,             // RTI
];
const RESET: u16 = 0xFF00;
const NMI: u16 = 0xFF5D;
const IRQ: u16 = 0xFF7D;

/// What a synthetic image's header declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageSpec {
    pub mapper: u16,
    /// NES 2.0 only.
    pub submapper: u8,
    /// PRG ROM in 16 KiB units.
    pub prg_16k: u8,
    /// CHR ROM in 8 KiB units (0: CHR RAM).
    pub chr_8k: u8,
    /// Flags 6 bits 0-3: vertical mirroring, battery, trainer, four-screen.
    pub flags6: u8,
    /// A NES 2.0 header (else iNES 1.0).
    pub nes2: bool,
    /// NES 2.0 bytes 10 and 11: PRG RAM / NVRAM and CHR RAM / NVRAM shift counts.
    pub ram_shifts: [u8; 2],
}

impl ImageSpec {
    /// A 32 KiB PRG, 8 KiB CHR ROM iNES 1.0 image for `mapper`, vertical mirroring.
    pub const fn ines(mapper: u16) -> ImageSpec {
        ImageSpec {
            mapper,
            submapper: 0,
            prg_16k: 2,
            chr_8k: 1,
            flags6: 0x01,
            nes2: false,
            ram_shifts: [0, 0],
        }
    }

    pub const fn prg_chr(self, prg_16k: u8, chr_8k: u8) -> ImageSpec {
        ImageSpec {
            prg_16k,
            chr_8k,
            ..self
        }
    }

    pub const fn flags(self, flags6: u8) -> ImageSpec {
        ImageSpec { flags6, ..self }
    }

    pub const fn nes2(self, submapper: u8, ram_shifts: [u8; 2]) -> ImageSpec {
        ImageSpec {
            nes2: true,
            submapper,
            ram_shifts,
            ..self
        }
    }

    /// The image: header, trainer if flagged, PRG ROM (every 8 KiB bank a distinct pattern
    /// ending in [`PROGRAM`] and the vectors), CHR ROM (tile patterns).
    pub fn image(&self) -> Vec<u8> {
        let mut image = vec![
            b'N',
            b'E',
            b'S',
            0x1A,
            self.prg_16k,
            self.chr_8k,
            ((self.mapper as u8) << 4) | (self.flags6 & 0x0F),
            (self.mapper as u8) & 0xF0,
        ];
        if self.nes2 {
            image[7] |= 0x08;
            image.extend([
                ((self.mapper >> 8) as u8 & 0x0F) | (self.submapper << 4),
                0,
                self.ram_shifts[0],
                self.ram_shifts[1],
            ]);
        }
        image.resize(16, 0);
        if self.flags6 & 0x04 != 0 {
            // The trainer lands at $7000: an RTS, so code calling it would return.
            image.extend(std::iter::repeat_n(0x60, 512));
        }
        for bank in 0..usize::from(self.prg_16k) * 2 {
            image.extend(prg_bank(bank));
        }
        for index in 0..usize::from(self.chr_8k) * 0x2000 {
            image.push((index as u8).wrapping_mul(7) ^ (index >> 10) as u8);
        }
        image
    }
}

/// An 8 KiB PRG bank: bank-numbered filler, then the program and the vectors.
fn prg_bank(bank: usize) -> Vec<u8> {
    let mut prg: Vec<u8> = (0..0x2000).map(|i| (bank * 3 + i) as u8).collect();
    prg[0x1F00..0x1F00 + PROGRAM.len()].copy_from_slice(&PROGRAM);
    prg[0x1FFA..0x1FFC].copy_from_slice(&NMI.to_le_bytes());
    prg[0x1FFC..0x1FFE].copy_from_slice(&RESET.to_le_bytes());
    prg[0x1FFE..].copy_from_slice(&IRQ.to_le_bytes());
    prg
}

/// The cartridge the input targets (FM2 movies, `--press`/`--input` schedules, palettes)
/// play on: NROM with the test program, which reads both controllers every loop.
pub fn console_image() -> Vec<u8> {
    ImageSpec::ines(0).image()
}

/// [`console_image`] and its cartridge, built once: every input clones the cartridge.
pub fn console() -> &'static (Vec<u8>, nes::Cartridge) {
    static CONSOLE: std::sync::OnceLock<(Vec<u8>, nes::Cartridge)> = std::sync::OnceLock::new();
    CONSOLE.get_or_init(|| {
        let image = console_image();
        let cart = nes::Cartridge::from_ines(&image).expect("the console image loads");
        (image, cart)
    })
}

/// Synthetic images for every board `nes-cartridge` supports, in the header variants that
/// choose between its wirings (iNES 1.0 and NES 2.0, trainer, CHR RAM and ROM, battery,
/// mirroring, four-screen, RAM sizes), plus NES 2.0 exponent sizes and a few images the
/// loader must refuse.
pub fn synthetic_images() -> Vec<Vec<u8>> {
    const VERTICAL: u8 = 0x01;
    const BATTERY: u8 = 0x02;
    const TRAINER: u8 = 0x04;
    const FOUR_SCREEN: u8 = 0x08;
    let specs = [
        // NROM
        ImageSpec::ines(0).prg_chr(1, 1),
        ImageSpec::ines(0).prg_chr(2, 0).flags(BATTERY),
        ImageSpec::ines(0).flags(TRAINER | FOUR_SCREEN),
        ImageSpec::ines(0).nes2(0, [0x07, 0x00]),
        // MMC1: SKROM, SNROM, SUROM, SEROM, SOROM, SXROM
        ImageSpec::ines(1).prg_chr(8, 16).flags(BATTERY),
        ImageSpec::ines(1).prg_chr(16, 0).flags(BATTERY),
        ImageSpec::ines(1).prg_chr(32, 0),
        ImageSpec::ines(1).prg_chr(2, 1).nes2(5, [0, 0]),
        ImageSpec::ines(1)
            .prg_chr(16, 0)
            .flags(BATTERY)
            .nes2(0, [0x77, 0x07]),
        ImageSpec::ines(1)
            .prg_chr(16, 0)
            .flags(BATTERY)
            .nes2(0, [0x90, 0x07]),
        // UxROM: UNROM, UOROM
        ImageSpec::ines(2).prg_chr(8, 0),
        ImageSpec::ines(2).prg_chr(16, 0).flags(0),
        // CNROM
        ImageSpec::ines(3).prg_chr(2, 4).flags(0),
        // MMC3: CHR ROM, CHR RAM with battery, four-screen, NES 2.0
        ImageSpec::ines(4).prg_chr(8, 16),
        ImageSpec::ines(4).prg_chr(4, 0).flags(BATTERY | TRAINER),
        ImageSpec::ines(4).prg_chr(4, 4).flags(FOUR_SCREEN),
        ImageSpec::ines(4).prg_chr(4, 4).nes2(0, [0x70, 0x00]),
        // AxROM: ANROM, AOROM
        ImageSpec::ines(7).prg_chr(8, 0),
        ImageSpec::ines(7).prg_chr(16, 0),
        // Color Dreams
        ImageSpec::ines(11).prg_chr(4, 4).flags(VERTICAL),
        // Mapper 34: BNROM (CHR RAM), NINA-001 (CHR ROM; NES 2.0 submappers 1 and 2)
        ImageSpec::ines(34).prg_chr(8, 0),
        ImageSpec::ines(34).prg_chr(4, 8),
        ImageSpec::ines(34).prg_chr(4, 1).nes2(1, [0x07, 0]),
        ImageSpec::ines(34).prg_chr(4, 0).nes2(2, [0, 0x07]),
        // GxROM
        ImageSpec::ines(66).prg_chr(8, 4),
        // Refused: an unsupported mapper, NROM with too much PRG.
        ImageSpec::ines(5),
        ImageSpec::ines(0).prg_chr(4, 1),
    ];
    let mut images: Vec<Vec<u8>> = specs.iter().map(ImageSpec::image).collect();

    // NES 2.0 exponent-multiplier PRG size (MSB nibble $F): 2^13 * 3 = 24 KiB on NROM.
    let mut odd = ImageSpec::ines(0).nes2(0, [0, 0]).image();
    odd.truncate(16);
    odd[4] = (13 << 2) | 1;
    odd[9] = 0x0F;
    odd.extend(prg_bank(0));
    odd.extend(prg_bank(1));
    odd.extend(prg_bank(2));
    odd.extend(std::iter::repeat_n(0x55, 0x2000));
    images.push(odd);
    // "DiskDude!" junk in bytes 7-15 of an iNES 1.0 header.
    let mut junk = ImageSpec::ines(0).image();
    junk[7..16].copy_from_slice(b"DiskDude!");
    images.push(junk);
    // A truncated image and a bare header.
    let mut truncated = ImageSpec::ines(4).prg_chr(8, 16).image();
    truncated.truncate(100_000);
    images.push(truncated);
    images.push(ImageSpec::ines(0).image()[..16].to_vec());
    images
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_labels_are_where_the_vectors_point() {
        let at = |addr: u16| PROGRAM[usize::from(addr - RESET)];
        assert_eq!(at(RESET), 0x78, "SEI");
        assert_eq!(&PROGRAM[0x1F..0x21], &[0xA9, 0x80], "loop: LDA #$80");
        assert_eq!(&PROGRAM[0x5A..0x5D], &[0x4C, 0x1F, 0xFF], "JMP loop");
        assert_eq!(at(NMI), 0x48, "NMI: PHA");
        assert_eq!(
            PROGRAM[usize::from(IRQ - RESET) - 1],
            0x40,
            "NMI ends with RTI"
        );
        assert_eq!(at(IRQ), 0x48, "IRQ: PHA");
        assert_eq!(*PROGRAM.last().unwrap(), 0x40, "IRQ ends with RTI");
    }

    #[test]
    fn every_supported_board_loads_and_runs_the_program() {
        let mut boards = std::collections::BTreeSet::new();
        let mut refused = 0;
        for image in synthetic_images() {
            match nes::Nes::from_ines(&image) {
                Ok(mut nes) => {
                    boards.insert(nes.rom_info().board_name);
                    for _ in 0..3 {
                        nes.run_frame();
                    }
                    assert!(
                        nes.peek(0x0000) > 0,
                        "{}: the loop runs",
                        nes.rom_info().board_name
                    );
                    assert!(
                        nes.peek(0x0002) > 0,
                        "{}: NMIs arrive",
                        nes.rom_info().board_name
                    );
                    assert_eq!(nes.jammed_at(), None);
                }
                Err(_) => refused += 1,
            }
        }
        for board in [
            "NROM",
            "SKROM",
            "SNROM",
            "SUROM",
            "SEROM",
            "SOROM",
            "SXROM",
            "UNROM",
            "UOROM",
            "CNROM",
            "TxROM",
            "ANROM",
            "AOROM",
            "COLOR DREAMS",
            "BNROM",
            "NINA-001",
            "GNROM",
        ] {
            assert!(boards.contains(board), "no seed for {board}: {boards:?}");
        }
        assert_eq!(
            refused, 4,
            "the unsupported mapper, big NROM, truncated image, bare header"
        );
    }
}
