//! Fuzz target: save states.
//!
//! Input: the first byte picks one of the synthetic consoles below (one per board the
//! cartridge crate has, some boards in two wirings; ROMs built in code), the rest is a state
//! *payload*: the target puts that console's own header on it (signature, version, ROM hash,
//! length, checksum, see `Nes::state_with_payload`), so every mutation reaches the decoder
//! and the range checks instead of stopping at the checksum. A state that loads runs two
//! frames; what it then saves must load into a fresh console, save the same bytes, and run
//! on exactly as the console that saved it. A refused state must leave the console as it
//! was. Anything else, and any panic, is a bug.
//!
//! Seeds: real payloads from each synthetic console at power-on, mid-frame, with a DMA
//! pending and after many frames, and, when the test ROMs are there, from the smallest test
//! ROMs after some frames (paired with the synthetic console whose board and memory sizes
//! match theirs, so their payloads load).

use std::sync::OnceLock;

use nes::Nes;

/// A synthetic board: name, mapper, PRG ROM in 16 KiB units, CHR ROM in 8 KiB units (0 =
/// CHR RAM), header byte 6's low nibble (mirroring, four-screen), and the NES 2.0 RAM shift
/// counts (PRG RAM, CHR RAM) when the board needs a NES 2.0 header for its RAM.
struct Board {
    name: &'static str,
    mapper: u8,
    prg_16k: u8,
    chr_8k: u8,
    flags6: u8,
    nes2_ram: Option<(u8, u8)>,
}

/// Header byte 6: vertical mirroring, horizontal mirroring, four-screen VRAM.
const VERTICAL: u8 = 0x01;
const HORIZONTAL: u8 = 0x00;
const FOUR_SCREEN: u8 = 0x08;

/// Every board the cartridge crate has. The first shapes are those of common test ROMs
/// (blargg's NROM and MMC1 suites, the MMC3 tests), so test-ROM payloads find a console.
const BOARDS: [Board; 13] = [
    board("NROM-256, CHR ROM", 0, 2, 1, VERTICAL),
    board("NROM-128, CHR RAM", 0, 1, 0, HORIZONTAL),
    board("MMC1 SNROM", 1, 16, 0, VERTICAL),
    Board {
        // 32 KiB of PRG RAM (shift count 9): the RAM banking of SXROM.
        nes2_ram: Some((9, 7)),
        ..board("MMC1 SXROM", 1, 8, 0, VERTICAL)
    },
    board("MMC3", 4, 2, 1, VERTICAL),
    board("MMC3, four-screen", 4, 8, 0, FOUR_SCREEN),
    board("UxROM", 2, 8, 0, VERTICAL),
    board("CNROM", 3, 2, 4, HORIZONTAL),
    board("AxROM", 7, 8, 0, VERTICAL),
    board("Color Dreams", 11, 4, 8, VERTICAL),
    board("BNROM", 34, 4, 0, HORIZONTAL),
    board("NINA-001", 34, 4, 8, VERTICAL),
    board("GxROM", 66, 4, 2, VERTICAL),
];

const fn board(name: &'static str, mapper: u8, prg_16k: u8, chr_8k: u8, flags6: u8) -> Board {
    Board {
        name,
        mapper,
        prg_16k,
        chr_8k,
        flags6,
        nes2_ram: None,
    }
}

/// A little 6502 assembler: just the instructions the programs below use.
#[derive(Default)]
struct Code(Vec<u8>);

impl Code {
    fn bytes(&mut self, bytes: &[u8]) -> &mut Code {
        self.0.extend_from_slice(bytes);
        self
    }
    fn lda(&mut self, value: u8) -> &mut Code {
        self.bytes(&[0xA9, value])
    }
    fn lda_zp(&mut self, zp: u8) -> &mut Code {
        self.bytes(&[0xA5, zp])
    }
    fn lda_abs(&mut self, addr: u16) -> &mut Code {
        let [low, high] = addr.to_le_bytes();
        self.bytes(&[0xAD, low, high])
    }
    fn sta(&mut self, addr: u16) -> &mut Code {
        let [low, high] = addr.to_le_bytes();
        self.bytes(&[0x8D, low, high])
    }
    fn sta_zp(&mut self, zp: u8) -> &mut Code {
        self.bytes(&[0x85, zp])
    }
    fn inc_zp(&mut self, zp: u8) -> &mut Code {
        self.bytes(&[0xE6, zp])
    }
    fn inc_abs(&mut self, addr: u16) -> &mut Code {
        let [low, high] = addr.to_le_bytes();
        self.bytes(&[0xEE, low, high])
    }
    fn and(&mut self, value: u8) -> &mut Code {
        self.bytes(&[0x29, value])
    }
    fn lsr(&mut self) -> &mut Code {
        self.bytes(&[0x4A])
    }
    fn jmp(&mut self, addr: u16) -> &mut Code {
        let [low, high] = addr.to_le_bytes();
        self.bytes(&[0x4C, low, high])
    }
    /// Register writes of constants.
    fn store_all(&mut self, writes: &[(u16, u8)]) -> &mut Code {
        for &(addr, value) in writes {
            self.lda(value).sta(addr);
        }
        self
    }
    /// An MMC1 register load: A's five low bits, one per write, low bit first (the LSRs
    /// between keep the writes off consecutive cycles).
    fn mmc1_serial(&mut self, addr: u16) -> &mut Code {
        for bit in 0..5 {
            if bit > 0 {
                self.lsr();
            }
            self.sta(addr);
        }
        self
    }
}

