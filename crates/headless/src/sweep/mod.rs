//! `nes sweep`: run a library of ROMs headless in parallel with scripted input, capture chosen
//! frames, and write `sweep.json` and an `index.html` contact sheet; with `--compare`, list the
//! captures that changed against an earlier sweep and draw diff images.
//!
//! Output folder layout:
//!
//! ```text
//! OUT/sweep.json                       the report (see `report::SweepReport`)
//! OUT/index.html                       the contact sheet (relative links only)
//! OUT/captures/<rom folder>/NAME_fN.png   and NAME_fN.raw9, NAME = the ROM file's stem
//! OUT/diffs/<rom folder>/NAME_fN.png      with --compare: changed pixels highlighted
//! ```

pub mod compare;
pub mod isolation;
pub mod job;
pub mod report;
pub mod roms;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::capture::{load_palette, FrameList};
use crate::hardware::{HardwareArgs, HardwareChoice};
use crate::output;
use crate::power_on::PowerOnArgs;
use crate::Error;
use nes::PowerOn;

pub use compare::CompareReport;
pub use isolation::{worker_main, Isolation};
pub use job::{RomJob, RunSettings, DEFAULT_HANG_CYCLES};
pub use report::{CaptureRecord, RomRecord, SweepReport, Verdict};
pub use roms::{find_roms, FoundRom, InputSpec, InputSpecError};

/// Frames run when neither --frames nor --capture says otherwise (ten seconds of NTSC play).
pub const DEFAULT_FRAMES: u64 = 600;
/// Default wall-clock limit per ROM for the worker processes.
pub const DEFAULT_ROM_TIMEOUT_SECONDS: u64 = 600;

/// Options of `nes sweep`.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepArgs {
    /// A folder (searched recursively for *.nes) or a text file listing ROM paths, one per line,
    /// relative to the list's folder (`#` comments allowed)
    #[arg(long, value_name = "DIR|LIST")]
    pub roms: PathBuf,
    /// Output folder (created when missing); captures, sweep.json and index.html go here
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Frames to run per ROM [default: the last --capture frame, else 600]
    #[arg(long, value_name = "N")]
    pub frames: Option<u64>,
    /// Frames to capture, as a comma list (`120,300,450`) [default: the last frame]
    #[arg(long, value_name = "FRAMES", value_parser = FrameList::parse)]
    pub capture: Option<FrameList>,
    /// Scripted input per ROM: a TOML file with `default = ["120:S", ...]` and a `[roms]` table
    /// mapping a ROM (path relative to --roms, or file name) to `--press` entries
    #[arg(long, value_name = "SPEC")]
    pub input_file: Option<PathBuf>,
    /// ROMs run at the same time [default: available cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// An earlier sweep's output folder: list the captures that changed and write diff images
    #[arg(long, value_name = "OLD_OUT")]
    pub compare: Option<PathBuf>,
    /// Palette for the PNGs (.pal, 64 or 512 colours) [default: the built-in NTSC palette]
    #[arg(long, value_name = "PAL")]
    pub palette: Option<PathBuf>,
    /// A frame that takes more CPU cycles than this is a hang (a frame is 29,781 cycles)
    #[arg(long, value_name = "CYCLES", default_value_t = DEFAULT_HANG_CYCLES)]
    pub hang_cycles: u64,
    /// Wall-clock limit per ROM in seconds; a worker still running then is killed (hang)
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_ROM_TIMEOUT_SECONDS)]
    pub rom_timeout: u64,
    /// How each console starts (default: the hardware timeline, RAM zeroed)
    #[command(flatten)]
    pub power_on: PowerOnArgs,
    /// Which console every ROM runs on (default: the reference NES-001)
    #[command(flatten)]
    pub hardware: HardwareArgs,
}

