//! `nes run`: a headless run from power-on (or a save state) with scripted, recorded or
//! script-driven input, and the outputs its options ask for, each a [`sinks::RunSink`].

mod input;
mod recording;
mod script;
pub mod sinks;

use std::path::{Path, PathBuf};

use nes::{Buttons, Nes, PowerOn, PowerOnRam, Region};
use nes_movie::fm2::{Commands, Movie, MovieFrame};
use nes_movie::input_schedule::ScheduledPress;
use sha1::{Digest, Sha1};

use crate::battery::{BatterySave, LoadOutcome};
use crate::capture::{load_palette, FrameList};
use crate::hardware::HardwareArgs;
use crate::power_on::PowerOnArgs;
use crate::{hex, limits, load_rom, Error};
pub use input::InputSource;
use sinks::{FrameDone, RunEnd, RunSink};

/// Where `nes run` takes controller input from, and where it records it.
#[derive(Debug, clap::Args)]
pub struct RunInput {
    /// Play an FM2 movie (FCEUX's format) from power-on: line N-1 is frame N's input, its
    /// reset and power commands included; when it ends the buttons are released and the run
    /// continues to --frames. The battery save is neither loaded nor written.
    #[arg(long, value_name = "FM2", conflicts_with_all = ["press", "input"])]
    pub movie: Option<PathBuf>,
    /// Hold controller 1's buttons for frames FRAME..FRAME+HOLD-1 (frames count from 1).
    /// BUTTONS: letters from `ABsSUDLR` (s select, S start) or names joined with `+`
    /// (`start+a`). Repeatable.
    #[arg(long, value_name = "FRAME:BUTTONS[:HOLD]", value_parser = ScheduledPress::parse)]
    pub press: Vec<ScheduledPress>,
    /// A file of --press entries, one per line (`#` comments and blank lines allowed).
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Record the run's input (whatever its source) as an FM2 movie FCEUX 2.6.5 plays back in
    /// step. The battery save is neither loaded nor written.
    #[arg(long, value_name = "FM2")]
    pub record: Option<PathBuf>,
}

/// A Lua script driving the run (FCEUX-compatible, see the README).
#[derive(Debug, clap::Args)]
pub struct RunLua {
    /// Run this FCEUX Lua script alongside the game. Its `print` goes to stdout, its errors
    /// to stderr; scripted presses and movies reach the game through `joypad.set`'s rules.
    #[arg(long, value_name = "SCRIPT")]
    pub lua: Option<PathBuf>,
    /// The script's start-up argument (Lua global `arg`).
    #[arg(long, value_name = "TEXT", requires = "lua")]
    pub lua_arg: Option<String>,
    /// Stop the script (with a `lua error:`; the run goes on) when it runs this long without
    /// yielding to the emulator (emu.frameadvance() or the end of a callback). Default 0:
    /// never, as in FCEUX, where such a script freezes the emulator.
    #[arg(long, value_name = "SECONDS", requires = "lua", value_parser = nes_lua::parse_watchdog_seconds)]
    pub lua_watchdog: Option<f64>,
}

/// Files `nes run` can write.
#[derive(Debug, clap::Args)]
pub struct RunOutput {
    /// Write the last frame as a PNG.
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,
    /// Palette for the screenshot: a 192-byte (64 colours) or 1536-byte (512 colours) .pal file.
    /// Default: the built-in NTSC palette.
    #[arg(long, value_name = "PAL")]
    pub palette: Option<PathBuf>,
    /// Write the audio of the whole run as a 16-bit mono WAV.
    #[arg(long, value_name = "WAV")]
    pub wav: Option<PathBuf>,
    /// Folder for battery saves (`GAME.sav`); default: beside the ROM.
    #[arg(long, value_name = "DIR")]
    pub save_dir: Option<PathBuf>,
    /// Neither load nor write the battery save.
    #[arg(long)]
    pub no_battery: bool,
    /// Write CPU RAM ($0000-$07FF, 2048 bytes) after every frame: N frames give N x 2048 bytes.
    #[arg(long, value_name = "FILE")]
    pub ram_log: Option<PathBuf>,
    /// Frames to capture, as a comma list (`120,300,450`; frames count from 1): each is written
    /// to --capture-dir as NAME_fN.png (through --palette) and NAME_fN.raw9 (the PPU's 9-bit
    /// output, see the README), and the raw picture's SHA-256 is printed. Without --frames the
    /// run lasts its default length or up to the last of them, whichever is later.
    #[arg(long, value_name = "FRAMES", value_parser = FrameList::parse, requires = "capture_dir")]
    pub capture: Option<FrameList>,
    /// Folder for --capture files (created when missing); NAME is the ROM's file name without
    /// its extension.
    #[arg(long, value_name = "DIR", requires = "capture")]
    pub capture_dir: Option<PathBuf>,
    /// Sample rate of the WAV.
    #[arg(long, default_value_t = 44_100, value_parser = clap::value_parser!(u32).range(8_000..=192_000))]
    pub sample_rate: u32,
}

