//! Save-state determinism over the public test-ROM suites: for every ROM in
//! `shared/test-roms/MANIFEST.toml`, save at awkward moments, run on, load, and check the replay
//! produces exactly the same pictures, RAM, audio and registers, both in the same console and
//! in a freshly powered-on one.
//!
//! Moments: a frame boundary, the middle of a visible scanline, an instruction boundary where
//! an OAM DMA has been requested but not started, and one where the DMC is waiting for its
//! sample fetch (the last two when the ROM does that within the search window; ROMs that
//! exist to test DMA must reach both).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::process::ExitCode;

use libtest_mimic::{Arguments, Failed, Trial};
use nes::{Cartridge, Nes, PowerOn};
use nes_headless::test_roms::RomEntry;
use nes_workspace_tests::suite_manifest;

/// Frames run after each save, by the original and by both replays.
const REPLAY_FRAMES: u32 = 15;

/// Hashes `frames` frames: every picture, CPU RAM, audio samples and CPU registers.
fn run_and_hash(nes: &mut Nes, frames: u32) -> u64 {
    let mut hasher = DefaultHasher::new();
    let mut audio = Vec::new();
    for _ in 0..frames {
        nes.run_frame();
        nes.frame_buffer().hash(&mut hasher);
        for addr in 0..0x800u16 {
            nes.peek(addr).hash(&mut hasher);
        }
        audio.clear();
        nes.take_audio_samples(&mut audio);
        audio.iter().for_each(|s| s.to_bits().hash(&mut hasher));
        nes.cpu_registers().hash(&mut hasher);
    }
    hasher.finish()
}

fn power_on(image: &[u8], entry: &RomEntry) -> Result<Nes, Failed> {
    let hardware = entry.hardware()?;
    let cart = Cartridge::from_ines(image).map_err(|e| format!("cannot load: {e}"))?;
    let mut nes = hardware.power_on(cart, PowerOn::HARDWARE);
    nes.set_audio_sample_rate(44_100);
    Ok(nes)
}

/// Saves now, runs on, and replays from the state twice (same console, fresh console).
fn check_moment(nes: &mut Nes, image: &[u8], entry: &RomEntry, moment: &str) -> Result<(), Failed> {
    let (scanline, dot) = nes.ppu_position();
    let at = format!(
        "{moment} (frame {}, scanline {scanline}, dot {dot})",
        nes.frame_count()
    );
    let state = nes.save_state();
    let original = run_and_hash(nes, REPLAY_FRAMES);
    nes.load_state(&state)
        .map_err(|e| format!("{at}: reload failed: {e}"))?;
    if nes.save_state() != state {
        return Err(format!("{at}: the loaded state saves back differently").into());
    }
    if run_and_hash(nes, REPLAY_FRAMES) != original {
        return Err(format!("{at}: replay in the same console differs").into());
    }
    let mut fresh = power_on(image, entry)?;
    fresh
        .load_state(&state)
        .map_err(|e| format!("{at}: load into a fresh console failed: {e}"))?;
    if run_and_hash(&mut fresh, REPLAY_FRAMES) != original {
        return Err(format!("{at}: replay in a fresh console differs").into());
    }
    Ok(())
}

/// Steps instructions until `found` or until `frames` more frames have passed.
fn step_until(nes: &mut Nes, frames: u64, found: impl Fn(&Nes) -> bool) -> bool {
    let limit = nes.frame_count() + frames;
    while nes.frame_count() < limit {
        if found(nes) {
            return true;
        }
        nes.step_instruction();
    }
    false
}

fn judge(entry: &RomEntry, root: &Path) -> Result<(), Failed> {
    let image = std::fs::read(root.join(&entry.path))
        .map_err(|e| format!("cannot read {}: {e}", entry.path))?;
    let mut nes = power_on(&image, entry)?;

    run_and_hash(&mut nes, 30);
    check_moment(&mut nes, &image, entry, "frame boundary")?;

    step_until(&mut nes, 2, |nes| nes.ppu_position().0 == 130);
    check_moment(&mut nes, &image, entry, "mid-frame")?;

    let oam_found = step_until(&mut nes, 30, |nes| nes.pending_dma().0);
    if oam_found {
        check_moment(&mut nes, &image, entry, "OAM DMA requested")?;
    }
    let dmc_found = step_until(&mut nes, 30, |nes| nes.pending_dma().1);
    if dmc_found {
        check_moment(&mut nes, &image, entry, "DMC fetch requested")?;
    }
    let dma_test = entry.path.contains("sprdma_and_dmc_dma");
    if dma_test && !(oam_found && dmc_found) {
        return Err(format!(
            "a DMA test ROM must reach both DMA moments (OAM: {oam_found}, DMC: {dmc_found})"
        )
        .into());
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let (manifest, root) = match suite_manifest("determinism", &args) {
        Ok(found) => found,
        Err(exit) => return exit,
    };
    let trials = manifest
        .roms
        .iter()
        .map(|entry| {
            let entry = entry.clone();
            let root = root.clone();
            Trial::test(entry.test_name(), move || judge(&entry, &root))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
