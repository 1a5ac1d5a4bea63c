//! Test helpers: a flat 16 KiB PPU bus and clocking utilities.

use crate::{Ppu, PpuBus, PpuWriteBus};

/// `$0000-$3FFF` as one flat array (no mirroring), recording every fetch address (and, in
/// `read_dots`, the dot of each, counted through `PpuBus::dots_elapsed`).
pub(crate) struct FlatBus {
    pub memory: Box<[u8; 0x4000]>,
    pub reads: Vec<u16>,
    pub read_dots: Vec<u64>,
    pub record_reads: bool,
    /// Dots elapsed since the bus was made.
    pub clock: u64,
    pub address_changes: Vec<u16>,
}

impl FlatBus {
    pub fn new() -> FlatBus {
        FlatBus {
            memory: Box::new([0; 0x4000]),
            reads: Vec::new(),
            read_dots: Vec::new(),
            record_reads: false,
            clock: 0,
            address_changes: Vec::new(),
        }
    }
}

impl PpuBus for FlatBus {
    fn read(&mut self, addr: u16) -> u8 {
        if self.record_reads {
            self.reads.push(addr);
            self.read_dots.push(self.clock);
        }
        self.memory[usize::from(addr & 0x3FFF)]
    }

    fn peek(&self, addr: u16) -> u8 {
        self.memory[usize::from(addr & 0x3FFF)]
    }

    fn address_changed(&mut self, addr: u16) {
        self.address_changes.push(addr);
    }

    fn dots_elapsed(&mut self, dots: u32) {
        self.clock += u64::from(dots);
    }
}

impl PpuWriteBus for FlatBus {
    fn write(&mut self, addr: u16, value: u8) {
        self.memory[usize::from(addr & 0x3FFF)] = value;
    }
}

/// Ticks until the next dot to execute is (`scanline`, `dot`); at most two frames.
pub(crate) fn run_to(ppu: &mut Ppu, bus: &mut FlatBus, scanline: u16, dot: u16) {
    for _ in 0..2 * ppu.dots_per_frame() {
        if ppu.scanline() == scanline && ppu.dot() == dot {
            return;
        }
        ppu.tick(bus);
    }
    panic!("never reached scanline {scanline} dot {dot}");
}

/// Ticks `dots` times.
pub(crate) fn run_dots(ppu: &mut Ppu, bus: &mut FlatBus, dots: u32) {
    for _ in 0..dots {
        ppu.tick(bus);
    }
}

/// A xorshift32 generator from `state` (non-zero): the random scenes and units of the tests.
pub(crate) fn xorshift32(mut state: u32) -> impl FnMut() -> u32 {
    move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    }
}