/// Where the program's parts sit in each 8 KiB PRG bank (which all hold the same bytes, so
/// the program runs whatever the board maps), as CPU addresses in the $8000 window.
const MAIN: u16 = 0x8000;
const NMI: u16 = 0x8100;
const IRQ: u16 = 0x8300;
/// $FF bytes: latch writes go here, so a bus conflict leaves the value as written.
const LATCH: u16 = 0x8F00;
/// The DMC sample: $D000 ($4012 = $40) is this offset of the bank at $C000.
const SAMPLE_OFFSET: usize = 0x1000;

/// Zero-page counters the programs keep.
const FRAME: u8 = 0x10;
const NMIS: u8 = 0x11;
const SCRATCH: u8 = 0x12;

/// The board's register writes, once a frame (the frame counter in A).
fn board_writes(board: &Board, code: &mut Code) {
    match (board.mapper, board.chr_8k) {
        (0, _) => {}
        (1, _) => {
            code.sta_zp(SCRATCH).mmc1_serial(0x8000);
            code.lda_zp(SCRATCH).mmc1_serial(0xA000);
            code.lda_zp(NMIS).mmc1_serial(0xC000);
            // PRG bank, with bit 4 clear: PRG RAM stays enabled.
            code.lda_zp(SCRATCH).and(0x0F).mmc1_serial(0xE000);
        }
        (4, _) => {
            code.sta(0x8000).lda_zp(NMIS).sta(0x8001);
            code.lda_zp(FRAME).sta(0xA000);
            code.store_all(&[(0xA001, 0x80), (0xC000, 0x20)]);
            code.sta(0xC001).sta(0xE001);
        }
        (34, chr_8k) if chr_8k > 1 => {
            code.sta(0x7FFD).sta(0x7FFE).lsr().sta(0x7FFF);
        }
        _ => {
            code.sta(LATCH);
        }
    }
}

