//! Pulse (square) channels 1 and 2 with their sweep units (NESdev "APU Pulse", "APU Sweep").

use crate::channel_state::PulseState;
use crate::envelope::Envelope;
use crate::length_counter::LengthCounter;
use crate::{check_consistent, check_range};
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

/// Duty waveforms indexed by the sequencer position. The sequencer counts *down*
/// (0, 7, 6, ..., 1) so the waveform heard for duty 0 is 0 1 0 0 0 0 0 0.
const DUTY_TABLE: [[u8; 8]; 4] = [
    [0, 0, 0, 0, 0, 0, 0, 1],
    [0, 0, 0, 0, 0, 0, 1, 1],
    [0, 0, 0, 0, 1, 1, 1, 1],
    [1, 1, 1, 1, 1, 1, 0, 0],
];

#[derive(Clone, Debug, BorshSerialize, BorshDeserialize)]
pub(crate) struct Pulse {
    /// Pulse 1's sweep negates with ones' complement (subtracts one more than pulse 2).
    negate_extra: u16,
    duty: u8,
    sequence_position: u8,
    /// 11-bit timer period, in APU cycles minus one. The timer itself is scheduled by the
    /// Apu as an absolute CPU cycle (see `timer_period`).
    period: u16,
    pub(crate) envelope: Envelope,
    pub(crate) length: LengthCounter,
    sweep_enabled: bool,
    sweep_negate: bool,
    sweep_divider_period: u8,
    sweep_shift: u8,
    sweep_divider: u8,
    sweep_reload: bool,
    /// The sweep unit silences the channel when the period is < 8 or the target > $7FF,
    /// whether or not the sweep is enabled. Cached because it only changes on writes/sweeps.
    sweep_muted: bool,
}

impl Pulse {
    pub(crate) fn new(is_pulse1: bool) -> Pulse {
        let mut pulse = Pulse {
            negate_extra: u16::from(is_pulse1),
            duty: 0,
            sequence_position: 0,
            period: 0,
            envelope: Envelope::default(),
            length: LengthCounter::default(),
            sweep_enabled: false,
            sweep_negate: false,
            sweep_divider_period: 0,
            sweep_shift: 0,
            sweep_divider: 0,
            sweep_reload: false,
            sweep_muted: true,
        };
        pulse.update_sweep_mute();
        pulse
    }

    /// Register write; `register` is the address's low two bits.
    pub(crate) fn write(&mut self, register: u16, value: u8) {
        match register & 3 {
            0 => {
                self.duty = value >> 6;
                self.length.set_halt(value & 0x20 != 0);
                self.envelope.write_control(value);
            }
            1 => {
                self.sweep_enabled = value & 0x80 != 0;
                self.sweep_divider_period = (value >> 4) & 7;
                self.sweep_negate = value & 0x08 != 0;
                self.sweep_shift = value & 7;
                self.sweep_reload = true;
                self.update_sweep_mute();
            }
            2 => {
                self.period = (self.period & 0x700) | u16::from(value);
                self.update_sweep_mute();
            }
            _ => {
                self.period = (self.period & 0xFF) | (u16::from(value & 7) << 8);
                self.length.load(value >> 3);
                // Writing the 4th register restarts the sequencer and the envelope, not the timer.
                self.sequence_position = 0;
                self.envelope.restart();
                self.update_sweep_mute();
            }
        }
    }

    /// CPU cycles between sequencer steps: the timer counts `period + 1` APU cycles.
    #[inline]
    pub(crate) fn timer_period(&self) -> u64 {
        2 * (u64::from(self.period) + 1)
    }

    /// `steps` timer expiries: the sequencer moves on that many duty steps.
    #[inline]
    pub(crate) fn step_by(&mut self, steps: u16) {
        self.sequence_position = self.sequence_position.wrapping_sub((steps & 7) as u8) & 7;
    }

    /// Whether the output is 0 at every sequencer step (volume 0), until the envelope is
    /// clocked or restarted or $4000/$4004 written.
    #[inline]
    pub(crate) fn is_silent(&self) -> bool {
        self.envelope.volume() == 0
    }

    /// When false the output is 0 whatever the sequencer does, so its timer need not run.
    #[inline]
    pub(crate) fn is_audible(&self) -> bool {
        !self.sweep_muted && self.length.is_active()
    }

    /// Target period of the sweep unit; negative results clamp to 0.
    fn sweep_target(&self) -> u16 {
        let change = self.period >> self.sweep_shift;
        if self.sweep_negate {
            self.period.saturating_sub(change + self.negate_extra)
        } else {
            self.period + change
        }
    }

