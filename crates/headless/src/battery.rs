//! Battery-backed cartridge RAM on disk: `GAME.sav` beside the ROM (or in a chosen folder).
//!
//! The file is the raw battery RAM, the format other emulators use. It is loaded when a game
//! starts, written atomically every [`PERIODIC_SAVE_FRAMES`] frames while it runs (when it
//! changed) and when it stops.
//! A save file that does not fit the cartridge is never overwritten: the player's progress
//! may be in it, so we warn and leave it alone.

use std::path::{Path, PathBuf};

use nes::Nes;

use crate::limits::{self, read_limited};
use crate::output::{write_atomically, OutputError};

/// Where a game's battery RAM lives, and whether it may be written.
#[derive(Debug, Clone)]
pub struct BatterySave {
    path: PathBuf,
    /// False when an existing file could not be used: it must not be overwritten.
    writable: bool,
    /// The battery RAM as last written or loaded, to skip writes when nothing changed.
    last_saved: Option<Vec<u8>>,
    /// Frames since the last periodic save.
    frames_since_save: u32,
}

/// How often a running game's battery RAM is written out (if it changed): about every ten
/// seconds of play, so a crash or power loss costs little progress.
pub const PERIODIC_SAVE_FRAMES: u32 = 600;

/// What happened when a save file was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    /// The cartridge has no battery: nothing to load or save.
    NoBattery,
    /// No save file yet; one is created on the first save.
    NoFile,
    Loaded,
    /// The file exists but cannot be used; it is kept untouched and never overwritten.
    Rejected(String),
}

