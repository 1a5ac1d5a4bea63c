//! Envelope generator of the pulse and noise channels (NESdev "APU Envelope").

use crate::check_range;
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

#[derive(Clone, Debug, Default, BorshSerialize, BorshDeserialize)]
pub(crate) struct Envelope {
    start: bool,
    /// Bit 5: loop the decay (shared with the length counter halt flag).
    looping: bool,
    /// Bit 4: output `parameter` directly instead of the decay level.
    constant_volume: bool,
    /// Bits 0-3: constant volume, or the divider period.
    parameter: u8,
    divider: u8,
    decay_level: u8,
}

impl Envelope {
    /// Write of $4000/$4004/$400C.
    pub(crate) fn write_control(&mut self, value: u8) {
        self.looping = value & 0x20 != 0;
        self.constant_volume = value & 0x10 != 0;
        self.parameter = value & 0x0F;
    }

    /// Write of the channel's 4th register sets the start flag.
    pub(crate) fn restart(&mut self) {
        self.start = true;
    }

    /// Quarter-frame clock.
    pub(crate) fn clock(&mut self) {
        if self.start {
            self.start = false;
            self.decay_level = 15;
            self.divider = self.parameter;
        } else if self.divider == 0 {
            self.divider = self.parameter;
            if self.decay_level != 0 {
                self.decay_level -= 1;
            } else if self.looping {
                self.decay_level = 15;
            }
        } else {
            self.divider -= 1;
        }
    }

    /// Checks an envelope decoded from a save state (see `Apu::validate_state`): its 4-bit
    /// fields. `channel` names the channel it belongs to.
    pub(crate) fn validate_state(&self, channel: &str) -> Result<(), InvalidState> {
        check_range(
            &format!("{channel} envelope parameter"),
            self.parameter,
            0..=15,
        )?;
        check_range(&format!("{channel} envelope divider"), self.divider, 0..=15)?;
        check_range(
            &format!("{channel} envelope decay level"),
            self.decay_level,
            0..=15,
        )
    }

    #[inline]
    pub(crate) fn volume(&self) -> u8 {
        if self.constant_volume {
            self.parameter
        } else {
            self.decay_level
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_volume_outputs_parameter() {
        let mut envelope = Envelope::default();
        envelope.write_control(0x1A);
        assert_eq!(envelope.volume(), 10);
        envelope.restart();
        envelope.clock();
        assert_eq!(envelope.volume(), 10);
    }

    #[test]
    fn decays_every_period_plus_one_clocks_then_stops() {
        let mut envelope = Envelope::default();
        envelope.write_control(0x02); // period 2 => 3 clocks per step
        envelope.restart();
        envelope.clock();
        assert_eq!(envelope.volume(), 15);
        envelope.clock();
        envelope.clock();
        assert_eq!(envelope.volume(), 15);
        envelope.clock();
        assert_eq!(envelope.volume(), 14);
        for _ in 0..3 * 14 {
            envelope.clock();
        }
        assert_eq!(envelope.volume(), 0);
        for _ in 0..10 {
            envelope.clock();
        }
        assert_eq!(envelope.volume(), 0, "no loop: stays at 0");
    }

    #[test]
    fn loop_flag_wraps_to_fifteen() {
        let mut envelope = Envelope::default();
        envelope.write_control(0x20); // loop, period 0 => one step per clock
        envelope.restart();
        envelope.clock();
        for expected in (0..15).rev() {
            envelope.clock();
            assert_eq!(envelope.volume(), expected);
        }
        envelope.clock();
        assert_eq!(envelope.volume(), 15);
    }

    #[test]
    fn state_fields_out_of_range_are_refused() {
        let mut envelope = Envelope::default();
        envelope.write_control(0x2B);
        envelope.restart();
        envelope.clock();
        assert_eq!(envelope.validate_state("E"), Ok(()));
        type Edit = fn(&mut Envelope);
        let cases: [(Edit, &str); 3] = [
            (
                |e| e.parameter = 16,
                "E envelope parameter 16 is out of range 0..=15",
            ),
            (
                |e| e.divider = 200,
                "E envelope divider 200 is out of range 0..=15",
            ),
            (
                |e| e.decay_level = 16,
                "E envelope decay level 16 is out of range 0..=15",
            ),
        ];
        for (edit, message) in cases {
            let mut edited = envelope.clone();
            edit(&mut edited);
            assert_eq!(
                edited.validate_state("E").map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
    }
}
