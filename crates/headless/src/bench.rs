//! `nes bench`: emulation speed as a frontend pays it. By default every timed frame produces
//! 48 kHz audio and reads it, and converts the picture to RGBA, as the window, a libretro-style
//! host or an AI harness does; `--no-audio` and `--no-video` take each cost out to isolate it.
//! Each run starts from the same powered-on console, runs untimed warm-up frames, then times
//! the measured frames; the median run is reported. `--jobs N` runs N independent consoles on
//! N threads at once and reports their total rate.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::Instant;

use nes::{Nes, Palette, SCREEN_HEIGHT, SCREEN_WIDTH};
use serde::Serialize;

use crate::hardware::HardwareChoice;
use crate::{load_rom, Error};

/// The output rate a frontend asks for (the window's and the peers' rate).
pub const AUDIO_SAMPLE_RATE: u32 = 48_000;

/// Options of `nes bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    pub rom: PathBuf,
    /// Timed frames per run.
    #[arg(long, default_value_t = 3000)]
    pub frames: u64,
    /// Number of runs; the median is reported.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Untimed frames run before the timed ones in every run.
    #[arg(long, default_value_t = 60)]
    pub warmup: u64,
    /// Produce no audio (the APU then mixes nothing): the emulation cost without the audio
    /// path.
    #[arg(long)]
    pub no_audio: bool,
    /// Do not convert the picture to RGBA each frame.
    #[arg(long)]
    pub no_video: bool,
    /// Run this many independent consoles at once, one per thread, and report their total.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Run this Lua script alongside (measures the scripting and hook overhead).
    #[arg(long, value_name = "SCRIPT")]
    pub lua: Option<PathBuf>,
    /// The script's watchdog, as `nes run --lua-watchdog` (measures its cost); default off.
    #[arg(long, value_name = "SECONDS", requires = "lua", value_parser = nes_lua::parse_watchdog_seconds)]
    pub lua_watchdog: Option<f64>,
}

/// What `nes bench --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub rom: String,
    pub frames: u64,
    pub warmup: u64,
    pub runs: usize,
    /// The audio output rate, `None` with `--no-audio`.
    pub audio_hz: Option<u32>,
    /// Whether each frame was converted to RGBA.
    pub video_rgba: bool,
    pub lua: Option<String>,
    pub jobs: u16,
    /// Frames per second of all consoles together, per run, sorted.
    pub total_fps_runs: Vec<f64>,
    /// The median of `total_fps_runs`.
    pub total_fps: f64,
    /// `total_fps` per console.
    pub fps_per_console: f64,
    /// Microseconds one console spends on a frame (from `fps_per_console`).
    pub us_per_frame: f64,
    /// The share of the timed frames' CPU cycles that idle-loop skipping passed over (the
    /// ROM waiting for an interrupt in a loop that only re-reads memory): how much of the
    /// speed comes from not running such loops one cycle at a time (first console, last run).
    pub idle_cycles_skipped_share: f64,
}

/// Runs `nes bench` and prints its result.
pub fn bench(args: &BenchArgs) -> Result<(), Error> {
    let report = measure(args)?;
    if args.json {
        let json = serde_json::to_string(&report).map_err(Error::EncodeReport)?;
        crate::outln!("{json}");
    } else {
        crate::outln!("{}", summary(&report));
    }
    Ok(())
}

/// One line for people.
pub fn summary(report: &BenchReport) -> String {
    let mut costs = Vec::new();
    match report.audio_hz {
        Some(hz) => costs.push(format!("{} kHz audio", f64::from(hz) / 1000.0)),
        None => costs.push("no audio".to_owned()),
    }
    costs.push(
        if report.video_rgba {
            "RGBA video"
        } else {
            "no video"
        }
        .to_owned(),
    );
    if let Some(script) = &report.lua {
        costs.push(format!("Lua {script}"));
    }
    let consoles = if report.jobs > 1 {
        format!(
            ", {} consoles: total {:.0} frames/s,",
            report.jobs, report.total_fps
        )
    } else {
        String::new()
    };
    format!(
        "{}: {} frames x {} runs ({}){consoles} median {:.0} frames/s per console ({:.1} us/frame; \
         {:.0}% of CPU cycles in skipped idle loops)",
        report.rom,
        report.frames,
        report.runs,
        costs.join(", "),
        report.fps_per_console,
        report.us_per_frame,
        100.0 * report.idle_cycles_skipped_share
    )
}