impl BatterySave {
    /// The save file for `rom`: `DIR/NAME.sav` when `dir` is given, else beside the ROM.
    pub fn for_rom(rom: &Path, dir: Option<&Path>) -> BatterySave {
        let file_name = rom.with_extension("sav");
        let file_name = file_name.file_name().unwrap_or_default();
        let path = match dir {
            Some(dir) => dir.join(file_name),
            None => rom.with_extension("sav"),
        };
        // Absolute, so saves made while a Lua script has changed the working directory (to its
        // own folder) still land where the user pointed.
        let path = std::path::absolute(&path).unwrap_or(path);
        BatterySave {
            path,
            writable: true,
            last_saved: None,
            frames_since_save: 0,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Load the save file into the console's battery RAM, if the cartridge has a battery.
    pub fn load(&mut self, nes: &mut Nes) -> LoadOutcome {
        let Some(battery_len) = nes.battery_ram().map(<[u8]>::len) else {
            return LoadOutcome::NoBattery;
        };
        // A bigger file is not this cartridge's save (and `/dev/zero` is not read for ever).
        let bytes = match read_limited(&self.path, &limits::battery_save(battery_len)) {
            Ok(bytes) => bytes,
            Err(e) if e.is_not_found() => return LoadOutcome::NoFile,
            Err(e) => {
                self.writable = false;
                return LoadOutcome::Rejected(format!(
                    "{e}; the file is left untouched and will not be overwritten"
                ));
            }
        };
        match nes.load_battery_ram(&bytes) {
            Ok(()) => {
                self.last_saved = Some(bytes);
                LoadOutcome::Loaded
            }
            Err(e) => {
                self.writable = false;
                LoadOutcome::Rejected(format!(
                    "{}: {e}; the file is left untouched and will not be overwritten",
                    self.path.display()
                ))
            }
        }
    }

    /// Call once per emulated frame: every [`PERIODIC_SAVE_FRAMES`] frames the battery RAM is
    /// saved if it changed. Returns whether a file was written.
    pub fn frame_done(&mut self, nes: &Nes) -> Result<bool, OutputError> {
        self.frames_since_save += 1;
        if self.frames_since_save < PERIODIC_SAVE_FRAMES {
            return Ok(false);
        }
        self.frames_since_save = 0;
        self.save(nes)
    }

    /// Write the battery RAM if it changed since the last load or save. Returns whether a file
    /// was written.
    pub fn save(&mut self, nes: &Nes) -> Result<bool, OutputError> {
        let Some(ram) = nes.battery_ram() else {
            return Ok(false);
        };
        if !self.writable || self.last_saved.as_deref() == Some(ram) {
            return Ok(false);
        }
        write_atomically(&self.path, ram)?;
        self.last_saved = Some(ram.to_vec());
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An MMC1 image whose header declares battery-backed PRG RAM; the program stores
    /// $42 at $6000 and loops.
    fn battery_rom() -> Vec<u8> {
        let mut image = vec![
            b'N', b'E', b'S', 0x1A, 2, 1, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        let mut prg = vec![0xEA; 0x8000];
        #[rustfmt::skip]
        let code = [
            0xA9, 0x42, 0x8D, 0x00, 0x60, // LDA #$42 ; STA $6000
            0x4C, 0x05, 0x80,             // JMP *
        ];
        prg[0x4000..0x4000 + code.len()].copy_from_slice(&code);
        prg[0x7FFC..0x7FFE].copy_from_slice(&[0x00, 0xC0]);
        image.extend_from_slice(&prg);
        image.extend_from_slice(&[0; 0x2000]);
        image
    }

    #[test]
    fn saves_and_restores_battery_ram() {
        let dir = tempfile::tempdir().unwrap();
        let rom = dir.path().join("game.nes");
        let mut nes = Nes::from_ines(&battery_rom()).unwrap();
        let mut save = BatterySave::for_rom(&rom, None);
        assert_eq!(save.path(), dir.path().join("game.sav"));
        assert_eq!(save.load(&mut nes), LoadOutcome::NoFile);
        nes.run_frame();
        assert!(save.save(&nes).unwrap());
        assert!(!save.save(&nes).unwrap(), "unchanged RAM is not rewritten");
        let on_disk = std::fs::read(save.path()).unwrap();
        assert_eq!(on_disk.len(), 0x2000);
        assert_eq!(on_disk[0], 0x42);

        let mut fresh = Nes::from_ines(&battery_rom()).unwrap();
        let mut save = BatterySave::for_rom(&rom, None);
        assert_eq!(save.load(&mut fresh), LoadOutcome::Loaded);
        assert_eq!(fresh.peek(0x6000), 0x42);
    }

    #[test]
    fn saves_periodically_while_running() {
        let dir = tempfile::tempdir().unwrap();
        let mut nes = Nes::from_ines(&battery_rom()).unwrap();
        let mut save = BatterySave::for_rom(&dir.path().join("game.nes"), None);
        assert_eq!(save.load(&mut nes), LoadOutcome::NoFile);
        for frame in 1..PERIODIC_SAVE_FRAMES {
            nes.run_frame();
            assert!(!save.frame_done(&nes).unwrap(), "frame {frame}");
        }
        assert!(!save.path().exists());
        nes.run_frame();
        assert!(save.frame_done(&nes).unwrap());
        assert_eq!(std::fs::read(save.path()).unwrap()[0], 0x42);
        // Unchanged RAM: the next period writes nothing.
        for _ in 0..PERIODIC_SAVE_FRAMES {
            assert!(!save.frame_done(&nes).unwrap());
        }
    }

    #[test]
    fn wrong_sized_save_is_rejected_and_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let rom = dir.path().join("game.nes");
        let sav = dir.path().join("game.sav");
        std::fs::write(&sav, b"not a save").unwrap();
        let mut nes = Nes::from_ines(&battery_rom()).unwrap();
        let mut save = BatterySave::for_rom(&rom, None);
        match save.load(&mut nes) {
            LoadOutcome::Rejected(message) => assert!(message.contains("game.sav"), "{message}"),
            other => panic!("expected a rejection, got {other:?}"),
        }
        nes.run_frame();
        assert!(!save.save(&nes).unwrap());
        assert_eq!(std::fs::read(&sav).unwrap(), b"not a save");
    }

    #[test]
    fn an_oversized_save_is_rejected_without_reading_it_all_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let rom = dir.path().join("game.nes");
        let sav = dir.path().join("game.sav");
        let big = vec![0x11; 0x2000 + 1];
        std::fs::write(&sav, &big).unwrap();
        let mut nes = Nes::from_ines(&battery_rom()).unwrap();
        let mut save = BatterySave::for_rom(&rom, None);
        match save.load(&mut nes) {
            LoadOutcome::Rejected(message) => {
                assert!(message.contains("battery save too large"), "{message}")
            }
            other => panic!("expected a rejection, got {other:?}"),
        }
        nes.run_frame();
        assert!(!save.save(&nes).unwrap());
        assert_eq!(std::fs::read(&sav).unwrap(), big);
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_save_file_is_rejected_quickly() {
        let dir = tempfile::tempdir().unwrap();
        let sav = dir.path().join("game.sav");
        std::os::unix::fs::symlink("/dev/zero", &sav).unwrap();
        let mut nes = Nes::from_ines(&battery_rom()).unwrap();
        let mut save = BatterySave::for_rom(&dir.path().join("game.nes"), None);
        match save.load(&mut nes) {
            LoadOutcome::Rejected(message) => {
                assert!(
                    message.contains("too large: over the 8192 bytes accepted"),
                    "{message}"
                )
            }
            other => panic!("expected a rejection, got {other:?}"),
        }
    }

    #[test]
    fn cartridges_without_battery_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut image = battery_rom();
        image[6] = 0x10; // mapper 1, no battery
        let mut nes = Nes::from_ines(&image).unwrap();
        let mut save = BatterySave::for_rom(&dir.path().join("game.nes"), None);
        assert_eq!(save.load(&mut nes), LoadOutcome::NoBattery);
        nes.run_frame();
        assert!(!save.save(&nes).unwrap());
        assert!(!save.path().exists());
    }

    #[test]
    fn save_dir_overrides_the_rom_folder() {
        let save = BatterySave::for_rom(Path::new("/roms/tetris.nes"), Some(Path::new("/saves")));
        assert_eq!(save.path(), Path::new("/saves/tetris.sav"));
    }
}
