//! One ROM of a sweep, run in the calling thread: load, run from power-on with its scripted
//! input, write the captures, and judge how the run ended.

use std::path::{Path, PathBuf};
use std::time::Instant;

use nes::{CartridgeError, Nes, Palette};
use nes_movie::input_schedule::{InputSchedule, ScheduledPress};
use serde::{Deserialize, Serialize};

use crate::hardware::HardwareRecord;
use crate::power_on::PowerOnRecord;
use crate::{capture, hex};

use super::report::{CaptureRecord, RomRecord, Verdict};

/// Default hang budget: a frame that has not completed after this many CPU cycles (about 34
/// frames' worth) never will; the console is stuck.
pub const DEFAULT_HANG_CYCLES: u64 = 1_000_000;

/// One ROM to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RomJob {
    /// The ROM's name in the reports: its path relative to the sweep's ROM folder (or list),
    /// with `/` separators.
    pub key: String,
    /// Where the image is read from.
    pub path: PathBuf,
    /// Scripted input for controller 1, in `--press` syntax.
    pub presses: Vec<String>,
}

/// What every ROM of a sweep shares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSettings {
    /// Frames to run from power-on.
    pub frames: u64,
    /// Frames (from 1, sorted) to capture.
    pub capture_frames: Vec<u64>,
    /// The sweep's output folder; captures go to `captures/` inside it.
    pub out_dir: PathBuf,
    /// A frame that takes more CPU cycles than this is a hang.
    pub hang_cycles: u64,
    /// How every console starts.
    pub power_on: PowerOnRecord,
    /// Which console every ROM runs on.
    #[serde(default)]
    pub hardware: HardwareRecord,
}

impl RomJob {
    /// The folder (inside the output folder) and file-name stem the captures of this ROM get:
    /// `captures/<key's folder>/<key's file name without extension>`.
    pub fn capture_location(&self, out_dir: &Path) -> (PathBuf, String) {
        let relative = Path::new(&self.key);
        let dir = out_dir
            .join("captures")
            .join(relative.parent().unwrap_or(Path::new("")));
        let name = relative
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_else(|| "rom".to_owned());
        (dir, name)
    }
}

/// Run one ROM. Never panics on bad input: an unreadable or unsupported image, a stall or a
/// JAM is a verdict in the record. (An emulator panic is caught by the caller: see
/// `isolation`.)
pub fn run_rom(job: &RomJob, settings: &RunSettings, palette: &Palette) -> RomRecord {
    let started = Instant::now();
    let mut record = RomRecord::new(job, settings.frames);
    let finish = |mut record: RomRecord| {
        record.elapsed_ms = started.elapsed().as_millis() as u64;
        record
    };
    let bytes = match crate::limits::read_limited(&job.path, &crate::limits::ROM) {
        Ok(bytes) => bytes,
        Err(error) => {
            record.verdict = Verdict::LoadError;
            record.detail = error.to_string();
            return finish(record);
        }
    };
    // The file's hash, for a record of a ROM that does not get to load (a cartridge has it
    // in its identity).
    let file_md5 = || Some(hex(&nes::file_md5(&bytes)));
    let mut schedule = InputSchedule::new();
    for text in &job.presses {
        match ScheduledPress::parse(text) {
            Ok(press) => schedule.push(press),
            Err(error) => {
                record.md5 = file_md5();
                record.verdict = Verdict::LoadError;
                record.detail = format!("input entry `{text}`: {error}");
                return finish(record);
            }
        }
    }
    let hardware = match settings.hardware.choice() {
        Ok(hardware) => hardware,
        Err(error) => {
            record.md5 = file_md5();
            record.verdict = Verdict::LoadError;
            record.detail = error;
            return finish(record);
        }
    };
    let mut nes = match hardware.cartridge(&bytes) {
        Ok(cart) => hardware.power_on(cart, settings.power_on.into()),
        Err(error) => {
            record.md5 = file_md5();
            // The header was read: say which board is missing.
            if let CartridgeError::UnsupportedMapper { mapper, submapper } = error {
                record.mapper = Some(mapper);
                record.submapper = Some(submapper);
            }
            record.verdict = Verdict::LoadError;
            record.detail = error.to_string();
            return finish(record);
        }
    };
    let info = nes.rom_info();
    record.md5 = Some(hex(&info.file_md5));
    record.mapper = Some(info.mapper);
    record.submapper = Some(info.submapper);
    record.board = Some(info.board_name.to_owned());
    record.title = info.known_title.map(str::to_owned);

    let (capture_dir, name) = job.capture_location(&settings.out_dir);
    if let Err(error) = std::fs::create_dir_all(&capture_dir) {
        record.verdict = Verdict::OutputError;
        record.detail = format!("cannot create {}: {error}", capture_dir.display());
        return finish(record);
    }
    let capture = |nes: &Nes, frame: u64, requested: bool| -> Result<CaptureRecord, String> {
        let files = capture::write_capture(&capture_dir, &name, frame, nes.frame_buffer(), palette)
            .map_err(|error| error.to_string())?;
        let relative = |path: &Path| {
            path.strip_prefix(&settings.out_dir)
                .unwrap_or(path)
                .to_string_lossy()
                .replace('\\', "/")
        };
        Ok(CaptureRecord {
            frame,
            png: relative(&files.png),
            raw9: relative(&files.raw9),
            sha256: files.sha256,
            requested,
        })
    };

    for frame in 1..=settings.frames {
        // The input for frame N is what $4016 returns while picture N is produced, from the
        // vblank before it: the same rule as `nes run --press`.
        nes.set_buttons(0, schedule.buttons_for_frame(frame));
        let completed = nes.run_frame_within(settings.hang_cycles);
        if completed {
            record.frames_run = frame;
        }
        let jammed_at = nes.jammed_at().filter(|_| completed);
        if !completed {
            record.verdict = Verdict::Hang;
            record.detail = format!(
                "frame {frame} did not complete within {} CPU cycles",
                settings.hang_cycles
            );
        } else if let Some(pc) = jammed_at {
            record.verdict = Verdict::Jam;
            record.jam_pc = Some(format!("${pc:04X}"));
            record.detail = format!("CPU jammed at ${pc:04X} during frame {frame}");
        }
        let stopped = !completed || jammed_at.is_some();
        let requested = completed && settings.capture_frames.binary_search(&frame).is_ok();
        // A run that stops at a JAM still shows its last picture (the frame it jammed in). A
        // stalled frame has no complete picture: the buffer is half old, half new.
        let last_picture = completed && stopped;
        if requested || last_picture {
            match capture(&nes, frame, requested) {
                Ok(entry) => record.captures.push(entry),
                Err(error) => {
                    record.verdict = Verdict::OutputError;
                    record.detail = error;
                    return finish(record);
                }
            }
        }
        if stopped {
            return finish(record);
        }
    }
    finish(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_location_mirrors_the_rom_key() {
        let job = RomJob {
            key: "cpu/nestest/nestest.nes".into(),
            path: PathBuf::from("/roms/cpu/nestest/nestest.nes"),
            presses: Vec::new(),
        };
        let (dir, name) = job.capture_location(Path::new("/out"));
        assert_eq!(dir, Path::new("/out/captures/cpu/nestest"));
        assert_eq!(name, "nestest");
    }
}
