//! The length counter shared by the pulse, triangle and noise channels (NESdev "APU Length
//! Counter").
//!
//! Two timing quirks found by blargg's `10.len_halt_timing` / `11.len_reload_timing` tests are
//! modelled by buffering register writes until the end of the APU tick that follows them:
//! a halt-flag change takes effect only after that tick's (possible) length clock, and a reload
//! written on the cycle the counter is clocked is dropped when the clock changed the counter
//! (i.e. the counter was non-zero and not halted).

use crate::{check_consistent, check_range};
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

/// Length values selected by bits 3-7 of $4003/$4007/$400B/$400F.
pub(crate) const LENGTH_TABLE: [u8; 32] = [
    10, 254, 20, 2, 40, 4, 80, 6, 160, 8, 60, 10, 14, 12, 26, 14, 12, 16, 24, 18, 48, 20, 96, 22,
    192, 24, 72, 26, 16, 28, 32, 30,
];

#[derive(Clone, Debug, Default, BorshSerialize, BorshDeserialize)]
pub(crate) struct LengthCounter {
    counter: u8,
    /// The channel's bit in $4015.
    enabled: bool,
    halted: bool,
    /// Halt flag written this cycle; copied into `halted` after the cycle's length clock.
    pending_halt: bool,
    /// Reload value written this cycle (0 = none; every table entry is non-zero).
    pending_reload: u8,
    /// Counter value when the reload was written, to detect a same-cycle length clock.
    counter_at_reload_write: u8,
}

impl LengthCounter {
    #[inline]
    pub(crate) fn is_active(&self) -> bool {
        self.counter != 0
    }

    #[cfg(test)]
    pub(crate) fn value(&self) -> u8 {
        self.counter
    }

    /// The counter with a reload written this cycle already applied, as `commit` will apply
    /// it at the end of the cycle's tick (so a debugger sees a length load at once).
    pub(crate) fn current(&self) -> u8 {
        if self.pending_reload != 0 && self.counter == self.counter_at_reload_write {
            self.pending_reload
        } else {
            self.counter
        }
    }

    pub(crate) fn set_halt(&mut self, halt: bool) {
        self.pending_halt = halt;
    }

    /// Register write of the length index (bits 3-7 of the channel's 4th register).
    pub(crate) fn load(&mut self, index: u8) {
        // A disabled channel ignores length loads (apu_test 1-len_ctr #7).
        if self.enabled {
            self.pending_reload = LENGTH_TABLE[usize::from(index & 0x1F)];
            self.counter_at_reload_write = self.counter;
        }
    }

