//! The NES console: composes the CPU, the PPU, the APU and a cartridge on a motherboard, for
//! an NTSC, PAL or Dendy console ([`Region`]).
//!
//! Every CPU bus access is one CPU cycle; the master clock turns cycles into PPU dots (three
//! per cycle on NTSC and Dendy, 3.2 on PAL), and the PPU is caught up to it lazily (see
//! `motherboard.rs` for the parts).

mod clock;
mod controller;
mod controller_ports;
mod dma_conflicts;
mod hardware;
mod hooks;
mod inspect;
mod memory_map;
mod motherboard;
mod power_on;
mod ppu_scheduler;
mod region;
mod savestate;
pub mod test_programs;
mod trace;

use motherboard::Motherboard;
use nes_cpu::{Cpu, Status};

pub use clock::ClockAlignment;
pub use hardware::{
    parse_variant, variant_name, ControllerPorts, CpuRevision, Hardware, PpuRevision,
    UnknownVariant, VariantNames,
};
pub use hooks::{AddressSet, FrameHooks, HookMachine, HookMap, MemoryHooks};
pub use inspect::Inspect;
pub use nes_cartridge::{
    file_md5, ines_image, BoardOptions, Cartridge, CartridgeError, Mirroring, Mmc3Revision, RomInfo,
};
pub use nes_ppu::palette::{Palette, PaletteError};
pub use nes_state::InvalidState;
pub use power_on::{PowerOn, PowerOnRam, Timeline};
pub use region::Region;
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

impl CpuRegisters {
    fn of(cpu: &Cpu) -> CpuRegisters {
        CpuRegisters {
            pc: cpu.pc,
            a: cpu.a,
            x: cpu.x,
            y: cpu.y,
            s: cpu.s,
            p: cpu.p.bits(),
            cycles: cpu.cycles(),
        }
    }

    /// Set the CPU's registers; its cycle count is the caller's to set or keep.
    fn store_in(self, cpu: &mut Cpu) {
        cpu.pc = self.pc;
        cpu.a = self.a;
        cpu.x = self.x;
        cpu.y = self.y;
        cpu.s = self.s;
        cpu.p = Status::from_bits_retain(self.p);
    }
}

/// Size of the console's CPU RAM in bytes ([`Nes::ram`]).
pub const CPU_RAM_SIZE: usize = motherboard::RAM_SIZE;

/// Width and height of the picture.
pub const SCREEN_WIDTH: usize = 256;
pub const SCREEN_HEIGHT: usize = 240;

/// A powered-on console with a cartridge inserted.
#[derive(Debug, Clone)]
pub struct Nes {
    cpu: Cpu,
    board: Motherboard,
    /// `frame_count()` minus the PPU's completed frames, modulo 2^64: the count goes on
    /// through power cycles (which start a new PPU) and restarts at `reset_frame_count`.
    frame_count_offset: u64,
    /// Lag frames since power-on (FCEUX's lag counter, `emu.lagcount()`).
    lag_count: u64,
    /// The audio output rate asked for (0 = off); a power cycle keeps it.
    audio_sample_rate: u32,
    /// How the console starts, at power-on and at every power cycle.
    power_on: PowerOn,
    /// Which console this is (chip revisions, port wiring); kept through power cycles and
    /// state loads.
    hardware: Hardware,
    /// NTSC, PAL or Dendy: kept through power cycles; save states record it.
    region: Region,
    /// The CPU/PPU divider alignment the console powers on with.
    alignment: ClockAlignment,
}

impl Nes {
    /// Parse an iNES / NES 2.0 image and power the console on (the hardware start-up, RAM
    /// zeroed).
    pub fn from_ines(bytes: &[u8]) -> Result<Nes, CartridgeError> {
        Ok(Nes::new(Cartridge::from_ines(bytes)?))
    }