/// One 8 KiB PRG bank of `board`'s program: APU channels all playing (the DMC looping a
/// sample, so DMC DMA), NMI every frame with an OAM DMA, CHR RAM writes through $2007,
/// scrolling, controller strobes and reads, APU register writes and the board's register
/// writes; frame and MMC3 IRQs acknowledged; a main loop counting into CPU and PRG RAM.
fn prg_bank(board: &Board) -> Vec<u8> {
    let mut main = Code::default();
    main.bytes(&[0x78, 0xD8, 0xA2, 0xFF, 0x9A]); // SEI; CLD; LDX #$FF; TXS
    main.store_all(&[
        (0x4015, 0x1F),
        (0x4000, 0xBF),
        (0x4001, 0xA3),
        (0x4002, 0x40),
        (0x4003, 0x09),
        (0x4004, 0x5A),
        (0x4005, 0x8A),
        (0x4006, 0x90),
        (0x4007, 0x02),
        (0x4008, 0x81),
        (0x400A, 0x30),
        (0x400B, 0x01),
        (0x400C, 0x28),
        (0x400E, 0x83),
        (0x400F, 0x10),
        (0x4010, 0x4E),
        (0x4011, 0x40),
        (0x4012, 0x40),
        (0x4013, 0x20),
        (0x4015, 0x1F),
    ]);
    main.bytes(&[0x58]); // CLI
    let main_loop = MAIN + main.0.len() as u16;
    // The PPU ignores $2000/$2001 during its warm-up: keep writing them.
    main.store_all(&[(0x2000, 0x80), (0x2001, 0x1E)]);
    main.inc_zp(FRAME).lda_zp(FRAME).sta(0x6000).sta(0x7000);
    main.jmp(main_loop);

    let mut nmi = Code::default();
    nmi.bytes(&[0x48, 0x8A, 0x48]); // PHA; TXA; PHA
    nmi.store_all(&[(0x4014, 0x02)]);
    nmi.inc_abs(0x0200).inc_abs(0x0203);
    nmi.lda(0).sta(0x2006).lda_zp(NMIS).sta(0x2006);
    nmi.lda_zp(FRAME).sta(0x2007).inc_zp(NMIS);
    nmi.lda(0).sta(0x2005).sta(0x2005);
    nmi.store_all(&[(0x4016, 1), (0x4016, 0)]);
    nmi.lda_abs(0x4016).lda_abs(0x4017);
    nmi.lda_zp(FRAME).sta(0x4002).store_all(&[(0x4003, 0x09)]);
    nmi.lda_zp(FRAME).and(0xC0).sta(0x4017);
    nmi.lda_zp(FRAME);
    board_writes(board, &mut nmi);
    nmi.bytes(&[0x68, 0xAA, 0x68, 0x40]); // PLA; TAX; PLA; RTI

    let mut irq = Code::default();
    irq.bytes(&[0x48]).lda_abs(0x4015);
    if board.mapper == 4 {
        irq.sta(0xE000).sta(0xE001);
    }
    irq.bytes(&[0x68, 0x40]); // PLA; RTI

    let mut bank = vec![0xEA; 0x2000];
    for (at, code) in [(MAIN, &main), (NMI, &nmi), (IRQ, &irq)] {
        let start = usize::from(at - MAIN);
        bank[start..start + code.0.len()].copy_from_slice(&code.0);
    }
    let latch = usize::from(LATCH - MAIN);
    bank[latch..latch + 16].fill(0xFF);
    for (index, byte) in bank[SAMPLE_OFFSET..SAMPLE_OFFSET + 0xF00]
        .iter_mut()
        .enumerate()
    {
        *byte = (index as u8).wrapping_mul(37) ^ 0x5A;
    }
    for (at, vector) in [(0x1FFA, NMI), (0x1FFC, MAIN), (0x1FFE, IRQ)] {
        bank[at..at + 2].copy_from_slice(&vector.to_le_bytes());
    }
    bank
}

/// `board`'s iNES (or NES 2.0) image.
fn rom(board: &Board) -> Vec<u8> {
    let mut image = vec![
        b'N',
        b'E',
        b'S',
        0x1A,
        board.prg_16k,
        board.chr_8k,
        (board.mapper << 4) | board.flags6,
        board.mapper & 0xF0,
    ];
    image.resize(16, 0);
    if let Some((prg_ram, chr_ram)) = board.nes2_ram {
        image[7] |= 0x08;
        image[10] = prg_ram;
        image[11] = chr_ram;
    }
    let bank = prg_bank(board);
    for _ in 0..usize::from(board.prg_16k) * 2 {
        image.extend_from_slice(&bank);
    }
    image.extend(
        (0..usize::from(board.chr_8k) * 0x2000)
            .map(|i| (i as u8).wrapping_mul(13) ^ (i >> 9) as u8),
    );
    image
}

/// A synthetic console at power-on and its state then (what a refused load must leave).
struct Console {
    nes: Nes,
    state: Vec<u8>,
}

/// The synthetic consoles, made once: every input starts from a clone.
fn consoles() -> &'static [Console] {
    static CONSOLES: OnceLock<Vec<Console>> = OnceLock::new();
    CONSOLES.get_or_init(|| {
        BOARDS
            .iter()
            .map(|board| {
                let mut nes = Nes::from_ines(&rom(board))
                    .unwrap_or_else(|error| panic!("{}: {error}", board.name));
                // Audio on: the resampler's state is part of the payload then.
                nes.set_audio_sample_rate(44_100);
                let state = nes.save_state();
                Console { nes, state }
            })
            .collect()
    })
}

/// One fuzz input (see the module documentation).
pub fn run(data: &[u8]) {
    let Some((&which, payload)) = data.split_first() else {
        return;
    };
    let consoles = consoles();
    let base = &consoles[usize::from(which) % consoles.len()];
    let mut nes = base.nes.clone();
    let state = nes.state_with_payload(payload);
    if nes.load_state(&state).is_err() {
        assert!(
            nes.save_state() == base.state,
            "a refused state changed the console"
        );
        return;
    }
    nes.run_frame();
    nes.run_frame();
    let saved = nes.save_state();
    let mut reloaded = base.nes.clone();
    if let Err(error) = reloaded.load_state(&saved) {
        panic!("a state the console saved is refused: {error}");
    }
    assert!(
        reloaded.save_state() == saved,
        "a loaded state saves differently"
    );
    nes.run_frame();
    reloaded.run_frame();
    assert!(
        reloaded.save_state() == nes.save_state(),
        "a loaded state runs on differently from the console that saved it"
    );
}