/// Everything a sweep needs, resolved from the arguments.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    pub roms: PathBuf,
    pub out: PathBuf,
    pub frames: u64,
    pub capture_frames: Vec<u64>,
    pub input: InputSpec,
    pub jobs: usize,
    pub compare: Option<PathBuf>,
    pub palette_file: Option<PathBuf>,
    pub hang_cycles: u64,
    pub power_on: PowerOn,
    pub hardware: HardwareChoice,
    pub isolation: Isolation,
    /// Show a progress bar (or, when stderr is not a terminal, a line per ROM).
    pub progress: bool,
}

/// Default `--jobs`: the cores this process may use.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |cores| cores.get())
}

impl SweepOptions {
    /// Resolve `nes sweep`'s arguments; ROMs run in worker processes of `program`.
    pub fn from_args(args: &SweepArgs, program: PathBuf) -> Result<SweepOptions, Error> {
        let capture = args.capture.as_ref().map(|list| list.0.clone());
        let last_capture = capture
            .as_ref()
            .and_then(|frames| frames.last().copied())
            .unwrap_or(0);
        let frames = match args.frames {
            Some(0) => return Err(Error::Options("--frames must be at least 1".to_owned())),
            Some(frames) if frames < last_capture => {
                return Err(Error::Options(format!(
                    "--capture asks for frame {last_capture} but --frames stops the runs at \
                     frame {frames}"
                )))
            }
            Some(frames) => frames,
            // Nothing after the last capture would be kept.
            None if last_capture > 0 => last_capture,
            None => DEFAULT_FRAMES,
        };
        let input = match &args.input_file {
            Some(path) => InputSpec::load(path)?,
            None => InputSpec::default(),
        };
        if args.hang_cycles == 0 {
            return Err(Error::Options(
                "--hang-cycles must be at least 1".to_owned(),
            ));
        }
        Ok(SweepOptions {
            roms: args.roms.clone(),
            out: args.out.clone(),
            frames,
            capture_frames: capture.unwrap_or_else(|| vec![frames]),
            input,
            jobs: args.jobs.unwrap_or_else(default_jobs).max(1),
            compare: args.compare.clone(),
            palette_file: args.palette.clone(),
            hang_cycles: args.hang_cycles,
            // A sweep runs a ROM library: no FCEUX material.
            power_on: args.power_on.resolve(false),
            hardware: args.hardware.resolve(),
            isolation: Isolation::Subprocess {
                program,
                timeout: Duration::from_secs(args.rom_timeout.max(1)),
            },
            progress: true,
        })
    }
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Progress display: a bar with counts and ETA on a terminal, a line per ROM otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    lines: bool,
    total: usize,
    counts: Mutex<std::collections::BTreeMap<Verdict, usize>>,
}