    pub(crate) fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
        if !enabled {
            self.counter = 0;
            self.pending_reload = 0;
        }
    }

    /// Half-frame clock.
    #[inline]
    pub(crate) fn clock(&mut self) {
        if self.counter != 0 && !self.halted {
            self.counter -= 1;
        }
    }

    /// Checks a length counter decoded from a save state (see `Apu::validate_state`):
    /// `channel` names its channel. The counter only ever holds table values and what
    /// counting down from them leaves (at most 254), a pending reload is a table value, and a
    /// disabled channel's counter is 0 with no reload pending.
    pub(crate) fn validate_state(&self, channel: &str) -> Result<(), InvalidState> {
        let most = LENGTH_TABLE.iter().copied().max().unwrap_or(0);
        check_range(&format!("{channel} length counter"), self.counter, 0..=most)?;
        check_range(
            &format!("{channel} length counter at the reload write"),
            self.counter_at_reload_write,
            0..=most,
        )?;
        if self.pending_reload != 0 && !LENGTH_TABLE.contains(&self.pending_reload) {
            return Err(InvalidState::impossible(format!(
                "{channel} pending length reload {} is not a length table value",
                self.pending_reload
            )));
        }
        check_consistent(
            self.enabled || (self.counter == 0 && self.pending_reload == 0),
            &format!("{channel} length counter of a disabled channel"),
        )
    }

    /// End of the tick that followed a register write: apply buffered halt/reload.
    #[inline]
    pub(crate) fn commit(&mut self) {
        if self.pending_reload != 0 {
            if self.counter == self.counter_at_reload_write {
                self.counter = self.pending_reload;
            }
            self.pending_reload = 0;
        }
        self.halted = self.pending_halt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enabled_counter() -> LengthCounter {
        let mut length = LengthCounter::default();
        length.set_enabled(true);
        length
    }

    #[test]
    fn table_matches_nesdev() {
        // Spot-check both halves of the table layout (odd indices are the linear 2..30 run).
        assert_eq!(LENGTH_TABLE[0], 10);
        assert_eq!(LENGTH_TABLE[1], 254);
        assert_eq!(LENGTH_TABLE[0x18 >> 3], 2);
        assert_eq!(LENGTH_TABLE[24], 192);
        assert_eq!(LENGTH_TABLE[31], 30);
        for index in (1..32).step_by(2) {
            if index > 1 {
                assert_eq!(usize::from(LENGTH_TABLE[index]), index - 1);
            }
        }
    }

    #[test]
    fn load_takes_effect_at_commit_and_counts_down() {
        let mut length = enabled_counter();
        length.load(3); // 2
        assert!(!length.is_active());
        length.commit();
        assert_eq!(length.value(), 2);
        length.clock();
        assert_eq!(length.value(), 1);
        length.clock();
        length.clock();
        assert_eq!(length.value(), 0);
    }

    #[test]
    fn disabled_channel_ignores_load_and_disable_clears() {
        let mut length = LengthCounter::default();
        length.load(1);
        length.commit();
        assert_eq!(length.value(), 0);
        length.set_enabled(true);
        length.load(1);
        length.commit();
        assert_eq!(length.value(), 254);
        length.set_enabled(false);
        assert_eq!(length.value(), 0);
    }

    #[test]
    fn reload_during_clock_ignored_when_counter_nonzero() {
        let mut length = enabled_counter();
        length.load(0); // 10
        length.commit();
        length.load(1); // 254, written on the same cycle as a length clock
        length.clock();
        length.commit();
        assert_eq!(length.value(), 9, "reload dropped");
    }

    #[test]
    fn reload_during_clock_works_when_counter_zero() {
        let mut length = enabled_counter();
        length.load(1);
        length.clock();
        length.commit();
        assert_eq!(length.value(), 254);
    }

    #[test]
    fn current_shows_a_reload_before_its_commit() {
        let mut length = enabled_counter();
        length.load(1);
        assert_eq!((length.value(), length.current()), (0, 254));
        length.commit();
        assert_eq!(length.current(), 254);
        // Clocked on the reload's cycle while non-zero: the reload will be dropped.
        length.load(0);
        length.clock();
        assert_eq!(length.current(), 253);
        length.commit();
        assert_eq!(length.value(), 253);
    }

    #[test]
    fn halt_takes_effect_after_the_clock() {
        let mut length = enabled_counter();
        length.load(0);
        length.commit();
        // Halt written on the clock's cycle: that clock still counts.
        length.set_halt(true);
        length.clock();
        length.commit();
        assert_eq!(length.value(), 9);
        length.clock();
        assert_eq!(length.value(), 9, "halted now");
        // Un-halt written on the clock's cycle: that clock is still suppressed.
        length.set_halt(false);
        length.clock();
        length.commit();
        assert_eq!(length.value(), 9);
        length.clock();
        assert_eq!(length.value(), 8);
    }

    #[test]
    fn state_fields_out_of_range_are_refused() {
        let mut length = enabled_counter();
        length.load(1);
        assert_eq!(length.validate_state("L"), Ok(()));
        type Edit = fn(&mut LengthCounter);
        let cases: [(Edit, &str); 4] = [
            (
                |l| l.counter = 255,
                "L length counter 255 is out of range 0..=254",
            ),
            (
                |l| l.pending_reload = 11,
                "L pending length reload 11 is not a length table value",
            ),
            (
                |l| l.counter_at_reload_write = 255,
                "L length counter at the reload write 255 is out of range 0..=254",
            ),
            (
                |l| {
                    l.set_enabled(false);
                    l.counter = 3;
                },
                "L length counter of a disabled channel is inconsistent",
            ),
        ];
        for (edit, message) in cases {
            let mut edited = length.clone();
            edit(&mut edited);
            assert_eq!(
                edited.validate_state("L").map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
    }
}