    /// Power the console on with this cartridge: the hardware start-up, RAM zeroed, in the
    /// region the cartridge's header names ([`Region::for_rom`]).
    pub fn new(cart: Cartridge) -> Nes {
        Nes::with_power_on(cart, PowerOn::HARDWARE)
    }

    /// Power the console on with this cartridge as `power_on` says, in the region the
    /// cartridge's header names; power cycles start it the same way again.
    pub fn with_power_on(cart: Cartridge, power_on: PowerOn) -> Nes {
        let region = Region::for_rom(cart.info());
        Nes::with_region(cart, power_on, region, ClockAlignment::default())
    }

    /// The console this is: NTSC, PAL or Dendy.
    pub fn region(&self) -> Region {
        self.region
    }

    /// Makes this a console of `region` (with the CPU/PPU divider alignment `alignment`) and
    /// powers it on again ([`Nes::power_cycle`]): a console cannot change its crystal while
    /// it runs.
    pub fn set_region(&mut self, region: Region, alignment: ClockAlignment) {
        self.region = region;
        self.alignment = alignment;
        self.power_cycle();
    }

    /// Power on a console of `region` (dividers aligned as `alignment` says) with this
    /// cartridge, as `power_on` says; power cycles start it the same way again.
    pub fn with_region(
        cart: Cartridge,
        power_on: PowerOn,
        region: Region,
        alignment: ClockAlignment,
    ) -> Nes {
        let mut nes = Nes {
            cpu: Cpu::new(),
            board: Motherboard::new(cart, region, alignment),
            frame_count_offset: 0,
            lag_count: 0,
            audio_sample_rate: 0,
            power_on,
            hardware: Hardware::default(),
            region,
            alignment,
        };
        power_on.ram.fill(&mut nes.board.ram[..]);
        // No frame has run yet, so none lagged (FCEUX clears its lag flag at power-on).
        nes.board.ports.read_this_frame = true;
        nes.start_timeline();
        match power_on.timeline {
            Timeline::Hardware => nes.cpu.power_on(&mut nes.board),
            Timeline::Fceux => {
                // FCEUX powers its 6502 on with S = $FD and resets it in no time.
                nes.cpu.s = 0xFD;
                nes.instant_reset();
            }
        }
        nes.board.sync_ppu();
        nes
    }

    /// FCEUX's reset of the CPU (see [`Timeline::Fceux`]).
    fn instant_reset(&mut self) {
        let vector = u16::from_le_bytes([self.peek(0xFFFC), self.peek(0xFFFD)]);
        self.cpu.instant_reset(vector);
    }

    /// How this console starts (at power-on and power cycles).
    pub fn power_on(&self) -> PowerOn {
        self.power_on
    }

    /// Which console this is: see [`Hardware`]. Takes effect at once and lasts through power
    /// cycles and state loads (a state records the machine's condition, not its model).
    pub fn set_hardware(&mut self, hardware: Hardware) {
        self.hardware = hardware;
        self.apply_hardware();
    }

    pub fn hardware(&self) -> Hardware {
        self.hardware
    }

    /// Tells each chip what `hardware` means for it.
    fn apply_hardware(&mut self) {
        let hardware = self.hardware;
        self.board.ppu.set_revision(hardware.ppu);
        self.board
            .apu
            .set_stale_reload_completes(hardware.cpu == CpuRevision::LateG);
        self.board.ports.wiring = hardware.ports;
    }

    /// Catch the PPU up on every CPU cycle (`true`) instead of only where the CPU side can
    /// observe it (the default). The two must give the same pictures, RAM and audio bit for
    /// bit; the eager mode is the reference the workspace tests compare the lazy one with
    /// (`tests/lazy_equals_eager.rs`). Slower; a setting, kept through power cycles and
    /// state loads.
    pub fn set_eager_ppu(&mut self, eager: bool) {
        self.board.scheduler.eager = eager;
        self.board.sync_ppu();
    }

