//! Script errors in the **release** binary of the default build: an error raised anywhere (by
//! an API function written in Rust, by Lua itself, in the main chunk, a frame callback, a
//! memory hook or a save callback, caught by `pcall` or not) is reported as
//! `lua error: PATH:LINE: message` on stderr, stops the script, and the run goes on to its last
//! frame with exit status 0; `os.exit(n)` ends the run with status `n` after printing what the
//! script printed. Release matters: LuaJIT's unwinding through Rust frames once aborted the
//! process there (panic = "abort"), which no test-profile build could show.
//!
//! The binary is `$NES_RELEASE_BIN`, else `target/release/nes` (scripts/test.sh builds it
//! first). Without it the test is skipped with a message, and fails under CI.

use std::path::{Path, PathBuf};
use std::process::Command;

fn release_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("NES_RELEASE_BIN") {
        return Some(PathBuf::from(path));
    }
    // CARGO_BIN_EXE_nes is target/<profile>/nes; the release build sits beside it.
    let test_build = Path::new(env!("CARGO_BIN_EXE_nes"));
    let release = test_build
        .parent()?
        .parent()?
        .join("release")
        .join(test_build.file_name()?);
    release.exists().then_some(release)
}

/// The ROM every case runs: the parity suite's probe (it writes RAM every frame, reads the
/// pads in its NMI handler and runs code from $8000 up).
fn probe_rom() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fceux/roms/probe.nes")
}

struct Case {
    name: &'static str,
    /// The script; it prints "after" only if the error did not stop it (callback cases from
    /// frame 10 on: their errors come in the first frames).
    script: &'static str,
    /// The line the error is reported at, and the message after `PATH:LINE: `.
    line: usize,
    message: &'static str,
    /// Whether the error stops the script: all do but one in a `gui.register` callback,
    /// after which FCEUX drops the callback and the script goes on.
    stops: bool,
}

const FRAMES: &str = "40";

/// One error from each namespace, in each place a script runs.
const CASES: &[Case] = &[
    Case {
        name: "joypad",
        script: "emu.frameadvance()\njoypad.set(0, {})\nprint('after')\n",
        line: 2,
        message: "Invalid output port (valid range 1-4, specified 0)",
        stops: true,
    },
    Case {
        name: "emu_callback",
        script: "emu.registerbefore(function()\n  emu.frameadvance()\nend)\n\
                 while true do emu.frameadvance() if emu.framecount() > 9 then print('after') end end\n",
        line: 2,
        message: "can't call emu.frameadvance() from here",
        stops: true,
    },
    Case {
        name: "memory_hook",
        script: "memory.registerexec(0x8000, 0x8000, function()\n  emu.frameadvance()\nend)\n\
                 while true do emu.frameadvance() if emu.framecount() > 9 then print('after') end end\n",
        line: 2,
        message: "can't call emu.frameadvance() from here",
        stops: true,
    },
    Case {
        name: "memory",
        script: "local x = 1\nlocal y = memory.readbyte()\nprint('after')\n",
        line: 2,
        message: "bad argument #1 to 'readbyte' (number expected, got no value)",
        stops: true,
    },
    Case {
        name: "write_hook",
        script: "memory.registerwrite(0x0000, 0x800, function(address)\n\
                 \x20 memory.writebyte(address)\nend)\n\
                 while true do emu.frameadvance() if emu.framecount() > 9 then print('after') end end\n",
        line: 2,
        message: "bad argument #2 to 'writebyte' (number expected, got no value)",
        stops: true,
    },
    Case {
        name: "gui",
        script: "gui.register(function()\n  gui.box(0, 0, 9, 9, 'Purple')\nend)\n\
                 emu.frameadvance()\nemu.frameadvance()\nprint('after')\n",
        line: 2,
        message: "palettes are defined with P## hex notion",
        stops: false,
    },
    Case {
        name: "movie",
        script: "emu.frameadvance()\n\nprint(movie.length())\nprint('after')\n",
        line: 3,
        message: "No movie loaded.",
        stops: true,
    },
    Case {
        name: "savestate",
        script: "emu.registerafter(function()\n  savestate.load(nil)\nend)\n\
                 while true do emu.frameadvance() if emu.framecount() > 9 then print('after') end end\n",
        line: 2,
        message: "Invalid savestate.load object",
        stops: true,
    },
    Case {
        name: "rom",
        script: "\n\nlocal b = rom.readbyte('x')\nprint('after')\n",
        line: 3,
        message: "bad argument #1 to 'readbyte' (number expected, got string)",
        stops: true,
    },
    Case {
        name: "sound",
        script: "emu.frameadvance()\nlocal v = sound.get().rp2a03.square3.volume\nprint('after')\n",
        line: 2,
        message: "attempt to index field 'square3' (a nil value)",
        stops: true,
    },
    Case {
        name: "input",
        script: "local t = input.get()\nlocal v = t.xmouse .. {}\nprint('after')\n",
        line: 2,
        message: "attempt to concatenate a table value",
        stops: true,
    },
    Case {
        name: "zapper",
        script: "emu.registerafter(function()\n  return zapper.read().x + nil\nend)\n\
                 while true do emu.frameadvance() if emu.framecount() > 9 then print('after') end end\n",
        line: 2,
        message: "attempt to perform arithmetic on a nil value",
        stops: true,
    },
    Case {
        name: "debugger",
        script: "memory.registerexec(0x8000, 0x8000, function()\n  local c = debugger.getcyclescount() < {}\nend)\n\
                 while true do emu.frameadvance() if emu.framecount() > 9 then print('after') end end\n",
        line: 2,
        message: "attempt to compare number with table",
        stops: true,
    },
    Case {
        name: "bit",
        script: "\nlocal v = bit.band('x')\nprint('after')\n",
        line: 2,
        message: "bad argument #1 to 'band' (number expected, got string)",
        stops: true,
    },
    Case {
        name: "error",
        script: "emu.frameadvance()\nerror('stop here')\nprint('after')\n",
        line: 2,
        message: "stop here",
        stops: true,
    },
];

