//! `nes`: the emulator's command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use nes::Nes;
use nes_app::hardware::HardwareChoice;
use nes_app::sweep::{self, SweepArgs, SweepOptions};
use nes_app::test_roms::{self, TestRomsArgs};

mod play;
mod run;

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
    Play(play::PlayArgs),
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
    /// Measure headless emulation speed (median of several runs).
    Bench {
        rom: PathBuf,
        /// Frames per run.
        #[arg(long, default_value_t = 3000)]
        frames: u64,
        /// Number of runs; the median is reported.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Run this Lua script alongside (measures the scripting and hook overhead).
        #[arg(long, value_name = "SCRIPT")]
        lua: Option<PathBuf>,
        /// The script's watchdog, as `nes run --lua-watchdog` (measures its cost); default off.
        #[arg(long, value_name = "SECONDS", requires = "lua", value_parser = nes_lua::parse_watchdog_seconds)]
        lua_watchdog: Option<f64>,
    },
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

fn sweep_command(args: &SweepArgs) -> Result<u8, String> {
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find this program to start sweep workers: {e}"))?;
    let options = SweepOptions::from_args(args, program)?;
    let report = sweep::run_sweep(&options)?;
    nes_app::out!("{}", sweep::summary(&report, &options.out));
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

fn load(rom: &Path) -> Result<Nes, String> {
    load_with_image(rom, nes::PowerOn::HARDWARE, &HardwareChoice::default()).map(|(nes, _)| nes)
}

/// Load a ROM and power `hardware` on with it, also returning the file's bytes.
fn load_with_image(
    rom: &Path,
    power_on: nes::PowerOn,
    hardware: &HardwareChoice,
) -> Result<(Nes, Vec<u8>), String> {
    let bytes =
        nes_app::limits::read_limited(rom, &nes_app::limits::ROM).map_err(|e| e.to_string())?;
    let cart = nes::Cartridge::from_ines(&bytes).map_err(|e| format!("{}: {e}", rom.display()))?;
    let nes = hardware.power_on(cart, power_on);
    if let Some(title) = nes.rom_info().known_title {
        eprintln!("Recognised cartridge: {title}");
    }
    Ok((nes, bytes))
}

fn trace(rom: &Path, start_pc: Option<u16>, lines: usize) -> Result<(), String> {
    let mut nes = load(rom)?;
    if let Some(pc) = start_pc {
        // nestest's automation mode: registers as its log expects after power-on.
        let mut regs = nes.cpu_registers();
        regs.pc = pc;
        regs.a = 0;
        regs.x = 0;
        regs.y = 0;
        regs.p = 0x24;
        regs.s = 0xFD;
        nes.set_cpu_registers(regs);
    }
    // Printed in chunks as it goes, stopping when the reader has gone (`| head`).
    let mut out = String::new();
    for _ in 0..lines {
        out.push_str(&nes.trace_line());
        out.push('\n');
        if out.len() >= 64 * 1024 {
            if !nes_app::out!("{out}") {
                return Ok(());
            }
            out.clear();
        }
        if nes.jammed_at().is_some() {
            break;
        }
        nes.step_instruction();
    }
    nes_app::out!("{out}");
    Ok(())
}

fn bench(
    rom: &Path,
    frames: u64,
    runs: usize,
    lua: Option<&Path>,
    watchdog: Option<f64>,
) -> Result<(), String> {
    let (fresh, image) = load_with_image(rom, nes::PowerOn::HARDWARE, &HardwareChoice::default())?;
    let mut rates = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let mut nes = fresh.clone();
        let mut host = match lua {
            Some(script) => {
                let options = nes_lua::HostOptions {
                    save_dir: std::env::temp_dir(),
                    rom_stem: "bench".to_string(),
                    rom_image: image.clone(),
                    arg: None,
                    palette: nes::Palette::ntsc(),
                };
                let mut host =
                    nes_lua::LuaHost::load(script, options).map_err(|e| format!("lua: {e}"))?;
                host.set_watchdog(nes_lua::watchdog_limit(watchdog.unwrap_or(0.0))?);
                host.start(&mut nes);
                Some(host)
            }
            None => None,
        };
        let start = Instant::now();
        for _ in 0..frames {
            match &mut host {
                Some(host) => {
                    host.run_frame(&mut nes, nes_lua::FrameInput::default());
                }
                None => nes.run_frame(),
            }
        }
        if let Some(host) = &mut host {
            if let Some(error) = host.take_errors().into_iter().next() {
                return Err(format!("lua error: {error}"));
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        rates.push(frames as f64 / seconds);
    }
    rates.sort_by(f64::total_cmp);
    let median = rates[rates.len() / 2];
    nes_app::outln!(
        "{}: {frames} frames x {} runs, median {median:.0} frames/s ({:.1} us/frame)",
        rom.display(),
        rates.len(),
        1e6 / median
    );
    Ok(())
}

/// The exit status: the command's, or [`nes_app::stdout::CLOSED_PIPE_STATUS`] (141) when
/// stdout's reader went away (`nes trace ROM | head -1`) and the command did not fail
/// otherwise, or 2 when stdout could not be written (see `nes_app::stdout`).
fn main() -> ExitCode {
    let status = command_status();
    let status = match nes_app::stdout::finish() {
        _ if status == 2 => status,
        nes_app::stdout::StdoutState::Ok => status,
        nes_app::stdout::StdoutState::Closed => nes_app::stdout::CLOSED_PIPE_STATUS,
        nes_app::stdout::StdoutState::Failed(message) => {
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
            Err(e) => Err(e),
        },
        Command::Play(args) => play::run(&args),
        Command::Trace {
            rom,
            start_pc,
            lines,
        } => trace(&rom, start_pc, lines),
        Command::Bench {
            rom,
            frames,
            runs,
            lua,
            lua_watchdog,
        } => bench(&rom, frames, runs, lua.as_deref(), lua_watchdog),
        Command::Sweep(args) => match sweep_command(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::SweepWorker => sweep::worker_main(),
        Command::TestRoms(args) => match test_roms::run(&args, &mut nes_app::stdout::Stdout) {
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
