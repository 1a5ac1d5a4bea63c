//! The frame counter (NESdev "APU Frame Counter"; blargg's apu_test and
//! blargg_apu_2005.07.30 readmes for the exact cycles).
//!
//! Counts are in CPU cycles (ticks) since the sequencer was last reset by a $4017 write. The
//! state keeps absolute tick numbers of the next events so the Apu only calls `tick` on the
//! ticks where something happens (`next_event`).
//! 4-step mode (NTSC; PAL's counts are in `model.rs`): quarter frame at 7457, quarter+half at
//! 14913, quarter at 22371, the IRQ flag is set at 29828, 29829 and 29830, with quarter+half at
//! 29829; the count restarts after 29830. 5-step mode: 7457, 14913, 22371, (nothing at 29829),
//! quarter+half at 37281; restarts after 37282.

use crate::model::{ApuModel, FrameSteps};
use crate::{check_consistent, check_range};
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

/// What a step of each mode clocks.
const STEP_CLOCKS: [[FrameClocks; 6]; 2] = [
    [
        FrameClocks::QUARTER,
        FrameClocks::HALF,
        FrameClocks::QUARTER,
        FrameClocks::NONE,
        FrameClocks::HALF,
        FrameClocks::NONE,
    ],
    [
        FrameClocks::QUARTER,
        FrameClocks::HALF,
        FrameClocks::QUARTER,
        FrameClocks::NONE,
        FrameClocks::HALF,
        FrameClocks::NONE,
    ],
];

/// Quarter/half frame signals produced by one tick. `HALF` always includes the quarter frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct FrameClocks(u8);

impl FrameClocks {
    pub(crate) const NONE: FrameClocks = FrameClocks(0);
    pub(crate) const QUARTER: FrameClocks = FrameClocks(1);
    pub(crate) const HALF: FrameClocks = FrameClocks(2);

    #[inline]
    pub(crate) fn quarter(self) -> bool {
        self.0 != 0
    }

    #[inline]
    pub(crate) fn half(self) -> bool {
        self.0 == 2
    }
}

#[derive(Clone, Debug, BorshSerialize, BorshDeserialize)]
pub(crate) struct FrameCounter {
    five_step: bool,
    /// Index of the next step (0..=5).
    step: usize,
    /// Tick on which the next step fires.
    next_step_tick: u64,
    irq_inhibit: bool,
    pub(crate) irq_flag: bool,
    /// Last value written to $4017, re-applied by the reset button.
    last_write: u8,
    /// A $4017 write waiting out its 3/4-cycle delay, and the tick it takes effect on.
    pending_write: Option<u8>,
    apply_tick: u64,
    /// After any quarter/half clock, a clock on the next tick is suppressed (so a $4017
    /// write with bit 7 landing next to a step does not clock the units twice): clocks are
    /// allowed from this tick on.
    clocks_allowed_from: u64,
    /// The model's step lengths (a setting, not state).
    #[borsh(skip)]
    model: ApuModel,
}