/// Measures without printing.
pub fn measure(args: &BenchArgs) -> Result<BenchReport, Error> {
    let fresh = load_rom(
        &args.rom,
        nes::PowerOn::HARDWARE,
        &HardwareChoice::default(),
    )?;
    let jobs = usize::from(args.jobs.max(1));
    let runs = args.runs.max(1);
    let mut totals = Vec::with_capacity(runs);
    let mut idle_cycles_skipped_share = 0.0;
    for _ in 0..runs {
        let barrier = Barrier::new(jobs);
        let elapsed = std::thread::scope(|scope| {
            let consoles: Vec<_> = (0..jobs)
                .map(|_| scope.spawn(|| run_console(&fresh, args, &barrier)))
                .collect();
            consoles
                .into_iter()
                .map(|console| {
                    console
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect::<Result<Vec<ConsoleRun>, Error>>()
        })?;
        idle_cycles_skipped_share = elapsed[0].idle_cycles_skipped_share;
        // All consoles start together; the run lasts until the slowest ends.
        let slowest = elapsed
            .iter()
            .map(|run| run.seconds)
            .fold(f64::MIN_POSITIVE, f64::max);
        totals.push((jobs as u64 * args.frames) as f64 / slowest);
    }
    totals.sort_by(f64::total_cmp);
    let total_fps = totals[totals.len() / 2];
    let fps_per_console = total_fps / jobs as f64;
    Ok(BenchReport {
        rom: args.rom.display().to_string(),
        frames: args.frames,
        warmup: args.warmup,
        runs,
        audio_hz: (!args.no_audio).then_some(AUDIO_SAMPLE_RATE),
        video_rgba: !args.no_video,
        lua: args.lua.as_ref().map(|path| path.display().to_string()),
        jobs: args.jobs.max(1),
        total_fps_runs: totals,
        total_fps,
        fps_per_console,
        us_per_frame: 1e6 / fps_per_console,
        idle_cycles_skipped_share,
    })
}

/// What one console's timed frames took.
struct ConsoleRun {
    seconds: f64,
    /// Of their CPU cycles, the share idle-loop skipping passed over.
    idle_cycles_skipped_share: f64,
}

/// What a frontend does with each frame: reads the audio produced and converts the picture.
struct Frontend {
    palette: Palette,
    samples: Vec<f32>,
    rgba: Vec<u8>,
    video: bool,
}

impl Frontend {
    fn take_frame(&mut self, nes: &mut Nes) {
        self.samples.clear();
        nes.take_audio_samples(&mut self.samples);
        // Touch every sample, as a frontend copying them to its device would.
        black_box(
            self.samples
                .iter()
                .fold(0.0f32, |sum, &sample| sum + sample),
        );
        if self.video {
            self.palette.to_rgba(nes.frame_buffer(), &mut self.rgba);
            black_box(&self.rgba);
        }
    }
}

/// A console's place at the start barrier: passed once, when the console is ready, or when
/// it is dropped before that (its set-up or warm-up failed or panicked), so a console that
/// never gets ready still releases the others instead of leaving them waiting for ever.
struct StartGate<'a> {
    barrier: &'a Barrier,
    passed: bool,
}

impl StartGate<'_> {
    fn pass(&mut self) {
        if !self.passed {
            self.passed = true;
            self.barrier.wait();
        }
    }
}

impl Drop for StartGate<'_> {
    fn drop(&mut self) {
        self.pass();
    }
}

/// One console's run: warm-up, then the timed frames once every console is ready.
fn run_console(fresh: &Nes, args: &BenchArgs, start: &Barrier) -> Result<ConsoleRun, Error> {
    let mut gate = StartGate {
        barrier: start,
        passed: false,
    };
    let mut nes = fresh.clone();
    if !args.no_audio {
        nes.set_audio_sample_rate(AUDIO_SAMPLE_RATE);
    }
    let mut frontend = Frontend {
        palette: Palette::ntsc(),
        samples: Vec::with_capacity(4096),
        rgba: vec![0; SCREEN_WIDTH * SCREEN_HEIGHT * 4],
        video: !args.no_video,
    };
    let mut script = match &args.lua {
        Some(script) => Some(start_script(script, &mut nes, args.lua_watchdog)?),
        None => None,
    };
    let mut frame = |nes: &mut Nes| {
        match &mut script {
            Some(script) => {
                script.host.run_frame(nes, nes_lua::FrameInput::default());
            }
            None => nes.run_frame(),
        }
        frontend.take_frame(nes);
    };
    for _ in 0..args.warmup {
        frame(&mut nes);
    }
    gate.pass();
    let (cycles_before, skipped_before) = (nes.cpu_registers().cycles, nes.idle_cycles_skipped());
    let started = Instant::now();
    for _ in 0..args.frames {
        frame(&mut nes);
    }
    let seconds = started.elapsed().as_secs_f64();
    let cycles = nes.cpu_registers().cycles.saturating_sub(cycles_before);
    let skipped = nes.idle_cycles_skipped().saturating_sub(skipped_before);
    if let Some(script) = &mut script {
        if let Some(error) = script.host.take_errors().into_iter().next() {
            return Err(Error::Script(error));
        }
    }
    Ok(ConsoleRun {
        seconds,
        idle_cycles_skipped_share: if cycles == 0 {
            0.0
        } else {
            skipped as f64 / cycles as f64
        },
    })
}