impl Progress {
    fn new(total: usize, enabled: bool) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let bar = (enabled && terminal).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar:.cyan/blue}] {pos}/{len} ROMs, ETA {eta} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar
        });
        Progress {
            bar,
            lines: enabled && !terminal,
            total,
            counts: Mutex::new(Default::default()),
        }
    }

    fn finished(&self, done: usize, record: &RomRecord) {
        let mut counts = self
            .counts
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        *counts.entry(record.verdict).or_insert(0) += 1;
        if let Some(bar) = &self.bar {
            bar.set_message(report::counts_line(&counts));
            bar.inc(1);
        } else if self.lines {
            eprintln!(
                "[{done}/{}] {} {}{}",
                self.total,
                record.verdict.label(),
                record.rom,
                if record.detail.is_empty() {
                    String::new()
                } else {
                    format!(": {}", record.detail)
                }
            );
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

/// Run a sweep: every ROM, then `sweep.json`, the comparison and `index.html`. A ROM that fails
/// in any way is a verdict in the report; only problems with the options or the output folder
/// are errors.
pub fn run_sweep(options: &SweepOptions) -> Result<SweepReport, Error> {
    let started = Instant::now();
    let palette = load_palette(options.palette_file.as_deref())?;
    let found = find_roms(&options.roms)?;
    for entry in options.input.unused_entries(&found) {
        eprintln!("warning: --input-file entry `{entry}` matches no ROM");
    }
    let old = match &options.compare {
        Some(old_dir) => {
            if same_folder(old_dir, &options.out) {
                return Err(Error::Options(format!(
                    "--compare {} is the output folder; write the new sweep elsewhere",
                    old_dir.display()
                )));
            }
            Some(compare::load_report(old_dir)?)
        }
        None => None,
    };
    prepare_output(&options.out)?;
    let settings = RunSettings {
        frames: options.frames,
        capture_frames: options.capture_frames.clone(),
        out_dir: options.out.clone(),
        hang_cycles: options.hang_cycles,
        power_on: options.power_on.into(),
        hardware: options.hardware.record(),
    };
    let jobs: Vec<RomJob> = found
        .iter()
        .map(|rom| RomJob {
            key: rom.key.clone(),
            path: rom.path.clone(),
            presses: options
                .input
                .presses_for(&rom.key)
                .iter()
                .map(ToString::to_string)
                .collect(),
        })
        .collect();
    let threads = options.jobs.clamp(1, jobs.len().max(1));
    if options.progress {
        eprintln!(
            "sweeping {} ROMs from {}: {} frames each, on {threads} threads",
            jobs.len(),
            options.roms.display(),
            options.frames
        );
    }
    let progress = Progress::new(jobs.len(), options.progress);
    let records = run_all(&jobs, threads, &progress, |job| {
        isolation::run_isolated(
            job,
            &settings,
            &palette,
            options.palette_file.as_deref(),
            &options.isolation,
        )
    });
    progress.done();

    let compare = old
        .as_ref()
        .zip(options.compare.as_deref())
        .map(|(old, dir)| compare::compare(old, dir, &records, &options.out, &palette));
    let report = SweepReport {
        schema_version: report::SCHEMA_VERSION,
        emulator: format!("nes {}", env!("CARGO_PKG_VERSION")),
        roms_source: options.roms.display().to_string(),
        frames: options.frames,
        capture_frames: options.capture_frames.clone(),
        palette: options.palette_file.as_ref().map_or_else(
            || "built-in NTSC".to_owned(),
            |path| path.display().to_string(),
        ),
        jobs: threads,
        hang_cycles: options.hang_cycles,
        power_on: options.power_on.into(),
        hardware: options.hardware.record(),
        elapsed_seconds: started.elapsed().as_secs_f64(),
        counts: report::count_verdicts(&records),
        roms: records,
        compare,
    };
    let mut json = serde_json::to_string_pretty(&report).map_err(Error::EncodeReport)?;
    json.push('\n');
    output::write_atomically(&options.out.join("sweep.json"), json.as_bytes())?;
    let context = report::HtmlContext {
        old_prefix: options
            .compare
            .as_deref()
            .and_then(|old| compare::relative_dir(&options.out, old)),
    };
    output::write_atomically(
        &options.out.join("index.html"),
        report::render_html(&report, &context).as_bytes(),
    )?;
    Ok(report)
}

/// Create the output folder; a folder that already holds a sweep loses its old captures and
/// diffs first, so nothing stale is left beside the new report.
fn prepare_output(out: &Path) -> Result<(), Error> {
    let create = |dir: &Path| {
        std::fs::create_dir_all(dir).map_err(|source| Error::Folder {
            action: "create",
            path: dir.to_path_buf(),
            source,
        })
    };
    create(out)?;
    if out.join("sweep.json").is_file() {
        for generated in ["captures", "diffs"] {
            let dir = out.join(generated);
            if dir.is_dir() {
                std::fs::remove_dir_all(&dir).map_err(|source| Error::Folder {
                    action: "clear",
                    path: dir.clone(),
                    source,
                })?;
            }
        }
    }
    create(&out.join("captures"))
}

/// Run `jobs` on `threads` threads, returning the records in job order.
fn run_all(
    jobs: &[RomJob],
    threads: usize,
    progress: &Progress,
    run: impl Fn(&RomJob) -> RomRecord + Sync,
) -> Vec<RomRecord> {
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<RomRecord>>> = Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(index) else { break };
                let record = run(job);
                let done = finished.fetch_add(1, Ordering::Relaxed) + 1;
                progress.finished(done, &record);
                let mut guard = results.lock().unwrap_or_else(|poison| poison.into_inner());
                if let Some(slot) = guard.get_mut(index) {
                    *slot = Some(record);
                }
            });
        }
    });
    let results = results
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner());
    results
        .into_iter()
        .zip(jobs)
        .map(|(record, job)| {
            record.unwrap_or_else(|| {
                let mut record = RomRecord::new(job, 0);
                record.verdict = Verdict::Panic;
                record.detail = "the sweep thread running it died".to_owned();
                record
            })
        })
        .collect()
}

