//! `nes`: the emulator's command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use nes::{Nes, Palette, SCREEN_HEIGHT, SCREEN_WIDTH};
use nes_app::battery::{BatterySave, LoadOutcome};
use nes_app::output;
use nes_app::test_roms::{self, TestRomsArgs};
use sha1::{Digest, Sha1};

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
        /// Frames to run from power-on.
        #[arg(long, default_value_t = 60)]
        frames: u64,
        #[command(flatten)]
        output: RunOutput,
    },
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
    },
    /// Run the public test-ROM suite described by a MANIFEST.toml.
    TestRoms(TestRomsArgs),
}

/// Files `nes run` can write.
#[derive(Debug, clap::Args)]
struct RunOutput {
    /// Write the last frame as a PNG.
    #[arg(long, value_name = "PNG")]
    screenshot: Option<PathBuf>,
    /// Palette for the screenshot: a 192-byte (64 colours) or 1536-byte (512 colours) .pal file.
    /// Default: the built-in NTSC palette.
    #[arg(long, value_name = "PAL")]
    palette: Option<PathBuf>,
    /// Write the audio of the whole run as a 16-bit mono WAV.
    #[arg(long, value_name = "WAV")]
    wav: Option<PathBuf>,
    /// Folder for battery saves (`GAME.sav`); default: beside the ROM.
    #[arg(long, value_name = "DIR")]
    save_dir: Option<PathBuf>,
    /// Neither load nor write the battery save.
    #[arg(long)]
    no_battery: bool,
    /// Sample rate of the WAV.
    #[arg(long, default_value_t = 44_100, value_parser = clap::value_parser!(u32).range(8_000..=192_000))]
    sample_rate: u32,
}

fn load_palette(path: Option<&Path>) -> Result<Palette, String> {
    match path {
        None => Ok(Palette::ntsc()),
        Some(path) => {
            let bytes =
                std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Palette::from_pal_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
        }
    }
}

fn parse_hex_u16(text: &str) -> Result<u16, String> {
    let digits = text.trim_start_matches('$').trim_start_matches("0x");
    u16::from_str_radix(digits, 16).map_err(|e| format!("`{text}` is not a hex address: {e}"))
}

fn load(rom: &Path) -> Result<Nes, String> {
    let bytes = std::fs::read(rom).map_err(|e| format!("cannot read {}: {e}", rom.display()))?;
    let nes = Nes::from_ines(&bytes).map_err(|e| format!("{}: {e}", rom.display()))?;
    if let Some(title) = nes.rom_info().known_title {
        eprintln!("Recognised cartridge: {title}");
    }
    Ok(nes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn run(rom: &Path, frames: u64, output: &RunOutput) -> Result<(), String> {
    // Check the palette before spending time on the run.
    let palette = load_palette(output.palette.as_deref())?;
    let mut nes = load(rom)?;
    let mut battery =
        (!output.no_battery).then(|| BatterySave::for_rom(rom, output.save_dir.as_deref()));
    if let Some(battery) = &mut battery {
        match battery.load(&mut nes) {
            LoadOutcome::Loaded => eprintln!("battery save loaded: {}", battery.path().display()),
            LoadOutcome::Rejected(why) => eprintln!("warning: battery save not used: {why}"),
            LoadOutcome::NoBattery | LoadOutcome::NoFile => {}
        }
    }
    let mut audio = Vec::new();
    if output.wav.is_some() {
        nes.set_audio_sample_rate(output.sample_rate);
    }
    for _ in 0..frames {
        nes.run_frame();
        if output.wav.is_some() {
            nes.take_audio_samples(&mut audio);
        }
    }
    let mut frame_hash = Sha1::new();
    for pixel in nes.frame_buffer() {
        frame_hash.update(pixel.to_le_bytes());
    }
    let ram: Vec<u8> = (0..0x800).map(|addr| nes.peek(addr)).collect();
    println!("frames: {}", nes.frame_count());
    println!("frame sha1: {}", hex(&frame_hash.finalize()));
    println!("ram sha1: {}", hex(&Sha1::digest(&ram)));
    if let Some(pc) = nes.jammed_at() {
        println!("cpu jammed at ${pc:04X}");
    }
    if let Some(battery) = &mut battery {
        if battery.save(&nes).map_err(|e| e.to_string())? {
            eprintln!("battery save written: {}", battery.path().display());
        }
    }
    if let Some(path) = &output.screenshot {
        let rgba = nes.frame_rgba(&palette);
        output::save_png(path, &rgba, SCREEN_WIDTH as u32, SCREEN_HEIGHT as u32)
            .map_err(|e| e.to_string())?;
        println!("screenshot: {}", path.display());
    }
    if let Some(path) = &output.wav {
        output::save_wav(path, &audio, output.sample_rate).map_err(|e| e.to_string())?;
        println!("audio: {} ({} samples)", path.display(), audio.len());
    }
    Ok(())
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
    let mut out = String::new();
    for _ in 0..lines {
        out.push_str(&nes.trace_line());
        out.push('\n');
        if nes.jammed_at().is_some() {
            break;
        }
        nes.step_instruction();
    }
    print!("{out}");
    Ok(())
}

fn bench(rom: &Path, frames: u64, runs: usize) -> Result<(), String> {
    let fresh = load(rom)?;
    let mut rates = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let mut nes = fresh.clone();
        let start = Instant::now();
        for _ in 0..frames {
            nes.run_frame();
        }
        let seconds = start.elapsed().as_secs_f64();
        rates.push(frames as f64 / seconds);
    }
    rates.sort_by(f64::total_cmp);
    let median = rates[rates.len() / 2];
    println!(
        "{}: {frames} frames x {} runs, median {median:.0} frames/s ({:.1} us/frame)",
        rom.display(),
        rates.len(),
        1e6 / median
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            rom,
            frames,
            output,
        } => run(&rom, frames, &output),
        Command::Trace {
            rom,
            start_pc,
            lines,
        } => trace(&rom, start_pc, lines),
        Command::Bench { rom, frames, runs } => bench(&rom, frames, runs),
        Command::TestRoms(args) => match test_roms::run(&args) {
            Ok(true) => return ExitCode::SUCCESS,
            Ok(false) => return ExitCode::FAILURE,
            Err(e) => Err(e.to_string()),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
