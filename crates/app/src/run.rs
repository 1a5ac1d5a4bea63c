//! `nes run`: a headless run from power-on with scripted or recorded input, and the files it
//! can write (screenshot, audio, RAM log, FM2 recording, battery save).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use md5::Md5;
use nes::fm2::{Commands, Movie, MovieFrame, MovieHeader};
use nes::input_schedule::{InputSchedule, ScheduledPress};
use nes::{Buttons, Cartridge, Nes, Palette, PowerOnRam, SCREEN_HEIGHT, SCREEN_WIDTH};
use nes_app::battery::{BatterySave, LoadOutcome};
use nes_app::capture::{self, FrameList};
use nes_app::output::{self, AtomicFile};
use sha1::{Digest, Sha1};

use crate::load_with_image;

/// Shared with `nes play` and `nes sweep`.
pub(crate) use nes_app::capture::load_palette;

/// Where `nes run` takes controller input from, and where it records it.
#[derive(Debug, clap::Args)]
pub(crate) struct RunInput {
    /// Play an FM2 movie (FCEUX's format) as the controller input; when it ends the buttons are
    /// released and the run continues to --frames.
    #[arg(long, value_name = "FM2", conflicts_with_all = ["press", "input"])]
    movie: Option<PathBuf>,
    /// Hold controller 1's buttons for frames FRAME..FRAME+HOLD-1 (frames count from 1).
    /// BUTTONS: letters from `ABsSUDLR` (s select, S start) or names joined with `+`
    /// (`start+a`). Repeatable.
    #[arg(long, value_name = "FRAME:BUTTONS[:HOLD]", value_parser = ScheduledPress::parse)]
    press: Vec<ScheduledPress>,
    /// A file of --press entries, one per line (`#` comments and blank lines allowed).
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Record the run's input (whatever its source) as an FM2 movie.
    #[arg(long, value_name = "FM2")]
    record: Option<PathBuf>,
}

/// A Lua script driving the run (FCEUX-compatible, see the README).
#[derive(Debug, clap::Args)]
pub(crate) struct RunLua {
    /// Run this FCEUX Lua script alongside the game. Its `print` goes to stdout, its errors
    /// to stderr; scripted presses and movies reach the game through `joypad.set`'s rules.
    #[arg(long, value_name = "SCRIPT")]
    pub(crate) lua: Option<PathBuf>,
    /// The script's start-up argument (Lua global `arg`).
    #[arg(long, value_name = "TEXT", requires = "lua")]
    pub(crate) lua_arg: Option<String>,
}

/// Files `nes run` can write.
#[derive(Debug, clap::Args)]
pub(crate) struct RunOutput {
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
    /// Write CPU RAM ($0000-$07FF, 2048 bytes) after every frame: N frames give N x 2048 bytes.
    #[arg(long, value_name = "FILE")]
    ram_log: Option<PathBuf>,
    /// Frames to capture, as a comma list (`120,300,450`; frames count from 1): each is written
    /// to --capture-dir as NAME_fN.png (through --palette) and NAME_fN.raw9 (the PPU's 9-bit
    /// output, see the README), and the raw picture's SHA-256 is printed. Without --frames the
    /// run lasts its default length or up to the last of them, whichever is later.
    #[arg(long, value_name = "FRAMES", value_parser = FrameList::parse, requires = "capture_dir")]
    capture: Option<FrameList>,
    /// Folder for --capture files (created when missing); NAME is the ROM's file name without
    /// its extension.
    #[arg(long, value_name = "DIR", requires = "capture")]
    capture_dir: Option<PathBuf>,
    /// Sample rate of the WAV.
    #[arg(long, default_value_t = 44_100, value_parser = clap::value_parser!(u32).range(8_000..=192_000))]
    sample_rate: u32,
}

/// The ROM's MD5 as FCEUX computes it for `romChecksum`: over PRG ROM then CHR ROM, the
/// iNES header and any trainer excluded.
fn rom_md5(nes: &Nes, image: &[u8]) -> [u8; 16] {
    let info = nes.rom_info();
    let start = 16 + if info.trainer { 512 } else { 0 };
    let end = start + info.prg_rom_len + info.chr_rom_len;
    let data = image.get(start..end.min(image.len())).unwrap_or_default();
    Md5::digest(data).into()
}

/// A fresh FM2 `guid` (8-4-4-4-12 hex digits), derived from the ROM hash, the time and the
/// process id so two recordings never share one.
fn new_guid(rom_md5: &[u8; 16]) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut hash = Sha1::new();
    hash.update(rom_md5);
    hash.update(nanos.to_le_bytes());
    hash.update(std::process::id().to_le_bytes());
    let digits = hex(&hash.finalize()[..16]).to_uppercase();
    format!(
        "{}-{}-{}-{}-{}",
        &digits[..8],
        &digits[8..12],
        &digits[12..16],
        &digits[16..20],
        &digits[20..32]
    )
}

