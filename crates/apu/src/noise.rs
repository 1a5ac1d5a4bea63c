//! Noise channel (NESdev "APU Noise").

use crate::channel_state::{table_index, NoiseState};
use crate::check_range;
use crate::envelope::Envelope;
use crate::length_counter::LengthCounter;
use crate::model::{same_index, ApuModel};
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

#[derive(Clone, Debug, BorshSerialize, BorshDeserialize)]
pub(crate) struct Noise {
    /// Mode flag (bit 7 of $400E): feedback from bit 6 instead of bit 1 (93- or 31-step loop).
    short_mode: bool,
    /// Timer period in CPU cycles.
    period: u16,
    /// 15-bit linear feedback shift register; all zero at power-up.
    shift_register: u16,
    pub(crate) envelope: Envelope,
    pub(crate) length: LengthCounter,
    /// Whose period table `$400E` selects from (a setting, not state).
    #[borsh(skip)]
    model: ApuModel,
}

impl Noise {
    /// Selects periods from `model`'s table from now on; the current period keeps its
    /// `$400E` index.
    pub(crate) fn set_model(&mut self, model: ApuModel) {
        self.period = same_index(
            self.model.noise_periods(),
            model.noise_periods(),
            self.period,
        );
        self.model = model;
    }

    /// Sets the model of a channel decoded from a save state, whose period is already the
    /// model's.
    pub(crate) fn set_decoded_model(&mut self, model: ApuModel) {
        self.model = model;
    }

    pub(crate) fn new() -> Noise {
        Noise {
            short_mode: false,
            period: ApuModel::default().noise_periods()[0],
            shift_register: 0,
            envelope: Envelope::default(),
            length: LengthCounter::default(),
            model: ApuModel::default(),
        }
    }

    pub(crate) fn write(&mut self, register: u16, value: u8) {
        match register & 3 {
            0 => {
                self.length.set_halt(value & 0x20 != 0);
                self.envelope.write_control(value);
            }
            1 => {}
            2 => {
                self.short_mode = value & 0x80 != 0;
                self.period = self.model.noise_periods()[usize::from(value & 0x0F)];
            }
            _ => {
                self.length.load(value >> 3);
                self.envelope.restart();
            }
        }
    }

    /// CPU cycles between timer expiries.
    #[inline]
    pub(crate) fn timer_period(&self) -> u64 {
        u64::from(self.period)
    }

    /// Checks the noise channel decoded from a save state (see `Apu::validate_state`).
    pub(crate) fn validate_state(&self) -> Result<(), InvalidState> {
        let periods = self.model.noise_periods();
        if !periods.contains(&self.period) {
            return Err(InvalidState::impossible(format!(
                "APU noise period {} is not one of the channel's periods {periods:?}",
                self.period
            )));
        }
        check_range("APU noise shift register", self.shift_register, 0..=0x7FFF)?;
        self.envelope.validate_state("APU noise")?;
        self.length.validate_state("APU noise")
    }

    /// `steps` timer expiries (a muted channel's run of them: thousands a frame at the
    /// shortest periods), several clocks of the shift register at a time.
    #[inline]
    pub(crate) fn shift_by(&mut self, steps: u16) {
        let mut left = steps;
        if left > 0 && self.shift_register == 0 {
            self.shift();
            left -= 1;
        }
        // Clock j's feedback is bit j ^ bit (j + tap) of the register as it is now, as long
        // as j + tap <= 14: the bits shifted in land at bit 14 and move down one a clock, so
        // they reach the tap only on clock 15 - tap. The first `15 - tap` clocks are then
        // one shift and the feedback bits all computed at once. (A non-zero register never
        // becomes zero: each clock can be undone, and zero only maps to itself.)
        let (tap, clocks) = if self.short_mode { (6, 9) } else { (1, 14) };
        while left > 0 {
            let count = left.min(clocks);
            let register = self.shift_register;
            let feedback = (register ^ (register >> tap)) & ((1 << count) - 1);
            self.shift_register = (register >> count) | (feedback << (15 - count));
            left -= count;
        }
    }

    /// Whether the output is 0 whatever the shift register holds (volume 0), until the
    /// envelope is clocked or restarted or $400C written.
    #[inline]
    pub(crate) fn is_silent(&self) -> bool {
        self.envelope.volume() == 0
    }

    /// Timer expiry: clock the shift register.
    pub(crate) fn shift(&mut self) {
        let tap = if self.short_mode { 6 } else { 1 };
        // From the all-zero power-up state the first clock shifts in a 1 (NESdev "CPU power up
        // state"); otherwise the register would stay stuck at zero.
        let feedback = if self.shift_register == 0 {
            1
        } else {
            (self.shift_register ^ (self.shift_register >> tap)) & 1
        };
        self.shift_register = (self.shift_register >> 1) | (feedback << 14);
    }

