//! Triangle channel with its linear counter (NESdev "APU Triangle").

use crate::channel_state::TriangleState;
use crate::check_range;
use crate::length_counter::LengthCounter;
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

/// The 32-step sequence: 15 down to 0, then 0 up to 15.
const TRIANGLE_SEQUENCE: [u8; 32] = [
    15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
    13, 14, 15,
];

#[derive(Clone, Debug, Default, BorshSerialize, BorshDeserialize)]
pub(crate) struct Triangle {
    /// 11-bit period in CPU cycles minus one (the triangle timer runs at the CPU clock).
    period: u16,
    step: u8,
    /// Bit 7 of $4008: length halt and linear counter control.
    control: bool,
    linear_reload_value: u8,
    linear_counter: u8,
    linear_reload: bool,
    pub(crate) length: LengthCounter,
}

impl Triangle {
    pub(crate) fn write(&mut self, register: u16, value: u8) {
        match register & 3 {
            0 => {
                self.control = value & 0x80 != 0;
                self.length.set_halt(self.control);
                self.linear_reload_value = value & 0x7F;
            }
            1 => {}
            2 => self.period = (self.period & 0x700) | u16::from(value),
            _ => {
                self.period = (self.period & 0xFF) | (u16::from(value & 7) << 8);
                self.length.load(value >> 3);
                self.linear_reload = true;
            }
        }
    }

    /// CPU cycles between timer expiries.
    #[inline]
    pub(crate) fn timer_period(&self) -> u64 {
        u64::from(self.period) + 1
    }

    /// Whether timer expiries advance the sequencer. Periods 0 and 1 give a 28-56 kHz tone:
    /// real hardware produces it, but it is inaudible and only aliases after resampling, so
    /// the sequencer holds instead (NESdev "APU Triangle" suggests this for emulators).
    #[inline]
    pub(crate) fn is_stepping(&self) -> bool {
        self.linear_counter != 0 && self.length.is_active() && self.period >= 2
    }

    /// Timer expiry while `is_stepping`.
    #[inline]
    pub(crate) fn step(&mut self) {
        self.step = (self.step + 1) & 31;
    }

    /// Test helper: one CPU cycle of a free-running timer; true when the sequencer stepped.
    #[cfg(test)]
    fn clock_timer(&mut self, timer: &mut u64) -> bool {
        if *timer == 0 {
            *timer = self.timer_period() - 1;
            if self.is_stepping() {
                self.step();
                return true;
            }
            false
        } else {
            *timer -= 1;
            false
        }
    }

    /// Checks the triangle channel decoded from a save state (see `Apu::validate_state`).
    pub(crate) fn validate_state(&self) -> Result<(), InvalidState> {
        check_range("APU triangle period", self.period, 0..=0x7FF)?;
        let last_step = TRIANGLE_SEQUENCE.len() as u8 - 1;
        check_range("APU triangle sequencer step", self.step, 0..=last_step)?;
        check_range(
            "APU triangle linear counter reload",
            self.linear_reload_value,
            0..=0x7F,
        )?;
        check_range("APU triangle linear counter", self.linear_counter, 0..=0x7F)?;
        self.length.validate_state("APU triangle")
    }

    /// Quarter-frame clock of the linear counter.
    pub(crate) fn clock_linear(&mut self) {
        if self.linear_reload {
            self.linear_counter = self.linear_reload_value;
        } else if self.linear_counter != 0 {
            self.linear_counter -= 1;
        }
        if !self.control {
            self.linear_reload = false;
        }
    }

    #[inline]
    pub(crate) fn output(&self) -> u8 {
        TRIANGLE_SEQUENCE[usize::from(self.step & 31)]
    }

    /// Reset button: the sequencer returns to phase 0 (NESdev "CPU power up state").
    pub(crate) fn reset(&mut self) {
        self.step = 0;
    }

    #[cfg(test)]
    pub(crate) fn linear_counter(&self) -> u8 {
        self.linear_counter
    }

    pub(crate) fn state(&self) -> TriangleState {
        TriangleState {
            period: self.period,
            length_counter: self.length.current(),
            linear_counter: self.linear_counter,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn playing_triangle(period: u16, linear: u8) -> Triangle {
        let mut triangle = Triangle::default();
        triangle.length.set_enabled(true);
        triangle.write(0, linear);
        triangle.write(2, (period & 0xFF) as u8);
        triangle.write(3, ((period >> 8) as u8 & 7) | 0x08);
        triangle.length.commit();
        triangle.clock_linear();
        triangle
    }

    #[test]
    fn sequence_walks_down_then_up() {
        let mut timer = 0;
        let mut triangle = playing_triangle(10, 20);
        let mut seen = vec![triangle.output()];
        while seen.len() < 34 {
            if triangle.clock_timer(&mut timer) {
                seen.push(triangle.output());
            }
        }
        assert_eq!(
            &seen[..17],
            &[15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0]
        );
        assert_eq!(seen[31], 15);
        assert_eq!(seen[32], 15, "wrapped to step 0");
        assert_eq!(seen[33], 14);
    }

    #[test]
    fn steps_every_period_plus_one_cpu_cycles() {
        let mut timer = 0;
        let mut triangle = playing_triangle(30, 20);
        while !triangle.clock_timer(&mut timer) {}
        let mut cycles = 1;
        while !triangle.clock_timer(&mut timer) {
            cycles += 1;
        }
        assert_eq!(cycles, 31);
    }

    #[test]
    fn linear_counter_reload_and_countdown() {
        let mut timer = 0;
        let mut triangle = playing_triangle(30, 3);
        assert_eq!(triangle.linear_counter(), 3);
        // Control clear: the reload flag was cleared by the first clock, so it counts down.
        triangle.clock_linear();
        triangle.clock_linear();
        triangle.clock_linear();
        assert_eq!(triangle.linear_counter(), 0);
        let output = triangle.output();
        for _ in 0..1000 {
            assert!(
                !triangle.clock_timer(&mut timer),
                "silenced by the linear counter"
            );
        }
        assert_eq!(triangle.output(), output, "holds its level");
    }

    #[test]
    fn control_flag_keeps_reloading() {
        let mut triangle = playing_triangle(30, 0x85);
        for _ in 0..10 {
            triangle.clock_linear();
            assert_eq!(triangle.linear_counter(), 5);
        }
        // Clearing control: the next clock reloads once more, then the counter runs down.
        triangle.write(0, 0x05);
        triangle.clock_linear();
        assert_eq!(triangle.linear_counter(), 5);
        triangle.clock_linear();
        assert_eq!(triangle.linear_counter(), 4);
    }

    #[test]
    fn ultrasonic_period_holds() {
        let mut timer = 0;
        let mut triangle = playing_triangle(1, 20);
        for _ in 0..100 {
            assert!(!triangle.clock_timer(&mut timer));
        }
    }

    #[test]
    fn state_fields_out_of_range_are_refused() {
        assert_eq!(playing_triangle(30, 20).validate_state(), Ok(()));
        type Edit = fn(&mut Triangle);
        let cases: [(Edit, &str); 3] = [
            // `step + 1` would overflow.
            (
                |t| t.step = 255,
                "APU triangle sequencer step 255 is out of range 0..=31",
            ),
            (
                |t| t.period = 0x900,
                "APU triangle period 2304 is out of range 0..=2047",
            ),
            (
                |t| t.linear_counter = 0x80,
                "APU triangle linear counter 128 is out of range 0..=127",
            ),
        ];
        for (edit, message) in cases {
            let mut triangle = playing_triangle(30, 20);
            edit(&mut triangle);
            assert_eq!(
                triangle.validate_state().map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
    }
}
