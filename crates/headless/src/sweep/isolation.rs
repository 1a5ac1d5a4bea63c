//! Keeping one ROM's failure away from the rest of the sweep.
//!
//! Panics unwind in every build (the release profile keeps `panic = "unwind"`), so one can be
//! caught in the process; but an emulator bug can also abort (a stack overflow, a failed
//! allocation) or loop for ever, which nothing in the process survives. The `nes sweep` command
//! therefore runs each ROM in a child process (`nes sweep-worker`, the job as JSON on stdin, the
//! record as JSON on stdout): a panic, an abort or a crash of the child becomes that ROM's
//! `panic` verdict, and a child that runs past the wall-clock limit is killed. In-process runs
//! (library use, tests) catch panics.

use std::io::{Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nes::Palette;
use serde::{Deserialize, Serialize};

use super::job::{run_rom, RomJob, RunSettings};
use super::report::{RomRecord, Verdict};

/// Where ROMs run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isolation {
    /// In the sweep's own threads; panics are caught (aborts and endless loops are not).
    InProcess,
    /// One child process per ROM: `program sweep-worker`.
    Subprocess {
        program: PathBuf,
        /// Wall-clock limit per ROM.
        timeout: Duration,
    },
}

/// What the parent sends a worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerRequest {
    pub job: RomJob,
    pub settings: RunSettings,
    /// A `.pal` file, or none for the built-in NTSC palette.
    pub palette_file: Option<PathBuf>,
}

/// Printed by the worker's panic hook; the parent looks for it on the child's stderr.
pub const PANIC_MARKER: &str = "sweep-worker panic: ";

/// Run `job` in this thread, turning a panic into a `panic` record.
pub fn run_in_process(job: &RomJob, settings: &RunSettings, palette: &Palette) -> RomRecord {
    catching_panics(job, settings.frames, || run_rom(job, settings, palette))
}

/// `run()`, or a `panic` record for `job` if it panics.
fn catching_panics(job: &RomJob, frames: u64, run: impl FnOnce() -> RomRecord) -> RomRecord {
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|payload| {
        let mut record = RomRecord::new(job, frames);
        record.verdict = Verdict::Panic;
        record.detail = format!(
            "emulator panicked: {}",
            crate::panic_message(payload.as_ref())
        );
        record
    })
}

/// Run `job` as `isolation` says.
pub fn run_isolated(
    job: &RomJob,
    settings: &RunSettings,
    palette: &Palette,
    palette_file: Option<&std::path::Path>,
    isolation: &Isolation,
) -> RomRecord {
    match isolation {
        Isolation::InProcess => run_in_process(job, settings, palette),
        Isolation::Subprocess { program, timeout } => {
            let request = WorkerRequest {
                job: job.clone(),
                settings: settings.clone(),
                palette_file: palette_file.map(std::path::Path::to_path_buf),
            };
            run_in_child(program, &request, *timeout).unwrap_or_else(|(verdict, detail)| {
                let mut record = RomRecord::new(job, settings.frames);
                record.verdict = verdict;
                record.detail = detail;
                record
            })
        }
    }
}