    #[inline]
    pub(crate) fn output(&self) -> u8 {
        if self.shift_register & 1 != 0 || !self.length.is_active() {
            0
        } else {
            self.envelope.volume()
        }
    }

    #[cfg(test)]
    pub(crate) fn shift_register(&self) -> u16 {
        self.shift_register
    }

    pub(crate) fn state(&self) -> NoiseState {
        NoiseState {
            period_index: table_index(self.model.noise_periods(), self.period),
            period: self.period,
            short_mode: self.short_mode,
            envelope_volume: self.envelope.volume(),
            length_counter: self.length.current(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sequence_period(short_mode: bool) -> usize {
        let mut noise = Noise::new();
        noise.short_mode = short_mode;
        noise.shift_register = 1;
        let start = noise.shift_register;
        let mut steps = 0;
        loop {
            noise.shift();
            steps += 1;
            if noise.shift_register == start || steps > 40000 {
                return steps;
            }
        }
    }

    #[test]
    fn many_clocks_at_once_equal_one_at_a_time() {
        let mut state = 0x9E37_79B9u32;
        for case in 0..4000u32 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let mut noise = Noise::new();
            noise.short_mode = case % 2 == 1;
            // Zero (power-up) now and then, else any 15-bit value.
            noise.shift_register = if case % 97 == 0 {
                0
            } else {
                (state & 0x7FFF) as u16
            };
            let steps = (state >> 16) as u16 % 300;
            let mut one_at_a_time = noise.clone();
            for _ in 0..steps {
                one_at_a_time.shift();
            }
            noise.shift_by(steps);
            assert_eq!(
                noise.shift_register, one_at_a_time.shift_register,
                "case {case}"
            );
        }
    }

    #[test]
    fn long_mode_is_maximal_length() {
        assert_eq!(sequence_period(false), 32767);
    }

    #[test]
    fn short_mode_from_one_loops_in_93_steps() {
        assert_eq!(sequence_period(true), 93);
    }

    #[test]
    fn lfsr_first_steps_long_mode() {
        let mut noise = Noise::new();
        noise.shift();
        assert_eq!(noise.shift_register, 0x4000, "zero state shifts in a 1");
        noise.shift_register = 1;
        noise.shift(); // bit0 ^ bit1 = 1
        assert_eq!(noise.shift_register, 0x4000);
        noise.shift_register = 0b11;
        noise.shift(); // 1 ^ 1 = 0
        assert_eq!(noise.shift_register, 0b1);
    }

    #[test]
    fn lfsr_short_mode_uses_bit_six() {
        let mut noise = Noise::new();
        noise.short_mode = true;
        noise.shift_register = 0b100_0001;
        noise.shift(); // bit0 ^ bit6 = 0
        assert_eq!(noise.shift_register, 0b10_0000);
        noise.shift_register = 0b11;
        noise.shift(); // bit0 ^ bit6 = 1 (bit 1 ignored)
        assert_eq!(noise.shift_register, 0x4001);
    }

    #[test]
    fn period_table_and_output_gating() {
        let mut noise = Noise::new();
        noise.length.set_enabled(true);
        noise.write(0, 0x3F);
        noise.write(2, 0x04); // 64 CPU cycles = 32 APU cycles
        noise.write(3, 0x08);
        noise.length.commit();
        assert_eq!(noise.timer_period(), 64);
        noise.write(2, 0x0F);
        assert_eq!(noise.timer_period(), 4068);
        noise.shift_register = 0x10;
        assert_eq!(noise.output(), 15);
        noise.shift_register = 0x11;
        assert_eq!(noise.output(), 0, "bit 0 set mutes");
    }

    #[test]
    fn state_fields_out_of_range_are_refused() {
        let mut noise = Noise::new();
        noise.length.set_enabled(true);
        for (register, value) in [(0, 0x25), (2, 0x83), (3, 0x10)] {
            noise.write(register, value);
        }
        assert_eq!(noise.validate_state(), Ok(()));
        type Edit = fn(&mut Noise);
        let cases: [(Edit, &str); 2] = [
            (
                |n| n.period = 5,
                "APU noise period 5 is not one of the channel's periods [4, 8, 16, 32, 64, \
                 96, 128, 160, 202, 254, 380, 508, 762, 1016, 2034, 4068]",
            ),
            (
                |n| n.shift_register = 0x8000,
                "APU noise shift register 32768 is out of range 0..=32767",
            ),
        ];
        for (edit, message) in cases {
            let mut edited = noise.clone();
            edit(&mut edited);
            assert_eq!(
                edited.validate_state().map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
    }
}
