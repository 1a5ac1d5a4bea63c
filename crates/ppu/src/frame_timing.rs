//! How the PPU's frames line up with the console's timeline.
//!
//! A console that runs FCEUX material has to see frames where FCEUX has them (see
//! `nes::Timeline::Fceux`): FCEUX's frames begin later relative to its VBlank than a 2C02's
//! post-render line, every other frame is a dot short, and its $2002 reads never race the
//! VBlank flag. These are the few points where such a console's frames differ from a 2C02's;
//! everything inside a frame stays the 2C02's. [`Ppu::park`](crate::Ppu::park) is the other.

use borsh::{BorshDeserialize, BorshSerialize};

use crate::DOTS_PER_SCANLINE;

/// Frame-level timing; the default is a 2C02's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, BorshSerialize)]
pub struct FrameTiming {
    /// Dots before the post-render line at which a frame ends (0: as it starts), on the last
    /// visible line, whose picture is complete by then. Frames are counted there and parks
    /// start there. At most 340.
    pub frame_end_lead: u16,
    /// Every odd frame is a dot short, rendering or not (a 2C02 skips its idle dot only
    /// while rendering). Only on a model that skips a dot at all
    /// ([`PpuModel::skips_odd_frame_dot`](crate::PpuModel::skips_odd_frame_dot)).
    pub odd_frames_always_short: bool,
    /// A $2002 read on the very dot VBlank is set sees it clear and cancels it, and the NMI,
    /// for that frame (a 2C02 does; false: the read sees it clear and the flag is set).
    pub vblank_read_race: bool,
}

impl FrameTiming {
    /// A 2C02's.
    pub const HARDWARE: FrameTiming = FrameTiming {
        frame_end_lead: 0,
        odd_frames_always_short: false,
        vblank_read_race: true,
    };

    /// FCEUX 2.6.5's frames, as measured against its logs (`nes::Timeline::Fceux` says how):
    /// they end 9 dots (3 CPU cycles, so the CPU/PPU phase stays a 2C02's) before the
    /// post-render line, every other one is a dot short, and no read races VBlank.
    pub const FCEUX: FrameTiming = FrameTiming {
        frame_end_lead: 9,
        odd_frames_always_short: true,
        vblank_read_race: false,
    };

    /// Frames end on the last visible line at the latest.
    pub(crate) const MAX_LEAD: u16 = DOTS_PER_SCANLINE - 1;

    /// The dot of the last visible line on which a frame ends, when `frame_end_lead > 0`.
    pub(crate) fn frame_end_dot(self) -> u16 {
        DOTS_PER_SCANLINE - self.frame_end_lead
    }
}

impl Default for FrameTiming {
    fn default() -> FrameTiming {
        FrameTiming::HARDWARE
    }
}