    /// CPU RAM's content at the next power cycle. (FCEUX fills RAM the way a movie's header
    /// says when the movie starts, and the way its settings say at power commands.)
    pub fn set_power_on_ram(&mut self, ram: PowerOnRam) {
        self.power_on.ram = ram;
    }

    /// The start of the timeline after power-on or reset, before the CPU's reset sequence.
    fn start_timeline(&mut self) {
        let timeline = self.power_on.timeline;
        let ppu = &mut self.board.ppu;
        ppu.set_frame_timing(timeline.frame_timing());
        if timeline == Timeline::Fceux {
            ppu.set_warmup(false);
            ppu.park(timeline.inactive_frames());
            // The park moved the PPU: reschedule its next catch-up.
            self.board.sync_ppu();
        }
    }

    /// Run until the next frame is complete: the PPU reaches scanline 240 (on FCEUX's
    /// timeline a few dots before it, or the end of an inactive start-up frame: see
    /// [`Timeline::Fceux`]), rounded up to an instruction boundary.
    ///
    /// The frame counts as a lag frame when the game did not read a controller port during it
    /// (FCEUX's definition: the game skipped its input poll, typically because its main loop
    /// overran the frame).
    pub fn run_frame(&mut self) {
        self.run_frame_within(u64::MAX);
    }

    /// `run_frame` for headless sweeps that must survive a stuck console: gives up once
    /// `cycle_budget` CPU cycles pass without the frame completing, and returns whether it
    /// completed. (A frame that gave up is not counted as a lag frame. `run_frame` is this
    /// without a budget: one compare per instruction.)
    pub fn run_frame_within(&mut self, cycle_budget: u64) -> bool {
        self.board.ports.read_this_frame = false;
        let target = self.board.ppu.frames_completed() + 1;
        let deadline = self.cpu.cycles().saturating_add(cycle_budget);
        self.board.resync();
        // Idle loops may be skipped up to the budget's end, where the run stops anyway.
        self.board.idle_skip_limit = self.board.cycle().saturating_add(cycle_budget);
        self.cpu.run_until(&mut self.board, |cpu, board| {
            board.ppu.frames_completed() >= target || cpu.cycles() >= deadline
        });
        self.board.idle_skip_limit = 0;
        let gave_up = self.board.ppu.frames_completed() < target;
        self.board.sync_ppu();
        if gave_up {
            return false;
        }
        self.lag_count += u64::from(self.lagged());
        true
    }

    /// One frame in FCEUX's order: the lag flag is set, `hooks.before_frame`, the frame
    /// (memory hooks firing inside instructions, through the hooked bus only while `hooks`
    /// has any), `hooks.after_frame`, then the lag frame is counted if the flag is still set.
    pub fn run_frame_with<H: FrameHooks>(&mut self, hooks: &mut H) {
        self.board.ports.read_this_frame = false;
        hooks.before_frame(self);
        let target = self.board.ppu.frames_completed() + 1;
        let map = hooks.map();
        if map.exec.any() || map.write.any() || map.read.any() {
            self.run_hooked_until(target, hooks);
        } else {
            self.board.resync();
            self.board.idle_skip_limit = u64::MAX;
            self.cpu.run_until(&mut self.board, |_, board| {
                board.ppu.frames_completed() >= target
            });
            self.board.idle_skip_limit = 0;
            self.board.sync_ppu();
        }
        hooks.after_frame(self);
        self.lag_count += u64::from(self.lagged());
    }

    /// CPU cycles of idle loops (a loop that only re-reads memory while waiting for an
    /// interrupt) that the frame loops skipped instead of running one by one, since this
    /// console was made: the same result, without the work (see `nes_cpu`'s `idle.rs`).
    pub fn idle_cycles_skipped(&self) -> u64 {
        self.board.idle_cycles_skipped
    }

    /// Lag frames since power-on (FCEUX's lag counter, Lua's `emu.lagcount`): frames in
    /// which the game never read $4016/$4017. A power cycle clears it, as in FCEUX.
    pub fn lag_count(&self) -> u64 {
        self.lag_count
    }