    /// Whether the sweep unit mutes the channel with its registers as they are.
    fn sweep_mutes(&self) -> bool {
        self.period < 8 || self.sweep_target() > 0x7FF
    }

    fn update_sweep_mute(&mut self) {
        self.sweep_muted = self.sweep_mutes();
    }

    /// Half-frame clock of the sweep unit.
    pub(crate) fn clock_sweep(&mut self) {
        if self.sweep_divider == 0
            && self.sweep_enabled
            && self.sweep_shift != 0
            && !self.sweep_muted
        {
            self.period = self.sweep_target();
            self.update_sweep_mute();
        }
        if self.sweep_divider == 0 || self.sweep_reload {
            self.sweep_divider = self.sweep_divider_period;
            self.sweep_reload = false;
        } else {
            self.sweep_divider -= 1;
        }
    }

    /// Current DAC input, 0-15.
    #[inline]
    pub(crate) fn output(&self) -> u8 {
        let high = DUTY_TABLE[usize::from(self.duty & 3)][usize::from(self.sequence_position & 7)];
        if high == 0 || self.sweep_muted || !self.length.is_active() {
            0
        } else {
            self.envelope.volume()
        }
    }

    /// Reset button: the sequencer position is cleared (Quietust's reset trace).
    pub(crate) fn reset(&mut self) {
        self.sequence_position = 0;
    }

    /// Checks a pulse channel decoded from a save state (see `Apu::validate_state`); `name`
    /// says which one, `is_pulse1` whether it is the channel with the one's-complement sweep.
    pub(crate) fn validate_state(&self, name: &str, is_pulse1: bool) -> Result<(), InvalidState> {
        check_range(
            &format!("{name} negate adjustment"),
            self.negate_extra,
            u16::from(is_pulse1)..=u16::from(is_pulse1),
        )?;
        check_range(&format!("{name} duty"), self.duty, 0..=3)?;
        check_range(
            &format!("{name} sequencer position"),
            self.sequence_position,
            0..=7,
        )?;
        check_range(&format!("{name} period"), self.period, 0..=0x7FF)?;
        check_range(
            &format!("{name} sweep period"),
            self.sweep_divider_period,
            0..=7,
        )?;
        check_range(&format!("{name} sweep shift"), self.sweep_shift, 0..=7)?;
        check_range(&format!("{name} sweep divider"), self.sweep_divider, 0..=7)?;
        // `sweep_target` needs the period and shift in range: checked just above.
        check_consistent(
            self.sweep_mutes() == self.sweep_muted,
            &format!("{name} sweep mute flag"),
        )?;
        self.envelope.validate_state(name)?;
        self.length.validate_state(name)
    }

    pub(crate) fn state(&self) -> PulseState {
        PulseState {
            period: self.period,
            duty: self.duty,
            envelope_volume: self.envelope.volume(),
            length_counter: self.length.current(),
            sweep_muted: self.sweep_muted,
        }
    }

    #[cfg(test)]
    pub(crate) fn position(&self) -> u8 {
        self.sequence_position
    }