/// `[which] + payload` of `nes`'s state now.
fn input(which: usize, nes: &Nes) -> Vec<u8> {
    let mut input = vec![which as u8];
    input.extend_from_slice(&nes.save_state()[Nes::STATE_HEADER_LEN..]);
    input
}

/// Steps instructions until `found` holds, for at most `frames` frames.
fn step_until(nes: &mut Nes, frames: u64, found: impl Fn(&Nes) -> bool) {
    let limit = nes.frame_count() + frames;
    while !found(nes) && nes.frame_count() < limit {
        nes.step_instruction();
    }
}

/// Test-ROM payloads (see the module documentation): at most this many per console.
const TEST_ROM_SEEDS_PER_CONSOLE: usize = 2;

/// The seed inputs (see the module documentation).
pub fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (which, console) in consoles().iter().enumerate() {
        let mut nes = console.nes.clone();
        seeds.push(input(which, &nes));
        for _ in 0..3 {
            nes.run_frame();
        }
        step_until(&mut nes, 1, |nes| nes.ppu_position().0 == 120);
        seeds.push(input(which, &nes));
        step_until(&mut nes, 3, |nes| nes.pending_dma().0);
        seeds.push(input(which, &nes));
        step_until(&mut nes, 3, |nes| nes.pending_dma().1);
        seeds.push(input(which, &nes));
        for _ in 0..60 {
            nes.run_frame();
        }
        seeds.push(input(which, &nes));
    }
    let mut per_console = [0; BOARDS.len()];
    for image in crate::corpus::test_rom_images(usize::MAX, 600 * 1024) {
        let Ok(mut nes) = Nes::from_ines(&image) else {
            continue;
        };
        nes.set_audio_sample_rate(44_100);
        // The console its power-on state fits (same board, wiring and memory sizes).
        let Some(which) = matching_console(&nes) else {
            continue;
        };
        if per_console[which] == TEST_ROM_SEEDS_PER_CONSOLE {
            continue;
        }
        for _ in 0..30 {
            nes.run_frame();
        }
        if matching_console(&nes) == Some(which) {
            per_console[which] += 1;
            seeds.push(input(which, &nes));
        }
    }
    seeds
}

/// The synthetic console into which `nes`'s state loads, if any.
fn matching_console(nes: &Nes) -> Option<usize> {
    let payload = &nes.save_state()[Nes::STATE_HEADER_LEN..];
    consoles().iter().position(|console| {
        let mut synthetic = console.nes.clone();
        synthetic
            .load_state(&synthetic.state_with_payload(payload))
            .is_ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the test ROMs are there; under CI they must be.
    fn test_roms_present() -> bool {
        let present = crate::corpus::test_rom_dir().is_some();
        if !present {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but the test ROMs are missing"
            );
            eprintln!("skipped: no test ROMs, so no test-ROM save-state seeds");
        }
        present
    }

    #[test]
    fn every_synthetic_console_runs_its_board() {
        for (board, console) in BOARDS.iter().zip(consoles()) {
            let mut nes = console.nes.clone();
            for _ in 0..10 {
                nes.run_frame();
            }
            assert_eq!(nes.jammed_at(), None, "{}", board.name);
            assert!(nes.peek(0x0011) >= 5, "{}: NMIs run", board.name);
        }
    }

    #[test]
    fn seeds_are_real_states_that_load() {
        let seeds = seeds();
        assert!(seeds.len() >= 5 * BOARDS.len());
        let from_test_roms = seeds.len() - 5 * BOARDS.len();
        if test_roms_present() {
            assert!(from_test_roms >= 3, "{from_test_roms} test-ROM seeds");
        }
        for seed in &seeds {
            let console = &consoles()[usize::from(seed[0])];
            let mut nes = console.nes.clone();
            let state = nes.state_with_payload(&seed[1..]);
            nes.load_state(&state).unwrap();
        }
    }

    #[test]
    fn smoke() {
        test_roms_present();
        let seeds = seeds();
        let ran = crate::mutate::smoke(&seeds, 2_000, 0x5EED_57A7E, 1 << 20, run);
        assert_eq!(ran, seeds.len() + 2_000);
    }

    /// Writes the seeds into fuzz/corpus/save_state for libFuzzer:
    /// `cargo test -p nes-fuzzing --lib save_state::tests::write_corpus -- --ignored`.
    #[test]
    #[ignore]
    fn write_corpus() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/save_state");
        std::fs::create_dir_all(&dir).unwrap();
        for (index, seed) in seeds().iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{index:03}")), seed).unwrap();
        }
    }
}
