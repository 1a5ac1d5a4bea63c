//! The NES console: composes the 2A03 CPU, the 2C02 PPU, the APU and a cartridge.
//!
//! The CPU is the master clock: every CPU bus access is one CPU cycle, around which the bus
//! advances the PPU three dots and the APU one cycle (see `bus.rs`).

mod bus;
mod controller;
pub mod fm2;
mod hooks;
pub mod input_schedule;
mod power_on;
mod rewind;
mod savestate;
mod trace;

use bus::SystemBus;
use nes_cpu::{Cpu, Status};

pub use hooks::{AddressSet, HookMachine, HookMap, MemoryHooks};
pub use nes_cartridge::{ines_image, Cartridge, CartridgeError, Mirroring, Mmc3Revision, RomInfo};
pub use nes_ppu::palette::{Palette, PaletteError};
pub use power_on::PowerOnRam;
pub use rewind::Rewind;
pub use savestate::{StateError, STATE_FORMAT_VERSION};

bitflags::bitflags! {
    /// Standard controller buttons, in the order the shift register reports them (A first).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
    pub struct Buttons: u8 {
        const A = 0x01;
        const B = 0x02;
        const SELECT = 0x04;
        const START = 0x08;
        const UP = 0x10;
        const DOWN = 0x20;
        const LEFT = 0x40;
        const RIGHT = 0x80;
    }
}

// Save states store the buttons held on each pad as their shift-register byte.
impl borsh::BorshSerialize for Buttons {
    fn serialize<W: borsh::io::Write>(&self, writer: &mut W) -> borsh::io::Result<()> {
        self.bits().serialize(writer)
    }
}

impl borsh::BorshDeserialize for Buttons {
    fn deserialize_reader<R: borsh::io::Read>(reader: &mut R) -> borsh::io::Result<Self> {
        Ok(Buttons::from_bits_retain(u8::deserialize_reader(reader)?))
    }
}

/// CPU registers as seen between instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct CpuRegisters {
    pub pc: u16,
    pub a: u8,
    pub x: u8,
    pub y: u8,
    pub s: u8,
    pub p: u8,
    /// CPU cycles since power-on (the 7-cycle reset sequence included).
    pub cycles: u64,
}

/// Width and height of the picture.
pub const SCREEN_WIDTH: usize = 256;
pub const SCREEN_HEIGHT: usize = 240;

/// A powered-on console with a cartridge inserted.
#[derive(Debug, Clone)]
pub struct Nes {
    cpu: Cpu,
    bus: SystemBus,
    /// Frames run by `run_frame` in which the game never read $4016/$4017 (FCEUX's lag count).
    lag_frames: u64,
    /// Whether the last frame run by `run_frame` was a lag frame.
    last_frame_lagged: bool,
    /// The audio output rate asked for (0 = off); a power cycle keeps it.
    audio_sample_rate: u32,
    /// How CPU RAM is filled at power-on (and at every power cycle).
    power_on_ram: PowerOnRam,
}

impl Nes {
    /// Parse an iNES / NES 2.0 image and power the console on.
    pub fn from_ines(bytes: &[u8]) -> Result<Nes, CartridgeError> {
        Ok(Nes::new(Cartridge::from_ines(bytes)?))
    }

    /// Power the console on with this cartridge (cold boot: RAM in its documented power-on
    /// state, all zero).
    pub fn new(cart: Cartridge) -> Nes {
        Nes::with_power_on_ram(cart, PowerOnRam::Zeroed)
    }

    /// Power the console on with CPU RAM filled as `power_on_ram` says; power cycles fill it
    /// the same way again.
    pub fn with_power_on_ram(cart: Cartridge, power_on_ram: PowerOnRam) -> Nes {
        let mut nes = Nes {
            cpu: Cpu::new(),
            bus: SystemBus::new(cart),
            lag_frames: 0,
            last_frame_lagged: false,
            audio_sample_rate: 0,
            power_on_ram,
        };
        power_on_ram.fill(&mut nes.bus.ram[..]);
        nes.cpu.power_on(&mut nes.bus);
        nes.bus.sync_ppu();
        nes
    }

    /// Run until the next picture is complete: frame N is the N-th time the PPU reaches scanline
    /// 240 after power-on, rounded up to an instruction boundary.
    ///
    /// The frame counts as a lag frame when the game did not read a controller port during it
    /// (FCEUX's definition: the game skipped its input poll, typically because its main loop
    /// overran the frame).
    pub fn run_frame(&mut self) {
        self.run_frame_within(u64::MAX);
    }