fn run_in_child(
    program: &std::path::Path,
    request: &WorkerRequest,
    timeout: Duration,
) -> Result<RomRecord, (Verdict, String)> {
    let died = |detail: String| (Verdict::Panic, detail);
    let input = serde_json::to_vec(request).map_err(|error| died(error.to_string()))?;
    let mut child = Command::new(program)
        .arg("sweep-worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| died(format!("cannot start {}: {error}", program.display())))?;
    // Readers on their own threads, so a chatty child can never block on a full pipe.
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| died("no stdout pipe".into()))?;
    let mut stderr = child
        .stderr
        .take()
        .ok_or_else(|| died("no stderr pipe".into()))?;
    let out_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stdout.read_to_end(&mut text);
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        text
    });
    if let Some(mut stdin) = child.stdin.take() {
        // A child that died at once closes the pipe; its exit status tells why.
        let _ = stdin.write_all(&input);
    }
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err((
                    Verdict::Hang,
                    format!(
                        "killed after {} s of wall-clock time (--rom-timeout)",
                        timeout.as_secs()
                    ),
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(error) => return Err(died(format!("cannot wait for the worker: {error}"))),
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    if status.success() {
        return serde_json::from_slice(&stdout)
            .map_err(|error| died(format!("the worker's answer is not a record: {error}")));
    }
    let message = stderr
        .lines()
        .find_map(|line| line.strip_prefix(PANIC_MARKER))
        .map(|message| format!("emulator panicked: {message}"))
        .unwrap_or_else(|| {
            let last = stderr.lines().rev().find(|line| !line.trim().is_empty());
            format!(
                "the worker process died ({status}){}",
                last.map(|line| format!(": {line}")).unwrap_or_default()
            )
        });
    Err(died(message))
}

/// `nes sweep-worker`: read a [`WorkerRequest`] from stdin, run it, print the record.
pub fn worker_main() -> Result<(), crate::Error> {
    std::panic::set_hook(Box::new(|info| {
        let message = crate::panic_message(info.payload());
        let place = info
            .location()
            .map(|location| format!(" at {}:{}", location.file(), location.line()))
            .unwrap_or_default();
        eprintln!("{PANIC_MARKER}{}{place}", message.replace('\n', " "));
    }));
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|error| crate::Error::WorkerRequest(error.to_string()))?;
    let request: WorkerRequest = serde_json::from_slice(&input)
        .map_err(|error| crate::Error::WorkerRequest(error.to_string()))?;
    let palette = crate::capture::load_palette(request.palette_file.as_deref())?;
    let record = run_rom(&request.job, &request.settings, &palette);
    let text = serde_json::to_string(&record).map_err(crate::Error::EncodeReport)?;
    crate::outln!("{text}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> RomJob {
        RomJob {
            key: "dir/game.nes".into(),
            path: "/nowhere/game.nes".into(),
            presses: vec!["5:A".into()],
        }
    }

    fn settings(out: &std::path::Path) -> RunSettings {
        RunSettings {
            frames: 10,
            capture_frames: vec![10],
            out_dir: out.to_path_buf(),
            hang_cycles: 1_000_000,
            power_on: Default::default(),
            hardware: Default::default(),
        }
    }

    #[test]
    fn a_panic_in_process_becomes_a_panic_record() {
        let record = catching_panics(&job(), 10, || panic!("mapper exploded"));
        assert_eq!(record.verdict, Verdict::Panic);
        assert_eq!(record.detail, "emulator panicked: mapper exploded");
        assert_eq!(record.rom, "dir/game.nes");
        assert_eq!(record.input, ["5:A"]);
    }

    /// A stand-in for the `nes` binary: a shell script behaving like a worker that failed.
    #[cfg(unix)]
    fn fake_worker(dir: &std::path::Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("fake-worker.sh");
        std::fs::write(&path, format!("#!/bin/sh\ncat > /dev/null\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[cfg(unix)]
    fn run_with(program: PathBuf, timeout: Duration, out: &std::path::Path) -> RomRecord {
        let isolation = Isolation::Subprocess { program, timeout };
        run_isolated(&job(), &settings(out), &Palette::ntsc(), None, &isolation)
    }

    #[cfg(unix)]
    #[test]
    fn a_worker_that_panics_or_dies_is_a_panic_verdict() {
        let dir = tempfile::tempdir().unwrap();
        let panicking = fake_worker(
            dir.path(),
            &format!("echo 'noise' >&2; echo '{PANIC_MARKER}index out of bounds at src/x.rs:3' >&2; exit 134"),
        );
        let record = run_with(panicking, Duration::from_secs(30), dir.path());
        assert_eq!(record.verdict, Verdict::Panic);
        assert_eq!(
            record.detail,
            "emulator panicked: index out of bounds at src/x.rs:3"
        );

        let dying = fake_worker(dir.path(), "echo 'Segmentation fault' >&2; exit 139");
        let record = run_with(dying, Duration::from_secs(30), dir.path());
        assert_eq!(record.verdict, Verdict::Panic);
        assert!(
            record.detail.starts_with("the worker process died"),
            "{}",
            record.detail
        );
        assert!(
            record.detail.ends_with(": Segmentation fault"),
            "{}",
            record.detail
        );

        let garbled = fake_worker(dir.path(), "echo 'not json'");
        let record = run_with(garbled, Duration::from_secs(30), dir.path());
        assert!(record.detail.contains("not a record"), "{}", record.detail);
    }

    #[cfg(unix)]
    #[test]
    fn a_worker_past_the_time_limit_is_killed_as_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let sleeper = fake_worker(dir.path(), "exec sleep 30");
        let started = Instant::now();
        let record = run_with(sleeper, Duration::from_millis(300), dir.path());
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(record.verdict, Verdict::Hang);
        assert!(record.detail.contains("wall-clock"), "{}", record.detail);
    }
}