/// The summary `nes sweep` prints: verdict counts, the ROMs that did not finish, and with
/// `--compare` every changed or missing capture.
pub fn summary(report: &SweepReport, out: &Path) -> String {
    let mut text = String::new();
    for record in report
        .roms
        .iter()
        .filter(|record| record.verdict != Verdict::Ok)
    {
        text.push_str(&format!(
            "{}: {} ({})\n",
            record.rom,
            record.verdict.label(),
            record.detail
        ));
    }
    if let Some(compare) = &report.compare {
        for change in &compare.changed {
            text.push_str(&format!(
                "changed {} f{}: {} pixels{}\n",
                change.rom,
                change.frame,
                change.changed_pixels,
                change
                    .diff_png
                    .as_ref()
                    .map(|diff| format!(" ({})", out.join(diff).display()))
                    .or_else(|| change.error.as_ref().map(|error| format!(" ({error})")))
                    .unwrap_or_default()
            ));
        }
        for missing in &compare.missing {
            text.push_str(&format!(
                "missing {} f{}: only in the {} sweep\n",
                missing.rom,
                missing.frame,
                if missing.only_in_old { "old" } else { "new" }
            ));
        }
        for change in &compare.verdicts {
            text.push_str(&format!(
                "verdict {}: {} -> {}\n",
                change.rom,
                change.old.label(),
                change.new.label()
            ));
        }
        text.push_str(&format!(
            "compared with {}: {} changed, {} missing, {} unchanged\n",
            compare.old_dir,
            compare.changed.len(),
            compare.missing.len(),
            compare.unchanged
        ));
    }
    text.push_str(&format!(
        "{} ROMs in {:.1} s: {}\n",
        report.roms.len(),
        report.elapsed_seconds,
        report::counts_line(&report.counts)
    ));
    text.push_str(&format!("report: {}\n", out.join("index.html").display()));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NROM: `code` at $8000 (reset vector), NMI/IRQ vectors at an RTI.
    fn image(code: &[u8]) -> Vec<u8> {
        let mut prg = vec![0xEA; 0x8000];
        prg[..code.len()].copy_from_slice(code);
        prg[0x7FF0] = 0x40;
        prg[0x7FFA..0x7FFC].copy_from_slice(&0xFFF0u16.to_le_bytes());
        prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
        prg[0x7FFE..0x8000].copy_from_slice(&0xFFF0u16.to_le_bytes());
        nes::ines_image(0, &prg, &[0; 0x2000])
    }

    fn options(roms: &Path, out: &Path) -> SweepOptions {
        SweepOptions {
            roms: roms.to_path_buf(),
            out: out.to_path_buf(),
            frames: 8,
            capture_frames: vec![4, 8],
            input: InputSpec::default(),
            jobs: 2,
            compare: None,
            palette_file: None,
            hang_cycles: DEFAULT_HANG_CYCLES,
            power_on: PowerOn::HARDWARE,
            hardware: HardwareChoice::default(),
            isolation: Isolation::InProcess,
            progress: false,
        }
    }

    #[test]
    fn in_process_sweep_writes_report_captures_and_contact_sheet() {
        let dir = tempfile::tempdir().unwrap();
        let roms = dir.path().join("roms");
        std::fs::create_dir_all(&roms).unwrap();
        std::fs::write(roms.join("loop.nes"), image(&[0x4C, 0x00, 0x80])).unwrap();
        std::fs::write(roms.join("jam.nes"), image(&[0xEA, 0x12])).unwrap();
        std::fs::write(roms.join("empty.nes"), b"").unwrap();
        let out = dir.path().join("out");
        let report = run_sweep(&options(&roms, &out)).unwrap();
        let verdicts: Vec<(&str, Verdict)> = report
            .roms
            .iter()
            .map(|record| (record.rom.as_str(), record.verdict))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("empty.nes", Verdict::LoadError),
                ("jam.nes", Verdict::Jam),
                ("loop.nes", Verdict::Ok)
            ]
        );
        assert_eq!(report.roms[1].jam_pc.as_deref(), Some("$8001"));
        let looping = &report.roms[2];
        assert_eq!(looping.captures.len(), 2);
        assert_eq!(looping.captures[0].png, "captures/loop_f4.png");
        assert!(out.join("captures/loop_f8.raw9").is_file());
        let mut saved: SweepReport =
            serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap())
                .unwrap();
        // The float may come back one unit off in the last place; the rest must be exact.
        assert!((saved.elapsed_seconds - report.elapsed_seconds).abs() < 1e-9);
        saved.elapsed_seconds = report.elapsed_seconds;
        assert_eq!(saved, report, "sweep.json round-trips");
        assert!(std::fs::read_to_string(out.join("index.html"))
            .unwrap()
            .contains("captures/loop_f4.png"));

        // Re-running into the same folder replaces the old captures.
        let mut fewer = options(&roms, &out);
        fewer.capture_frames = vec![8];
        run_sweep(&fewer).unwrap();
        assert!(!out.join("captures/loop_f4.png").exists());
        assert!(out.join("captures/loop_f8.png").is_file());
        // ... and a sweep compared against itself is refused.
        let mut itself = options(&roms, &out);
        itself.compare = Some(out.clone());
        let refused = run_sweep(&itself).unwrap_err();
        assert!(matches!(refused, Error::Options(_)));
        assert!(refused.to_string().contains("is the output folder"));
    }

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: SweepArgs,
    }

    #[test]
    fn arguments_resolve_defaults_and_check_capture_frames() {
        use clap::Parser;
        let parse = |extra: &[&str]| {
            let mut argv = vec!["nes", "--roms", "r", "--out", "o"];
            argv.extend_from_slice(extra);
            let cli = Cli::try_parse_from(argv).unwrap();
            SweepOptions::from_args(&cli.args, PathBuf::from("nes"))
        };
        let defaults = parse(&[]).unwrap();
        assert_eq!(defaults.frames, DEFAULT_FRAMES);
        assert_eq!(defaults.capture_frames, [DEFAULT_FRAMES]);
        assert_eq!(defaults.jobs, default_jobs());
        assert!(matches!(defaults.isolation, Isolation::Subprocess { .. }));
        let later = parse(&["--capture", "100,900"]).unwrap();
        assert_eq!((later.frames, later.capture_frames), (900, vec![100, 900]));
        let earlier = parse(&["--capture", "30,120"]).unwrap();
        assert_eq!(earlier.frames, 120, "runs stop at the last capture");
        let error = parse(&["--frames", "50", "--capture", "60"])
            .unwrap_err()
            .to_string();
        assert!(error.contains("frame 60"), "{error}");
        assert!(parse(&["--frames", "0"]).is_err());
        let unreadable = parse(&["--input-file", "/no/such/spec.toml"]).unwrap_err();
        assert!(matches!(unreadable, Error::Read(_)));
        assert!(unreadable.to_string().contains("cannot read"));
    }
}