    /// `run_frame` for headless sweeps that must survive a stuck console: gives up once
    /// `cycle_budget` CPU cycles pass without the picture completing, and returns whether it
    /// completed. (`run_frame` is this without a budget: one compare per instruction.)
    pub fn run_frame_within(&mut self, cycle_budget: u64) -> bool {
        self.bus.controller_read = false;
        let target = self.bus.ppu.frames_completed() + 1;
        let deadline = self.cpu.cycles().saturating_add(cycle_budget);
        let mut completed = true;
        while self.bus.ppu.frames_completed() < target {
            if self.cpu.cycles() >= deadline {
                completed = false;
                break;
            }
            self.cpu.step(&mut self.bus);
        }
        self.bus.sync_ppu();
        self.last_frame_lagged = !self.bus.controller_read;
        self.lag_frames += u64::from(self.last_frame_lagged);
        completed
    }

    /// Lag frames since power-on (or since `reset_lag_frames`): frames run by `run_frame` in
    /// which the game never read $4016/$4017. Lua's `emu.lagcount`.
    pub fn lag_frames(&self) -> u64 {
        self.lag_frames
    }

    /// Whether the last frame `run_frame` ran was a lag frame (Lua's `emu.lagged`).
    pub fn lagged(&self) -> bool {
        self.last_frame_lagged
    }

    /// Start counting lag frames from zero again (FCEUX does this when a movie starts).
    pub fn reset_lag_frames(&mut self) {
        self.lag_frames = 0;
        self.last_frame_lagged = false;
    }

    /// Execute one CPU instruction (or interrupt sequence), keeping all chips in step. DMA
    /// cycles that halt the CPU happen inside it.
    pub fn step_instruction(&mut self) {
        self.cpu.step(&mut self.bus);
        self.bus.sync_ppu();
    }

    /// Frames completed since power-on.
    pub fn frame_count(&self) -> u64 {
        self.bus.ppu.frames_completed()
    }

    /// Press the console's reset button: the CPU runs its reset sequence, the PPU and APU take
    /// their reset state, and everything reset doesn't touch (RAM, most PPU state) is kept.
    pub fn soft_reset(&mut self) {
        self.bus.ppu.reset();
        // The reset may move the PPU: reschedule its next catch-up.
        self.bus.sync_ppu();
        self.bus.apu.reset();
        self.bus.cart.reset();
        self.bus.oam_dma_page = None;
        self.cpu.reset(&mut self.bus);
        self.bus.sync_ppu();
    }

    /// Turn the console off and on again. Battery-backed cartridge RAM survives; everything
    /// else, board registers included, returns to its power-on state.
    pub fn power_cycle(&mut self) {
        let mut cart = self.bus.cart.clone();
        cart.power_cycle();
        let held = [
            self.bus.controllers[0].held(),
            self.bus.controllers[1].held(),
        ];
        let lag_frames = self.lag_frames;
        let audio_sample_rate = self.audio_sample_rate;
        *self = Nes::with_power_on_ram(cart, self.power_on_ram);
        self.set_buttons(0, held[0]);
        self.set_buttons(1, held[1]);
        self.set_audio_sample_rate(audio_sample_rate);
        // The lag count belongs to the session (a movie's power command does not clear it in
        // FCEUX), not to the console's power.
        self.lag_frames = lag_frames;
    }

    /// The buttons held on controller `port` (0 or 1) from now on. Other ports are ignored.
    pub fn set_buttons(&mut self, port: usize, buttons: Buttons) {
        if let Some(pad) = self.bus.controllers.get_mut(port) {
            pad.set_held(buttons);
        }
    }

    /// Read the CPU address space without side effects (no $2002 clear, no $4016 shift).
    pub fn peek(&self, addr: u16) -> u8 {
        self.bus.peek(addr)
    }

    /// Store a byte as a debugger would: CPU RAM directly; other addresses through the bus
    /// write path (registers see the write) without advancing time.
    pub fn poke(&mut self, addr: u16, value: u8) {
        self.bus.poke(addr, value);
    }

    /// Read the PPU address space ($0000-$3FFF: pattern tables, nametables after mirroring,
    /// palette) without side effects.
    pub fn peek_ppu(&self, addr: u16) -> u8 {
        self.bus.peek_ppu(addr)
    }

    pub fn cpu_registers(&self) -> CpuRegisters {
        CpuRegisters {
            pc: self.cpu.pc,
            a: self.cpu.a,
            x: self.cpu.x,
            y: self.cpu.y,
            s: self.cpu.s,
            p: self.cpu.p.bits(),
            cycles: self.cpu.cycles(),
        }
    }

