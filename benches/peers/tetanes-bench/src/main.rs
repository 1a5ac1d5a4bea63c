//! tetanes-bench: times tetanes-core the way a frontend runs it, for scripts/bench-peers.sh.
//!
//! ```text
//! tetanes-bench ROM FRAMES WARMUP [--filter pixellate|ntsc]
//! ```
//!
//! Loads ROM into a `ControlDeck`, clocks WARMUP untimed frames, then times FRAMES calls of
//! `clock_frame` and prints one JSON object: `{"fps": ..., "frames": ..., ...}`. Exit status 2
//! means tetanes refused the ROM (an unsupported mapper, say), so the caller can report "n/a";
//! 1 is any other failure.
//!
//! After every frame the driver reads the RGBA frame buffer and every audio sample, then clears
//! the samples, as a frontend feeding a texture and a sound card does: our `nes bench` pays for
//! 48 kHz audio and an RGBA picture every frame, so the peer must too. Audio stays on (no
//! `HeadlessMode` flag) and at 48 kHz.
//!
//! The default filter is `pixellate`, a palette lookup to RGBA: the same work as our RGBA
//! conversion and Nestopia's XRGB8888 output. tetanes' own frontend defaults to its NTSC filter,
//! which costs more; `--filter ntsc` measures that.

use std::{hint::black_box, process::ExitCode, time::Instant};

use tetanes_core::{
    control_deck::{Config, ControlDeck, HeadlessMode},
    memory::RamState,
    video::VideoFilter,
};

const SAMPLE_RATE: f32 = 48_000.0;

fn usage() -> ExitCode {
    eprintln!("usage: tetanes-bench ROM FRAMES WARMUP [--filter pixellate|ntsc]");
    ExitCode::from(1)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut positional = Vec::new();
    let mut filter = VideoFilter::Pixellate;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--filter" {
            filter = match it.next().map(String::as_str) {
                Some("pixellate") => VideoFilter::Pixellate,
                Some("ntsc") => VideoFilter::Ntsc,
                _ => return usage(),
            };
        } else {
            positional.push(arg.as_str());
        }
    }
    let [rom, frames, warmup] = positional[..] else {
        return usage();
    };
    let (Ok(frames), Ok(warmup)) = (frames.parse::<u32>(), warmup.parse::<u32>()) else {
        return usage();
    };
    if frames == 0 {
        return usage();
    }

    let config = Config::default()
        .with_filter(filter)
        // Audio and video both produced: an empty headless mode is what a frontend runs with.
        .with_headless_mode(HeadlessMode::empty())
        // Deterministic power-on RAM, and no battery file read or left behind, so every round
        // starts the same.
        .with_ram_state(RamState::AllZeros)
        .with_sram_dir(None);
    let mut deck = ControlDeck::with_config(config);
    deck.set_sample_rate(SAMPLE_RATE);
    if let Err(err) = deck.load_rom_path(rom) {
        eprintln!("tetanes-bench: tetanes refused {rom}: {err}");
        println!("{{\"error\":\"rom rejected\"}}");
        return ExitCode::from(2);
    }

    let mut sink = Sink::default();
    for _ in 0..warmup {
        if let Err(err) = run_frame(&mut deck, &mut sink) {
            eprintln!("tetanes-bench: warm-up frame failed: {err}");
            return ExitCode::from(1);
        }
    }
    let samples_before = sink.samples;
    let start = Instant::now();
    for _ in 0..frames {
        if let Err(err) = run_frame(&mut deck, &mut sink) {
            eprintln!("tetanes-bench: frame failed: {err}");
            return ExitCode::from(1);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let samples_per_frame = (sink.samples - samples_before) as f64 / f64::from(frames);

    println!(
        "{{\"fps\":{:.3},\"frames\":{frames},\"warmup\":{warmup},\"seconds\":{seconds:.6},\
         \"core\":\"tetanes-core\",\"filter\":\"{}\",\"sample_rate\":{SAMPLE_RATE:.1},\
         \"audio_samples_per_frame\":{samples_per_frame:.1},\"checksum\":{}}}",
        f64::from(frames) / seconds,
        match filter {
            VideoFilter::Pixellate => "pixellate",
            VideoFilter::Ntsc => "ntsc",
        },
        sink.checksum(),
    );
    ExitCode::SUCCESS
}

/// What the frontend did with the output, kept so the reads cannot be optimised away.
#[derive(Default)]
struct Sink {
    video: u64,
    audio: f64,
    samples: u64,
}

impl Sink {
    fn checksum(&self) -> u64 {
        self.video.wrapping_add(self.audio.to_bits())
    }
}

fn run_frame(deck: &mut ControlDeck, sink: &mut Sink) -> tetanes_core::control_deck::Result<()> {
    // At 1x speed every call is one whole display frame, so what it reports is not needed.
    let _clocked = black_box(deck.clock_frame()?);

    // The picture: `frame_buffer` runs the filter into RGBA. A few bytes a line are read, as
    // libretro_bench does after its copy; the filter has written all of them.
    let frame = deck.frame_buffer();
    let row = frame.len() / 240;
    let mut video = 0u64;
    for y in 0..240 {
        video += u64::from(frame[y * row + (y % 256) * 4]);
    }
    sink.video = sink.video.wrapping_add(black_box(video));

    // The sound: every sample read, then the buffer cleared as a frontend does once it has queued
    // them (tetanes also clears at the next clock by default; clearing here keeps that explicit).
    let samples = deck.audio_samples();
    sink.samples += samples.len() as u64;
    sink.audio += black_box(samples.iter().sum::<f32>()) as f64;
    deck.clear_audio_samples();
    Ok(())
}
