//! One ROM of a sweep, run in the calling thread: load, run from power-on with its scripted
//! input, write the captures, and judge how the run ended.

use std::path::{Path, PathBuf};
use std::time::Instant;

use md5::{Digest, Md5};
use nes::input_schedule::{InputSchedule, ScheduledPress};
use nes::{CartridgeError, Nes, Palette};
use serde::{Deserialize, Serialize};

use crate::capture;

use super::report::{CaptureRecord, RomRecord, Verdict};

/// CPU cycles in one NTSC frame (341 x 262 dots / 3, rounded up).
pub const CPU_CYCLES_PER_FRAME: u64 = 29_781;

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

/// The console operations a frame-by-frame run needs, so that stall detection can be tested
/// against a console that never finishes a frame.
pub trait FrameStepper {
    fn step_instruction(&mut self);
    fn frame_count(&self) -> u64;
    fn cpu_cycles(&self) -> u64;
}

impl FrameStepper for Nes {
    #[inline]
    fn step_instruction(&mut self) {
        Nes::step_instruction(self);
    }
    #[inline]
    fn frame_count(&self) -> u64 {
        Nes::frame_count(self)
    }
    #[inline]
    fn cpu_cycles(&self) -> u64 {
        self.cpu_registers().cycles
    }
}

/// How an attempt to run one frame ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameAdvance {
    Completed,
    /// The PPU did not reach scanline 240 within the budget.
    Stalled,
}

/// Run instructions until the next picture is complete (the PPU reaches scanline 240, rounded
/// up to an instruction boundary: the same point as `Nes::run_frame`), giving up after
/// `cycle_budget` CPU cycles, or as many instructions in case time itself stopped advancing.
pub fn advance_frame<S: FrameStepper>(console: &mut S, cycle_budget: u64) -> FrameAdvance {
    let target = console.frame_count() + 1;
    let start = console.cpu_cycles();
    let mut steps = 0u64;
    while console.frame_count() < target {
        console.step_instruction();
        steps += 1;
        if steps > cycle_budget || console.cpu_cycles().saturating_sub(start) > cycle_budget {
            return FrameAdvance::Stalled;
        }
    }
    FrameAdvance::Completed
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
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
    let bytes = match std::fs::read(&job.path) {
        Ok(bytes) => bytes,
        Err(error) => {
            record.verdict = Verdict::LoadError;
            record.detail = format!("cannot read {}: {error}", job.path.display());
            return finish(record);
        }
    };
    record.md5 = Some(hex(&Md5::digest(&bytes)));
    let mut schedule = InputSchedule::new();
    for text in &job.presses {
        match ScheduledPress::parse(text) {
            Ok(press) => schedule.push(press),
            Err(error) => {
                record.verdict = Verdict::LoadError;
                record.detail = format!("input entry `{text}`: {error}");
                return finish(record);
            }
        }
    }
    let mut nes = match Nes::from_ines(&bytes) {
        Ok(nes) => nes,
        Err(error) => {
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
        let advance = advance_frame(&mut nes, settings.hang_cycles);
        let stopped = match advance {
            FrameAdvance::Stalled => {
                record.verdict = Verdict::Hang;
                record.detail = format!(
                    "frame {frame} did not complete within {} CPU cycles",
                    settings.hang_cycles
                );
                true
            }
            FrameAdvance::Completed => {
                record.frames_run = frame;
                if let Some(pc) = nes.jammed_at() {
                    record.verdict = Verdict::Jam;
                    record.jam_pc = Some(format!("${pc:04X}"));
                    record.detail = format!("CPU jammed at ${pc:04X} during frame {frame}");
                    true
                } else {
                    false
                }
            }
        };
        let completed = advance == FrameAdvance::Completed;
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

    /// A console whose PPU completes a frame every `cycles_per_frame` CPU cycles; 0 = never.
    struct ScriptedConsole {
        cycles: u64,
        cycles_per_instruction: u64,
        cycles_per_frame: u64,
    }

    impl FrameStepper for ScriptedConsole {
        fn step_instruction(&mut self) {
            self.cycles += self.cycles_per_instruction;
        }
        fn frame_count(&self) -> u64 {
            self.cycles.checked_div(self.cycles_per_frame).unwrap_or(0)
        }
        fn cpu_cycles(&self) -> u64 {
            self.cycles
        }
    }

    #[test]
    fn a_frame_that_never_completes_is_a_stall() {
        let mut console = ScriptedConsole {
            cycles: 0,
            cycles_per_instruction: 3,
            cycles_per_frame: 0,
        };
        assert_eq!(advance_frame(&mut console, 1_000), FrameAdvance::Stalled);
        assert!(console.cycles <= 1_003, "gives up once past the budget");
        // Time standing still (no cycles per instruction) is caught by the step count.
        let mut frozen = ScriptedConsole {
            cycles: 0,
            cycles_per_instruction: 0,
            cycles_per_frame: 0,
        };
        assert_eq!(advance_frame(&mut frozen, 1_000), FrameAdvance::Stalled);
    }

    #[test]
    fn frames_within_the_budget_complete() {
        let mut console = ScriptedConsole {
            cycles: 0,
            cycles_per_instruction: 3,
            cycles_per_frame: 300,
        };
        for expected in 1..=5 {
            assert_eq!(advance_frame(&mut console, 400), FrameAdvance::Completed);
            assert_eq!(console.frame_count(), expected);
        }
        assert_eq!(advance_frame(&mut console, 100), FrameAdvance::Stalled);
    }

    #[test]
    fn advance_frame_stops_where_run_frame_does() {
        let image = {
            let mut image = vec![b'N', b'E', b'S', 0x1A, 2, 1, 0, 0];
            image.resize(16, 0);
            let mut prg = vec![0xEA; 0x8000]; // NOPs, then the reset vector
            prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
            image.extend_from_slice(&prg);
            image.extend_from_slice(&[0; 0x2000]);
            image
        };
        let mut by_run_frame = Nes::from_ines(&image).unwrap();
        let mut by_advance = by_run_frame.clone();
        for _ in 0..3 {
            by_run_frame.run_frame();
            assert_eq!(
                advance_frame(&mut by_advance, DEFAULT_HANG_CYCLES),
                FrameAdvance::Completed
            );
            assert_eq!(by_run_frame.cpu_registers(), by_advance.cpu_registers());
            assert_eq!(by_run_frame.ppu_position(), by_advance.ppu_position());
        }
    }

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
