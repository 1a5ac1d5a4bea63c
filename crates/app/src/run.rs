//! `nes run`: a headless run from power-on with scripted or recorded input, and the files it
//! can write (screenshot, audio, RAM log, FM2 recording, battery save).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use md5::Md5;
use nes::fm2::{Commands, Movie, MovieFrame, MovieHeader};
use nes::input_schedule::{InputSchedule, ScheduledPress};
use nes::{Buttons, Nes, Palette, PowerOn, PowerOnRam, Region, SCREEN_HEIGHT, SCREEN_WIDTH};
use nes_app::battery::{BatterySave, LoadOutcome};
use nes_app::capture::{self, FrameList};
use nes_app::hardware::HardwareArgs;
use nes_app::limits;
use nes_app::output::{self, AtomicFile};
use nes_app::power_on::PowerOnArgs;
use sha1::{Digest, Sha1};

/// Shared with `nes play` and `nes sweep`.
pub(crate) use nes_app::capture::load_palette;

use crate::load_with_image;

/// Where `nes run` takes controller input from, and where it records it.
#[derive(Debug, clap::Args)]
pub(crate) struct RunInput {
    /// Play an FM2 movie (FCEUX's format) from power-on: line N-1 is frame N's input, its
    /// reset and power commands included; when it ends the buttons are released and the run
    /// continues to --frames. The battery save is neither loaded nor written.
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
    /// Record the run's input (whatever its source) as an FM2 movie FCEUX 2.6.5 plays back in
    /// step. The battery save is neither loaded nor written.
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
    /// Stop the script (with a `lua error:`; the run goes on) when it runs this long without
    /// yielding to the emulator (emu.frameadvance() or the end of a callback). Default 0:
    /// never, as in FCEUX, where such a script freezes the emulator.
    #[arg(long, value_name = "SECONDS", requires = "lua", value_parser = nes_lua::parse_watchdog_seconds)]
    pub(crate) lua_watchdog: Option<f64>,
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
            let bytes = limits::read_limited(path, &limits::MOVIE).map_err(|e| e.to_string())?;
            // Comments and file names in old movies may be in a legacy 8-bit encoding.
            let text = String::from_utf8_lossy(&bytes);
            let movie = Movie::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            return Ok(InputSource::Movie(movie));
        }
        let mut schedule = InputSchedule::new();
        if let Some(path) = &input.input {
            let text = limits::read_text_limited(path, &limits::INPUT_SCHEDULE)
                .map_err(|e| e.to_string())?;
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

    /// The input of frame `frame` (from 1): FM2 line `frame - 1`, or the scripted presses.
    /// `None` once a movie has no more lines.
    fn input_for(&self, frame: u64) -> Option<MovieFrame> {
        match self {
            InputSource::Released => Some(MovieFrame::default()),
            InputSource::Movie(movie) => usize::try_from(frame - 1)
                .ok()
                .and_then(|line| movie.frames.get(line))
                .copied(),
            InputSource::Schedule(schedule) => Some(MovieFrame {
                command: Commands::empty(),
                pads: [schedule.buttons_for_frame(frame), Buttons::empty()],
            }),
        }
    }

    /// Frames to run when --frames is not given: a movie's length, else 60.
    fn default_frames(&self) -> u64 {
        match self {
            InputSource::Movie(movie) => movie.frames.len() as u64,
            _ => 60,
        }
    }

    fn movie(&self) -> Option<&Movie> {
        match self {
            InputSource::Movie(movie) => Some(movie),
            _ => None,
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
    #[command(flatten)]
    power_on: PowerOnArgs,
    #[command(flatten)]
    hardware: HardwareArgs,
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
    let mut host = nes_lua::LuaHost::load(script, options).map_err(|e| format!("lua: {e}"))?;
    host.set_watchdog(nes_lua::watchdog_limit(lua.lua_watchdog.unwrap_or(0.0))?);
    // Each line as it is printed: a script that prints and then hangs or quits loses nothing.
    host.set_print_sink(|line| {
        let mut text = Vec::with_capacity(line.len() + 1);
        text.extend_from_slice(line);
        text.push(b'\n');
        nes_app::stdout::write_bytes(&text);
        nes_app::stdout::flush();
    });
    Ok(Some(host))
}

/// Pass the script's output on: errors and messages to stderr (`print` went to stdout as it
/// was printed).
fn drain_lua(host: &mut nes_lua::LuaHost) {
    for message in host.take_messages() {
        eprintln!("lua message: {message}");
    }
    for error in host.take_errors() {
        eprintln!("lua error: {error}");
    }
}

/// `nes run`: returns the process's exit status (0, or what the script gave `os.exit`).
pub(crate) fn run(
    rom: &Path,
    frames: Option<u64>,
    input: &RunInput,
    output: &RunOutput,
    state: &RunState,
    lua: &RunLua,
) -> Result<u8, String> {
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
    let (mut nes, image) = load_with_image(rom, first_power_on, &hardware)?;
    // Power commands after the start fill RAM as configured (as FCEUX's do).
    nes.set_power_on_ram(configured.ram);
    let md5 = rom_md5(&nes, &image);
    let capture_frames = output.capture.as_ref().map_or(&[][..], |list| &list.0[..]);
    let last_capture = capture_frames.last().copied().unwrap_or(0);
    // Without --frames a script decides when the run ends, as it does in FCEUX (a logging
    // script calls emu.exit()); the run still lasts the movie and the captures asked for.
    let until_script_ends = frames.is_none() && lua.lua.is_some();
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
    if until_script_ends {
        eprintln!(
            "running until the script calls emu.exit() or ends (at least {frames} frames; \
             --frames N stops at frame N)"
        );
    }
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
        InputSource::Movie(movie) => warn_about_movie(movie, md5),
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
        let bytes = limits::read_limited(path, &limits::SAVE_STATE).map_err(|e| e.to_string())?;
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
    let mut recorded = Vec::new();
    let mut ram = [0u8; 0x800];
    let mut ignored_commands = Commands::empty();
    if let Some(host) = host.as_mut() {
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
    let original_dir = std::env::current_dir().ok();
    if let Some(dir) = lua.lua.as_deref().and_then(Path::parent) {
        if !dir.as_os_str().is_empty() {
            std::env::set_current_dir(dir)
                .map_err(|e| format!("cannot enter the script's folder {}: {e}", dir.display()))?;
        }
    }
    let result = (|| -> Result<(), String> {
        if let Some(host) = host.as_mut() {
            // The script's first slice runs as it loads, before the first frame (FCEUX 2.6.5).
            host.start(&mut nes);
            drain_lua(host);
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
            let line = source.input_for(frame);
            let given = match host.as_mut() {
                Some(host) => {
                    let input = match &source {
                        InputSource::Movie(_) => nes_lua::FrameInput {
                            user: [Buttons::empty(); 2],
                            movie: line,
                        },
                        _ => nes_lua::FrameInput {
                            user: line.unwrap_or_default().pads,
                            movie: None,
                        },
                    };
                    let outcome = host.run_frame(&mut nes, input);
                    drain_lua(host);
                    MovieFrame {
                        command: outcome.command,
                        pads: outcome.pads,
                    }
                }
                None => {
                    let line = line.unwrap_or_default();
                    nes.apply_movie_commands(line.command);
                    nes.set_buttons(0, line.pads[0]);
                    nes.set_buttons(1, line.pads[1]);
                    nes.run_frame();
                    line
                }
            };
            // FDS and VS. System commands mean nothing on this console.
            ignored_commands |= given.command - (Commands::POWER | Commands::SOFT_RESET);
            if input.record.is_some() {
                // What the game received, script overrides included.
                recorded.push(given);
            }
            if let Some(dir) = &capture_dir {
                if capture_frames.binary_search(&frame).is_ok() {
                    let files = capture::write_capture(
                        dir,
                        &capture_name,
                        frame,
                        nes.frame_buffer(),
                        &palette,
                    )
                    .map_err(|e| e.to_string())?;
                    nes_app::outln!(
                        "capture f{frame}: sha256 {} ({}, {})",
                        files.sha256,
                        files.png.display(),
                        files.raw9.display()
                    );
                }
            }
            if output.wav.is_some() {
                nes.take_audio_samples(&mut audio);
            }
            if let Some(log) = &mut ram_log {
                log.append(&nes, &mut ram)?;
            }
            if let Some(battery) = &mut battery {
                battery.frame_done(&nes).map_err(|e| e.to_string())?;
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
    nes_app::outln!("frames: {frame}");
    nes_app::outln!("frame sha1: {}", hex(&frame_hash.finalize()));
    nes_app::outln!("ram sha1: {}", hex(&Sha1::digest(&ram)));
    nes_app::outln!("lag frames: {}", nes.lag_count());
    if let Some(pc) = nes.jammed_at() {
        nes_app::outln!("cpu jammed at ${pc:04X}");
    }
    if let Some(battery) = &mut battery {
        if battery.save(&nes).map_err(|e| e.to_string())? {
            eprintln!("battery save written: {}", battery.path().display());
        }
    }
    if let Some(path) = &state.save_state {
        output::write_atomically(path, &nes.save_state()).map_err(|e| e.to_string())?;
        nes_app::outln!("state: {} (frame {})", path.display(), nes.frame_count());
    }
    if let Some(path) = &output.screenshot {
        let mut rgba = nes.frame_rgba(&palette);
        if let Some(host) = &host {
            host.composite_overlay(&mut rgba);
        }
        output::save_png(path, &rgba, SCREEN_WIDTH as u32, SCREEN_HEIGHT as u32)
            .map_err(|e| e.to_string())?;
        nes_app::outln!("screenshot: {}", path.display());
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
        nes_app::outln!("audio: {} ({} samples)", path.display(), audio.len());
    }
    if let Some(log) = ram_log {
        let (path, bytes) = log.finish()?;
        nes_app::outln!("ram log: {} ({bytes} bytes)", path.display());
    }
    if let Some(path) = &input.record {
        let origin = match &source {
            _ if lua.lua.is_some() => "a Lua script",
            InputSource::Released => "no input",
            InputSource::Movie(_) => "a movie",
            InputSource::Schedule(_) => "scripted input",
        };
        let pal = nes.region() == Region::Pal;
        let movie = recorded_movie(rom, md5, origin, first_power_on.ram, pal, recorded);
        output::write_atomically(path, movie.to_fm2().as_bytes()).map_err(|e| e.to_string())?;
        nes_app::outln!(
            "recorded: {} ({} frames)",
            path.display(),
            movie.frames.len()
        );
    }
    // The run's exit status: what `os.exit(code)` asked for (as a process's, its low byte).
    let status = host.as_ref().and_then(nes_lua::LuaHost::exit_status);
    Ok(status.map_or(0, |code| code as u8))
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
fn warn_about_movie(movie: &Movie, md5: [u8; 16]) {
    let header = &movie.header;
    if header.rom_checksum.is_some_and(|sum| sum != md5) {
        eprintln!(
            "warning: the movie was recorded on a different ROM (romChecksum differs); \
             playback will probably desync"
        );
    }
    if header.pal {
        eprintln!("warning: the movie was recorded with PAL timing; this console is NTSC");
    }
    if header.new_ppu {
        eprintln!(
            "warning: the movie was recorded with FCEUX's new PPU (NewPPU 1), whose timing \
             differs from its default one; playback may desync"
        );
    }
}

/// The FM2 `--record` writes: FCEUX 2.6.5's header for a power-on movie with two gamepads.
fn recorded_movie(
    rom: &Path,
    md5: [u8; 16],
    origin: &str,
    power_on_ram: PowerOnRam,
    pal: bool,
    frames: Vec<MovieFrame>,
) -> Movie {
    let mut header = MovieHeader::new();
    // FCEUX's FM2 knows PAL and NTSC timing; a Dendy recording says NTSC.
    header.pal = pal;
    header.emu_version = emu_version();
    header.rerecord_count = 0;
    header.rom_filename = rom
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    header.rom_checksum = Some(md5);
    header.guid = new_guid(&md5);
    let (option, seed) = power_on_ram.fceux_option();
    header.ram_init_option = Some(option);
    header.ram_init_seed = Some(seed);
    header.comments.push(format!(
        "recorded by nes {} from {origin}",
        env!("CARGO_PKG_VERSION")
    ));
    Movie { header, frames }
}