/// Save states and the power-on state of `nes run`.
#[derive(Debug, clap::Args)]
pub struct RunState {
    /// Start from this save state (written by --save-state for the same ROM) instead of
    /// power-on. Frame numbers continue from the state's: --frames is the frame to stop at.
    #[arg(long, value_name = "STATE", conflicts_with_all = ["movie", "record"])]
    pub load_state: Option<PathBuf>,
    /// Write a save state of the console at the end of the run.
    #[arg(long, value_name = "STATE")]
    pub save_state: Option<PathBuf>,
    #[command(flatten)]
    pub power_on: PowerOnArgs,
    #[command(flatten)]
    pub hardware: HardwareArgs,
}

/// `nes run`: returns the process's exit status (0, or what the script gave `os.exit`).
pub fn run(
    rom: &Path,
    frames: Option<u64>,
    input: &RunInput,
    output: &RunOutput,
    state: &RunState,
    lua: &RunLua,
) -> Result<u8, Error> {
    // Check the palette and the input files before spending time on the run.
    let palette = load_palette(output.palette.as_deref())?;
    let source = InputSource::from_args(input)?;
    // FCEUX material (a movie, a script, a recording) starts the way FCEUX does unless told
    // otherwise, so its frames line up with FCEUX's.
    let fceux_material = input.movie.is_some() || input.record.is_some() || lua.lua.is_some();
    let configured = state.power_on.resolve(fceux_material);
    let first_power_on = match source.movie() {
        Some(movie) => PowerOn {
            ram: movie_power_on_ram(movie, state.power_on.power_on_ram),
            ..configured
        },
        None => configured,
    };
    let mut hardware = state.hardware.resolve();
    // A PAL movie (FM2 `palFlag 1`) plays on a PAL console unless `--region` says otherwise.
    if let (None, Some(movie)) = (hardware.region, source.movie()) {
        if movie.header.pal {
            hardware.region = Some(Region::Pal);
        }
    }
    let mut nes = load_rom(rom, first_power_on, &hardware)?;
    // Power commands after the start fill RAM as configured (as FCEUX's do).
    nes.set_power_on_ram(configured.ram);
    let md5 = nes.rom_info().prg_chr_md5;
    let capture_frames = output.capture.as_ref().map_or(&[][..], |list| &list.0[..]);
    let last_capture = capture_frames.last().copied().unwrap_or(0);
    // Without --frames a script decides when the run ends, as it does in FCEUX (a logging
    // script calls emu.exit()); the run still lasts the movie and the captures asked for.
    let until_script_ends = frames.is_none() && lua.lua.is_some();
    let frames = match frames {
        Some(frames) if frames < last_capture => {
            return Err(Error::Options(format!(
                "--capture asks for frame {last_capture} but --frames stops the run at frame \
                 {frames}"
            )))
        }
        Some(frames) => frames,
        None => source.default_frames().max(last_capture),
    };
    if until_script_ends {
        eprintln!(
            "running until the script calls emu.exit() or ends (at least {frames} frames; \
             --frames N stops at frame N)"
        );
    }
    let captures = match output.capture_dir.as_deref() {
        Some(dir) => Some(sinks::Captures::new(
            capture_frames.to_vec(),
            // Absolute: a Lua script runs in its own folder.
            std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()),
            rom.file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_else(|| "rom".to_owned()),
            palette.clone(),
        )?),
        None => None,
    };
    match &source {
        InputSource::Movie(movie) => warn_about_movie(movie, md5, nes.region()),
        InputSource::Schedule(schedule) if schedule.last_frame() > frames => eprintln!(
            "warning: scripted input goes on to frame {} but the run stops at frame {frames}",
            schedule.last_frame()
        ),
        _ => {}
    }
    let ram_log = output
        .ram_log
        .as_deref()
        .map(sinks::RamLog::create)
        .transpose()?;
    let mut host = script::start(
        lua,
        rom,
        nes.rom_info(),
        output.save_dir.as_deref(),
        &palette,
    )?;
    // Scripts run with their own folder as the working directory (FCEUX does so); paths the
    // run itself uses during the loop are made absolute first.
    let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let absolute_rom = absolute(rom);
    let absolute_save_dir = output.save_dir.as_deref().map(absolute);
    // A movie starts from power-on with the cartridge's RAM blank (FCEUX clears it for
    // movies), and must not overwrite the player's save either.
    let movie_run = input.movie.is_some() || input.record.is_some();
    if movie_run && !output.no_battery && nes.battery_ram().is_some() {
        eprintln!("battery save not used: movies start with blank cartridge RAM, as in FCEUX");
    }
    let mut battery = (!output.no_battery && !movie_run)
        .then(|| BatterySave::for_rom(&absolute_rom, absolute_save_dir.as_deref()));
    if let Some(battery) = &mut battery {
        match battery.load(&mut nes) {
            LoadOutcome::Loaded => eprintln!("battery save loaded: {}", battery.path().display()),
            LoadOutcome::Rejected(why) => eprintln!("warning: battery save not used: {why}"),
            LoadOutcome::NoBattery | LoadOutcome::NoFile => {}
        }
    }
    // The host's audio rate is set before a state is loaded: a state made at the same rate
    // then keeps its resampler and the audio continues bit for bit.
    if output.wav.is_some() {
        nes.set_audio_sample_rate(output.sample_rate);
    }
    // The state is loaded after the battery save: its own copy of the cartridge RAM wins.
    let mut frame = 0u64;
    if let Some(path) = &state.load_state {
        let bytes = limits::read_limited(path, &limits::SAVE_STATE)?;
        nes.load_state(&bytes).map_err(|source| Error::State {
            path: path.clone(),
            source,
        })?;
        frame = nes.frame_count();
        eprintln!("state loaded: {} (frame {frame})", path.display());
        if frame > frames {
            return Err(Error::Options(format!(
                "the state is at frame {frame}, past the last frame to run ({frames})"
            )));
        }
    }
    if let Some(host) = host.as_mut() {
        set_movie_status(host, input, &source);
    }

    // The outputs, in the order they report at the end: the battery save, the state, the
    // screenshot (with the script's overlay), the script's end, then the files the run
    // streamed.
    let mut sinks: Vec<Box<dyn RunSink>> = Vec::new();
    if let Some(battery) = battery {
        sinks.push(Box::new(sinks::Battery(battery)));
    }
    if let Some(path) = &state.save_state {
        sinks.push(Box::new(sinks::StateWriter(path.clone())));
    }
    if let Some(path) = &output.screenshot {
        sinks.push(Box::new(sinks::Screenshot {
            path: path.clone(),
            palette: palette.clone(),
        }));
    }
    if host.is_some() {
        sinks.push(Box::new(sinks::ScriptEnd));
    }
    if let Some(path) = &output.wav {
        sinks.push(Box::new(sinks::WavRecorder::new(
            path.clone(),
            output.sample_rate,
        )));
    }
    if let Some(log) = ram_log {
        sinks.push(Box::new(log));
    }
    if let Some(path) = &input.record {
        let origin = if lua.lua.is_some() {
            "a Lua script"
        } else {
            source.origin()
        };
        sinks.push(Box::new(sinks::MovieRecorder::new(
            path.clone(),
            rom.to_path_buf(),
            md5,
            origin,
            first_power_on.ram,
        )));
    }
    if let Some(captures) = captures {
        sinks.push(Box::new(captures));
    }

    let original_dir = std::env::current_dir().ok();
    if let Some(dir) = lua.lua.as_deref().and_then(Path::parent) {
        if !dir.as_os_str().is_empty() {
            std::env::set_current_dir(dir).map_err(|source| Error::Folder {
                action: "enter the script's folder",
                path: dir.to_path_buf(),
                source,
            })?;
        }
    }
    let mut ignored_commands = Commands::empty();
    let result = (|| -> Result<(), Error> {
        if let Some(host) = host.as_mut() {
            // The script's first slice runs as it loads, before the first frame (FCEUX 2.6.5).
            host.start(&mut nes);
            script::drain(host);
        }
        // Frame `frame + 1` takes line `frame` of a movie: FCEUX's frames and lines (see
        // `nes::Timeline::Fceux` for why they line up on its timeline).
        loop {
            if host.as_ref().is_some_and(nes_lua::LuaHost::exit_requested) {
                break;
            }
            let script_goes_on = until_script_ends
                && host
                    .as_ref()
                    .is_some_and(|host| host.running() && host.main_alive());
            if frame >= frames && !script_goes_on {
                break;
            }
            frame += 1;
            let given = run_frame(&mut nes, host.as_mut(), &source, frame);
            // FDS and VS. System commands mean nothing on this console.
            ignored_commands |= given.command - (Commands::POWER | Commands::SOFT_RESET);
            let mut done = FrameDone {
                nes: &mut nes,
                frame,
                input: &given,
            };
            for sink in &mut sinks {
                sink.frame_done(&mut done)?;
            }
        }
        Ok(())
    })();
    if let Some(dir) = original_dir {
        // Back to where the output paths were given relative to.
        let _ = std::env::set_current_dir(dir);
    }
    result?;
    if !ignored_commands.is_empty() {
        eprintln!(
            "warning: movie commands ignored (no FDS or VS. System here): {:?}",
            ignored_commands
        );
    }
    print_summary(&nes, frame);
    let mut end = RunEnd {
        nes: &mut nes,
        script: host.as_mut(),
    };
    for sink in sinks {
        sink.finish(&mut end)?;
    }
    // The run's exit status: what `os.exit(code)` asked for (as a process's, its low byte).
    let status = host.as_ref().and_then(nes_lua::LuaHost::exit_status);
    Ok(status.map_or(0, |code| code as u8))
}