    /// FCEUX's lag flag (Lua's `emu.lagged`): set as each frame starts, cleared when the game
    /// reads a controller port. Between frames: whether the last frame was a lag frame.
    pub fn lagged(&self) -> bool {
        !self.board.ports.read_this_frame
    }

    /// Set or clear the lag flag (Lua's `emu.setlagflag`): during a frame, or in
    /// `FrameHooks::after_frame`, it decides whether that frame counts as a lag frame.
    pub fn set_lagged(&mut self, lagged: bool) {
        self.board.ports.read_this_frame = !lagged;
    }

    /// Execute one CPU instruction (or interrupt sequence), keeping all chips in step. DMA
    /// cycles that halt the CPU happen inside it.
    pub fn step_instruction(&mut self) {
        self.board.resync();
        self.cpu.step(&mut self.board);
        self.board.sync_ppu();
    }

    /// Frames completed (FCEUX's frame count, Lua's `emu.framecount` between frames): one at
    /// each frame end (see [`Nes::run_frame`]), inactive start-up frames included. The count
    /// goes on through power cycles and resets (FCEUX counts a movie's frames so);
    /// [`Nes::reset_frame_count`] restarts it.
    pub fn frame_count(&self) -> u64 {
        self.board
            .ppu
            .frames_completed()
            .wrapping_add(self.frame_count_offset)
    }

    /// Count frames from 0 again (FCEUX does at a power-on or reset from its menu or from
    /// Lua, outside movies).
    pub fn reset_frame_count(&mut self) {
        self.frame_count_offset = 0u64.wrapping_sub(self.board.ppu.frames_completed());
    }

    /// Press the console's reset button: the CPU runs its reset sequence, the PPU and APU take
    /// their reset state, and everything reset doesn't touch (RAM, most PPU state) is kept.
    /// On FCEUX's timeline the PPU then stays inactive for two frames (see
    /// [`Timeline::Fceux`]). Made between frames.
    pub fn soft_reset(&mut self) {
        self.board.ppu.reset();
        // The reset may move the PPU: reschedule its next catch-up.
        self.board.sync_ppu();
        self.start_timeline();
        self.board.apu.reset();
        // None of the boards sees the reset line: the cartridge goes on as it was.
        self.board.oam_dma_page = None;
        self.board.resync();
        match self.power_on.timeline {
            Timeline::Hardware => self.cpu.reset(&mut self.board),
            Timeline::Fceux => self.instant_reset(),
        }
        self.board.sync_ppu();
    }

    /// Turn the console off and on again, as it was first powered on (see
    /// [`Nes::with_power_on`]; [`Nes::set_power_on_ram`] may have changed the RAM fill).
    /// Battery-backed cartridge RAM survives; everything else, board registers included,
    /// returns to its power-on state. The lag count restarts at 0 and the frame count goes on,
    /// as at an FCEUX movie's power command; so do the instruction count and any ROM patches
    /// ([`Nes::patch_rom`]: the cartridge is the same).
    pub fn power_cycle(&mut self) {
        let mut cart = self.board.cart.clone();
        cart.power_cycle();
        let held = [
            self.board.ports.pads[0].held(),
            self.board.ports.pads[1].held(),
        ];
        let frame_count = self.frame_count();
        let audio_sample_rate = self.audio_sample_rate;
        let instruction_count = self.instruction_count();
        let hardware = self.hardware;
        let eager_ppu = self.board.scheduler.eager;
        *self = Nes::with_region(cart, self.power_on, self.region, self.alignment);
        self.set_hardware(hardware);
        self.set_eager_ppu(eager_ppu);
        self.frame_count_offset = frame_count.wrapping_sub(self.board.ppu.frames_completed());
        self.cpu.set_instructions(instruction_count);
        self.set_buttons(0, held[0]);
        self.set_buttons(1, held[1]);
        self.set_audio_sample_rate(audio_sample_rate);
    }

