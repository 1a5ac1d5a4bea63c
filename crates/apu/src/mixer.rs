//! The 2A03's non-linear DAC mixing (NESdev "APU Mixer").
//!
//! pulse_out = 95.88 / (8128 / (pulse1 + pulse2) + 100)
//! tnd_out   = 159.79 / (1 / (triangle / 8227 + noise / 12241 + dmc / 22638) + 100)
//! Both are 0 when their inputs are all 0. The pulse part has only 31 inputs and is tabled;
//! the triangle/noise/DMC part is evaluated exactly, but only when one of its inputs changed.

use borsh::io::{Read, Result as IoResult, Write};
use borsh::{BorshDeserialize, BorshSerialize};

#[derive(Clone, Debug)]
pub(crate) struct Mixer {
    pulse_table: [f32; 31],
    /// (triangle, noise, dmc) of the cached `tnd_level`.
    tnd_inputs: (u8, u8, u8),
    tnd_level: f32,
}

/// A save state needs only the inputs of the cached level; the tables are constants.
impl BorshSerialize for Mixer {
    fn serialize<W: Write>(&self, writer: &mut W) -> IoResult<()> {
        self.tnd_inputs.serialize(writer)
    }
}

impl BorshDeserialize for Mixer {
    fn deserialize_reader<R: Read>(reader: &mut R) -> IoResult<Self> {
        let (triangle, noise, dmc) = <(u8, u8, u8)>::deserialize_reader(reader)?;
        let mut mixer = Mixer::new();
        mixer.tnd_inputs = (triangle.min(15), noise.min(15), dmc.min(127));
        mixer.tnd_level = tnd_formula(mixer.tnd_inputs.0, mixer.tnd_inputs.1, mixer.tnd_inputs.2);
        Ok(mixer)
    }
}

fn pulse_formula(sum: u8) -> f32 {
    if sum == 0 {
        0.0
    } else {
        (95.88 / (8128.0 / f64::from(sum) + 100.0)) as f32
    }
}

fn tnd_formula(triangle: u8, noise: u8, dmc: u8) -> f32 {
    let weighted =
        f64::from(triangle) / 8227.0 + f64::from(noise) / 12241.0 + f64::from(dmc) / 22638.0;
    if weighted == 0.0 {
        0.0
    } else {
        (159.79 / (1.0 / weighted + 100.0)) as f32
    }
}

impl Mixer {
    pub(crate) fn new() -> Mixer {
        let mut pulse_table = [0.0; 31];
        for (sum, entry) in (0u8..).zip(pulse_table.iter_mut()) {
            *entry = pulse_formula(sum);
        }
        Mixer {
            pulse_table,
            tnd_inputs: (0, 0, 0),
            tnd_level: 0.0,
        }
    }

    /// Mixed output, 0.0 to about 1.0. Inputs: pulses and noise 0-15, triangle 0-15,
    /// DMC 0-127 (larger values are clamped to the DAC range).
    #[inline]
    pub(crate) fn mix(&mut self, pulse1: u8, pulse2: u8, triangle: u8, noise: u8, dmc: u8) -> f32 {
        let pulse_sum = usize::from(pulse1.min(15) + pulse2.min(15));
        let inputs = (triangle.min(15), noise.min(15), dmc.min(127));
        if inputs != self.tnd_inputs {
            self.tnd_inputs = inputs;
            self.tnd_level = tnd_formula(inputs.0, inputs.1, inputs.2);
        }
        self.pulse_table[pulse_sum] + self.tnd_level
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silence_is_zero_and_full_scale_near_one() {
        let mut mixer = Mixer::new();
        assert_eq!(mixer.mix(0, 0, 0, 0, 0), 0.0);
        let full = mixer.mix(15, 15, 15, 15, 127);
        assert!((full - 1.0).abs() < 0.02, "full scale {full}");
    }

    #[test]
    fn matches_wiki_reference_points() {
        let mut mixer = Mixer::new();
        // pulse_out for 15+15: 95.88 / (8128/30 + 100) = 0.2584
        assert!((mixer.mix(15, 15, 0, 0, 0) - 0.25848).abs() < 1e-4);
        // tnd for triangle 15 alone: 159.79 / (8227/15 + 100) = 0.24641
        assert!((mixer.mix(0, 0, 15, 0, 0) - 0.24641).abs() < 1e-4);
    }

    #[test]
    fn mixing_is_non_linear() {
        let mut mixer = Mixer::new();
        let one = mixer.mix(8, 0, 0, 0, 0);
        let two = mixer.mix(8, 8, 0, 0, 0);
        assert!(two < 2.0 * one, "compression: {two} vs {}", 2.0 * one);
    }
}