    #[cfg(test)]
    pub(crate) fn period(&self) -> u16 {
        self.period
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pulse channel playing at constant volume 15 with a long length.
    fn audible_pulse(is_pulse1: bool, duty: u8, period: u16) -> Pulse {
        let mut pulse = Pulse::new(is_pulse1);
        pulse.length.set_enabled(true);
        pulse.write(0, (duty << 6) | 0x3F);
        pulse.write(2, (period & 0xFF) as u8);
        pulse.write(3, ((period >> 8) as u8 & 7) | 0x08);
        pulse.length.commit();
        pulse
    }

    fn waveform(pulse: &mut Pulse) -> Vec<u8> {
        let mut steps = Vec::new();
        for _ in 0..8 {
            steps.push(u8::from(pulse.output() != 0));
            pulse.step_by(1);
        }
        steps
    }

    #[test]
    fn duty_sequences_from_restart() {
        let expected: [[u8; 8]; 4] = [
            [0, 1, 0, 0, 0, 0, 0, 0],
            [0, 1, 1, 0, 0, 0, 0, 0],
            [0, 1, 1, 1, 1, 0, 0, 0],
            [1, 0, 0, 1, 1, 1, 1, 1],
        ];
        for (duty, sequence) in expected.iter().enumerate() {
            let mut pulse = audible_pulse(false, duty as u8, 100);
            assert_eq!(&waveform(&mut pulse), sequence, "duty {duty}");
        }
    }

    #[test]
    fn timer_steps_every_period_plus_one_apu_cycles() {
        let mut pulse = audible_pulse(false, 2, 20);
        assert_eq!(pulse.timer_period(), 42);
        pulse.write(3, 0x07);
        assert_eq!(pulse.timer_period(), 2 * (0x714 + 1));
    }

    #[test]
    fn short_period_and_overflowing_target_mute() {
        let mut pulse = audible_pulse(false, 3, 7);
        assert_eq!(pulse.output(), 0, "period < 8 mutes");
        pulse.write(2, 8);
        assert_eq!(pulse.output(), 15);
        // Shift 0, no negate: target = 2 * period; period $400 gives $800 > $7FF.
        let mut high = audible_pulse(false, 3, 0x400);
        assert_eq!(
            high.output(),
            0,
            "target > $7FF mutes even with sweep disabled"
        );
        high.write(1, 0x01); // shift 1 => target $600
        assert_eq!(high.output(), 15);
    }

    #[test]
    fn sweep_negate_differs_between_channels() {
        let mut pulse1 = audible_pulse(true, 2, 0x100);
        let mut pulse2 = audible_pulse(false, 2, 0x100);
        for pulse in [&mut pulse1, &mut pulse2] {
            pulse.write(1, 0x88 | 0x01); // enabled, period 0, negate, shift 1
        }
        assert_eq!(pulse1.sweep_target(), 0x100 - 0x80 - 1);
        assert_eq!(pulse2.sweep_target(), 0x100 - 0x80);
        pulse1.clock_sweep();
        pulse2.clock_sweep();
        assert_eq!(pulse1.period(), 0x7F);
        assert_eq!(pulse2.period(), 0x80);
    }

    #[test]
    fn sweep_divider_period_and_reload() {
        let mut pulse = audible_pulse(false, 2, 0x100);
        pulse.write(1, 0x80 | (2 << 4) | 0x02); // enabled, divider period 2, shift 2
                                                // First clock: divider is 0 => adjust, and reload flag reloads the divider to 2.
        pulse.clock_sweep();
        assert_eq!(pulse.period(), 0x140);
        pulse.clock_sweep();
        pulse.clock_sweep();
        assert_eq!(pulse.period(), 0x140, "divider counts 2, 1");
        pulse.clock_sweep();
        assert_eq!(pulse.period(), 0x190);
    }

    #[test]
    fn sweep_with_zero_shift_does_not_change_period() {
        let mut pulse = audible_pulse(false, 2, 0x100);
        pulse.write(1, 0x80);
        pulse.clock_sweep();
        assert_eq!(pulse.period(), 0x100);
    }

    #[test]
    fn length_zero_silences() {
        let mut pulse = Pulse::new(true);
        pulse.write(0, 0xBF);
        pulse.write(2, 0x40);
        pulse.write(3, 0x08); // disabled: length load ignored
        pulse.length.commit();
        assert!(!pulse.is_audible());
        for _ in 0..8 {
            assert_eq!(pulse.output(), 0);
            pulse.step_by(1);
        }
    }

    /// A playing pulse channel (period $240, sweep on), as a game would set it.
    fn playing(is_pulse1: bool) -> Pulse {
        let mut pulse = Pulse::new(is_pulse1);
        pulse.length.set_enabled(true);
        for (register, value) in [(0, 0xBF), (1, 0xA3), (2, 0x40), (3, 0x0A)] {
            pulse.write(register, value);
        }
        pulse.length.commit();
        pulse
    }

    #[test]
    fn state_fields_out_of_range_are_refused() {
        assert_eq!(playing(true).validate_state("P", true), Ok(()));
        type Edit = fn(&mut Pulse);
        let cases: [(Edit, &str); 6] = [
            // `period >> sweep_shift` would overflow the shift.
            (
                |p| p.sweep_shift = 9,
                "P sweep shift 9 is out of range 0..=7",
            ),
            (|p| p.duty = 4, "P duty 4 is out of range 0..=3"),
            (
                |p| p.sequence_position = 8,
                "P sequencer position 8 is out of range 0..=7",
            ),
            // `period + change` would overflow.
            (
                |p| p.period = 0xFFFF,
                "P period 65535 is out of range 0..=2047",
            ),
            (
                |p| p.negate_extra = 0,
                "P negate adjustment 0 is out of range 1..=1",
            ),
            (
                |p| p.sweep_muted = !p.sweep_muted,
                "P sweep mute flag is inconsistent",
            ),
        ];
        for (edit, message) in cases {
            let mut pulse = playing(true);
            edit(&mut pulse);
            assert_eq!(
                pulse.validate_state("P", true).map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
    }
}