    /// Force CPU registers (nestest automation mode, Lua `setregister`).
    pub fn set_cpu_registers(&mut self, regs: CpuRegisters) {
        self.cpu.pc = regs.pc;
        self.cpu.a = regs.a;
        self.cpu.x = regs.x;
        self.cpu.y = regs.y;
        self.cpu.s = regs.s;
        self.cpu.p = Status::from_bits_retain(regs.p);
        self.cpu.set_cycles(regs.cycles);
    }

    /// DMA requests that will halt the CPU on its next read, as (OAM DMA, DMC sample fetch):
    /// for debuggers, and for tests that save states at such moments.
    pub fn pending_dma(&self) -> (bool, bool) {
        (
            self.bus.oam_dma_page.is_some(),
            self.bus.apu.dmc_dma_address().is_some(),
        )
    }

    /// The PPU's (scanline, dot) position.
    pub fn ppu_position(&self) -> (u16, u16) {
        (self.bus.ppu.scanline(), self.bus.ppu.dot())
    }

    /// `Some(pc)` once the CPU has executed a JAM/KIL opcode; the console keeps running (time
    /// advances) but the CPU does nothing more until reset.
    pub fn jammed_at(&self) -> Option<u16> {
        self.cpu.jammed().then_some(self.cpu.pc)
    }

    /// The last completed picture: 256x240 9-bit pixels (palette index | emphasis << 6).
    pub fn frame_buffer(&self) -> &[u16] {
        self.bus.ppu.frame_buffer()
    }

    /// Convert the last completed picture to RGBA bytes (256x240x4) through `palette`.
    pub fn frame_rgba(&self, palette: &Palette) -> Vec<u8> {
        let mut rgba = vec![0; SCREEN_WIDTH * SCREEN_HEIGHT * 4];
        palette.to_rgba(self.frame_buffer(), &mut rgba);
        rgba
    }

    /// Produce audio at `hz` samples per second from now on (0 turns audio output off, the
    /// fastest setting and the default).
    pub fn set_audio_sample_rate(&mut self, hz: u32) {
        self.audio_sample_rate = hz;
        self.bus.apu.set_sample_rate(hz);
    }

    /// Move the audio produced since the last call (mono, -1.0..1.0) to the end of `out`.
    pub fn take_audio_samples(&mut self, out: &mut Vec<f32>) {
        self.bus.apu.take_samples(out);
    }

    /// The cartridge's battery-backed RAM, if it has a battery.
    pub fn battery_ram(&self) -> Option<&[u8]> {
        self.bus.cart.battery_ram()
    }

    /// Restore battery-backed RAM (a `.sav` file); a wrong size is an error and changes nothing.
    pub fn load_battery_ram(&mut self, data: &[u8]) -> Result<(), CartridgeError> {
        self.bus.cart.load_battery_ram(data)
    }

    pub fn rom_info(&self) -> &RomInfo {
        self.bus.cart.info()
    }

