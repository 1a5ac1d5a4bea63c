//! The outputs of a run, each a small sink behind one trait: the run tells every sink about
//! each frame as it completes and, once, about the end; `nes run` composes the sinks its
//! options ask for (see [`super::run`]), in the order their end-of-run lines are printed.

use std::io::Write;
use std::path::{Path, PathBuf};

use nes::{Nes, Palette, PowerOnRam, Region, SCREEN_HEIGHT, SCREEN_WIDTH};
use nes_lua::LuaHost;
use nes_movie::fm2::MovieFrame;

use crate::battery::BatterySave;
use crate::capture;
use crate::output::{self, AtomicFile};
use crate::Error;

/// What a sink sees after each frame.
#[derive(Debug)]
pub struct FrameDone<'a> {
    pub nes: &'a mut Nes,
    /// The frame just completed (from 1).
    pub frame: u64,
    /// The input the game received for it, a script's overrides included.
    pub input: &'a MovieFrame,
}

/// What a sink sees at the end of the run.
pub struct RunEnd<'a> {
    pub nes: &'a mut Nes,
    /// The run's Lua script, if any: the screenshot shows its overlay.
    pub script: Option<&'a mut LuaHost>,
}

impl std::fmt::Debug for RunEnd<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEnd")
            .field("frame", &self.nes.frame_count())
            .field("script", &self.script.is_some())
            .finish()
    }
}

/// One output of a run.
pub trait RunSink {
    /// Called after every frame. The default does nothing.
    fn frame_done(&mut self, _frame: &mut FrameDone<'_>) -> Result<(), Error> {
        Ok(())
    }

    /// Called once after the last frame: write the output and say where it went. The default
    /// does nothing (a sink that wrote as it went).
    fn finish(self: Box<Self>, _end: &mut RunEnd<'_>) -> Result<(), Error> {
        Ok(())
    }
}

/// `--capture`: the listed frames as PNG and raw9 files, each picture's SHA-256 printed.
#[derive(Debug)]
pub struct Captures {
    /// Sorted.
    frames: Vec<u64>,
    dir: PathBuf,
    name: String,
    palette: Palette,
}

impl Captures {
    /// Captures of `frames` (sorted) into `dir` (created when missing), named after `name`.
    pub fn new(
        frames: Vec<u64>,
        dir: PathBuf,
        name: String,
        palette: Palette,
    ) -> Result<Captures, Error> {
        std::fs::create_dir_all(&dir).map_err(|source| Error::Folder {
            action: "create",
            path: dir.clone(),
            source,
        })?;
        Ok(Captures {
            frames,
            dir,
            name,
            palette,
        })
    }
}

impl RunSink for Captures {
    fn frame_done(&mut self, done: &mut FrameDone<'_>) -> Result<(), Error> {
        if self.frames.binary_search(&done.frame).is_err() {
            return Ok(());
        }
        let files = capture::write_capture(
            &self.dir,
            &self.name,
            done.frame,
            done.nes.frame_buffer(),
            &self.palette,
        )?;
        crate::outln!(
            "capture f{}: sha256 {} ({}, {})",
            done.frame,
            files.sha256,
            files.png.display(),
            files.raw9.display()
        );
        Ok(())
    }
}

/// `--wav`: the run's audio as a 16-bit mono WAV. The console must produce audio at
/// `sample_rate` (set before any state is loaded, so a state made at that rate resumes its
/// resampler exactly).
#[derive(Debug)]
pub struct WavRecorder {
    path: PathBuf,
    sample_rate: u32,
    samples: Vec<f32>,
}

impl WavRecorder {
    pub fn new(path: PathBuf, sample_rate: u32) -> WavRecorder {
        WavRecorder {
            path,
            sample_rate,
            samples: Vec::new(),
        }
    }
}

impl RunSink for WavRecorder {
    fn frame_done(&mut self, done: &mut FrameDone<'_>) -> Result<(), Error> {
        done.nes.take_audio_samples(&mut self.samples);
        Ok(())
    }

    fn finish(self: Box<Self>, _end: &mut RunEnd<'_>) -> Result<(), Error> {
        output::save_wav(&self.path, &self.samples, self.sample_rate)?;
        crate::outln!(
            "audio: {} ({} samples)",
            self.path.display(),
            self.samples.len()
        );
        Ok(())
    }
}

/// `--ram-log`: CPU RAM after every frame, streamed to a temporary file beside the target as
/// the run goes and renamed over it at the end, so an interrupted run never leaves a partial
/// log.
#[derive(Debug)]
pub struct RamLog {
    file: AtomicFile,
    bytes: u64,
    ram: Box<[u8; 0x800]>,
}

impl RamLog {
    pub fn create(path: &Path) -> Result<RamLog, Error> {
        Ok(RamLog {
            file: AtomicFile::create(path)?,
            bytes: 0,
            ram: Box::new([0; 0x800]),
        })
    }
}

