//! `nes`: the emulator's command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use nes_headless::bench::BenchArgs;
use nes_headless::run;
use nes_headless::sweep::{self, SweepArgs, SweepOptions};
use nes_headless::test_roms::{self, TestRomsArgs};
use nes_headless::Error;

#[derive(Debug, Parser)]
#[command(name = "nes", version, about = "A cycle-accurate NES emulator")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a ROM headless and print hashes of the final frame and CPU RAM.
    Run {
        rom: PathBuf,
        /// Run until frame N, counted from power-on (default: the movie's length with --movie,
        /// else 60; with --lua, until the script calls emu.exit() or ends, and at least that).
        #[arg(long)]
        frames: Option<u64>,
        #[command(flatten)]
        input: run::RunInput,
        #[command(flatten)]
        output: Box<run::RunOutput>,
        #[command(flatten)]
        state: run::RunState,
        #[command(flatten)]
        lua: run::RunLua,
    },
    /// Play a ROM in a window, with sound, keyboard and gamepads (the main command).
    Play(nes_desktop::PlayArgs),
    /// Print a nestest.log-format trace of the instructions executed.
    Trace {
        rom: PathBuf,
        /// Force the PC here after power-on (nestest's automation entry is C000), in hex.
        #[arg(long, value_parser = parse_hex_u16)]
        start_pc: Option<u16>,
        /// Number of instructions to trace.
        #[arg(long, default_value_t = 100)]
        lines: usize,
    },
    /// Measure emulation speed as a frontend pays it: 48 kHz audio read and the picture
    /// converted to RGBA every frame, after warm-up frames (median of several runs).
    Bench(BenchArgs),
    /// Run the public test-ROM suite described by a MANIFEST.toml.
    TestRoms(TestRomsArgs),
    /// Run a library of ROMs headless in parallel, capture frames, and write sweep.json and an
    /// index.html contact sheet; with --compare, list and draw the captures that changed.
    ///
    /// Exit status: 0 when the sweep ran (whatever the ROMs' verdicts) and, with --compare,
    /// no capture changed; 1 when --compare found changed or missing captures; 2 on bad options.
    Sweep(SweepArgs),
    /// Internal: runs one ROM of a sweep (request on stdin, record on stdout).
    #[command(hide = true)]
    SweepWorker,
}

fn sweep_command(args: &SweepArgs) -> Result<u8, Error> {
    let program = std::env::current_exe().map_err(Error::WorkerProgram)?;
    let options = SweepOptions::from_args(args, program)?;
    let report = sweep::run_sweep(&options)?;
    nes_headless::out!("{}", sweep::summary(&report, &options.out));
    let changed = report
        .compare
        .as_ref()
        .is_some_and(sweep::CompareReport::has_changes);
    Ok(u8::from(changed))
}

fn parse_hex_u16(text: &str) -> Result<u16, String> {
    let digits = text.trim_start_matches('$').trim_start_matches("0x");
    u16::from_str_radix(digits, 16).map_err(|e| format!("`{text}` is not a hex address: {e}"))
}

/// The exit status: the command's, or [`nes_headless::stdout::CLOSED_PIPE_STATUS`] (141) when
/// stdout's reader went away (`nes trace ROM | head -1`) and the command did not fail
/// otherwise, or 2 when stdout could not be written (see `nes_headless::stdout`).
fn main() -> ExitCode {
    let status = command_status();
    let status = match nes_headless::stdout::finish() {
        _ if status == 2 => status,
        nes_headless::stdout::StdoutState::Ok => status,
        nes_headless::stdout::StdoutState::Closed => nes_headless::stdout::CLOSED_PIPE_STATUS,
        nes_headless::stdout::StdoutState::Failed(message) => {
            eprintln!("error: cannot write to standard output: {message}");
            2
        }
    };
    ExitCode::from(status)
}

fn command_status() -> u8 {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            rom,
            frames,
            input,
            output,
            state,
            lua,
        } => match run::run(&rom, frames, &input, &output, &state, &lua) {
            Ok(status) => return status,
            Err(e) => Err(e.to_string()),
        },
        Command::Play(args) => nes_desktop::play(&args).map_err(|e| e.to_string()),
        Command::Trace {
            rom,
            start_pc,
            lines,
        } => nes_headless::trace::trace(&rom, start_pc, lines).map_err(|e| e.to_string()),
        Command::Bench(args) => nes_headless::bench::bench(&args).map_err(|e| e.to_string()),
        Command::Sweep(args) => match sweep_command(&args) {
            Ok(code) => return code,
            Err(e) => Err(e.to_string()),
        },
        Command::SweepWorker => sweep::worker_main().map_err(|e| e.to_string()),
        Command::TestRoms(args) => match test_roms::run(&args, &mut nes_headless::stdout::Stdout) {
            Ok(true) => return 0,
            Ok(false) => return 1,
            Err(e) => Err(e.to_string()),
        },
    };
    match result {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("error: {message}");
            2
        }
    }
}
