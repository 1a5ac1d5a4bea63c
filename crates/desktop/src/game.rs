//! The game being played: the console, its battery save, state slots and rewind buffer.

use std::path::{Path, PathBuf};

use nes::{Nes, PowerOn};
use nes_headless::battery::{BatterySave, LoadOutcome};
use nes_headless::hardware::HardwareChoice;
use nes_headless::limits;
use nes_headless::output::write_atomically;
use nes_movie::Rewind;

/// Save-state slots: 0-9.
pub const SLOTS: u8 = 10;

#[derive(Debug)]
pub struct Game {
    pub nes: Nes,
    /// Absolute, so it stays valid when a Lua script moves the working directory.
    rom: PathBuf,
    /// Where battery saves and state slots go (`--save-dir`), else beside the ROM.
    save_dir: Option<PathBuf>,
    battery: Option<BatterySave>,
    rewind: Option<Rewind>,
    /// Frames run since the game was loaded.
    pub frames: u64,
}

/// Settings that apply to every game loaded in a session.
#[derive(Debug, Clone)]
pub struct GameOptions {
    /// How each game's console starts.
    pub power_on: PowerOn,
    /// Which console each game runs on.
    pub hardware: HardwareChoice,
    pub save_dir: Option<PathBuf>,
    pub battery: bool,
    pub rewind_bytes: usize,
    pub rewind_interval: u32,
}

impl Game {
    /// Load a ROM and its battery save. Notes for the player (save loaded, save rejected)
    /// go to `notes`.
    pub fn load(
        rom: &Path,
        options: &GameOptions,
        notes: &mut Vec<String>,
    ) -> Result<Game, String> {
        let rom = std::path::absolute(rom).unwrap_or_else(|_| rom.to_owned());
        let bytes = limits::read_limited(&rom, &limits::ROM).map_err(|e| e.to_string())?;
        let cart = options
            .hardware
            .cartridge(&bytes)
            .map_err(|e| format!("{}: {e}", rom.display()))?;
        let mut nes = options.hardware.power_on(cart, options.power_on);
        if let Some(title) = nes.rom_info().known_title {
            notes.push(format!("Recognised cartridge: {title}"));
        }
        let mut battery = options
            .battery
            .then(|| BatterySave::for_rom(&rom, options.save_dir.as_deref()));
        if let Some(save) = &mut battery {
            match save.load(&mut nes) {
                LoadOutcome::Loaded => {
                    notes.push(format!("battery save loaded: {}", save.path().display()))
                }
                LoadOutcome::Rejected(why) => notes.push(format!("battery save not used: {why}")),
                LoadOutcome::NoBattery | LoadOutcome::NoFile => {}
            }
        }
        let rewind = (options.rewind_bytes > 0)
            .then(|| Rewind::new(options.rewind_bytes, options.rewind_interval));
        Ok(Game {
            nes,
            rom,
            save_dir: options.save_dir.clone(),
            battery,
            rewind,
            frames: 0,
        })
    }

    pub fn rom(&self) -> &Path {
        &self.rom
    }

    /// The ROM's file name without extension, for titles and file names.
    pub fn name(&self) -> String {
        self.rom
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_else(|| "game".into())
    }