impl RunSink for RamLog {
    fn frame_done(&mut self, done: &mut FrameDone<'_>) -> Result<(), Error> {
        for (addr, byte) in (0u16..).zip(self.ram.iter_mut()) {
            *byte = done.nes.peek(addr);
        }
        self.file
            .write_all(&self.ram[..])
            .map_err(|source| output::OutputError::Io {
                path: self.file.path().display().to_string(),
                source,
            })?;
        self.bytes += self.ram.len() as u64;
        Ok(())
    }

    fn finish(self: Box<Self>, _end: &mut RunEnd<'_>) -> Result<(), Error> {
        let path = self.file.path().to_owned();
        self.file.commit()?;
        crate::outln!("ram log: {} ({} bytes)", path.display(), self.bytes);
        Ok(())
    }
}

/// The cartridge's battery-backed RAM, written while the game runs (when it has settled) and
/// at the end.
#[derive(Debug)]
pub struct Battery(pub BatterySave);

impl RunSink for Battery {
    fn frame_done(&mut self, done: &mut FrameDone<'_>) -> Result<(), Error> {
        self.0.frame_done(done.nes)?;
        Ok(())
    }

    fn finish(mut self: Box<Self>, end: &mut RunEnd<'_>) -> Result<(), Error> {
        if self.0.save(end.nes)? {
            eprintln!("battery save written: {}", self.0.path().display());
        }
        Ok(())
    }
}

/// `--save-state`: the console's state at the end.
#[derive(Debug)]
pub struct StateWriter(pub PathBuf);

impl RunSink for StateWriter {
    fn finish(self: Box<Self>, end: &mut RunEnd<'_>) -> Result<(), Error> {
        output::write_atomically(&self.0, &end.nes.save_state())?;
        crate::outln!(
            "state: {} (frame {})",
            self.0.display(),
            end.nes.frame_count()
        );
        Ok(())
    }
}

/// `--screenshot`: the last frame as a PNG, with the script's overlay on it.
#[derive(Debug)]
pub struct Screenshot {
    pub path: PathBuf,
    pub palette: Palette,
}

impl RunSink for Screenshot {
    fn finish(self: Box<Self>, end: &mut RunEnd<'_>) -> Result<(), Error> {
        let mut rgba = end.nes.frame_rgba(&self.palette);
        if let Some(script) = &end.script {
            script.composite_overlay(&mut rgba);
        }
        output::save_png(&self.path, &rgba, SCREEN_WIDTH as u32, SCREEN_HEIGHT as u32)?;
        crate::outln!("screenshot: {}", self.path.display());
        Ok(())
    }
}

/// The end of `--lua`'s script: it ends with the run (its `emu.registerexit` function runs),
/// after the screenshot, which shows its overlay.
#[derive(Debug)]
pub struct ScriptEnd;

impl RunSink for ScriptEnd {
    fn finish(self: Box<Self>, end: &mut RunEnd<'_>) -> Result<(), Error> {
        if let Some(script) = end.script.as_deref_mut() {
            if script.running() {
                script.stop(end.nes);
            }
            super::script::drain(script);
        }
        Ok(())
    }
}

/// `--record`: the input the game received, as an FM2 movie FCEUX plays back in step.
#[derive(Debug)]
pub struct MovieRecorder {
    path: PathBuf,
    rom: PathBuf,
    rom_md5: [u8; 16],
    origin: &'static str,
    power_on_ram: PowerOnRam,
    frames: Vec<MovieFrame>,
}

impl MovieRecorder {
    /// A recording of a run of `rom` (whose FCEUX checksum is `rom_md5`) from power-on with
    /// `power_on_ram`, its input coming from `origin`.
    pub fn new(
        path: PathBuf,
        rom: PathBuf,
        rom_md5: [u8; 16],
        origin: &'static str,
        power_on_ram: PowerOnRam,
    ) -> MovieRecorder {
        MovieRecorder {
            path,
            rom,
            rom_md5,
            origin,
            power_on_ram,
            frames: Vec::new(),
        }
    }
}

impl RunSink for MovieRecorder {
    fn frame_done(&mut self, done: &mut FrameDone<'_>) -> Result<(), Error> {
        self.frames.push(*done.input);
        Ok(())
    }

    fn finish(self: Box<Self>, end: &mut RunEnd<'_>) -> Result<(), Error> {
        let pal = end.nes.region() == Region::Pal;
        let frame_count = self.frames.len();
        let movie = super::recording::recorded_movie(
            &self.rom,
            self.rom_md5,
            self.origin,
            self.power_on_ram,
            pal,
            self.frames,
        );
        output::write_atomically(&self.path, movie.to_fm2().as_bytes())?;
        crate::outln!("recorded: {} ({frame_count} frames)", self.path.display());
        Ok(())
    }
}