/// A console's running script and the folder its numbered save slots live in.
struct Script {
    host: nes_lua::LuaHost,
    /// The host's `save_dir`, made for this console's run: `savestate.persist` writes its slot
    /// files here, so a run leaves none behind and reads none it did not write. Declared after
    /// `host`, so it is removed after the host is gone.
    _save_dir: tempfile::TempDir,
}

/// Loads and starts the script (before the timed frames: none of this is measured).
fn start_script(script: &Path, nes: &mut Nes, watchdog: Option<f64>) -> Result<Script, Error> {
    let save_dir = tempfile::Builder::new()
        .prefix("nes-bench-")
        .tempdir()
        .map_err(|source| Error::Folder {
            action: "create a save folder for the script in",
            path: std::env::temp_dir(),
            source,
        })?;
    let options = nes_lua::HostOptions {
        save_dir: save_dir.path().to_path_buf(),
        rom_stem: "bench".to_string(),
        rom: nes.rom_info().clone(),
        arg: None,
        palette: Palette::ntsc(),
    };
    let mut host = nes_lua::LuaHost::load(script, options)?;
    host.set_watchdog(nes_lua::watchdog_limit(watchdog.unwrap_or(0.0))?);
    host.start(nes);
    Ok(Script {
        host,
        _save_dir: save_dir,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(rom: PathBuf) -> BenchArgs {
        BenchArgs {
            rom,
            frames: 3,
            runs: 3,
            warmup: 2,
            no_audio: false,
            no_video: false,
            jobs: 1,
            json: false,
            lua: None,
            lua_watchdog: None,
        }
    }

    fn rom_file() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("busy.nes");
        std::fs::write(&path, nes::test_programs::busy_rom()).unwrap();
        (dir, path)
    }

    #[test]
    fn reports_the_median_of_its_runs_and_what_each_frame_paid() {
        let (_dir, rom) = rom_file();
        let report = measure(&args(rom)).unwrap();
        assert_eq!(report.total_fps_runs.len(), 3);
        assert_eq!(report.total_fps, report.total_fps_runs[1]);
        assert_eq!(report.audio_hz, Some(AUDIO_SAMPLE_RATE));
        assert!(report.video_rgba);
        assert_eq!(report.fps_per_console, report.total_fps);
        assert!(report.total_fps > 0.0);
        let text = summary(&report);
        assert!(text.contains("48 kHz audio, RGBA video"), "{text}");
        assert!(
            (0.0..=1.0).contains(&report.idle_cycles_skipped_share),
            "{text}"
        );
        assert!(
            text.contains("% of CPU cycles in skipped idle loops"),
            "{text}"
        );
    }

    #[test]
    fn a_console_that_never_gets_ready_still_releases_the_others() {
        let barrier = Barrier::new(3);
        std::thread::scope(|scope| {
            // One console fails before its start (its gate is dropped unpassed), one panics.
            scope.spawn(|| {
                let _gate = StartGate {
                    barrier: &barrier,
                    passed: false,
                };
            });
            let panicked = scope.spawn(|| {
                let _gate = StartGate {
                    barrier: &barrier,
                    passed: false,
                };
                panic!("set-up failed");
            });
            let mut ready = StartGate {
                barrier: &barrier,
                passed: false,
            };
            ready.pass();
            assert!(panicked.join().is_err());
        });
    }

    #[test]
    fn each_console_of_each_run_has_its_own_save_slots() {
        let (dir, rom) = rom_file();
        // Slot 1 must start empty in every run and console, and a persisted slot loads back.
        let script = dir.path().join("slots.lua");
        std::fs::write(
            &script,
            "emu.frameadvance()\n\
             local checked = emu.framecount()\n\
             savestate.load(savestate.object(1))\n\
             if emu.framecount() ~= checked then error('slot 1 was already there') end\n\
             emu.frameadvance()\n\
             local saved = emu.framecount()\n\
             local s = savestate.object(1)\n\
             savestate.save(s)\n\
             savestate.persist(s)\n\
             emu.frameadvance()\n\
             savestate.load(savestate.object(1))\n\
             if emu.framecount() ~= saved then error('the persisted slot did not load') end\n\
             while true do emu.frameadvance() end",
        )
        .unwrap();
        let report = measure(&BenchArgs {
            jobs: 2,
            lua: Some(script),
            ..args(rom)
        })
        .unwrap();
        assert_eq!(report.total_fps_runs.len(), 3);
    }

    #[test]
    fn many_consoles_report_their_total() {
        let (_dir, rom) = rom_file();
        let report = measure(&BenchArgs {
            jobs: 2,
            no_audio: true,
            no_video: true,
            ..args(rom)
        })
        .unwrap();
        assert_eq!(report.jobs, 2);
        assert_eq!(report.audio_hz, None);
        assert!((report.fps_per_console * 2.0 - report.total_fps).abs() < 1e-6);
        assert!(summary(&report).contains("2 consoles: total"));
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["jobs"], 2);
        assert_eq!(json["audio_hz"], serde_json::Value::Null);
    }
}