fn run(binary: &Path, dir: &Path, name: &str, script: &str) -> (String, String, Option<i32>) {
    let path = dir.join(format!("{name}.lua"));
    std::fs::write(&path, script).unwrap();
    let output = Command::new(binary)
        .arg("run")
        .arg(probe_rom())
        .args(["--frames", FRAMES, "--lua"])
        .arg(&path)
        .output()
        .expect("the release binary runs");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code(),
    )
}

#[test]
fn script_errors_stop_the_script_and_the_run_goes_on() {
    let Some(binary) = release_binary() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no release binary: scripts/test.sh builds it (cargo build --release -p nes-app)"
        );
        eprintln!(
            "SKIPPED: no release binary (target/release/nes or $NES_RELEASE_BIN); \
             build it with `cargo build --release -p nes-app`"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for case in CASES {
        let (stdout, stderr, status) = run(&binary, dir.path(), case.name, case.script);
        let path = std::path::absolute(dir.path().join(format!("{}.lua", case.name))).unwrap();
        let expected = format!(
            "lua error: {}:{}: {}",
            path.display(),
            case.line,
            case.message
        );
        let problems = [
            (status != Some(0), format!("exit status {status:?}")),
            (!stderr.contains(&expected), format!("no `{expected}`")),
            (
                stdout.contains("after") == case.stops,
                format!(
                    "the script {}",
                    if case.stops { "went on" } else { "stopped" }
                ),
            ),
            (
                !stdout.contains(&format!("frames: {FRAMES}")),
                "the run stopped early".to_owned(),
            ),
        ];
        for (failed, what) in problems {
            if failed {
                failures.push(format!(
                    "{}: {what}\n  stdout: {stdout}\n  stderr: {stderr}",
                    case.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn errors_caught_by_pcall_and_os_exit() {
    let Some(binary) = release_binary() else {
        assert!(std::env::var_os("CI").is_none(), "no release binary");
        eprintln!("SKIPPED: no release binary");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Errors from Rust API functions caught by pcall, in the main chunk and in a hook.
    let (stdout, stderr, status) = run(
        &binary,
        dir.path(),
        "caught",
        "print(pcall(memory.readbyte))\n\
         print(pcall(joypad.set, 0, {}))\n\
         memory.registerexec(0x8000, function() pcall(emu.frameadvance) end)\n\
         emu.frameadvance()\n\
         print('after')\n",
    );
    assert_eq!(status, Some(0), "{stderr}");
    assert!(!stderr.contains("lua error"), "{stderr}");
    assert!(
        stdout.starts_with(
            "false bad argument #1 to '?' (number expected, got no value)\n\
             false Invalid output port (valid range 1-4, specified 0)\n\
             after\n"
        ),
        "{stdout}"
    );
    // os.exit: everything printed before it is there, and the status is the run's.
    let (stdout, stderr, status) = run(
        &binary,
        dir.path(),
        "exit",
        "emu.frameadvance()\nprint('Passed: 3 Failed: 0')\nos.exit(3)\nprint('after')\n",
    );
    assert_eq!(status, Some(3), "{stderr}");
    assert!(stdout.contains("Passed: 3 Failed: 0\n"), "{stdout}");
    assert!(
        !stdout.contains("after") && !stderr.contains("lua error"),
        "{stderr}"
    );
}

#[test]
fn the_watchdog_stops_endless_loops_everywhere_and_the_run_goes_on() {
    let Some(binary) = release_binary() else {
        assert!(std::env::var_os("CI").is_none(), "no release binary");
        eprintln!("SKIPPED: no release binary");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, script, line) in [
        ("main_chunk", "emu.frameadvance()\nwhile true do end\n", 2),
        (
            "memory_hook",
            "memory.registerexec(0x8000, 0x8000, function()\n  while true do end\nend)\n",
            2,
        ),
        (
            "registerbefore",
            "emu.registerbefore(function()\n  while true do end\nend)\n",
            2,
        ),
        (
            "pcall_in_a_loop",
            "while true do\n  pcall(function() while true do end end)\nend\n",
            2,
        ),
    ] {
        let path = dir.path().join(format!("{name}.lua"));
        std::fs::write(&path, script).unwrap();
        let output = Command::new(&binary)
            .arg("run")
            .arg(probe_rom())
            .args(["--frames", FRAMES, "--lua-watchdog", "0.2", "--lua"])
            .arg(&path)
            .output()
            .expect("the release binary runs");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
        let expected = format!(
            "lua error: {}:{line}: stopped by the watchdog",
            std::path::absolute(&path).unwrap().display()
        );
        assert_eq!(output.status.code(), Some(0), "{name}: {stderr}");
        assert!(stderr.contains(&expected), "{name}: {stderr}");
        assert!(
            stdout.contains(&format!("frames: {FRAMES}")),
            "{name}: {stdout}"
        );
    }
}