    /// The buttons held on controller `port` (0 or 1) from now on. Other ports are ignored.
    pub fn set_buttons(&mut self, port: usize, buttons: Buttons) {
        if let Some(pad) = self.board.ports.pads.get_mut(port) {
            pad.set_held(buttons);
        }
    }

    /// Read the CPU address space without side effects (no $2002 clear, no $4016 shift).
    pub fn peek(&self, addr: u16) -> u8 {
        self.board.peek(addr)
    }

    /// Store a byte as a debugger would: CPU RAM directly; other addresses through the bus
    /// write path (registers see the write) without advancing time.
    pub fn poke(&mut self, addr: u16, value: u8) {
        self.board.poke(addr, value);
    }

    /// The 2 KiB of CPU RAM ($0000-$07FF, mirrored up to $1FFF), as a whole: for frontends
    /// that read all of it every frame (a Python NumPy view, RAM-based observations), where
    /// 2,048 [`Nes::peek`] calls would go through the memory map one by one.
    pub fn ram(&self) -> &[u8; CPU_RAM_SIZE] {
        &self.board.ram
    }

    /// The 2 KiB of CPU RAM for writing, as [`Nes::poke`] writes it: directly, taking no
    /// time. Made between frames (or instructions) like any poke.
    pub fn ram_mut(&mut self) -> &mut [u8; CPU_RAM_SIZE] {
        &mut self.board.ram
    }

    /// Read the PPU address space ($0000-$3FFF: pattern tables, nametables after mirroring,
    /// palette) without side effects.
    pub fn peek_ppu(&self, addr: u16) -> u8 {
        self.board.peek_ppu(addr)
    }

    pub fn cpu_registers(&self) -> CpuRegisters {
        CpuRegisters::of(&self.cpu)
    }

    /// Force CPU registers (nestest automation mode, Lua `setregister`).
    pub fn set_cpu_registers(&mut self, regs: CpuRegisters) {
        regs.store_in(&mut self.cpu);
        self.cpu.set_cycles(regs.cycles);
    }

    /// DMA requests that will halt the CPU on its next read, as (OAM DMA, DMC sample fetch):
    /// for debuggers, and for tests that save states at such moments.
    pub fn pending_dma(&self) -> (bool, bool) {
        (
            self.board.oam_dma_page.is_some(),
            self.board.apu.dmc_dma_address().is_some(),
        )
    }

    /// The APU channels' periods, volumes and counters (Lua `sound.get`), without side effects.
    pub fn apu_channels(&self) -> nes_apu::ChannelState {
        self.board.apu.channel_state()
    }

    /// The PPU's (scanline, dot) position.
    pub fn ppu_position(&self) -> (u16, u16) {
        (self.board.ppu.scanline(), self.board.ppu.dot())
    }

    /// `Some(pc)` once the CPU has executed a JAM/KIL opcode; the console keeps running (time
    /// advances) but the CPU does nothing more until reset.
    pub fn jammed_at(&self) -> Option<u16> {
        self.cpu.jammed().then_some(self.cpu.pc)
    }

    /// The last completed picture: 256x240 9-bit pixels (palette index | emphasis << 6).
    pub fn frame_buffer(&self) -> &[u16] {
        self.board.ppu.frame_buffer()
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
        self.board.apu.set_sample_rate(hz);
    }

    /// Move the audio produced since the last call (mono, -1.0..1.0) to the end of `out`.
    pub fn take_audio_samples(&mut self, out: &mut Vec<f32>) {
        self.board.apu.take_samples(out);
    }

    /// The cartridge's battery-backed RAM, if it has a battery.
    pub fn battery_ram(&self) -> Option<&[u8]> {
        self.board.cart.battery_ram()
    }

    /// Restore battery-backed RAM (a `.sav` file); a wrong size is an error and changes nothing.
    pub fn load_battery_ram(&mut self, data: &[u8]) -> Result<(), CartridgeError> {
        self.board.cart.load_battery_ram(data)
    }