impl FrameCounter {
    fn steps(&self) -> &'static FrameSteps {
        self.model.frame_steps()
    }

    pub(crate) fn model(&self) -> ApuModel {
        self.model
    }

    /// Uses `model`'s step lengths from the next step on.
    pub(crate) fn set_model(&mut self, model: ApuModel) {
        self.model = model;
    }

    /// Power-on: as if $4017 = $00 had taken effect on tick `applied_tick` (may be before
    /// tick 0, hence signed).
    pub(crate) fn new(applied_tick: i64) -> FrameCounter {
        FrameCounter {
            five_step: false,
            step: 0,
            next_step_tick: Self::first_step_tick(applied_tick, ApuModel::default()),
            irq_inhibit: false,
            irq_flag: false,
            last_write: 0,
            pending_write: None,
            apply_tick: u64::MAX,
            clocks_allowed_from: 0,
            model: ApuModel::default(),
        }
    }

    fn first_step_tick(applied_tick: i64, model: ApuModel) -> u64 {
        let first = model.frame_steps().first;
        u64::try_from(applied_tick.saturating_add(i64::from(first))).unwrap_or(0)
    }

    /// A power-on counter of `model` (see `new`).
    pub(crate) fn new_for(applied_tick: i64, model: ApuModel) -> FrameCounter {
        FrameCounter {
            next_step_tick: Self::first_step_tick(applied_tick, model),
            model,
            ..FrameCounter::new(applied_tick)
        }
    }

    /// Reset button: $4017 is re-written with its last value (the mode survives), taking
    /// effect on tick `applied_tick`. Returns the immediate clock of 5-step mode.
    pub(crate) fn reset(&mut self, applied_tick: i64) -> FrameClocks {
        self.irq_flag = false;
        self.pending_write = None;
        self.apply_tick = u64::MAX;
        self.clocks_allowed_from = 0;
        self.irq_inhibit = self.last_write & 0x40 != 0;
        self.five_step = self.last_write & 0x80 != 0;
        self.step = 0;
        self.next_step_tick = Self::first_step_tick(applied_tick, self.model);
        if self.five_step {
            FrameClocks::HALF
        } else {
            FrameClocks::NONE
        }
    }

    /// $4017 write seen before tick `tick`. `delay` is 3 or 4 depending on the APU cycle
    /// alignment: the new mode takes effect on tick `tick + delay - 1`, so the access `delay`
    /// cycles after the write sees it.
    pub(crate) fn write(&mut self, value: u8, tick: u64, delay: u8) {
        self.last_write = value;
        self.irq_inhibit = value & 0x40 != 0;
        if self.irq_inhibit {
            self.irq_flag = false;
        }
        self.pending_write = Some(value);
        self.apply_tick = tick + u64::from(delay.max(1)) - 1;
    }

    /// Checks a frame counter decoded from a save state against the APU's tick `now` (see
    /// `Apu::validate_state`): the step indexes the step tables, the next step is at most a
    /// step's length away, a pending $4017 write lands within `max_write_delay` ticks and
    /// only then has a landing tick, and the clock suppression lasts at most its two ticks.
    pub(crate) fn validate_state(&self, now: u64, max_write_delay: u8) -> Result<(), InvalidState> {
        let steps = self.steps();
        let last_step = steps.lengths[0].len() - 1;
        check_range("APU frame counter step", self.step, 0..=last_step)?;
        let longest_step = steps
            .lengths
            .iter()
            .flatten()
            .copied()
            .chain([steps.first])
            .max()
            .unwrap_or(steps.first);
        check_range(
            "APU frame counter next step tick",
            self.next_step_tick,
            0..=now + u64::from(longest_step),
        )?;
        match self.pending_write {
            Some(_) => check_range(
                "APU frame counter $4017 write landing tick",
                self.apply_tick,
                0..=now + u64::from(max_write_delay),
            )?,
            None => check_consistent(
                self.apply_tick == u64::MAX,
                "APU frame counter $4017 write landing tick",
            )?,
        }
        check_range(
            "APU frame counter clock suppression tick",
            self.clocks_allowed_from,
            0..=now + 2,
        )
    }

    /// The frame IRQ flag as it drives the /IRQ line: the inhibit bit gates the output only.
    #[inline]
    pub(crate) fn irq_output(&self) -> bool {
        self.irq_flag & !self.irq_inhibit
    }

    /// First tick on which `tick` has something to do.
    #[inline]
    pub(crate) fn next_event(&self) -> u64 {
        self.next_step_tick.min(self.apply_tick)
    }

    /// Run tick `tick` (called when `tick >= next_event()`). Returns the clocks to deliver.
    pub(crate) fn tick(&mut self, tick: u64) -> FrameClocks {
        let mut clocks = FrameClocks::NONE;
        let mode = usize::from(self.five_step);
        if tick >= self.next_step_tick {
            let step = self.step;
            if !self.five_step {
                // The 4-step sequencer raises the flag on three consecutive cycles. The first two
                // set it even while IRQs are inhibited (the inhibit only gates the /IRQ output);
                // the third loads it from the inhibit bit, so an inhibited flag is visible for
                // exactly two cycles (AccuracyCoin "Frame Counter IRQ" I-M).
                match step {
                    3 | 4 => self.irq_flag = true,
                    5 => self.irq_flag = !self.irq_inhibit,
                    _ => {}
                }
            }
            let step_clocks = STEP_CLOCKS[mode][step];
            if step_clocks != FrameClocks::NONE && tick >= self.clocks_allowed_from {
                clocks = step_clocks;
                self.clocks_allowed_from = tick + 2;
            }
            self.step = if step >= 5 { 0 } else { step + 1 };
            self.next_step_tick = tick + u64::from(self.steps().lengths[mode][step]);
        }
        if let Some(value) = self.pending_write {
            if tick >= self.apply_tick {
                self.pending_write = None;
                self.apply_tick = u64::MAX;
                self.five_step = value & 0x80 != 0;
                self.step = 0;
                self.next_step_tick = tick + u64::from(self.steps().first);
                // Bit 7 clocks quarter and half frame immediately, unless a step just did.
                if self.five_step && tick >= self.clocks_allowed_from {
                    clocks = FrameClocks::HALF;
                    self.clocks_allowed_from = tick + 2;
                }
            }
        }
        clocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ticks `first..=last` at which each kind of event happens. Calls `tick` on every tick
    /// (as well as only on `next_event` ticks: both must agree).
    fn events(counter: &mut FrameCounter, first: u64, last: u64) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
        let (mut quarters, mut halves, mut irqs) = (Vec::new(), Vec::new(), Vec::new());
        for tick in first..=last {
            assert!(tick <= counter.next_event());
            if tick < counter.next_event() {
                continue;
            }
            let clocks = counter.tick(tick);
            if clocks.quarter() {
                quarters.push(tick);
            }
            if clocks.half() {
                halves.push(tick);
            }
            if counter.irq_flag {
                irqs.push(tick);
                counter.irq_flag = false;
            }
        }
        (quarters, halves, irqs)
    }

    #[test]
    fn four_step_sequence_cycles() {
        // Mode 0 in effect from tick 0.
        let mut counter = FrameCounter::new(0);
        let (quarters, halves, irqs) = events(&mut counter, 1, 29830 * 2);
        assert_eq!(
            quarters,
            [
                7457,
                14913,
                22371,
                29829,
                29830 + 7457,
                29830 + 14913,
                29830 + 22371,
                59659
            ]
        );
        assert_eq!(halves, [14913, 29829, 29830 + 14913, 59659]);
        assert_eq!(irqs, [29828, 29829, 29830, 59658, 59659, 59660]);
    }

    #[test]
    fn five_step_sequence_cycles() {
        let mut counter = FrameCounter::new(0);
        // Written before tick 1 with delay 1: takes effect on tick 1, clocking at once.
        counter.write(0x80, 1, 1);
        let (quarters, halves, irqs) = events(&mut counter, 1, 1 + 37282 * 2);
        assert_eq!(
            quarters,
            [
                1,
                1 + 7457,
                1 + 14913,
                1 + 22371,
                1 + 37281,
                1 + 37282 + 7457,
                1 + 37282 + 14913,
                1 + 37282 + 22371,
                1 + 37282 + 37281
            ]
        );
        assert_eq!(
            halves,
            [
                1,
                1 + 14913,
                1 + 37281,
                1 + 37282 + 14913,
                1 + 37282 + 37281
            ]
        );
        assert!(irqs.is_empty());
    }

    #[test]
    fn inhibit_gates_the_irq_and_limits_the_flag_to_two_cycles() {
        let mut counter = FrameCounter::new(0);
        events(&mut counter, 1, 29827);
        counter.irq_flag = true;
        counter.write(0x40, 29828, 3);
        assert!(!counter.irq_flag, "setting inhibit clears the flag at once");
        assert!(!counter.irq_output());
        // The inhibit acts at once, the mode write on tick 29830: the pending sequence and the
        // next one still raise the flag on their first two IRQ steps; the third drops it.
        let (_, _, irqs) = events(&mut counter, 29828, 29830 + 29830);
        assert_eq!(irqs, [29828, 29829, 29830 + 29828, 29830 + 29829]);
        counter.irq_flag = true;
        assert!(!counter.irq_output(), "the inhibit gates the /IRQ output");
    }

    #[test]
    fn write_delay_and_reset_of_the_sequence() {
        for delay in [3u8, 4] {
            let mut counter = FrameCounter::new(0);
            events(&mut counter, 1, 5000);
            counter.write(0x00, 5001, delay);
            // Effective on tick 5001 + delay - 1: the next quarter is 7457 ticks after that.
            let effective = 5001 + u64::from(delay) - 1;
            let (quarters, _, _) = events(&mut counter, 5001, effective + 7457);
            assert_eq!(quarters, [effective + 7457]);
        }
    }

    #[test]
    fn immediate_clock_suppressed_next_to_a_step() {
        let mut counter = FrameCounter::new(0);
        events(&mut counter, 1, 7456);
        // Step 0 fires on tick 7457; a bit-7 write effective on tick 7458 does not clock.
        counter.write(0x80, 7457, 2);
        let (quarters, _, _) = events(&mut counter, 7457, 7460);
        assert_eq!(quarters, [7457]);
        // Two ticks later it would.
        let mut counter = FrameCounter::new(0);
        events(&mut counter, 1, 7456);
        counter.write(0x80, 7457, 3);
        let (quarters, _, _) = events(&mut counter, 7457, 7460);
        assert_eq!(quarters, [7457, 7459]);
    }

    #[test]
    fn reset_reapplies_last_mode() {
        let mut counter = FrameCounter::new(0);
        counter.write(0x80, 1, 1);
        events(&mut counter, 1, 1);
        assert_eq!(counter.reset(1), FrameClocks::HALF);
        let (_, _, irqs) = events(&mut counter, 2, 40000);
        assert!(irqs.is_empty(), "still in 5-step mode");
        counter.write(0x00, 40001, 1);
        events(&mut counter, 40001, 40001);
        assert_eq!(counter.reset(40001), FrameClocks::NONE);
        let (_, _, irqs) = events(&mut counter, 40002, 40001 + 29830);
        assert_eq!(irqs, [40001 + 29828, 40001 + 29829, 40001 + 29830]);
    }

    #[test]
    fn state_fields_out_of_range_are_refused() {
        let mut counter = FrameCounter::new(-2);
        counter.write(0x80, 10, 4);
        assert_eq!(counter.validate_state(10, 4), Ok(()));
        type Edit = fn(&mut FrameCounter);
        let cases: [(Edit, &str); 4] = [
            (
                |c| c.step = 6,
                "APU frame counter step 6 is out of range 0..=5",
            ),
            (
                |c| c.apply_tick = 1_000,
                "APU frame counter $4017 write landing tick 1000 is out of range 0..=14",
            ),
            (
                |c| {
                    c.pending_write = None;
                    c.apply_tick = 12;
                },
                "APU frame counter $4017 write landing tick is inconsistent",
            ),
            (
                |c| c.next_step_tick = 1 << 40,
                "APU frame counter next step tick 1099511627776 is out of range 0..=7468",
            ),
        ];
        for (edit, message) in cases {
            let mut edited = counter.clone();
            edit(&mut edited);
            assert_eq!(
                edited.validate_state(10, 4).map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
    }

    /// A PAL counter with mode 0 in effect from tick `applied_tick`.
    fn pal_counter(applied_tick: i64) -> FrameCounter {
        FrameCounter::new_for(applied_tick, ApuModel::Rp2a07)
    }

    #[test]
    fn pal_four_step_sequence_cycles() {
        // NESdev "APU Frame Counter", 2A07: quarter at 8313 and 24939, quarter+half at 16627
        // and 33253, the flag on 33252-33254, then the count restarts.
        let mut counter = pal_counter(0);
        let (quarters, halves, irqs) = events(&mut counter, 1, 33254 * 2);
        assert_eq!(
            quarters,
            [
                8313,
                16627,
                24939,
                33253,
                33254 + 8313,
                33254 + 16627,
                33254 + 24939,
                33254 + 33253
            ]
        );
        assert_eq!(halves, [16627, 33253, 33254 + 16627, 33254 + 33253]);
        assert_eq!(irqs, [33252, 33253, 33254, 66506, 66507, 66508]);
    }

    #[test]
    fn pal_five_step_sequence_cycles() {
        // 2A07 5-step: 8313, 16627, 24939, (nothing at 33253), quarter+half at 41565; restarts
        // after 41566.
        let mut counter = pal_counter(0);
        counter.write(0x80, 1, 1);
        let (quarters, halves, irqs) = events(&mut counter, 1, 1 + 41566 * 2);
        assert_eq!(
            quarters,
            [
                1,
                1 + 8313,
                1 + 16627,
                1 + 24939,
                1 + 41565,
                1 + 41566 + 8313,
                1 + 41566 + 16627,
                1 + 41566 + 24939,
                1 + 41566 + 41565
            ]
        );
        assert_eq!(
            halves,
            [
                1,
                1 + 16627,
                1 + 41565,
                1 + 41566 + 16627,
                1 + 41566 + 41565
            ]
        );
        assert!(irqs.is_empty());
    }

    #[test]
    fn pal_write_delay_and_reset_of_the_sequence() {
        // The $4017 delay is the 2A03's; only the count after it differs.
        for delay in [3u8, 4] {
            let mut counter = pal_counter(0);
            events(&mut counter, 1, 5000);
            counter.write(0x00, 5001, delay);
            let effective = 5001 + u64::from(delay) - 1;
            let (quarters, _, _) = events(&mut counter, 5001, effective + 8313);
            assert_eq!(quarters, [effective + 8313]);
        }
    }

    #[test]
    fn pal_reset_reapplies_last_mode() {
        let mut counter = pal_counter(0);
        counter.write(0x80, 1, 1);
        events(&mut counter, 1, 1);
        assert_eq!(counter.reset(1), FrameClocks::HALF);
        let (_, _, irqs) = events(&mut counter, 2, 45000);
        assert!(irqs.is_empty(), "still in 5-step mode");
        counter.write(0x00, 45001, 1);
        events(&mut counter, 45001, 45001);
        assert_eq!(counter.reset(45001), FrameClocks::NONE);
        let (_, _, irqs) = events(&mut counter, 45002, 45001 + 33254);
        assert_eq!(irqs, [45001 + 33252, 45001 + 33253, 45001 + 33254]);
    }

    #[test]
    fn a_model_change_takes_the_new_lengths_from_the_next_step() {
        let mut counter = FrameCounter::new(0);
        events(&mut counter, 1, 7457);
        counter.set_model(ApuModel::Rp2a07);
        assert_eq!(counter.model(), ApuModel::Rp2a07);
        // Step 1 was scheduled with NTSC's length (7457 + 7456); from then on PAL's.
        let (quarters, _, _) = events(&mut counter, 7458, 7457 + 7456 + 8312);
        assert_eq!(quarters, [7457 + 7456, 7457 + 7456 + 8312]);
    }

    #[test]
    fn pal_states_validate_against_the_pal_step_lengths() {
        // Just after a $4017 write lands, the next step is `first` ticks away: 8313 on PAL,
        // more than any NTSC step, so only a PAL counter accepts it.
        let mut counter = pal_counter(-2);
        counter.write(0x00, 10, 4);
        events(&mut counter, 10, 13);
        assert_eq!(counter.next_step_tick, 13 + 8313);
        assert_eq!(counter.validate_state(13, 4), Ok(()));
        // Every tick of a PAL frame in both modes validates.
        for mode in [0x00u8, 0x80] {
            let mut counter = pal_counter(0);
            counter.write(mode, 1, 1);
            for tick in 1..=41566 * 2 + 2 {
                if tick >= counter.next_event() {
                    counter.tick(tick);
                }
                assert_eq!(counter.validate_state(tick, 4), Ok(()), "tick {tick}");
            }
        }
        let mut ntsc = counter.clone();
        ntsc.set_model(ApuModel::Rp2a03);
        assert_eq!(
            ntsc.validate_state(13, 4).map_err(|e| e.to_string()),
            Err("APU frame counter next step tick 8326 is out of range 0..=7471".to_string())
        );
        let mut edited = counter.clone();
        edited.next_step_tick = 13 + 8315;
        assert_eq!(
            edited.validate_state(13, 4).map_err(|e| e.to_string()),
            Err("APU frame counter next step tick 8328 is out of range 0..=8327".to_string())
        );
    }
}
