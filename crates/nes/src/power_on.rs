//! How the console starts: the timeline its frames follow, and what CPU RAM holds.
//!
//! Two start-ups are offered. The hardware one is a real NES-001's, and it is what the test
//! ROMs measure. The FCEUX one reproduces FCEUX 2.6.5's frame timeline: movies recorded in
//! FCEUX and scripts written for it count frames, latch input and see RAM there, so they only
//! line up with a console that starts the way FCEUX does (see [`Timeline::Fceux`]).

use nes_ppu::FrameTiming;

/// The frame timeline the console follows from power-on and after every reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Timeline {
    /// A real console: the PPU starts at scanline 0, dot 0, and ignores `$2000`, `$2001`,
    /// `$2005` and `$2006` writes until the end of its first VBlank (its warm-up, NESdev
    /// "PPU power up state"); the first frame ends when the PPU first reaches scanline 240.
    #[default]
    Hardware,
    /// FCEUX 2.6.5's, so that FCEUX movies and scripts see the frames they were made on:
    /// frame N is FCEUX's frame N, its input is FM2 line N-1, and `emu.framecount()` is N
    /// after it. Measured against FCEUX's logs (cycle counts at each frame boundary and NMI,
    /// RAM at every boundary), FCEUX's frame structure is:
    ///
    /// - After power-on and every reset the PPU is inactive for two whole frames (no
    ///   picture, no VBlank, no NMI: FCEUX's "ppudead" frames), and register writes are taken
    ///   from the first cycle (FCEUX has no warm-up).
    /// - FCEUX's reset takes no CPU time and leaves S (and A, X, Y) alone, setting P to just
    ///   I; so does the CPU's here ([`nes_cpu::Cpu::instant_reset`]), which keeps every
    ///   later boundary on FCEUX's CPU cycle and the stack where FCEUX has it.
    /// - Frames alternate between 89,342 and 89,341 dots whether rendering is on or not
    ///   (FCEUX shortens every other frame; a 2C02 skips its idle dot only while rendering).
    /// - A frame boundary comes 341 dots before VBlank, whose flag the first instruction
    ///   starting after that sees, and the NMI starts 12 dots later. A 2C02's $2002 read and
    ///   NMI see VBlank about three CPU cycles earlier in an instruction, so the boundary is
    ///   put 9 dots (3 cycles: the CPU/PPU phase stays the hardware's) before the post-render
    ///   line, which brings both to FCEUX's distance from it.
    /// - A $2002 read on the very dot VBlank is set does not cancel it (FCEUX's PPU has no
    ///   such race; a 2C02 then has no VBlank and no NMI that frame).
    ///
    /// Within a frame everything else stays the hardware's: the picture, the PPU's and APU's
    /// timing, DMA. (See [`nes_ppu::FrameTiming`].)
    Fceux,
}

impl Timeline {
    /// Frames the PPU stays inactive after power-on and reset.
    pub(crate) fn inactive_frames(self) -> u8 {
        match self {
            Timeline::Hardware => 0,
            Timeline::Fceux => 2,
        }
    }

    /// How the PPU's frames line up with this timeline (see [`Timeline::Fceux`]).
    pub(crate) fn frame_timing(self) -> FrameTiming {
        match self {
            Timeline::Hardware => FrameTiming::HARDWARE,
            Timeline::Fceux => FrameTiming::FCEUX,
        }
    }
}

/// The content of the 2 KiB of CPU RAM at power-on (and at every power cycle). Other
/// memories (PRG RAM without battery, CHR RAM, nametable RAM, OAM, palette) always start
/// zeroed, as in FCEUX's default.
///
/// Each fill is one of FCEUX 2.6.5's `RAMInitOption` values, so an FM2 movie can name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum PowerOnRam {
    /// Every byte 0 (FCEUX option 2). The hardware timeline's default: a fixed, documented
    /// choice (real consoles power up with mostly random RAM, but runs must repeat).
    #[default]
    Zeroed,
    /// Every byte $FF (FCEUX option 1).
    Ones,
    /// FCEUX 2.6.5's default (option 0): four bytes $00, four bytes $FF, repeated.
    FceuxPattern,
    /// Pseudo-random bytes from `seed` (FCEUX option 3 with `RAMInitSeed` = `seed`): byte i
    /// is the low byte of the i-th output of xoroshiro128+ (rotations 55, 14, 36) seeded
    /// with two SplitMix64 outputs of `seed`, as FCEUX 2.6.5 fills it. The same seed gives
    /// the same RAM every time.
    Random { seed: u32 },
}

impl PowerOnRam {
    pub(crate) fn fill(self, ram: &mut [u8]) {
        match self {
            PowerOnRam::Zeroed => ram.fill(0),
            PowerOnRam::Ones => ram.fill(0xFF),
            PowerOnRam::FceuxPattern => {
                for (index, byte) in ram.iter_mut().enumerate() {
                    *byte = if index & 4 == 0 { 0x00 } else { 0xFF };
                }
            }
            PowerOnRam::Random { seed } => {
                let mut generator = Xoroshiro128Plus::seeded(seed);
                for byte in ram {
                    *byte = generator.next() as u8;
                }
            }
        }
    }