    /// One nestest.log-format line describing the instruction about to execute.
    pub fn trace_line(&self) -> String {
        trace::format_line(&self.cpu, &self.bus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NROM image (32 KiB PRG, 8 KiB CHR) with `main` at $8000 and `nmi` at $8100.
    fn rom(main: &[u8], nmi: &[u8]) -> Vec<u8> {
        let mut image = vec![b'N', b'E', b'S', 0x1A, 2, 1, 0, 0];
        image.resize(16, 0);
        let mut prg = vec![0xEA; 0x8000];
        prg[..main.len()].copy_from_slice(main);
        prg[0x100..0x100 + nmi.len()].copy_from_slice(nmi);
        prg[0x7FFA..0x7FFC].copy_from_slice(&0x8100u16.to_le_bytes());
        prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
        prg[0x7FFE..0x8000].copy_from_slice(&0x8100u16.to_le_bytes());
        image.extend_from_slice(&prg);
        image.extend_from_slice(&[0; 0x2000]);
        image
    }

    /// Main loop: keep NMI enabled (writes during the PPU's warm-up are ignored, so repeat).
    const ENABLE_NMI_LOOP: [u8; 8] = [0xA9, 0x80, 0x8D, 0x00, 0x20, 0x4C, 0x00, 0x80];

    /// NMI: count NMIs at $00 and read $4016 only when the new count is odd.
    const READ_ON_ODD_NMI: [u8; 12] = [
        0xE6, 0x00, // INC $00
        0xA5, 0x00, // LDA $00
        0x29, 0x01, // AND #1
        0xF0, 0x03, // BEQ +3
        0xAD, 0x16, 0x40, // LDA $4016
        0x40, // RTI
    ];

    #[test]
    fn pokes_take_no_time() {
        let mut nes = Nes::from_ines(&rom(&ENABLE_NMI_LOOP, &READ_ON_ODD_NMI)).unwrap();
        nes.run_frame();
        for _ in 0..1000 {
            nes.step_instruction();
        }
        let position = nes.ppu_position();
        let cycles = nes.cpu_registers().cycles;
        for addr in [0x2000, 0x2006, 0x2007, 0x4015, 0x6000, 0x8000, 0x0010] {
            nes.poke(addr, 0x00);
            assert_eq!(nes.ppu_position(), position, "poke ${addr:04X}");
        }
        assert_eq!(nes.cpu_registers().cycles, cycles);
        assert_eq!(nes.peek(0x0010), 0x00);
    }

    #[test]
    fn a_frame_without_a_controller_read_is_a_lag_frame() {
        let mut nes = Nes::from_ines(&rom(&ENABLE_NMI_LOOP, &READ_ON_ODD_NMI)).unwrap();
        let mut expected_lag = 0;
        let (mut saw_lag, mut saw_read) = (false, false);
        for _ in 0..20 {
            let before = nes.peek(0x0000);
            nes.run_frame();
            let after = nes.peek(0x0000);
            // At most one NMI per frame; it read the pad iff it made the count odd.
            // The pad was read iff one of this frame's NMIs made the count odd.
            let read = (u16::from(before) + 1..=u16::from(after)).any(|count| count % 2 == 1);
            assert_eq!(nes.lagged(), !read, "frame {}", nes.frame_count());
            expected_lag += u64::from(!read);
            saw_lag |= !read;
            saw_read |= read;
        }
        assert!(
            saw_lag && saw_read,
            "the program both reads and skips reads"
        );
        assert_eq!(nes.lag_frames(), expected_lag);
        assert!(
            (9..=12).contains(&expected_lag),
            "about every other frame lags"
        );
    }

    #[test]
    fn lag_count_survives_power_and_can_be_reset() {
        // JMP $8000 forever: never reads a controller.
        let mut nes = Nes::from_ines(&rom(&[0x4C, 0x00, 0x80], &[0x40])).unwrap();
        for _ in 0..5 {
            nes.run_frame();
        }
        assert_eq!(nes.lag_frames(), 5);
        assert!(nes.lagged());
        nes.power_cycle();
        nes.run_frame();
        assert_eq!(nes.lag_frames(), 6);
        nes.reset_lag_frames();
        assert_eq!(nes.lag_frames(), 0);
        assert!(!nes.lagged());
    }

    #[test]
    fn a_budgeted_frame_matches_run_frame_or_gives_up() {
        // JMP $8000 forever.
        let mut by_run_frame = Nes::from_ines(&rom(&[0x4C, 0x00, 0x80], &[0x40])).unwrap();
        let mut budgeted = by_run_frame.clone();
        for _ in 0..3 {
            by_run_frame.run_frame();
            assert!(budgeted.run_frame_within(1_000_000));
            assert_eq!(budgeted.cpu_registers(), by_run_frame.cpu_registers());
            assert_eq!(budgeted.ppu_position(), by_run_frame.ppu_position());
            assert_eq!(budgeted.frame_buffer(), by_run_frame.frame_buffer());
        }
        // A frame is about 29,781 CPU cycles: 10,000 cannot finish one.
        let start = budgeted.cpu_registers().cycles;
        assert!(!budgeted.run_frame_within(10_000));
        let spent = budgeted.cpu_registers().cycles - start;
        assert!(
            (10_000..10_010).contains(&spent),
            "stops at the budget: {spent}"
        );
        assert_eq!(budgeted.frame_count(), 3);
        assert!(budgeted.run_frame_within(1_000_000), "and can go on");
        assert_eq!(budgeted.frame_count(), 4);
    }

    #[test]
    fn a_game_polling_every_frame_never_lags() {
        // LDA $4016; JMP $8000.
        let main = [0xAD, 0x16, 0x40, 0x4C, 0x00, 0x80];
        let mut nes = Nes::from_ines(&rom(&main, &[0x40])).unwrap();
        for _ in 0..5 {
            nes.run_frame();
            assert!(!nes.lagged());
        }
        assert_eq!(nes.lag_frames(), 0);
    }
}
