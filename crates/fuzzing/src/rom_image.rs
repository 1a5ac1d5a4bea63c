//! Fuzz target: a cartridge image, loaded and run through everything a console does with it.
//!
//! The bytes are an iNES / NES 2.0 image. Images the loader refuses end there (an error is the
//! right answer). A loaded image is played with audio on: a few frames with controller input
//! taken from the image's last bytes, a soft reset, a power cycle, and a save-state round trip
//! that must hold exactly (the state loads back, saves again to the same bytes, and the frame
//! after it repeats). The last byte also picks the start-up (timeline, RAM fill), the MMC3
//! revision and the sample rate, so the fuzzer can steer them.
//!
//! Work per input is bounded: at most [`MAX_FRAMES`] frames (a frame always ends: the PPU
//! advances with every CPU cycle, a jammed CPU included) of a console whose memory the header
//! bounds (64 MiB of ROM at most, and ROM must be in the input).

use nes::{
    BoardOptions, Buttons, Cartridge, CpuRegisters, Mmc3Revision, Nes, PowerOn, PowerOnRam,
    Timeline,
};

/// libFuzzer's `-max_len`: 1 MiB, twice the largest test ROM (512 KiB + header), so real
/// images and their mutants fit.
pub const MAX_LEN: usize = 1 << 20;

/// Frames before the reset: 1 to this many, as the last byte says. (Few: a frame costs about
/// 5 ms in libFuzzer's instrumented build, so frames set the executions per second.)
const FRAMES_BEFORE_RESET: usize = 2;

/// The most frames one input runs: those before the reset, then one after the reset, one
/// after the power cycle, and one on each side of the state load.
pub const MAX_FRAMES: usize = FRAMES_BEFORE_RESET + 4;

/// What the image's last byte selects.
struct Options {
    frames_before_reset: usize,
    power_on: PowerOn,
    revision: Mmc3Revision,
    sample_rate: u32,
}

impl Options {
    fn from(data: &[u8]) -> Options {
        let byte = data.last().copied().unwrap_or(0);
        let timeline = if byte & 0x04 != 0 {
            Timeline::Fceux
        } else {
            Timeline::Hardware
        };
        let ram = match (byte >> 3) & 3 {
            0 => PowerOnRam::Zeroed,
            1 => PowerOnRam::Ones,
            2 => PowerOnRam::FceuxPattern,
            _ => PowerOnRam::Random {
                seed: u32::from_le_bytes(last_bytes::<4>(data)),
            },
        };
        Options {
            frames_before_reset: 1 + usize::from(byte & 1),
            power_on: PowerOn { timeline, ram },
            revision: if byte & 0x20 != 0 {
                Mmc3Revision::A
            } else {
                Mmc3Revision::B
            },
            sample_rate: [44_100, 48_000, 8_000, 192_000][usize::from(byte >> 6)],
        }
    }
}

/// The last `N` bytes of `data`, zero-padded in front when it is shorter.
fn last_bytes<const N: usize>(data: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    let tail = &data[data.len().saturating_sub(N)..];
    out[N - tail.len()..].copy_from_slice(tail);
    out
}

/// Controller input for frame `frame`: bytes counted back from the end of the image.
fn pads(data: &[u8], frame: usize) -> [Buttons; 2] {
    let at = |back: usize| {
        let byte = data
            .len()
            .checked_sub(back + 1)
            .map_or(0, |index| data[index]);
        Buttons::from_bits_retain(byte)
    };
    [at(1 + 2 * frame), at(2 + 2 * frame)]
}

/// What a frame leaves behind, to compare a frame with its replay.
#[derive(PartialEq)]
struct Snapshot {
    registers: CpuRegisters,
    counts: (u64, u64),
    picture: Vec<u16>,
    ram: Vec<u8>,
}

impl Snapshot {
    fn of(nes: &Nes) -> Snapshot {
        Snapshot {
            registers: nes.cpu_registers(),
            counts: (nes.frame_count(), nes.lag_count()),
            picture: nes.frame_buffer().to_vec(),
            // CPU RAM and the cartridge's RAM window.
            ram: (0..0x0800)
                .chain(0x6000..0x8000)
                .map(|addr| nes.peek(addr))
                .collect(),
        }
    }

