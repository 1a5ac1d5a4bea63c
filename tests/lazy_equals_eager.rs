//! The lazy PPU catch-up is equal to stepping the PPU every CPU cycle.
//!
//! The console runs the PPU only where the CPU side can observe it (register accesses,
//! cartridge accesses, controller reads, NMI and IRQ events, frame ends: see the `nes`
//! crate's `ppu_scheduler.rs`).
//! `Nes::set_eager_ppu(true)` catches it up on every CPU cycle instead. Each trial powers both
//! on with one ROM, drives them in lockstep with the same input, and compares the picture,
//! CPU RAM and audio of every frame (and RAM and registers after every single instruction a
//! protocol steps), for:
//! - every entry of `shared/test-roms/MANIFEST.toml` (and `MANIFEST-pal.toml` when present),
//!   driven by its own protocol (the same presses and resets the suite makes) up to its
//!   verdict or frame budget, on the console the entry names;
//! - every other `.nes` file under the test-ROM folder, for `OTHER_ROM_FRAMES` frames.
//!
//! A trial fails at the first difference, naming the frame and what differed. Whether the ROM
//! passes its own test is the ROM suites' business, not this one's.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use libtest_mimic::{Arguments, Failed, Trial};
use nes::{Buttons, Cartridge, CpuRegisters, Inspect, Nes, PowerOn};
use nes_headless::test_roms::{
    load_assets, load_manifest, manifest_root, run_protocol, Machine, RomEntry,
};
use nes_workspace_tests::suite_manifest;

/// Frames run for ROMs no manifest lists.
const OTHER_ROM_FRAMES: u64 = 600;
/// Output rate of both consoles' audio.
const SAMPLE_RATE: u32 = 44_100;

/// Two consoles, lazy and eager, driven as one machine.
struct Lockstep {
    lazy: Nes,
    eager: Nes,
    lazy_audio: Vec<f32>,
    eager_audio: Vec<f32>,
    /// Frames, and instructions a protocol stepped one by one, compared so far.
    frames_compared: u64,
    instructions_compared: u64,
    /// The first difference found.
    difference: Option<String>,
}

impl Lockstep {
    fn new(image: &[u8], entry: Option<&RomEntry>) -> Result<Lockstep, String> {
        let hardware = match entry {
            Some(entry) => entry.hardware()?,
            None => Default::default(),
        };
        let power_on = |eager: bool| -> Result<Nes, String> {
            let cart = Cartridge::from_ines(image).map_err(|e| format!("cannot load: {e}"))?;
            let mut nes = hardware.power_on(cart, PowerOn::HARDWARE);
            nes.set_eager_ppu(eager);
            nes.set_audio_sample_rate(SAMPLE_RATE);
            Ok(nes)
        };
        Ok(Lockstep {
            lazy: power_on(false)?,
            eager: power_on(true)?,
            lazy_audio: Vec::new(),
            eager_audio: Vec::new(),
            frames_compared: 0,
            instructions_compared: 0,
            difference: None,
        })
    }

    fn note(&mut self, what: impl FnOnce() -> String) {
        if self.difference.is_none() {
            self.difference = Some(what());
        }
    }

    fn compare_machine_state(&mut self, at: &str) {
        let (lazy, eager) = (self.lazy.cpu_registers(), self.eager.cpu_registers());
        if lazy != eager {
            self.note(|| format!("{at}: CPU registers {lazy:?} (lazy) vs {eager:?} (eager)"));
        }
        if let Some(addr) = (0..0x800u16).find(|&a| self.lazy.peek(a) != self.eager.peek(a)) {
            let (l, e) = (self.lazy.peek(addr), self.eager.peek(addr));
            self.note(|| format!("{at}: RAM ${addr:04X} = ${l:02X} (lazy) vs ${e:02X} (eager)"));
        }
        let (lazy, eager) = (self.lazy.ppu_position(), self.eager.ppu_position());
        if lazy != eager {
            self.note(|| format!("{at}: PPU at {lazy:?} (lazy) vs {eager:?} (eager)"));
        }
    }

    fn compare_frame(&mut self) {
        let at = format!("frame {}", self.lazy.frame_count());
        self.compare_machine_state(&at);
        if let Some(pixel) = (0..nes::SCREEN_WIDTH * nes::SCREEN_HEIGHT)
            .find(|&i| self.lazy.frame_buffer()[i] != self.eager.frame_buffer()[i])
        {
            let (x, y) = (pixel % nes::SCREEN_WIDTH, pixel / nes::SCREEN_WIDTH);
            self.note(|| format!("{at}: picture differs first at x {x}, y {y}"));
        }
        self.lazy_audio.clear();
        self.eager_audio.clear();
        self.lazy.take_audio_samples(&mut self.lazy_audio);
        self.eager.take_audio_samples(&mut self.eager_audio);
        let same_audio = self.lazy_audio.len() == self.eager_audio.len()
            && self
                .lazy_audio
                .iter()
                .zip(&self.eager_audio)
                .all(|(l, e)| l.to_bits() == e.to_bits());
        if !same_audio {
            let (l, e) = (self.lazy_audio.len(), self.eager_audio.len());
            self.note(|| format!("{at}: audio differs ({l} lazy samples, {e} eager)"));
        }
        self.frames_compared += 1;
    }
}

