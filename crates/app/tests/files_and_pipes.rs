//! The `nes` binary against hostile paths: endless inputs (`/dev/zero`), outputs that are
//! devices, FIFOs or links, a reader that closes stdout early, and `kill -9` in the middle of
//! writing. Every run has a time limit, so a regression fails instead of hanging.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

fn spawn(command: &mut Command) -> Child {
    command.spawn().expect("the program runs")
}

fn status_of(command: &mut Command) -> std::io::Result<ExitStatus> {
    command.status()
}

/// Long enough for a slow debug machine; an endless read or allocation takes far longer.
const LIMIT: Duration = Duration::from_secs(60);

/// Wait for `child` at most [`LIMIT`]; a child still running then is killed and the test fails.
fn wait_limited(mut child: Child, what: &str) -> Output {
    let started = Instant::now();
    // Drain the pipes on threads so a chatty child never blocks.
    let stdout = child.stdout.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    });
    let stderr = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{what}` still running after {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.map(|t| t.join().unwrap()).unwrap_or_default(),
        stderr: stderr.map(|t| t.join().unwrap()).unwrap_or_default(),
    }
}

fn nes(args: &[&str]) -> Output {
    let child = spawn(
        Command::new(env!("CARGO_BIN_EXE_nes"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    wait_limited(child, &format!("nes {}", args.join(" ")))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A 32 KiB NROM image whose program loops forever at $8000.
fn looping_rom(dir: &Path) -> PathBuf {
    let mut prg = vec![0xEA; 0x8000];
    prg[..3].copy_from_slice(&[0x4C, 0x00, 0x80]); // JMP $8000
    prg[0x7FFC..0x7FFE].copy_from_slice(&[0x00, 0x80]);
    let path = dir.join("loop.nes");
    std::fs::write(&path, nes::ines_image(0, &prg, &[0; 0x2000])).unwrap();
    path
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every input option given `/dev/zero`: a clear error at once, never an endless read.
#[cfg(unix)]
#[test]
fn endless_inputs_are_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let rom = looping_rom(dir.path());
    let rom = text(&rom);
    let cases: [(&[&str], &str); 5] = [
        (&["run", "/dev/zero"], "ROM file too large"),
        (&["run", rom, "--movie", "/dev/zero"], "FM2 movie too large"),
        (
            &["run", rom, "--load-state", "/dev/zero"],
            "save state too large",
        ),
        (
            &["run", rom, "--palette", "/dev/zero"],
            "palette file too large",
        ),
        (
            &["run", rom, "--input", "/dev/zero"],
            "input file too large",
        ),
    ];
    for (args, expected) in cases {
        let started = Instant::now();
        let out = nes(args);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {message}");
        assert!(
            message.contains(&format!("error: cannot read /dev/zero: {expected}")),
            "{args:?}: {message}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{args:?} took {:?}",
            started.elapsed()
        );
    }
    let out = nes(&["trace", "/dev/zero"]);
    assert!(
        stderr(&out).contains("ROM file too large"),
        "{}",
        stderr(&out)
    );
}

/// A character device node like /dev/full in a temporary folder (we run as root here).
#[cfg(unix)]
fn full_device(dir: &Path) -> Option<PathBuf> {
    let node = dir.join("full");
    let made = status_of(
        Command::new("mknod")
            .arg(&node)
            .args(["c", "1", "7"])
            .stderr(Stdio::null()),
    );
    if made.is_ok_and(|status| status.success()) {
        Some(node)
    } else {
        eprintln!("SKIPPED: mknod is not permitted here (needs root)");
        None
    }
}

#[cfg(unix)]
#[test]
fn a_full_device_as_output_is_an_error_and_stays_a_device() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let Some(full) = full_device(dir.path()) else {
        return;
    };
    let rom = looping_rom(dir.path());
    for option in [
        "--wav",
        "--ram-log",
        "--save-state",
        "--screenshot",
        "--record",
    ] {
        let out = nes(&["run", text(&rom), "--frames", "2", option, text(&full)]);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{option}: {message}");
        assert!(
            message.contains("No space left on device"),
            "{option}: {message}"
        );
        let kind = std::fs::symlink_metadata(&full).unwrap().file_type();
        assert!(kind.is_char_device(), "{option} replaced the device node");
    }
}

#[cfg(unix)]
#[test]
fn outputs_through_links_and_fifos_keep_them() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let rom = looping_rom(dir.path());
    // A link to a file elsewhere: the link stays, the file behind it is written.
    std::fs::create_dir(dir.path().join("states")).unwrap();
    let link = dir.path().join("latest.state");
    std::os::unix::fs::symlink("states/run1.state", &link).unwrap();
    let out = nes(&[
        "run",
        text(&rom),
        "--frames",
        "2",
        "--save-state",
        text(&link),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let state = std::fs::read(dir.path().join("states/run1.state")).unwrap();
    assert!(state.starts_with(b"NESSTATE"));

    // A FIFO: streamed to its reader, and still a FIFO afterwards.
    let fifo = dir.path().join("ram.fifo");
    let made = status_of(Command::new("mkfifo").arg(&fifo));
    if !made.is_ok_and(|status| status.success()) {
        eprintln!("SKIPPED: mkfifo is not available");
        return;
    }
    let reader_path = fifo.clone();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::fs::File::open(reader_path)
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        bytes
    });
    let out = nes(&["run", text(&rom), "--frames", "3", "--ram-log", text(&fifo)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(reader.join().unwrap().len(), 3 * 2048);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());

    // A directory is refused.
    let out = nes(&[
        "run",
        text(&rom),
        "--frames",
        "1",
        "--wav",
        text(dir.path()),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("it is a directory"),
        "{}",
        stderr(&out)
    );
}

/// Start `nes` with stdout a pipe, read `lines` lines (none: close it at once), close the pipe
/// and wait.
fn with_early_closed_stdout(args: &[&str], lines: usize) -> (ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nes"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut reader = BufReader::new(stdout);
    for _ in 0..lines {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "nes printed fewer than {lines} lines");
    }
    drop(reader);
    let out = wait_limited(child, &format!("nes {}", args.join(" ")));
    (out.status, stderr(&out))
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_commands_quietly_with_status_141() {
    let dir = tempfile::tempdir().unwrap();
    let rom = looping_rom(dir.path());
    let rom = text(&rom);
    let manifest = dir.path().join("MANIFEST.toml");
    std::fs::write(
        &manifest,
        "schema_version = 1\n[[rom]]\npath = \"loop.nes\"\ngroup = \"cpu\"\n\
         protocol = \"ram-byte\"\nregion = \"ntsc\"\nmax_frames = 3\nresult_addr = 0xF8\n\
         pass_value = 1\ndone = \"jmp-self\"\n",
    )
    .unwrap();
    // Closed at once where the whole output would fit the pipe's buffer (it would be written
    // before a reader of one line closed it); trace's 100,000 lines do not fit.
    let script = dir.path().join("chatty.lua");
    std::fs::write(&script, "for i = 1, 100000 do print(i) end\n").unwrap();
    let cases: [(&[&str], usize); 4] = [
        (&["trace", rom, "--lines", "100000"], 1),
        (&["run", rom, "--frames", "2", "--lua", text(&script)], 1),
        (&["run", rom, "--frames", "2"], 0),
        (&["test-roms", "--manifest", text(&manifest)], 0),
    ];
    for (args, lines) in cases {
        let (status, message) = with_early_closed_stdout(args, lines);
        assert!(!message.contains("panicked"), "{args:?}: {message}");
        assert!(!message.contains("Broken pipe"), "{args:?}: {message}");
        assert_eq!(status.code(), Some(141), "{args:?}: {message}");
    }
}

/// The files a run writes, and our temporary files among a folder's entries.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".nes-tmp-"))
        .collect()
}

/// `kill -9` while a run streams its RAM log: the previous log, state and WAV are intact, a
/// temporary file is left, and the next run into the folder removes it. (scripts/kill-trials.sh
/// runs many such trials at random moments.)
#[cfg(target_os = "linux")]
#[test]
fn kill_9_mid_run_leaves_the_previous_files_and_the_next_run_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let rom = looping_rom(dir.path());
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let files = ["ram.log", "a.wav", "s.state"].map(|name| out_dir.join(name));
    let args = |frames: &str| {
        vec![
            "run".to_owned(),
            text(&rom).to_owned(),
            "--frames".to_owned(),
            frames.to_owned(),
            "--ram-log".to_owned(),
            text(&files[0]).to_owned(),
            "--wav".to_owned(),
            text(&files[1]).to_owned(),
            "--save-state".to_owned(),
            text(&files[2]).to_owned(),
        ]
    };
    let out = nes(&args("3").iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", stderr(&out));
    let before: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();

    // Long enough to be killed while its RAM log is being streamed.
    let mut child = spawn(
        Command::new(env!("CARGO_BIN_EXE_nes"))
            .args(args("100000000"))
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    let started = Instant::now();
    while temporaries(&out_dir).is_empty() {
        assert!(started.elapsed() < LIMIT, "no temporary file appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    for (file, old) in files.iter().zip(&before) {
        assert_eq!(&std::fs::read(file).unwrap(), old, "{}", file.display());
    }
    assert_eq!(temporaries(&out_dir).len(), 1, "the killed run's RAM log");

    // The next run writing into the folder removes it.
    let out = nes(&args("3").iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        temporaries(&out_dir).is_empty(),
        "{:?}",
        temporaries(&out_dir)
    );
    for (file, old) in files.iter().zip(&before) {
        assert_eq!(&std::fs::read(file).unwrap(), old, "{}", file.display());
    }
}