/// Runs frame `frame`: with a script, through the Lua host (which applies its `joypad.set`
/// rules to the movie or scripted input); without, the input line as it is. Returns what the
/// game received.
fn run_frame(
    nes: &mut Nes,
    host: Option<&mut nes_lua::LuaHost>,
    source: &InputSource,
    frame: u64,
) -> MovieFrame {
    let line = source.input_for(frame);
    match host {
        Some(host) => {
            let input = match source {
                InputSource::Movie(_) => nes_lua::FrameInput {
                    user: [Buttons::empty(); 2],
                    movie: line,
                },
                _ => nes_lua::FrameInput {
                    user: line.unwrap_or_default().pads,
                    movie: None,
                },
            };
            let outcome = host.run_frame(nes, input);
            script::drain(host);
            MovieFrame {
                command: outcome.command,
                pads: outcome.pads,
            }
        }
        None => {
            let line = line.unwrap_or_default();
            line.command.apply(nes);
            nes.set_buttons(0, line.pads[0]);
            nes.set_buttons(1, line.pads[1]);
            nes.run_frame();
            line
        }
    }
}

/// Tells the script's `movie.*` functions what the run plays or records.
fn set_movie_status(host: &mut nes_lua::LuaHost, input: &RunInput, source: &InputSource) {
    if let Some(movie) = source.movie() {
        host.set_movie_status(nes_lua::MovieStatus {
            mode: nes_lua::MovieMode::Playback,
            length: movie.frames.len() as u64,
            name: input
                .movie
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            rerecords: u64::from(movie.header.rerecord_count),
        });
    } else if let Some(path) = input.record.as_deref() {
        host.set_movie_status(nes_lua::MovieStatus {
            mode: nes_lua::MovieMode::Record,
            length: 0,
            name: path.display().to_string(),
            rerecords: 0,
        });
    }
}