/// This program's version as an FM2 `emuVersion` integer (FCEUX writes 2.2.3 as 22030;
/// here major * 10000 + minor * 100 + patch).
fn emu_version() -> u32 {
    let mut parts = env!("CARGO_PKG_VERSION")
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    next() * 10_000 + next() * 100 + next()
}

/// The controller input of a run, frame by frame.
#[derive(Debug)]
enum InputSource {
    Released,
    Movie(Movie),
    Schedule(InputSchedule),
}

impl InputSource {
    fn from_args(input: &RunInput) -> Result<InputSource, String> {
        if let Some(path) = &input.movie {
            let bytes =
                std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            // Comments and file names in old movies may be in a legacy 8-bit encoding.
            let text = String::from_utf8_lossy(&bytes);
            let movie = Movie::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            return Ok(InputSource::Movie(movie));
        }
        let mut schedule = InputSchedule::new();
        if let Some(path) = &input.input {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            schedule =
                InputSchedule::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        for press in &input.press {
            schedule.push(*press);
        }
        Ok(if schedule.is_empty() {
            InputSource::Released
        } else {
            InputSource::Schedule(schedule)
        })
    }

    /// The input at boundary `boundary` (from 0, FM2 line `boundary`), which starts frame
    /// `frame` (from 1). Movies count boundaries; scripted input counts frames.
    fn input_at(&self, boundary: usize, frame: u64) -> MovieFrame {
        match self {
            InputSource::Released => MovieFrame::default(),
            InputSource::Movie(movie) => movie.frames.get(boundary).copied().unwrap_or_default(),
            InputSource::Schedule(schedule) => MovieFrame {
                command: Commands::empty(),
                pads: [schedule.buttons_for_frame(frame), Buttons::empty()],
            },
        }
    }

    /// Frames to run when --frames is not given: all of a movie (each line one frame, plus the
    /// start-up frame that follows power-on and every power command), else 60.
    fn default_frames(&self) -> u64 {
        match self {
            InputSource::Movie(movie) => {
                let powers = movie
                    .frames
                    .iter()
                    .filter(|f| f.command.contains(Commands::POWER))
                    .count();
                (movie.frames.len() + powers) as u64 + 1
            }
            _ => 60,
        }
    }
}

/// The RAM log: streamed to a temporary file beside the target as the run goes and renamed over
/// it at the end, so an interrupted run never leaves a partial log.
struct RamLog {
    file: AtomicFile,
    bytes: u64,
}

impl RamLog {
    fn create(path: &Path) -> Result<RamLog, String> {
        let file = AtomicFile::create(path).map_err(|e| e.to_string())?;
        Ok(RamLog { file, bytes: 0 })
    }

    fn append(&mut self, nes: &Nes, ram: &mut [u8; 0x800]) -> Result<(), String> {
        for (addr, byte) in (0u16..).zip(ram.iter_mut()) {
            *byte = nes.peek(addr);
        }
        self.file
            .write_all(ram)
            .map_err(|e| format!("cannot write {}: {e}", self.file.path().display()))?;
        self.bytes += ram.len() as u64;
        Ok(())
    }

    fn finish(self) -> Result<(PathBuf, u64), String> {
        let path = self.file.path().to_owned();
        self.file.commit().map_err(|e| e.to_string())?;
        Ok((path, self.bytes))
    }
}

/// Save states and the power-on state of `nes run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunState {
    /// Start from this save state (written by --save-state for the same ROM) instead of
    /// power-on. Frame numbers continue from the state's: --frames is the frame to stop at.
    #[arg(long, value_name = "STATE", conflicts_with_all = ["movie", "record"])]
    load_state: Option<PathBuf>,
    /// Write a save state of the console at the end of the run.
    #[arg(long, value_name = "STATE")]
    save_state: Option<PathBuf>,
    /// CPU RAM at power-on: `zero` (the default: all bytes 0) or `random[:SEED]` (a
    /// pseudo-random fill; the same seed gives the same RAM; without a seed one is picked and
    /// printed).
    #[arg(long, value_name = "zero|random[:SEED]", default_value = "zero", value_parser = parse_power_on_ram)]
    power_on_ram: PowerOnRam,
}