    pub fn rom_info(&self) -> &RomInfo {
        self.board.cart.info()
    }

    /// The cartridge's byte at `offset` into its ROM image: PRG ROM, then CHR ROM (or the
    /// board's CHR RAM), as an iNES file lays them out after its header and trainer. `None`
    /// past the end. See [`Cartridge::rom_byte`].
    pub fn rom_byte(&self, offset: usize) -> Option<u8> {
        self.board.cart.rom_byte(offset)
    }

    /// Change the ROM byte at `offset` (as [`Nes::rom_byte`] counts): the CPU and the PPU read
    /// the new byte from now on, wherever the board maps it. Returns whether `offset` named a
    /// byte. The patch lasts as long as the console: through resets, power cycles and
    /// save-state loads (states never hold ROM, so a state made before the patch loads with
    /// the patched ROM, and its ROM check still passes: a patched cartridge keeps its
    /// identity). See [`Cartridge::patch_rom`].
    pub fn patch_rom(&mut self, offset: usize, value: u8) -> bool {
        self.board.cart.patch_rom(offset, value)
    }

    /// One nestest.log-format line describing the instruction about to execute.
    pub fn trace_line(&self) -> String {
        trace::format_line(&self.cpu, &self.board)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NROM image (32 KiB PRG, 8 KiB CHR) with `main` at $8000 and `nmi` at $8100.
    fn rom(main: &[u8], nmi: &[u8]) -> Vec<u8> {
        let mut prg = vec![0xEA; 0x8000];
        prg[..main.len()].copy_from_slice(main);
        prg[0x100..0x100 + nmi.len()].copy_from_slice(nmi);
        prg[0x7FFA..0x7FFC].copy_from_slice(&0x8100u16.to_le_bytes());
        prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
        prg[0x7FFE..0x8000].copy_from_slice(&0x8100u16.to_le_bytes());
        ines_image(0, &prg, &[0; 0x2000])
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
    fn idle_loops_are_skipped_with_the_same_result() {
        // Main: wait out the PPU's warm-up (two VBlanks), enable NMI, then wait in `JMP *`;
        // NMI: count at $00.
        let main = [
            0x2C, 0x02, 0x20, 0x10, 0xFB, // BIT $2002 / BPL $8000
            0x2C, 0x02, 0x20, 0x10, 0xFB, // BIT $2002 / BPL $8005
            0xA9, 0x80, 0x8D, 0x00, 0x20, // LDA #$80 / STA $2000
            0x4C, 0x0F, 0x80, // JMP $800F
        ];
        let nmi = [0xE6, 0x00, 0x40];
        let image = rom(&main, &nmi);
        let mut skipping = Nes::from_ines(&image).unwrap();
        let mut stepping = Nes::from_ines(&image).unwrap();
        // The eager reference never skips.
        stepping.set_eager_ppu(true);
        for _ in 0..30 {
            skipping.run_frame();
            stepping.run_frame();
            assert_eq!(skipping.cpu_registers(), stepping.cpu_registers());
            assert_eq!(skipping.peek(0x0000), stepping.peek(0x0000));
        }
        assert!(skipping.peek(0x0000) > 20, "NMIs were taken");
        assert_eq!(stepping.idle_cycles_skipped(), 0);
        let cycles = skipping.cpu_registers().cycles;
        assert!(
            skipping.idle_cycles_skipped() > cycles * 8 / 10,
            "{} of {cycles} cycles skipped",
            skipping.idle_cycles_skipped()
        );
        // Single steps never skip.
        let before = skipping.idle_cycles_skipped();
        for _ in 0..10_000 {
            skipping.step_instruction();
        }
        assert_eq!(skipping.idle_cycles_skipped(), before);
    }

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
        assert_eq!(nes.lag_count(), expected_lag);
        assert!(
            (9..=12).contains(&expected_lag),
            "about every other frame lags"
        );
    }

    #[test]
    fn hardware_and_eager_catch_up_survive_power_cycles_and_state_loads() {
        let mut nes = Nes::from_ines(&rom(&ENABLE_NMI_LOOP, &READ_ON_ODD_NMI)).unwrap();
        let hardware = Hardware {
            cpu: CpuRevision::LateG,
            ppu: PpuRevision::PreG,
            ports: ControllerPorts::Famicom,
        };
        nes.set_hardware(hardware);
        nes.set_eager_ppu(true);
        let state = nes.save_state();
        nes.power_cycle();
        nes.load_state(&state).unwrap();
        assert_eq!(nes.hardware(), hardware);
        assert_eq!(nes.board.ppu.revision(), PpuRevision::PreG);
        assert_eq!(nes.board.ports.wiring, ControllerPorts::Famicom);
        nes.run_frame();
        assert!(nes.board.scheduler.eager, "eager catch-up kept");
    }

    #[test]
    fn power_cycles_restart_the_lag_count_and_keep_counting_frames() {
        // JMP $8000 forever: never reads a controller.
        let mut nes = Nes::from_ines(&rom(&[0x4C, 0x00, 0x80], &[0x40])).unwrap();
        for _ in 0..5 {
            nes.run_frame();
        }
        assert_eq!((nes.frame_count(), nes.lag_count()), (5, 5));
        assert!(nes.lagged());
        nes.power_cycle();
        assert_eq!((nes.frame_count(), nes.lag_count()), (5, 0));
        nes.run_frame();
        assert_eq!((nes.frame_count(), nes.lag_count()), (6, 1));
        nes.soft_reset();
        nes.run_frame();
        assert_eq!((nes.frame_count(), nes.lag_count()), (7, 2));
        nes.reset_frame_count();
        assert_eq!(nes.frame_count(), 0);
        nes.run_frame();
        assert_eq!((nes.frame_count(), nes.lag_count()), (1, 3));
        // A state carries both counts.
        let state = nes.save_state();
        nes.run_frame();
        nes.load_state(&state).unwrap();
        assert_eq!((nes.frame_count(), nes.lag_count()), (1, 3));
    }

    /// Main loop: enable NMI once, then JMP to itself. NMI: count at $0701.
    fn nmi_counter_rom() -> Vec<u8> {
        let main = [0xA9, 0x80, 0x8D, 0x00, 0x20, 0x4C, 0x05, 0x80];
        rom(&main, &[0xEE, 0x01, 0x07, 0x40])
    }

    /// The frame in which VBlank first shows in $2002, and the CPU cycle then.
    fn first_vblank(nes: &mut Nes) -> (u64, u64) {
        while nes.peek(0x2002) & 0x80 == 0 {
            nes.step_instruction();
            assert!(nes.frame_count() < 10, "no VBlank");
        }
        (nes.frame_count() + 1, nes.cpu_registers().cycles)
    }

    fn fceux_console(image: &[u8]) -> Nes {
        Nes::with_power_on(Cartridge::from_ines(image).unwrap(), PowerOn::FCEUX)
    }

    #[test]
    fn fceux_timeline_holds_the_ppu_for_two_frames_after_power_on_and_reset() {
        // FCEUX's power-on: no reset cycles, S = $FD.
        let mut nes = fceux_console(&nmi_counter_rom());
        let regs = nes.cpu_registers();
        assert_eq!((regs.cycles, regs.s, regs.pc), (0, 0xFD, 0x8000));
        // The first two frames have no VBlank: it comes in frame 3, 352 dots after frame 2
        // ends (the first instruction starting 341 dots after the boundary sees it, as in
        // FCEUX).
        let (frame, cycle) = first_vblank(&mut nes);
        assert_eq!(frame, 3);
        let frame_two_end = u64::from(2 * nes_ppu::DOTS_PER_FRAME) / 3;
        assert!(
            (frame_two_end + 117..frame_two_end + 121).contains(&cycle),
            "VBlank seen at cycle {cycle}, frame 2 ended at {frame_two_end}"
        );
        // The $2000 write right after the reset counts (no warm-up): the first NMI is in
        // frame 3 too.
        let mut nes = fceux_console(&nmi_counter_rom());
        for _ in 0..2 {
            nes.run_frame();
        }
        assert_eq!(nes.peek(0x0701), 0);
        nes.run_frame();
        assert_eq!(nes.peek(0x0701), 1);
        // Each inactive frame is a whole frame long (to the instruction boundary).
        let mut nes = fceux_console(&nmi_counter_rom());
        nes.run_frame();
        let first = nes.cpu_registers().cycles;
        nes.run_frame();
        let second = nes.cpu_registers().cycles - first;
        assert!((29_780..29_784).contains(&first), "{first}");
        assert!((29_778..29_785).contains(&second), "{second}");
        assert_eq!(nes.lag_count(), 2);
        // A reset at a frame boundary: two inactive frames again, then NMIs.
        for _ in 0..3 {
            nes.run_frame();
        }
        let count = nes.peek(0x0701);
        let before = nes.cpu_registers();
        nes.soft_reset();
        // FCEUX's reset: no cycles, S kept, P = I.
        let after = nes.cpu_registers();
        assert_eq!(
            (after.cycles, after.s, after.p & 0xCF),
            (before.cycles, before.s, 0x04)
        );
        nes.run_frame();
        nes.run_frame();
        assert_eq!(
            nes.peek(0x0701),
            count,
            "no NMI in the two frames after a reset"
        );
        nes.run_frame();
        assert_eq!(nes.peek(0x0701), count + 1);
    }

    #[test]
    fn hardware_timeline_has_vblank_in_frame_two_and_ignores_early_writes() {
        let mut nes = Nes::new(Cartridge::from_ines(&nmi_counter_rom()).unwrap());
        assert_eq!(first_vblank(&mut nes).0, 2);
        // The $2000 write falls in the PPU's warm-up and is ignored: no NMI at all.
        for _ in 0..5 {
            nes.run_frame();
        }
        assert_eq!(nes.peek(0x0701), 0);
    }

    #[test]
    fn power_on_ram_fills_again_at_power_cycles() {
        let cart = || Cartridge::from_ines(&nmi_counter_rom()).unwrap();
        let ram = |nes: &Nes| {
            (0x0700..0x0708u16)
                .map(|a| nes.peek(a))
                .collect::<Vec<u8>>()
        };
        let mut nes = Nes::with_power_on(cart(), PowerOn::FCEUX);
        assert_eq!(ram(&nes), [0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]);
        for _ in 0..4 {
            nes.run_frame();
        }
        assert_ne!(ram(&nes), [0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]);
        nes.set_power_on_ram(PowerOnRam::Ones);
        nes.power_cycle();
        assert_eq!(ram(&nes), [0xFF; 8]);
        assert_eq!(nes.power_on().timeline, Timeline::Fceux);
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
    fn ram_slices_are_peek_and_poke() {
        // INC $10; JMP $8000: the program's own writes show in `ram`.
        let mut nes = Nes::from_ines(&rom(&[0xE6, 0x10, 0x4C, 0x00, 0x80], &[0x40])).unwrap();
        nes.run_frame();
        assert_eq!(nes.ram()[0x10], nes.peek(0x0010));
        assert_ne!(nes.ram()[0x10], 0);
        // Writes through `ram_mut` are what the CPU reads, at every mirror.
        nes.ram_mut()[0x7FF] = 0x5A;
        assert_eq!(nes.peek(0x07FF), 0x5A);
        assert_eq!(nes.peek(0x1FFF), 0x5A);
        nes.poke(0x0801, 0xA5);
        assert_eq!(nes.ram()[1], 0xA5);
        assert_eq!(nes.ram().len(), CPU_RAM_SIZE);
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
        assert_eq!(nes.lag_count(), 0);
    }
}