// Save states carry the timing; a lead out of range would make `frame_end_dot` wrap.
impl BorshDeserialize for FrameTiming {
    fn deserialize_reader<R: borsh::io::Read>(reader: &mut R) -> borsh::io::Result<FrameTiming> {
        let frame_end_lead = u16::deserialize_reader(reader)?;
        let odd_frames_always_short = bool::deserialize_reader(reader)?;
        let vblank_read_race = bool::deserialize_reader(reader)?;
        if frame_end_lead > FrameTiming::MAX_LEAD {
            return Err(borsh::io::Error::new(
                borsh::io::ErrorKind::InvalidData,
                format!(
                    "a frame end {frame_end_lead} dots before the post-render line is out of range"
                ),
            ));
        }
        Ok(FrameTiming {
            frame_end_lead,
            odd_frames_always_short,
            vblank_read_race,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::FlatBus;
    use crate::{FrameTiming, Ppu, DOTS_PER_FRAME, POST_RENDER_SCANLINE};

    const FCEUX: FrameTiming = FrameTiming::FCEUX;

    fn fceux_ppu() -> (Ppu, FlatBus) {
        let mut ppu = Ppu::new();
        ppu.set_frame_timing(FCEUX);
        ppu.set_warmup(false);
        ppu.park(2);
        (ppu, FlatBus::new())
    }

    /// Dots run (one at a time) until `frames_completed` goes up.
    fn dots_to_next_frame(ppu: &mut Ppu, bus: &mut FlatBus) -> u32 {
        let start = ppu.frames_completed();
        let mut dots = 0;
        while ppu.frames_completed() == start {
            ppu.run_dots(1, bus);
            dots += 1;
        }
        dots
    }

    #[test]
    fn a_park_is_whole_frames_without_vblank_then_frames_end_before_the_post_render_line() {
        let (mut ppu, mut bus) = fceux_ppu();
        assert!(ppu.parked());
        assert_eq!((ppu.scanline(), ppu.dot()), (POST_RENDER_SCANLINE - 1, 332));
        for _ in 0..2 {
            let start = ppu.frames_completed();
            for _ in 0..DOTS_PER_FRAME - 1 {
                ppu.run_dots(1, &mut bus);
                assert!(!ppu.nmi_line() && ppu.peek_register(2) & 0x80 == 0);
            }
            assert_eq!(ppu.frames_completed(), start);
            ppu.run_dots(1, &mut bus);
            assert_eq!(ppu.frames_completed(), start + 1);
        }
        assert!(!ppu.parked());
        // VBlank 9 + 343 dots after the frame's end: 9 to the post-render line, its 341 dots,
        // then dots 0 and 1 of the next line.
        let mut dots = 0;
        while ppu.peek_register(2) & 0x80 == 0 {
            ppu.run_dots(1, &mut bus);
            dots += 1;
        }
        assert_eq!(dots, 9 + 343);
    }

    #[test]
    fn every_other_frame_is_a_dot_short_even_with_rendering_off() {
        let (mut ppu, mut bus) = fceux_ppu();
        for _ in 0..2 {
            dots_to_next_frame(&mut ppu, &mut bus);
        }
        let lengths: Vec<u32> = (0..4)
            .map(|_| dots_to_next_frame(&mut ppu, &mut bus))
            .collect();
        assert_eq!(
            lengths,
            [
                DOTS_PER_FRAME,
                DOTS_PER_FRAME - 1,
                DOTS_PER_FRAME,
                DOTS_PER_FRAME - 1
            ],
            "the first frame after the park is the long one, as in FCEUX"
        );
    }

    #[test]
    fn a_status_read_on_the_vblank_dot_does_not_cancel_it() {
        for (timing, cancelled) in [(FrameTiming::HARDWARE, true), (FCEUX, false)] {
            let mut ppu = Ppu::new();
            ppu.set_frame_timing(timing);
            let mut bus = FlatBus::new();
            while !(ppu.scanline() == 241 && ppu.dot() == 1) {
                ppu.run_dots(1, &mut bus);
            }
            assert_eq!(
                ppu.read_register(0x2002, &mut bus) & 0x80,
                0,
                "read before the set"
            );
            ppu.run_dots(1, &mut bus);
            assert_eq!(ppu.peek_register(2) & 0x80 == 0, cancelled, "{timing:?}");
        }
    }

    #[test]
    fn batches_run_exactly_as_single_dots_with_fceux_timing() {
        let (mut single, mut single_bus) = fceux_ppu();
        let (mut batched, mut batched_bus) = fceux_ppu();
        let mut seed = 7u32;
        for round in 0..600u32 {
            if round == 40 {
                // Rendering on (sprites and background) after the park.
                for (ppu, bus) in [
                    (&mut single, &mut single_bus),
                    (&mut batched, &mut batched_bus),
                ] {
                    ppu.write_register(0x2001, 0x1E, bus);
                    ppu.write_register(0x2000, 0x80, bus);
                }
            }
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let dots = (seed >> 16) % 4000;
            for _ in 0..dots {
                single.run_dots(1, &mut single_bus);
            }
            batched.run_dots(dots, &mut batched_bus);
            assert_eq!(
                borsh::to_vec(&single).unwrap(),
                borsh::to_vec(&batched).unwrap(),
                "round {round}"
            );
        }
        assert!(batched.frames_completed() >= 10);
    }

    #[test]
    fn out_of_range_leads_in_a_state_are_refused() {
        let mut ppu = Ppu::new();
        ppu.set_frame_timing(FCEUX);
        let mut bytes = borsh::to_vec(&ppu).unwrap();
        let back: Ppu = borsh::from_slice(&bytes).unwrap();
        assert_eq!(back.frame_timing, FCEUX);
        // The timing's lead is a little-endian u16: find FCEUX's 9 followed by its two flags.
        let at = bytes
            .windows(4)
            .position(|w| w == [9, 0, 1, 0])
            .expect("the timing is in the state");
        bytes[at..at + 2].copy_from_slice(&400u16.to_le_bytes());
        assert!(borsh::from_slice::<Ppu>(&bytes).is_err());
    }
}