fn parse_power_on_ram(text: &str) -> Result<PowerOnRam, String> {
    match text.split_once(':') {
        None if text == "zero" => Ok(PowerOnRam::Zeroed),
        None if text == "random" => {
            let seed = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|since| since.as_nanos() as u64)
                .unwrap_or(0);
            Ok(PowerOnRam::Random { seed })
        }
        Some(("random", seed)) => seed
            .parse()
            .map(|seed| PowerOnRam::Random { seed })
            .map_err(|_| format!("the seed must be a number from 0 to {}", u64::MAX)),
        _ => Err("expected `zero`, `random` or `random:SEED`".to_owned()),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Start the Lua host for `--lua`, with slot files where battery saves go.
fn start_lua(
    lua: &RunLua,
    rom: &Path,
    image: &[u8],
    save_dir: Option<&Path>,
    palette: &Palette,
) -> Result<Option<nes_lua::LuaHost>, String> {
    let Some(script) = &lua.lua else {
        return Ok(None);
    };
    let save_dir = match save_dir {
        Some(dir) => dir.to_path_buf(),
        None => rom.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    let options = nes_lua::HostOptions {
        save_dir: std::path::absolute(&save_dir).unwrap_or(save_dir),
        rom_stem: rom
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default(),
        rom_image: image.to_vec(),
        arg: lua.lua_arg.clone(),
        palette: palette.clone(),
    };
    nes_lua::LuaHost::load(script, options)
        .map(Some)
        .map_err(|e| format!("lua: {e}"))
}

/// Pass the script's output on: `print` to stdout, errors and messages to stderr.
fn drain_lua(host: &mut nes_lua::LuaHost) {
    for line in host.take_output() {
        println!("{line}");
    }
    for message in host.take_messages() {
        eprintln!("lua message: {message}");
    }
    for error in host.take_errors() {
        eprintln!("lua error: {error}");
    }
}

pub(crate) fn run(
    rom: &Path,
    frames: Option<u64>,
    input: &RunInput,
    output: &RunOutput,
    state: &RunState,
    lua: &RunLua,
) -> Result<(), String> {
    // Check the palette and the input files before spending time on the run.
    let palette = load_palette(output.palette.as_deref())?;
    let source = InputSource::from_args(input)?;
    let (mut nes, image) = load_with_image(rom)?;
    if let PowerOnRam::Random { seed } = state.power_on_ram {
        eprintln!("power-on RAM: random, seed {seed}");
        let cart = Cartridge::from_ines(&image).map_err(|e| format!("{}: {e}", rom.display()))?;
        nes = Nes::with_power_on_ram(cart, state.power_on_ram);
    }
    let md5 = rom_md5(&nes, &image);
    let capture_frames = output.capture.as_ref().map_or(&[][..], |list| &list.0[..]);
    let last_capture = capture_frames.last().copied().unwrap_or(0);
    let frames = match frames {
        Some(frames) if frames < last_capture => {
            return Err(format!(
                "--capture asks for frame {last_capture} but --frames stops the run at frame \
                 {frames}"
            ))
        }
        Some(frames) => frames,
        None => source.default_frames().max(last_capture),
    };
    let capture_name = rom
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_else(|| "rom".to_owned());
    // Absolute: a Lua script runs in its own folder.
    let capture_dir = output
        .capture_dir
        .as_deref()
        .map(|dir| std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()));
    if let Some(dir) = &capture_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    match &source {
        InputSource::Movie(movie) => {
            if movie.header.rom_checksum.is_some_and(|sum| sum != md5) {
                eprintln!(
                    "warning: the movie was recorded on a different ROM (romChecksum differs); \
                     playback will probably desync"
                );
            }
            if movie.header.pal {
                eprintln!("warning: the movie was recorded with PAL timing; this console is NTSC");
            }
        }
        InputSource::Schedule(schedule) if schedule.last_frame() > frames => eprintln!(
            "warning: scripted input goes on to frame {} but the run stops at frame {frames}",
            schedule.last_frame()
        ),
        _ => {}
    }
    let mut ram_log = output.ram_log.as_deref().map(RamLog::create).transpose()?;
    let mut host = start_lua(lua, rom, &image, output.save_dir.as_deref(), &palette)?;
    // Scripts run with their own folder as the working directory (FCEUX does so); paths the
    // run itself uses during the loop are made absolute first.
    let absolute_rom = std::path::absolute(rom).unwrap_or_else(|_| rom.to_path_buf());
    let absolute_save_dir = output
        .save_dir
        .as_deref()
        .map(|dir| std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()));
    let mut battery = (!output.no_battery)
        .then(|| BatterySave::for_rom(&absolute_rom, absolute_save_dir.as_deref()));
    if let Some(battery) = &mut battery {
        match battery.load(&mut nes) {
            LoadOutcome::Loaded => eprintln!("battery save loaded: {}", battery.path().display()),
            LoadOutcome::Rejected(why) => eprintln!("warning: battery save not used: {why}"),
            LoadOutcome::NoBattery | LoadOutcome::NoFile => {}
        }
    }
    // The state is loaded after the battery save: its own copy of the cartridge RAM wins.
    let mut frame = 0u64;
    if let Some(path) = &state.load_state {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        nes.load_state(&bytes)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        frame = nes.frame_count();
        eprintln!("state loaded: {} (frame {frame})", path.display());
        if frame > frames {
            return Err(format!(
                "the state is at frame {frame}, past the last frame to run ({frames})"
            ));
        }
    }
    let mut audio = Vec::new();
    if output.wav.is_some() {
        nes.set_audio_sample_rate(output.sample_rate);
    }
    let mut recorded = Vec::new();
    let mut ram = [0u8; 0x800];
    let mut ignored_commands = Commands::empty();
    let wav = output.wav.is_some();
    let movie_length = match &source {
        InputSource::Movie(movie) => movie.frames.len(),
        _ => 0,
    };
    if let (Some(host), InputSource::Movie(movie)) = (host.as_mut(), &source) {
        host.set_movie_status(nes_lua::MovieStatus {
            playing: true,
            recording: false,
            length: movie.frames.len() as u64,
            name: input
                .movie
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            rerecords: u64::from(movie.header.rerecord_count),
        });
    } else if let (Some(host), Some(path)) = (host.as_mut(), input.record.as_deref()) {
        host.set_movie_status(nes_lua::MovieStatus {
            playing: false,
            recording: true,
            length: 0,
            name: path.display().to_string(),
            rerecords: 0,
        });
    }
    // Runs one frame; returns the pads the game was given (the script may override them).
    // `from_movie`: the pads are a playing movie's input, which wins over the script.
    // `frame` is the number (from 1) of the frame about to run: the pads are what $4016
    // returns from the vblank before picture `frame` until that picture is complete.
    let mut run_frame = |nes: &mut Nes,
                         host: &mut Option<nes_lua::LuaHost>,
                         frame: u64,
                         pads: [Buttons; 2],
                         from_movie: bool|
     -> Result<[Buttons; 2], String> {
        let pads = match host {
            Some(host) => {
                let input = if from_movie {
                    nes_lua::FrameInput {
                        user: [Buttons::empty(); 2],
                        movie: Some(pads),
                    }
                } else {
                    nes_lua::FrameInput {
                        user: pads,
                        movie: None,
                    }
                };
                let given = host.run_frame(nes, input);
                drain_lua(host);
                given
            }
            None => {
                nes.set_buttons(0, pads[0]);
                nes.set_buttons(1, pads[1]);
                nes.run_frame();
                pads
            }
        };
        if let Some(dir) = &capture_dir {
            if capture_frames.binary_search(&frame).is_ok() {
                let files =
                    capture::write_capture(dir, &capture_name, frame, nes.frame_buffer(), &palette)
                        .map_err(|e| e.to_string())?;
                println!(
                    "capture f{frame}: sha256 {} ({}, {})",
                    files.sha256,
                    files.png.display(),
                    files.raw9.display()
                );
            }
        }
        if wav {
            nes.take_audio_samples(&mut audio);
        }
        if let Some(log) = &mut ram_log {
            log.append(nes, &mut ram)?;
        }
        if let Some(battery) = &mut battery {
            battery.frame_done(nes).map_err(|e| e.to_string())?;
        }
        Ok(pads)
    };
    // FM2 input is per frame *boundary* (scanline 240, where FCEUX starts its frames and the
    // Lua host latches input). Power-on leaves the PPU at scanline 0, so frame 1 runs from
    // power-on to the first boundary before any movie line applies: FM2 line k is the input of
    // frame k + 2. A power command restarts the PPU at scanline 0 and so adds such a start-up
    // frame again. Frames are counted here because power restarts the console's own count.
    let mut boundary = 0usize;
    let start_up = source.input_at(usize::MAX, 1);
    let original_dir = std::env::current_dir().ok();
    if let Some(dir) = lua.lua.as_deref().and_then(Path::parent) {
        if !dir.as_os_str().is_empty() {
            std::env::set_current_dir(dir)
                .map_err(|e| format!("cannot enter the script's folder {}: {e}", dir.display()))?;
        }
    }
    let result = (|| -> Result<(), String> {
        // A loaded state starts past frame 1 (at a boundary): no start-up frame then.
        if frames > 0 && frame == 0 {
            if input.record.is_some() && start_up != MovieFrame::default() {
                eprintln!(
                    "warning: input on frame 1 (before the first frame boundary) cannot be stored \
                     in an FM2 and is not recorded"
                );
            }
            // Power-on to the first boundary: the script's first slice runs at that boundary.
            nes.set_buttons(0, start_up.pads[0]);
            nes.set_buttons(1, start_up.pads[1]);
            let mut no_host = None;
            run_frame(&mut nes, &mut no_host, 1, start_up.pads, false)?;
            frame += 1;
        }
        while frame < frames {
            let line = source.input_at(boundary, frame + 1);
            let from_movie = boundary < movie_length;
            boundary += 1;
            ignored_commands |= line.command - (Commands::POWER | Commands::SOFT_RESET);
            if line.command.contains(Commands::POWER) {
                nes.power_cycle();
                run_frame(&mut nes, &mut host, frame + 1, line.pads, from_movie)?;
                frame += 1;
                if frame == frames {
                    if input.record.is_some() {
                        recorded.push(line);
                    }
                    break;
                }
            } else if line.command.contains(Commands::SOFT_RESET) {
                nes.soft_reset();
            }
            let given = run_frame(&mut nes, &mut host, frame + 1, line.pads, from_movie)?;
            frame += 1;
            if input.record.is_some() {
                // What the game received, script overrides included.
                recorded.push(MovieFrame {
                    command: line.command,
                    pads: given,
                });
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
    let mut frame_hash = Sha1::new();
    for pixel in nes.frame_buffer() {
        frame_hash.update(pixel.to_le_bytes());
    }
    let ram: Vec<u8> = (0..0x800).map(|addr| nes.peek(addr)).collect();
    println!("frames: {frames}");
    println!("frame sha1: {}", hex(&frame_hash.finalize()));
    println!("ram sha1: {}", hex(&Sha1::digest(&ram)));
    println!("lag frames: {}", nes.lag_frames());
    if let Some(pc) = nes.jammed_at() {
        println!("cpu jammed at ${pc:04X}");
    }
    if let Some(battery) = &mut battery {
        if battery.save(&nes).map_err(|e| e.to_string())? {
            eprintln!("battery save written: {}", battery.path().display());
        }
    }
    if let Some(path) = &state.save_state {
        output::write_atomically(path, &nes.save_state()).map_err(|e| e.to_string())?;
        println!("state: {} (frame {})", path.display(), nes.frame_count());
    }
    if let Some(path) = &output.screenshot {
        let mut rgba = nes.frame_rgba(&palette);
        if let Some(host) = &host {
            host.composite_overlay(&mut rgba);
        }
        output::save_png(path, &rgba, SCREEN_WIDTH as u32, SCREEN_HEIGHT as u32)
            .map_err(|e| e.to_string())?;
        println!("screenshot: {}", path.display());
    }
    // The script ends with the run (registerexit runs); after the screenshot, which shows its
    // overlay.
    if let Some(host) = &mut host {
        if host.running() {
            host.stop(&mut nes);
        }
        drain_lua(host);
    }
    if let Some(path) = &output.wav {
        output::save_wav(path, &audio, output.sample_rate).map_err(|e| e.to_string())?;
        println!("audio: {} ({} samples)", path.display(), audio.len());
    }
    if let Some(log) = ram_log {
        let (path, bytes) = log.finish()?;
        println!("ram log: {} ({bytes} bytes)", path.display());
    }
    if let Some(path) = &input.record {
        let movie = recorded_movie(rom, md5, &source, recorded);
        output::write_atomically(path, movie.to_fm2().as_bytes()).map_err(|e| e.to_string())?;
        println!(
            "recorded: {} ({} frames)",
            path.display(),
            movie.frames.len()
        );
    }
    Ok(())
}

/// The FM2 `--record` writes: FCEUX's header for a power-on movie with two gamepads.
fn recorded_movie(
    rom: &Path,
    md5: [u8; 16],
    source: &InputSource,
    frames: Vec<MovieFrame>,
) -> Movie {
    let mut header = MovieHeader::new();
    header.emu_version = emu_version();
    header.rerecord_count = 0;
    header.rom_filename = rom
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    header.rom_checksum = Some(md5);
    header.guid = new_guid(&md5);
    let origin = match source {
        InputSource::Released => "no input",
        InputSource::Movie(_) => "a movie",
        InputSource::Schedule(_) => "scripted input",
    };
    header.comments.push(format!(
        "recorded by nes {} from {origin}",
        env!("CARGO_PKG_VERSION")
    ));
    Movie { header, frames }
}