    /// Which parts differ, for the failure message.
    fn difference(&self, other: &Snapshot) -> Vec<&'static str> {
        let parts = [
            ("CPU registers", self.registers != other.registers),
            ("frame and lag counts", self.counts != other.counts),
            ("picture", self.picture != other.picture),
            ("RAM", self.ram != other.ram),
        ];
        parts
            .iter()
            .filter(|(_, differs)| *differs)
            .map(|(name, _)| *name)
            .collect()
    }
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    let options = Options::from(data);
    let board = BoardOptions {
        mmc3: Some(options.revision),
    };
    let Ok(cart) = Cartridge::from_ines_with(data, board) else {
        return;
    };
    let mut nes = Nes::with_power_on(cart, options.power_on);
    nes.set_audio_sample_rate(options.sample_rate);
    let mut audio = Vec::new();
    let mut frame = |nes: &mut Nes, index: usize| {
        let [pad0, pad1] = pads(data, index);
        nes.set_buttons(0, pad0);
        nes.set_buttons(1, pad1);
        nes.run_frame();
        audio.clear();
        nes.take_audio_samples(&mut audio);
        assert!(
            audio.iter().all(|sample| sample.is_finite()),
            "audio samples must be numbers"
        );
    };
    for index in 0..options.frames_before_reset {
        frame(&mut nes, index);
    }
    nes.soft_reset();
    frame(&mut nes, FRAMES_BEFORE_RESET);
    nes.power_cycle();
    frame(&mut nes, FRAMES_BEFORE_RESET + 1);

    // A save state taken here must bring the console back exactly: it loads, saves again to
    // the same bytes, and the next frame repeats (CPU, picture, RAM, counters). (Not the next
    // frame's state bytes: the cartridge's copy of the CPU cycle, which every PPU catch-up
    // overwrites before use, may differ there after a load.)
    let state = nes.save_state();
    frame(&mut nes, FRAMES_BEFORE_RESET + 2);
    let after = Snapshot::of(&nes);
    nes.load_state(&state)
        .unwrap_or_else(|error| panic!("a state just saved must load back: {error}"));
    assert!(
        nes.save_state() == state,
        "a state must save again to the same bytes after loading"
    );
    frame(&mut nes, FRAMES_BEFORE_RESET + 2);
    let again = Snapshot::of(&nes);
    assert!(
        again == after,
        "the frame after a state load must repeat: {:?}",
        again.difference(&after)
    );

    if let Some(battery) = nes.battery_ram().map(<[u8]>::to_vec) {
        nes.load_battery_ram(&battery)
            .unwrap_or_else(|error| panic!("battery RAM of the right size must load: {error}"));
    }
}

/// The seed inputs: synthetic images for every board, then the test ROMs that fit.
pub fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = crate::corpus::synthetic_images();
    seeds.extend(crate::corpus::test_rom_images(usize::MAX, MAX_LEN as u64));
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoke() {
        crate::corpus::expect_test_roms("rom_image");
        let seeds = seeds();
        let ran = crate::mutate::smoke(&seeds, 2000, 0x0001_F0A5_7E11, MAX_LEN, run);
        assert_eq!(ran, seeds.len() + 2000);
    }

    #[test]
    fn options_come_from_the_last_byte() {
        let options = Options::from(&[0x12, 0x34, 0x56, 0xFE]);
        assert_eq!(options.frames_before_reset, 1);
        assert_eq!(options.power_on.timeline, Timeline::Fceux);
        assert_eq!(
            options.power_on.ram,
            PowerOnRam::Random { seed: 0xFE56_3412 }
        );
        assert_eq!(options.revision, Mmc3Revision::A);
        assert_eq!(options.sample_rate, 192_000);
        assert_eq!(Options::from(&[]).frames_before_reset, 1);
        assert_eq!(Options::from(&[1]).frames_before_reset, 2);
        assert_eq!(pads(&[1, 2, 3], 0), [Buttons::B, Buttons::A]);
        assert_eq!(pads(&[1, 2, 3], 5), [Buttons::empty(); 2]);
    }
}
