//! `nes bench`: headless emulation speed, the median of several runs.

use std::path::Path;
use std::time::Instant;

use crate::hardware::HardwareChoice;
use crate::{load_rom, Error};

/// Runs `frames` frames `runs` times from power-on (with the Lua script `lua` alongside, to
/// measure the scripting and hook overhead) and prints the median rate.
pub fn bench(
    rom: &Path,
    frames: u64,
    runs: usize,
    lua: Option<&Path>,
    watchdog: Option<f64>,
) -> Result<(), Error> {
    let fresh = load_rom(rom, nes::PowerOn::HARDWARE, &HardwareChoice::default())?;
    let mut rates = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let mut nes = fresh.clone();
        let mut host = match lua {
            Some(script) => {
                let options = nes_lua::HostOptions {
                    save_dir: std::env::temp_dir(),
                    rom_stem: "bench".to_string(),
                    rom: fresh.rom_info().clone(),
                    arg: None,
                    palette: nes::Palette::ntsc(),
                };
                let mut host = nes_lua::LuaHost::load(script, options)?;
                host.set_watchdog(nes_lua::watchdog_limit(watchdog.unwrap_or(0.0))?);
                host.start(&mut nes);
                Some(host)
            }
            None => None,
        };
        let start = Instant::now();
        for _ in 0..frames {
            match &mut host {
                Some(host) => {
                    host.run_frame(&mut nes, nes_lua::FrameInput::default());
                }
                None => nes.run_frame(),
            }
        }
        if let Some(host) = &mut host {
            if let Some(error) = host.take_errors().into_iter().next() {
                return Err(Error::Script(error));
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        rates.push(frames as f64 / seconds);
    }
    rates.sort_by(f64::total_cmp);
    let median = rates[rates.len() / 2];
    crate::outln!(
        "{}: {frames} frames x {} runs, median {median:.0} frames/s ({:.1} us/frame)",
        rom.display(),
        rates.len(),
        1e6 / median
    );
    Ok(())
}