/// The lines every run prints at its end: frames run, hashes of the last picture and of CPU
/// RAM, the lag count, and where the CPU jammed.
fn print_summary(nes: &Nes, frame: u64) {
    let mut frame_hash = Sha1::new();
    for pixel in nes.frame_buffer() {
        frame_hash.update(pixel.to_le_bytes());
    }
    let ram: Vec<u8> = (0..0x800).map(|addr| nes.peek(addr)).collect();
    crate::outln!("frames: {frame}");
    crate::outln!("frame sha1: {}", hex(&frame_hash.finalize()));
    crate::outln!("ram sha1: {}", hex(&Sha1::digest(&ram)));
    crate::outln!("lag frames: {}", nes.lag_count());
    if let Some(pc) = nes.jammed_at() {
        crate::outln!("cpu jammed at ${pc:04X}");
    }
}

/// The power-on RAM of a movie's start: as its header's `RAMInitOption`/`RAMInitSeed` say
/// (FCEUX's pattern when it has none, as FCEUX 2.6.5 plays such movies), unless
/// `--power-on-ram` asked for another.
fn movie_power_on_ram(movie: &Movie, asked: Option<PowerOnRam>) -> PowerOnRam {
    let header = &movie.header;
    let from_movie = PowerOnRam::from_fceux_option(
        header.ram_init_option.unwrap_or(0),
        header.ram_init_seed.unwrap_or(0),
    );
    match asked {
        Some(asked) if asked != from_movie => {
            eprintln!(
                "warning: --power-on-ram overrides the movie's power-on RAM \
                 (RAMInitOption {}); playback may desync",
                header.ram_init_option.unwrap_or(0)
            );
            asked
        }
        _ => from_movie,
    }
}

/// What the user should know before a movie plays.
fn warn_about_movie(movie: &Movie, md5: [u8; 16], region: Region) {
    let header = &movie.header;
    if header.rom_checksum.is_some_and(|sum| sum != md5) {
        eprintln!(
            "warning: the movie was recorded on a different ROM (romChecksum differs); \
             playback will probably desync"
        );
    }
    if header.pal && region != Region::Pal {
        eprintln!(
            "warning: the movie was recorded with PAL timing; this console is {}",
            if region == Region::Dendy {
                "a Dendy"
            } else {
                "NTSC"
            }
        );
    }
    if header.new_ppu {
        eprintln!(
            "warning: the movie was recorded with FCEUX's new PPU (NewPPU 1), whose timing \
             differs from its default one; playback may desync"
        );
    }
}