    /// The folder for this game's files (saves, states, screenshots).
    pub fn files_dir(&self) -> PathBuf {
        match &self.save_dir {
            Some(dir) => dir.clone(),
            None => match self.rom.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
                _ => PathBuf::from("."),
            },
        }
    }

    /// `<rom stem>.state<N>` in the save folder.
    pub fn state_path(&self, slot: u8) -> PathBuf {
        self.files_dir()
            .join(format!("{}.state{slot}", self.name()))
    }

    /// Bookkeeping after each emulated frame: the rewind snapshot and the periodic battery
    /// save. A failed battery write is returned as a message (the game goes on).
    pub fn frame_done(&mut self) -> Result<(), String> {
        self.frames += 1;
        if let Some(rewind) = &mut self.rewind {
            rewind.record(&self.nes);
        }
        if let Some(battery) = &mut self.battery {
            battery.frame_done(&self.nes).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Step back to the previous rewind snapshot; false when there is none (or rewind is off).
    pub fn rewind_step(&mut self) -> bool {
        match &mut self.rewind {
            Some(rewind) => rewind.step_back(&mut self.nes),
            None => false,
        }
    }

    pub fn rewind_enabled(&self) -> bool {
        self.rewind.is_some()
    }

    /// Forget rewind history (after a state load or power cycle the old timeline is gone).
    pub fn clear_rewind(&mut self) {
        if let Some(rewind) = &mut self.rewind {
            rewind.clear();
        }
    }

    pub fn save_state(&self, slot: u8) -> Result<PathBuf, String> {
        let path = self.state_path(slot);
        write_atomically(&path, &self.nes.save_state()).map_err(|e| e.to_string())?;
        Ok(path)
    }

    pub fn load_state(&mut self, slot: u8) -> Result<(), String> {
        let path = self.state_path(slot);
        let bytes = match limits::read_limited(&path, &limits::SAVE_STATE) {
            Ok(bytes) => bytes,
            Err(e) if e.is_not_found() => return Err(format!("State {slot} is empty")),
            Err(e) => return Err(e.to_string()),
        };
        self.nes
            .load_state(&bytes)
            .map_err(|e| format!("State {slot} not loaded: {e}"))?;
        self.clear_rewind();
        Ok(())
    }

    /// Write the battery save if it changed; returns the file when one was written.
    pub fn save_battery(&mut self) -> Result<Option<PathBuf>, String> {
        let Some(battery) = &mut self.battery else {
            return Ok(None);
        };
        let written = battery.save(&self.nes).map_err(|e| e.to_string())?;
        Ok(written.then(|| battery.path().to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_rom::nmi_rom;
    use super::*;

    /// NROM counting frames at $00 (its NMI handler: INC $00).
    fn rom_file(dir: &Path) -> PathBuf {
        nmi_rom(dir, "counter.nes", &[0xE6, 0x00])
    }

    fn options(dir: &Path) -> GameOptions {
        GameOptions {
            power_on: PowerOn::HARDWARE,
            hardware: HardwareChoice::default(),
            save_dir: Some(dir.join("saves")),
            battery: true,
            rewind_bytes: 1 << 20,
            rewind_interval: 1,
        }
    }

    #[test]
    fn state_slots_round_trip_through_files() {
        let dir = tempfile::tempdir().unwrap();
        let rom = rom_file(dir.path());
        std::fs::create_dir(dir.path().join("saves")).unwrap();
        let mut game = Game::load(&rom, &options(dir.path()), &mut Vec::new()).unwrap();
        for _ in 0..10 {
            game.nes.run_frame();
            game.frame_done().unwrap();
        }
        let saved_count = game.nes.peek(0x00);
        let path = game.save_state(3).unwrap();
        assert_eq!(path, dir.path().join("saves/counter.state3"));
        for _ in 0..10 {
            game.nes.run_frame();
        }
        assert_ne!(game.nes.peek(0x00), saved_count);
        game.load_state(3).unwrap();
        assert_eq!(game.nes.peek(0x00), saved_count);
        let err = game.load_state(4).unwrap_err();
        assert_eq!(err, "State 4 is empty");
    }

    #[test]
    fn rewind_goes_back_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let rom = rom_file(dir.path());
        let mut game = Game::load(&rom, &options(dir.path()), &mut Vec::new()).unwrap();
        for _ in 0..30 {
            game.nes.run_frame();
            game.frame_done().unwrap();
        }
        let now = game.nes.peek(0x00);
        assert!(game.rewind_step());
        assert!(game.rewind_step());
        assert!(game.nes.peek(0x00) < now);
    }

    #[test]
    fn unreadable_and_unsupported_roms_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.nes");
        let err = Game::load(&missing, &options(dir.path()), &mut Vec::new()).unwrap_err();
        assert!(
            err.starts_with("cannot read") && err.contains("missing.nes"),
            "{err}"
        );
        let junk = dir.path().join("junk.nes");
        std::fs::write(&junk, b"not a rom").unwrap();
        let err = Game::load(&junk, &options(dir.path()), &mut Vec::new()).unwrap_err();
        assert!(err.contains("junk.nes"), "{err}");
    }
}