/// Reads come from the lazy console; every change goes to both.
impl Inspect for Lockstep {
    fn peek(&self, addr: u16) -> u8 {
        self.lazy.peek(addr)
    }
    fn poke(&mut self, addr: u16, value: u8) {
        self.lazy.poke(addr, value);
        self.eager.poke(addr, value);
    }
    fn cpu_registers(&self) -> CpuRegisters {
        self.lazy.cpu_registers()
    }
    fn set_cpu_registers(&mut self, regs: CpuRegisters) {
        self.lazy.set_cpu_registers(regs);
        self.eager.set_cpu_registers(regs);
    }
    fn lagged(&self) -> bool {
        self.lazy.lagged()
    }
    fn set_lagged(&mut self, lagged: bool) {
        self.lazy.set_lagged(lagged);
        self.eager.set_lagged(lagged);
    }
    fn instruction_count(&self) -> u64 {
        self.lazy.instruction_count()
    }
    fn reset_instruction_count(&mut self) {
        self.lazy.reset_instruction_count();
        self.eager.reset_instruction_count();
    }
    fn rom_byte(&self, offset: usize) -> Option<u8> {
        self.lazy.rom_byte(offset)
    }
    fn patch_rom(&mut self, offset: usize, value: u8) -> bool {
        let patched = self.lazy.patch_rom(offset, value);
        self.eager.patch_rom(offset, value) && patched
    }
}

impl Machine for Lockstep {
    fn run_frame(&mut self) {
        self.lazy.run_frame();
        self.eager.run_frame();
        self.compare_frame();
    }
    fn step_instruction(&mut self) {
        self.lazy.step_instruction();
        self.eager.step_instruction();
        let at = format!("instruction {}", self.lazy.instruction_count());
        self.compare_machine_state(&at);
        self.instructions_compared += 1;
    }
    fn frame_count(&self) -> u64 {
        self.lazy.frame_count()
    }
    fn soft_reset(&mut self) {
        self.lazy.soft_reset();
        self.eager.soft_reset();
    }
    fn set_buttons(&mut self, port: usize, buttons: Buttons) {
        self.lazy.set_buttons(port, buttons);
        self.eager.set_buttons(port, buttons);
    }
    fn peek_ppu(&self, addr: u16) -> u8 {
        self.lazy.peek_ppu(addr)
    }
    fn jammed_at(&self) -> Option<u16> {
        self.lazy.jammed_at()
    }
    fn trace_line(&self) -> String {
        self.lazy.trace_line()
    }
}

fn verdict(lockstep: Lockstep) -> Result<(), Failed> {
    match lockstep.difference {
        None if lockstep.frames_compared + lockstep.instructions_compared > 0 => Ok(()),
        None => Err("nothing was compared".into()),
        Some(difference) => Err(format!(
            "lazy and eager PPU catch-up differ: {difference} ({} frames and {} single \
             instructions compared before)",
            lockstep.frames_compared, lockstep.instructions_compared
        )
        .into()),
    }
}

fn compare_entry(entry: &RomEntry, root: &Path) -> Result<(), Failed> {
    let assets = load_assets(entry, root)?;
    let image = std::fs::read(root.join(&entry.path)).map_err(|e| e.to_string())?;
    let mut lockstep = Lockstep::new(&image, Some(entry))?;
    run_protocol(&mut lockstep, entry, &assets);
    verdict(lockstep)
}

fn compare_other_rom(path: &Path) -> Result<(), Failed> {
    let image = std::fs::read(path).map_err(|e| e.to_string())?;
    let mut lockstep = Lockstep::new(&image, None)?;
    for _ in 0..OTHER_ROM_FRAMES {
        lockstep.run_frame();
    }
    verdict(lockstep)
}

fn nes_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            nes_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "nes") {
            found.push(path);
        }
    }
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let (manifest, root) = match suite_manifest("lazy_equals_eager", &args) {
        Ok(found) => found,
        Err(exit) => return exit,
    };
    let mut entries: Vec<(String, RomEntry, PathBuf)> = manifest
        .roms
        .into_iter()
        .map(|entry| (entry.test_name(), entry, root.clone()))
        .collect();
    let pal_manifest = root.join("MANIFEST-pal.toml");
    if pal_manifest.is_file() {
        match load_manifest(&pal_manifest) {
            Ok(pal) => {
                let pal_root = manifest_root(&pal_manifest);
                entries.extend(pal.roms.into_iter().map(|entry| {
                    (
                        format!("pal-manifest::{}", entry.path),
                        entry,
                        pal_root.clone(),
                    )
                }));
            }
            Err(error) => {
                eprintln!(
                    "lazy_equals_eager cannot read {}: {error}",
                    pal_manifest.display()
                );
                return ExitCode::FAILURE;
            }
        }
    }
    let listed: Vec<PathBuf> = entries
        .iter()
        .map(|(_, entry, root)| root.join(&entry.path))
        .collect();
    let mut others = Vec::new();
    nes_files(&root, &mut others);
    others.retain(|path| !listed.contains(path));
    others.sort();

    let mut trials: Vec<Trial> = entries
        .into_iter()
        .map(|(name, entry, root)| Trial::test(name, move || compare_entry(&entry, &root)))
        .collect();
    trials.extend(others.into_iter().map(|path| {
        let name = format!(
            "unlisted::{}",
            path.strip_prefix(&root).unwrap_or(&path).display()
        );
        Trial::test(name, move || compare_other_rom(&path))
    }));
    libtest_mimic::run(&args, trials).exit_code()
}