    /// The FM2 header values (`RAMInitOption`, `RAMInitSeed`) that stand for this fill.
    pub fn fceux_option(self) -> (u32, u32) {
        match self {
            PowerOnRam::FceuxPattern => (0, 0),
            PowerOnRam::Ones => (1, 0),
            PowerOnRam::Zeroed => (2, 0),
            PowerOnRam::Random { seed } => (3, seed),
        }
    }

    /// The fill an FM2 header's `RAMInitOption` and `RAMInitSeed` ask for. FCEUX treats an
    /// option it does not know as its default (0), and so does this.
    pub fn from_fceux_option(option: u32, seed: u32) -> PowerOnRam {
        match option {
            1 => PowerOnRam::Ones,
            2 => PowerOnRam::Zeroed,
            3 => PowerOnRam::Random { seed },
            _ => PowerOnRam::FceuxPattern,
        }
    }
}

/// How a console starts: its timeline and its CPU RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct PowerOn {
    pub timeline: Timeline,
    pub ram: PowerOnRam,
}

impl PowerOn {
    /// A real console, RAM zeroed: what the test ROMs run on.
    pub const HARDWARE: PowerOn = PowerOn {
        timeline: Timeline::Hardware,
        ram: PowerOnRam::Zeroed,
    };

    /// FCEUX 2.6.5 with its default settings: its timeline and its RAM pattern.
    pub const FCEUX: PowerOn = PowerOn {
        timeline: Timeline::Fceux,
        ram: PowerOnRam::FceuxPattern,
    };
}

/// SplitMix64 (Steele, Lea and Flood, 2014): expands FCEUX's 32-bit seed into the
/// generator's two state words.
fn split_mix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoroshiro128+ (Blackman and Vigna, 2016 parameters a=55, b=14, c=36), the generator
/// FCEUX 2.6.5 fills RAM from.
struct Xoroshiro128Plus([u64; 2]);

impl Xoroshiro128Plus {
    fn seeded(seed: u32) -> Xoroshiro128Plus {
        let mut state = u64::from(seed);
        let first = split_mix64(&mut state);
        Xoroshiro128Plus([first, split_mix64(&mut state)])
    }

    fn next(&mut self) -> u64 {
        let [s0, mut s1] = self.0;
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.0 = [s0.rotate_left(55) ^ s1 ^ (s1 << 14), s1.rotate_left(36)];
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(ram: PowerOnRam) -> [u8; 2048] {
        let mut bytes = [0x55u8; 2048];
        ram.fill(&mut bytes);
        bytes
    }

    #[test]
    fn fixed_fills() {
        assert!(filled(PowerOnRam::Zeroed).iter().all(|&byte| byte == 0));
        assert!(filled(PowerOnRam::Ones).iter().all(|&byte| byte == 0xFF));
        let pattern = filled(PowerOnRam::FceuxPattern);
        assert_eq!(
            pattern[..16],
            [0, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 0, 255, 255, 255, 255]
        );
        assert_eq!(pattern[0x7F8..], [0, 0, 0, 0, 255, 255, 255, 255]);
    }

    #[test]
    fn random_fill_is_fceuxs() {
        // The first bytes of CPU RAM as FCEUX 2.6.5 powers on with `RAMInitOption 3`
        // (read by a Lua script with memory.readbyterange before the first frame).
        for (seed, expected) in [
            (12_345, "8d9a8af95337fc848c00d7a72fdf1c18"),
            (0, "a3fad57cabe0502a42b493796d395a2a"),
            (1, "28663adee8286391f63a6c287c2a2e06"),
        ] {
            let ram = filled(PowerOnRam::Random { seed });
            let hex: String = ram[..16].iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(hex, expected, "seed {seed}");
        }
        assert_eq!(
            filled(PowerOnRam::Random { seed: 7 }),
            filled(PowerOnRam::Random { seed: 7 })
        );
        assert_ne!(
            filled(PowerOnRam::Random { seed: 7 }),
            filled(PowerOnRam::Random { seed: 8 })
        );
    }

    #[test]
    fn fm2_options_round_trip() {
        for ram in [
            PowerOnRam::Zeroed,
            PowerOnRam::Ones,
            PowerOnRam::FceuxPattern,
            PowerOnRam::Random { seed: 99 },
        ] {
            let (option, seed) = ram.fceux_option();
            assert_eq!(PowerOnRam::from_fceux_option(option, seed), ram);
        }
        assert_eq!(
            PowerOnRam::from_fceux_option(9, 5),
            PowerOnRam::FceuxPattern,
            "FCEUX's default for an unknown option"
        );
    }
}
