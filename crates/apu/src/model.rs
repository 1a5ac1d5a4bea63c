//! Which APU: the RP2A03's (NTSC, and the Dendy's UA6527P, which keeps its periods) or the
//! RP2A07's (PAL). They differ only in the frame sequencer's step lengths and the noise and
//! DMC period tables (NESdev "APU Frame Counter", "APU Noise", "APU DMC"); the length table,
//! envelopes, sweeps and the triangle are the same. Each table is here once; the channels hold
//! the table of their model (a console setting, not save-state data).

/// The APU inside the CPU chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ApuModel {
    /// NTSC 2A03 (also the Dendy's UA6527P).
    #[default]
    Rp2a03,
    /// PAL 2A07.
    Rp2a07,
}

/// Ticks from a frame-sequencer step to the next, per mode (0: 4-step, 1: 5-step; index =
/// step 0..=5), and from the sequencer reset to step 0. See `frame_counter.rs` for what each
/// step does.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FrameSteps {
    pub(crate) lengths: [[u32; 6]; 2],
    pub(crate) first: u32,
}

/// NTSC cumulative: 4-step 7457, 14913, 22371, 29828, 29829, 29830; 5-step 7457, 14913, 22371,
/// 29829, 37281, 37282.
const NTSC_FRAME_STEPS: FrameSteps = FrameSteps {
    lengths: [
        [7456, 7458, 7457, 1, 1, 7457],
        [7456, 7458, 7458, 7452, 1, 7457],
    ],
    first: 7457,
};

/// PAL cumulative: 4-step 8313, 16627, 24939, 33252, 33253, 33254; 5-step 8313, 16627, 24939,
/// 33253, 41565, 41566.
const PAL_FRAME_STEPS: FrameSteps = FrameSteps {
    lengths: [
        [8314, 8312, 8313, 1, 1, 8313],
        [8314, 8312, 8314, 8312, 1, 8313],
    ],
    first: 8313,
};

/// Noise periods in CPU cycles (the timer counts half as many APU cycles).
const NTSC_NOISE_PERIODS: [u16; 16] = [
    4, 8, 16, 32, 64, 96, 128, 160, 202, 254, 380, 508, 762, 1016, 2034, 4068,
];
const PAL_NOISE_PERIODS: [u16; 16] = [
    4, 8, 14, 30, 60, 88, 118, 148, 188, 236, 354, 472, 708, 944, 1890, 3778,
];

/// DMC rates in CPU cycles (the timer counts half as many APU cycles).
const NTSC_DMC_RATES: [u16; 16] = [
    428, 380, 340, 320, 286, 254, 226, 214, 190, 160, 142, 128, 106, 84, 72, 54,
];
const PAL_DMC_RATES: [u16; 16] = [
    398, 354, 316, 298, 276, 236, 210, 198, 176, 148, 132, 118, 98, 78, 66, 50,
];

impl ApuModel {
    pub(crate) const fn frame_steps(self) -> &'static FrameSteps {
        match self {
            ApuModel::Rp2a03 => &NTSC_FRAME_STEPS,
            ApuModel::Rp2a07 => &PAL_FRAME_STEPS,
        }
    }

    pub(crate) const fn noise_periods(self) -> &'static [u16; 16] {
        match self {
            ApuModel::Rp2a03 => &NTSC_NOISE_PERIODS,
            ApuModel::Rp2a07 => &PAL_NOISE_PERIODS,
        }
    }

    pub(crate) const fn dmc_rates(self) -> &'static [u16; 16] {
        match self {
            ApuModel::Rp2a03 => &NTSC_DMC_RATES,
            ApuModel::Rp2a07 => &PAL_DMC_RATES,
        }
    }
}

/// `period` from table `old` as the entry with the same index in `new` (the register keeps
/// its value across a model change); a value not in `old` stays.
pub(crate) fn same_index(old: &[u16; 16], new: &[u16; 16], period: u16) -> u16 {
    old.iter()
        .position(|&entry| entry == period)
        .map_or(period, |index| new[index])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_steps_add_up_to_the_documented_cycles() {
        fn cumulative(steps: &FrameSteps, mode: usize) -> Vec<u32> {
            let mut at = steps.first;
            let mut out = vec![at];
            for length in &steps.lengths[mode][..5] {
                at += length;
                out.push(at);
            }
            out
        }
        let ntsc = ApuModel::Rp2a03.frame_steps();
        assert_eq!(
            cumulative(ntsc, 0),
            [7457, 14913, 22371, 29828, 29829, 29830]
        );
        assert_eq!(
            cumulative(ntsc, 1),
            [7457, 14913, 22371, 29829, 37281, 37282]
        );
        let pal = ApuModel::Rp2a07.frame_steps();
        assert_eq!(
            cumulative(pal, 0),
            [8313, 16627, 24939, 33252, 33253, 33254]
        );
        assert_eq!(
            cumulative(pal, 1),
            [8313, 16627, 24939, 33253, 41565, 41566]
        );
        // After the last step the count restarts: step 0 comes `first` ticks later.
        for steps in [ntsc, pal] {
            for mode in 0..2 {
                assert_eq!(steps.lengths[mode][5], steps.first);
            }
        }
    }
}
