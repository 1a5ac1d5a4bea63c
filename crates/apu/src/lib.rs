//! The Ricoh 2A03's audio processing unit: two pulse channels, triangle, noise, DMC, the frame
//! counter, the non-linear mixer and a band-limited resampler to the host's sample rate.
//!
//! Timing contract with the console: [`Apu::tick`] is called exactly once per CPU cycle, after
//! that cycle's bus access, so a register access on CPU cycle N is seen before the tick of
//! cycle N. The first tick after power-on is CPU cycle 0. CPU cycle N is a DMA "get" cycle
//! (first half of an APU cycle) when `N % 2 == GET_CYCLE_PARITY`, otherwise a "put" cycle.

use borsh::{BorshDeserialize, BorshSerialize};
pub use nes_state::InvalidState;
pub(crate) use nes_state::{check_consistent, check_range};
mod channel_state;
mod dmc;
mod envelope;
mod frame_counter;
mod length_counter;
mod mixer;
mod model;
mod noise;
mod pulse;
mod resampler;
mod triangle;

pub use channel_state::{ChannelState, DmcState, NoiseState, PulseState, TriangleState};
use dmc::Dmc;
use frame_counter::{FrameClocks, FrameCounter};
use mixer::Mixer;
pub use model::ApuModel;
use noise::Noise;
use pulse::Pulse;
use resampler::Resampler;
use triangle::Triangle;

/// CPU cycle parity of DMA "get" cycles (the first half of an APU cycle): cycle N is a get
/// cycle when `N & 1 == GET_CYCLE_PARITY`. Shared with the CPU's DMA unit; flip it here and
/// there together. The APU-rate timers (pulse, noise, DMC) advance on get cycles, so a DMC
/// "reload" DMA request raised by the DMC timer is first seen on a put cycle.
pub const GET_CYCLE_PARITY: u64 = 0;

/// $4017 write delay in CPU cycles: the new mode takes effect on the tick `delay - 1` cycles
/// after the write, i.e. it is visible to the access `delay` cycles after it. The sequencer
/// only restarts on an APU cycle boundary, so the restart always lands on the same parity:
/// a write on a put cycle takes 3 cycles, one on a get cycle 4 (AccuracyCoin "Frame Counter
/// IRQ" A-D measure both against OAM DMA get/put alignment; blargg cpu_interrupts_v2
/// 4-irq_and_dma measures the frame IRQ against OAM DMA's 513/514-cycle parity).
const FRAME_COUNTER_WRITE_DELAY_GET: u8 = 4;
const FRAME_COUNTER_WRITE_DELAY_PUT: u8 = 3;

/// Cycles from a $4015 write to the first access at which the DMC's memory reader sees the
/// new enable bit (the change is applied on tick `N + delay - 1`). NESdev "DMA": the load
/// DMA after an enabling write halts on the get cycle of the second APU cycle after the
/// write: written on a get cycle N, halt at N+4; on a put cycle N, at N+3. A disabling write
/// reaches the reader with the same delay, so a DMA whose dummy cycle comes before that
/// still runs to its get (AccuracyCoin "Explicit DMA Abort").
const DMC_LOAD_DELAY_GET: u8 = 4;
const DMC_LOAD_DELAY_PUT: u8 = 3;

/// Ticks after a DMC fetch during which the memory reader still sees the byte count from
/// before it (AccuracyCoin "Implicit DMA Abort").
const DMC_BYTE_COUNT_LAG: u64 = 2;

/// CPU cycles after an output-unit clock in which a late 2A03's DMC fetch still feeds the
/// output cycle that clock began (see `Dmc::set_stale_reload_completes`).
const LATE_FEED_WINDOW: u64 = 2;

/// The NTSC CPU clock in Hz: the 236.25 / 11 MHz master clock divided by 12 (NESdev "Cycle
/// reference chart"). FCEUX's `NTSC_CPU` is the same double.
pub const NTSC_CPU_HZ: f64 = 39_375_000.0 / 22.0;

/// Tick number meaning "not scheduled".
const NEVER: u64 = u64::MAX;

/// The largest tick count a save state may hold: 2^62 CPU cycles is over 80,000 years of
/// emulation, so no real state comes near it, and the event arithmetic (`now + period`) keeps
/// plenty of room above it.
const MAX_STATE_CYCLE: u64 = 1 << 62;

/// Ticks ahead of the current one that a channel timer can be scheduled: the longest period of
/// any of them (pulse 4096, noise 4068 ticks) with margin. A loaded state's timers must be
/// unscheduled or within this of its cycle. The frame counter, whose steps are longer (up to
/// 8314 ticks on the 2A07), checks its own against its model's step lengths.
const MAX_TIMER_LEAD: u64 = 8192;

/// A channel whose timer runs as events whose expiries a silent stretch batches (see
/// `silent_run_steps`): the pulses and the noise.
trait BatchedTimer {
    /// Whether the output can be non-zero at all, so the timer must run.
    fn timer_needed(&self) -> bool;
    /// `steps` timer expiries.
    fn advance(&mut self, steps: u16);
    fn timer_period(&self) -> u64;
    fn is_silent(&self) -> bool;
    fn output(&self) -> u8;
}

impl BatchedTimer for Pulse {
    fn timer_needed(&self) -> bool {
        self.is_audible()
    }
    fn advance(&mut self, steps: u16) {
        self.step_by(steps);
    }
    fn timer_period(&self) -> u64 {
        Pulse::timer_period(self)
    }
    fn is_silent(&self) -> bool {
        Pulse::is_silent(self)
    }
    fn output(&self) -> u8 {
        Pulse::output(self)
    }
}

impl BatchedTimer for Noise {
    fn timer_needed(&self) -> bool {
        self.length.is_active()
    }
    fn advance(&mut self, steps: u16) {
        self.shift_by(steps);
    }
    fn timer_period(&self) -> u64 {
        Noise::timer_period(self)
    }
    fn is_silent(&self) -> bool {
        Noise::is_silent(self)
    }
    fn output(&self) -> u8 {
        Noise::output(self)
    }
}

/// What a tick's timer expiries share: the tick, the frame counter's next event, and whether
/// audio is produced at all.
struct ExpiryTick {
    now: u64,
    frame_event: u64,
    audio_enabled: bool,
}

impl ExpiryTick {
    /// A channel's timer expiry on this tick: the `steps` expiries it stands for, then the
    /// tick of the next one and how many that stands for (see `silent_run_steps`), and whether
    /// the channel's output changed. A channel that cannot be heard (or audio off) stops its
    /// timer.
    fn expire(&self, channel: &mut impl BatchedTimer, steps: u16) -> (u64, u16, bool) {
        if !(channel.timer_needed() && self.audio_enabled) {
            return (NEVER, 1, false);
        }
        let before = channel.output();
        channel.advance(steps);
        let period = channel.timer_period();
        let next_steps = silent_run_steps(channel.is_silent(), self.now, period, self.frame_event);
        (
            self.now + period * u64::from(next_steps),
            next_steps,
            channel.output() != before,
        )
    }
}

/// The expiries a channel timer's next event may stand for. A channel whose output is 0
/// whatever its sequencer or shift register does (volume 0) stays silent until something
/// changes its volume, its length counter or its period: a frame-counter clock or a register
/// write. So its expiries up to the next frame-counter event are applied together, on the
/// tick of the last (a register write settles them first: `Apu::settle_silent_runs`). What
/// they change is only heard later, and identically; a noisy game's muted noise channel then
/// costs a few events a frame instead of thousands. At most `MAX_TIMER_LEAD` ahead, as a
/// loaded state's timers are.
fn silent_run_steps(silent: bool, now: u64, period: u64, frame_event: u64) -> u16 {
    if !silent {
        return 1;
    }
    let horizon = frame_event.min(now + MAX_TIMER_LEAD).saturating_sub(now);
    u16::try_from(horizon / period).unwrap_or(u16::MAX).max(1)
}

/// The 2A03 APU.
///
/// Internally event-driven: every timer is kept as the absolute tick on which it next
/// expires, and `tick` only compares the tick counter with the earliest of them. The pulse,
/// triangle and noise timers are not observable by the CPU, so they only run while audio is
/// being generated and the channel is audible; the DMC timer and the frame counter always run.
#[derive(Clone, Debug, BorshSerialize, BorshDeserialize)]
pub struct Apu {
    pulse1: Pulse,
    pulse2: Pulse,
    triangle: Triangle,
    noise: Noise,
    dmc: Dmc,
    frame_counter: FrameCounter,
    /// Index of the next tick (= CPU cycles since power-on).
    cycle: u64,
    /// Earliest tick on which `run_events` has something to do.
    next_event: u64,
    pulse1_next: u64,
    pulse2_next: u64,
    triangle_next: u64,
    noise_next: u64,
    /// How many timer expiries the channel's scheduled event stands for: 1, or more for a
    /// silent run (see `silent_run_steps`), whose expiries fall every period up to and on
    /// the event's tick and are applied together there.
    pulse1_steps: u16,
    pulse2_steps: u16,
    noise_steps: u16,
    dmc_next: u64,
    /// Tick on which the last $4015 write's DMC enable bit reaches the memory reader, and
    /// that bit.
    dmc_gate_tick: u64,
    dmc_gate_open: bool,
    /// The first tick after the last DMC fetch.
    dmc_fetch_tick: u64,
    /// Tick on which a $4015 read's frame-IRQ acknowledge takes effect (see `read_status`).
    frame_irq_clear_tick: u64,
    /// A register write buffered a length-counter halt/reload for the end of the next tick.
    length_commit_pending: bool,
    /// Channel activity may have changed: re-evaluate which timers must run.
    rearm_pending: bool,
    /// Some channel output may have changed: recompute the mix at the end of the tick.
    output_dirty: bool,
    /// The IRQ output as of the latest tick's bus access (see `irq_line`).
    irq_output: bool,
    mixer: Mixer,
    resampler: Resampler,
    /// Tests: step every timer expiry on its own tick (no silent runs), the reference the
    /// silent runs are checked against.
    #[cfg(test)]
    #[borsh(skip)]
    every_expiry: bool,
}

impl Default for Apu {
    fn default() -> Apu {
        Apu::new()
    }
}

impl Apu {
    /// Power-on state: all registers zero, $4017 = $00 in effect (as if written shortly before
    /// the first instruction), audio output off until [`Apu::set_sample_rate`].
    pub fn new() -> Apu {
        let dmc = Dmc::new();
        // The DMC timer free-runs from power-on, expiring on get cycles.
        let dmc_next = dmc.timer_period() - 2 + GET_CYCLE_PARITY;
        let mut apu = Apu {
            pulse1: Pulse::new(true),
            pulse2: Pulse::new(false),
            triangle: Triangle::default(),
            noise: Noise::new(),
            dmc,
            frame_counter: FrameCounter::new(Self::virtual_4017_effect_tick(0)),
            cycle: 0,
            next_event: 0,
            pulse1_next: NEVER,
            pulse2_next: NEVER,
            triangle_next: NEVER,
            noise_next: NEVER,
            pulse1_steps: 1,
            pulse2_steps: 1,
            noise_steps: 1,
            dmc_next,
            dmc_gate_tick: NEVER,
            dmc_gate_open: false,
            dmc_fetch_tick: 0,
            frame_irq_clear_tick: NEVER,
            length_commit_pending: false,
            rearm_pending: false,
            output_dirty: false,
            irq_output: false,
            mixer: Mixer::new(),
            resampler: Resampler::new(),
            #[cfg(test)]
            every_expiry: false,
        };
        apu.schedule_next_event();
        apu
    }

    /// Power-up and reset act as if $4017 had been written a few cycles before the CPU's reset
    /// sequence starts (blargg apu_reset/4017_timing: 9-12 cycles before the first
    /// instruction). A write takes effect on a put-cycle tick (see
    /// `FRAME_COUNTER_WRITE_DELAY_GET`); we date the effect to the latest put tick before
    /// `next_tick`, i.e. 1 or 2 ticks earlier.
    fn virtual_4017_effect_tick(next_tick: u64) -> i64 {
        let next = i64::try_from(next_tick).unwrap_or(i64::MAX);
        if Self::is_get_cycle(next_tick) {
            next - 1
        } else {
            next - 2
        }
    }

    /// Reset button (NESdev "CPU power up state", blargg apu_reset): $4015 is cleared
    /// (channels silenced, DMC stopped, DMC IRQ cleared), the frame IRQ flag is cleared,
    /// $4017 is re-applied with its last written value, the triangle returns to phase 0 and
    /// the DMC output keeps only bit 0. Other registers, including the length halt flags,
    /// are unaffected.
    pub fn reset(&mut self) {
        self.settle_silent_runs();
        self.write_status(0);
        // Reset stops the DMC at once, not through the delayed register-write path.
        self.dmc_gate_tick = NEVER;
        self.dmc.set_dma_gate(false);
        self.pulse1.reset();
        self.pulse2.reset();
        self.triangle.reset();
        self.dmc.reset();
        let clocks = self
            .frame_counter
            .reset(Self::virtual_4017_effect_tick(self.cycle));
        self.apply_frame_clocks(clocks);
        self.length_commit_pending = true;
        self.touch();
    }

    #[inline]
    fn is_get_cycle(cycle: u64) -> bool {
        cycle & 1 == GET_CYCLE_PARITY
    }

    /// Something changed outside a tick: run the event handler on the coming tick.
    #[inline]
    fn touch(&mut self) {
        self.rearm_pending = true;
        self.output_dirty = true;
        self.next_event = self.cycle;
    }

    /// Ticks run since power-on: the number of the CPU cycle in progress when called from
    /// inside a cycle (before that cycle's `tick`).
    #[inline(always)]
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// The first tick that may have work to do (`tick` runs the event handler from there on):
    /// until it, a tick only counts. Register accesses and settings can move it earlier.
    #[inline(always)]
    pub fn next_event(&self) -> u64 {
        self.next_event
    }

    /// [`Apu::tick`] on a cycle before [`Apu::next_event`], where it only counts: for a
    /// caller that has already made that comparison (the console folds it into one test per
    /// cycle with its other deadlines).
    #[inline(always)]
    pub fn tick_before_event(&mut self) {
        debug_assert!(self.cycle < self.next_event);
        self.cycle = self.cycle.wrapping_add(1);
    }

    /// The first tick at which what the CPU sees of the APU without reading its registers,
    /// the /IRQ output and the DMC's DMA request, may change: a frame counter event (the
    /// frame IRQ), a DMC timer expiry while a fetched byte waits in the sample buffer (the
    /// reload request; with the buffer empty an expiry only silences the output), the delayed
    /// $4015 effects, or, with anything still pending from a register access, the next event.
    /// The pulse, triangle and noise timers only make sound.
    pub fn next_visible_event(&self) -> u64 {
        if self.rearm_pending
            || self.length_commit_pending
            || self.dmc.phantom_request_pending()
            || self.irq_flags() != self.irq_output
        {
            return self.next_event;
        }
        let dmc = if self.dmc.sample_buffer_full() {
            self.dmc_next
        } else {
            NEVER
        };
        self.frame_counter
            .next_event()
            .min(dmc)
            .min(self.dmc_gate_tick)
            .min(self.frame_irq_clear_tick)
    }

    /// `count` ticks, all before [`Apu::next_visible_event`], run at once (the console's
    /// idle-loop skipping): the events on them are run on their ticks, exactly as `tick`
    /// would, and the ticks between only count.
    pub fn skip_quiet_cycles(&mut self, count: u64) {
        let end = self.cycle.wrapping_add(count);
        debug_assert!(end <= self.next_visible_event());
        while self.cycle < end {
            if self.cycle >= self.next_event {
                self.run_events();
                self.cycle += 1;
            } else {
                self.cycle = self.next_event.min(end);
            }
        }
    }

    /// Advance exactly one CPU cycle.
    #[inline(always)]
    pub fn tick(&mut self) {
        if self.cycle >= self.next_event {
            self.run_events();
        }
        // Never near the wrap (see `MAX_STATE_CYCLE`); wrapping keeps debug and release alike.
        self.cycle = self.cycle.wrapping_add(1);
    }

    /// Checks an APU decoded from a save state before a console accepts it: every field lies
    /// in the range the chip can reach (table indices, counters, periods, addresses), the
    /// values derived from others agree with them, and every timer is unscheduled or due
    /// within its longest period. Err names the first field out of range. Loading only: the
    /// running APU never needs it.
    pub fn validate_state(&self) -> Result<(), InvalidState> {
        let now = self.cycle;
        check_range("APU cycle", now, 0..=MAX_STATE_CYCLE)?;
        self.pulse1.validate_state("APU pulse 1", true)?;
        self.pulse2.validate_state("APU pulse 2", false)?;
        self.triangle.validate_state()?;
        self.noise.validate_state()?;
        self.dmc.validate_state()?;
        let longest_write_delay = FRAME_COUNTER_WRITE_DELAY_GET.max(FRAME_COUNTER_WRITE_DELAY_PUT);
        self.frame_counter
            .validate_state(now, longest_write_delay)?;
        let timers = [
            ("pulse 1 timer", self.pulse1_next),
            ("pulse 2 timer", self.pulse2_next),
            ("triangle timer", self.triangle_next),
            ("noise timer", self.noise_next),
            ("DMC timer", self.dmc_next),
            ("DMC enable", self.dmc_gate_tick),
            ("frame IRQ acknowledge", self.frame_irq_clear_tick),
        ];
        for (name, tick) in timers {
            if tick != NEVER && tick > now + MAX_TIMER_LEAD {
                return Err(InvalidState::impossible(format!(
                    "APU {name} tick {tick} is out of range (unscheduled, or 0..={})",
                    now + MAX_TIMER_LEAD
                )));
            }
        }
        for (name, steps, period) in [
            ("pulse 1", self.pulse1_steps, self.pulse1.timer_period()),
            ("pulse 2", self.pulse2_steps, self.pulse2.timer_period()),
            ("noise", self.noise_steps, self.noise.timer_period()),
        ] {
            // A silent run reaches at most `MAX_TIMER_LEAD` ahead (see `silent_run_steps`).
            let most = u16::try_from(MAX_TIMER_LEAD / period.max(1)).unwrap_or(u16::MAX);
            check_range(
                &format!("APU {name} timer expiries per event"),
                steps,
                1..=most.max(1),
            )?;
        }
        let earliest = timers
            .iter()
            .map(|&(_, tick)| tick)
            .fold(self.frame_counter.next_event(), u64::min);
        // A later `next_event` would skip timers that are due (it is the earliest of them, or
        // earlier after a register access).
        check_range("APU next event tick", self.next_event, 0..=earliest)?;
        check_range("APU last DMC fetch tick", self.dmc_fetch_tick, 0..=now)?;
        self.resampler.validate_state(now)
    }

    /// Everything due on tick `self.cycle`, in the hardware's order within a cycle: channel
    /// timers, frame counter (with its delayed $4017 write), buffered length-counter writes,
    /// the DMC load request, then the output sample.
    fn run_events(&mut self) {
        let now = self.cycle;
        // The line the CPU samples for this cycle reflects the flags as of this cycle's access
        // (a flag set by this tick shows on the next cycle, like a $4015 read would see it).
        self.irq_output = self.irq_flags();
        if self.rearm_pending {
            self.rearm_pending = false;
            self.rearm_channels(now);
        }
        if now >= self.triangle_next {
            if self.triangle.is_stepping() && self.resampler.enabled() {
                self.triangle.step();
                self.triangle_next = now + self.triangle.timer_period();
                self.output_dirty = true;
            } else {
                self.triangle_next = NEVER;
            }
        }
        let frame_event = self.frame_counter.next_event();
        #[cfg(test)]
        let frame_event = if self.every_expiry { now } else { frame_event };
        let tick = ExpiryTick {
            now,
            frame_event,
            audio_enabled: self.resampler.enabled(),
        };
        if now >= self.pulse1_next {
            let changed;
            (self.pulse1_next, self.pulse1_steps, changed) =
                tick.expire(&mut self.pulse1, self.pulse1_steps);
            self.output_dirty |= changed;
        }
        if now >= self.pulse2_next {
            let changed;
            (self.pulse2_next, self.pulse2_steps, changed) =
                tick.expire(&mut self.pulse2, self.pulse2_steps);
            self.output_dirty |= changed;
        }
        if now >= self.noise_next {
            let changed;
            (self.noise_next, self.noise_steps, changed) =
                tick.expire(&mut self.noise, self.noise_steps);
            self.output_dirty |= changed;
        }
        self.dmc.end_phantom_request();
        if now >= self.dmc_next {
            let just_fetched = now < self.dmc_fetch_tick + DMC_BYTE_COUNT_LAG;
            self.output_dirty |= self.dmc.clock_output_unit(just_fetched);
            self.dmc_next = now + self.dmc.timer_period();
        }
        if now >= self.frame_irq_clear_tick {
            // Before the frame counter: a flag set again on this very tick survives the
            // acknowledge (NESdev "APU": reading on the cycle the flag is set does not clear it).
            self.frame_irq_clear_tick = NEVER;
            self.frame_counter.irq_flag = false;
        }
        if now >= self.frame_counter.next_event() {
            let clocks = self.frame_counter.tick(now);
            if clocks != FrameClocks::NONE {
                self.apply_frame_clocks(clocks);
            }
        }
        if self.length_commit_pending {
            self.commit_length_counters();
        }
        if now >= self.dmc_gate_tick {
            self.dmc_gate_tick = NEVER;
            self.dmc.set_dma_gate(self.dmc_gate_open);
        }
        if self.rearm_pending {
            self.rearm_pending = false;
            self.rearm_channels(now);
        }
        if self.output_dirty {
            self.update_output();
        }
        self.schedule_next_event();
        if self.dmc.phantom_request_pending() {
            // It only lasts until the next tick.
            self.next_event = now + 1;
        }
        if self.irq_flags() != self.irq_output {
            // Update the line on the next tick.
            self.next_event = now + 1;
        }
    }

    /// The /IRQ output: the DMC flag, or the frame flag unless frame IRQs are inhibited.
    #[inline]
    fn irq_flags(&self) -> bool {
        self.frame_counter.irq_output() | self.dmc.irq_flag
    }

    fn schedule_next_event(&mut self) {
        self.next_event = self
            .pulse1_next
            .min(self.pulse2_next)
            .min(self.triangle_next)
            .min(self.noise_next)
            .min(self.dmc_next)
            .min(self.frame_counter.next_event())
            .min(self.dmc_gate_tick)
            .min(self.frame_irq_clear_tick);
    }

    /// First get-cycle tick at or after `tick`.
    fn align_to_get(tick: u64) -> u64 {
        if Self::is_get_cycle(tick) {
            tick
        } else {
            tick + 1
        }
    }

    /// Start the timers of channels that became audible. Their phase while stopped is not
    /// observable (the sequencer holds its position), so they restart one period from now.
    fn rearm_channels(&mut self, now: u64) {
        if !self.resampler.enabled() {
            return;
        }
        if self.pulse1_next == NEVER && self.pulse1.timer_needed() {
            self.pulse1_next = Self::align_to_get(now + self.pulse1.timer_period());
        }
        if self.pulse2_next == NEVER && self.pulse2.timer_needed() {
            self.pulse2_next = Self::align_to_get(now + self.pulse2.timer_period());
        }
        if self.noise_next == NEVER && self.noise.timer_needed() {
            self.noise_next = Self::align_to_get(now + self.noise.timer_period());
        }
        if self.triangle_next == NEVER && self.triangle.is_stepping() {
            self.triangle_next = now + self.triangle.timer_period();
        }
    }

    fn apply_frame_clocks(&mut self, clocks: FrameClocks) {
        self.rearm_pending = true;
        if clocks.quarter() {
            self.pulse1.envelope.clock();
            self.pulse2.envelope.clock();
            self.noise.envelope.clock();
            self.triangle.clock_linear();
        }
        if clocks.half() {
            self.pulse1.length.clock();
            self.pulse2.length.clock();
            self.triangle.length.clock();
            self.noise.length.clock();
            self.pulse1.clock_sweep();
            self.pulse2.clock_sweep();
        }
        self.output_dirty = true;
    }

    fn commit_length_counters(&mut self) {
        self.length_commit_pending = false;
        self.rearm_pending = true;
        self.pulse1.length.commit();
        self.pulse2.length.commit();
        self.triangle.length.commit();
        self.noise.length.commit();
        self.output_dirty = true;
    }

    fn update_output(&mut self) {
        self.output_dirty = false;
        if self.resampler.enabled() {
            let level = self.current_level();
            self.resampler.set_level(self.cycle, level);
        }
    }

    fn current_level(&mut self) -> f32 {
        self.mixer.mix(
            self.pulse1.output(),
            self.pulse2.output(),
            self.triangle.output(),
            self.noise.output(),
            self.dmc.output(),
        )
    }

    fn status_bits(&self) -> u8 {
        u8::from(self.pulse1.length.is_active())
            | u8::from(self.pulse2.length.is_active()) << 1
            | u8::from(self.triangle.length.is_active()) << 2
            | u8::from(self.noise.length.is_active()) << 3
            | u8::from(self.dmc.is_active()) << 4
            | u8::from(self.frame_counter.irq_flag) << 6
            | u8::from(self.dmc.irq_flag) << 7
    }

    /// $4015 read: `IF-D NT21`. Acknowledges the frame IRQ. Bit 5 is returned as 0 (open bus is
    /// the console's business).
    ///
    /// The acknowledge is latched and only clears the flag at the start of the next get cycle
    /// (AccuracyCoin "Frame Counter IRQ" 6/7: of two reads on consecutive cycles, the second
    /// still sees the flag when the first was on a get cycle). A flag set by the sequencer on
    /// the clearing tick stays set, so in 4-step mode, where the flag is set on three
    /// consecutive cycles, reads on or just before those cycles do not clear it.
    pub fn read_status(&mut self) -> u8 {
        let status = self.status_bits();
        let clear_tick = if Self::is_get_cycle(self.cycle) {
            self.cycle + 1
        } else {
            self.cycle
        };
        if clear_tick < self.frame_irq_clear_tick {
            self.frame_irq_clear_tick = clear_tick;
            self.next_event = self.next_event.min(clear_tick);
        }
        status
    }

    /// $4015 as it would read, without side effects.
    pub fn peek_status(&self) -> u8 {
        self.status_bits()
    }

    /// The channels' periods, volumes and counters as of now, without side effects.
    pub fn channel_state(&self) -> ChannelState {
        ChannelState {
            pulse1: self.pulse1.state(),
            pulse2: self.pulse2.state(),
            triangle: self.triangle.state(),
            noise: self.noise.state(),
            dmc: self.dmc.state(),
        }
    }

    /// Brings the channels in a silent run up to the access of cycle `self.cycle`: applies
    /// the run's expiries that fell on earlier ticks (the eager schedule had them; the one on
    /// this very tick comes after the access), and reschedules the rest as single expiries,
    /// so whatever the access changes (a register, the sample rate, a reset) meets each
    /// channel exactly as stepping every expiry would have left it.
    fn settle_silent_runs(&mut self) {
        let now = self.cycle;
        let settle = |next: &mut u64, steps: &mut u16, period: u64| -> u16 {
            if *steps <= 1 || *next == NEVER {
                return 0;
            }
            // The run was planned on the tick of its previous expiry, before this access.
            let planned_at = next.saturating_sub(period * u64::from(*steps));
            let elapsed = now.saturating_sub(planned_at + 1) / period;
            let done = u16::try_from(elapsed).unwrap_or(u16::MAX).min(*steps - 1);
            *next = planned_at + period * (u64::from(done) + 1);
            *steps = 1;
            done
        };
        let done = settle(
            &mut self.pulse1_next,
            &mut self.pulse1_steps,
            self.pulse1.timer_period(),
        );
        self.pulse1.step_by(done);
        let done = settle(
            &mut self.pulse2_next,
            &mut self.pulse2_steps,
            self.pulse2.timer_period(),
        );
        self.pulse2.step_by(done);
        let done = settle(
            &mut self.noise_next,
            &mut self.noise_steps,
            self.noise.timer_period(),
        );
        self.noise.shift_by(done);
    }

    fn write_status(&mut self, value: u8) {
        self.pulse1.length.set_enabled(value & 0x01 != 0);
        self.pulse2.length.set_enabled(value & 0x02 != 0);
        self.triangle.length.set_enabled(value & 0x04 != 0);
        self.noise.length.set_enabled(value & 0x08 != 0);
        let dmc_enabled = value & 0x10 != 0;
        self.dmc.set_enabled(dmc_enabled);
        let delay = if Self::is_get_cycle(self.cycle) {
            DMC_LOAD_DELAY_GET
        } else {
            DMC_LOAD_DELAY_PUT
        };
        self.dmc_gate_tick = self.cycle + u64::from(delay) - 1;
        self.dmc_gate_open = dmc_enabled;
        self.touch();
    }

    /// Register write, $4000-$4013, $4015 and $4017; other addresses are ignored.
    pub fn write_register(&mut self, addr: u16, value: u8) {
        self.settle_silent_runs();
        match addr {
            0x4000..=0x4003 => {
                self.pulse1.write(addr, value);
                self.length_commit_pending |= addr & 3 == 0 || addr & 3 == 3;
            }
            0x4004..=0x4007 => {
                self.pulse2.write(addr, value);
                self.length_commit_pending |= addr & 3 == 0 || addr & 3 == 3;
            }
            0x4008..=0x400B => {
                self.triangle.write(addr, value);
                self.length_commit_pending |= addr & 3 == 0 || addr & 3 == 3;
            }
            0x400C..=0x400F => {
                self.noise.write(addr, value);
                self.length_commit_pending |= addr & 3 == 0 || addr & 3 == 3;
            }
            0x4010..=0x4013 => self.dmc.write(addr, value),
            0x4015 => self.write_status(value),
            0x4017 => {
                let delay = if Self::is_get_cycle(self.cycle) {
                    FRAME_COUNTER_WRITE_DELAY_GET
                } else {
                    FRAME_COUNTER_WRITE_DELAY_PUT
                };
                self.frame_counter.write(value, self.cycle, delay);
            }
            _ => return,
        }
        self.touch();
    }

    /// The /IRQ output (frame IRQ flag or DMC IRQ flag) for the CPU to sample after a cycle's
    /// `tick`. It shows the flags as they were at that cycle's bus access: a flag set by the
    /// frame counter during tick N is on the line sampled after tick N+1, the same cycle a
    /// $4015 read first sees it (this timing passes blargg's 08.irq_timing); a flag cleared by
    /// a $4015 read or register write on cycle N is off the line sampled after tick N.
    #[inline]
    pub fn irq_line(&self) -> bool {
        self.irq_output
    }

    /// `Some(address)` while the DMC wants a sample byte fetched. The request appears after
    /// the tick that raised it; the DMA unit should try to halt the CPU from the next cycle.
    #[inline]
    pub fn dmc_dma_address(&self) -> Option<u16> {
        self.dmc.dma_address()
    }

    /// Whether the DMC wants a sample byte fetched: `dmc_dma_address().is_some()`, as one
    /// load (the console asks before every CPU read cycle).
    #[inline(always)]
    pub fn dmc_dma_wanted(&self) -> bool {
        self.dmc.dma_wanted()
    }

    /// The DMA unit read the requested byte. A fetch past its dummy cycle is committed, so
    /// the byte is taken even if a $4015 write withdrew the request since.
    pub fn dmc_dma_complete(&mut self, value: u8) {
        // The output unit's last clock, and whether it was on this APU cycle.
        let last_output_clock = self.dmc_next.saturating_sub(self.dmc.timer_period());
        let output_just_starved = self.cycle.saturating_sub(last_output_clock) < LATE_FEED_WINDOW;
        self.dmc.dma_complete(value, output_just_starved);
        self.dmc_fetch_tick = self.cycle;
        // A DMC IRQ raised by the last byte goes onto the line at this cycle's tick.
        self.next_event = self.cycle;
    }

    /// The output rate set by [`Apu::set_sample_rate`] (0 = audio off).
    pub fn sample_rate(&self) -> u32 {
        self.resampler.sample_rate()
    }

    /// Which APU this is: its frame-sequencer steps and noise and DMC periods (a console
    /// setting, not state). On a powered-on APU that has not run, the sequencer's first step
    /// and the DMC timer start from the model's periods too; later, the channels keep their
    /// period registers' indexes and the sequencer takes the new lengths from its next step.
    pub fn set_model(&mut self, model: ApuModel) {
        self.settle_silent_runs();
        self.noise.set_model(model);
        self.dmc.set_model(model);
        self.frame_counter.set_model(model);
        if self.cycle == 0 {
            self.frame_counter = FrameCounter::new_for(Self::virtual_4017_effect_tick(0), model);
            self.dmc_next = self.dmc.timer_period() - 2 + GET_CYCLE_PARITY;
            self.schedule_next_event();
        }
    }

    /// Sets the model of an APU decoded from a save state (which does not carry it), before
    /// [`Apu::validate_state`]: its periods are already the model's, so nothing is converted.
    pub fn set_decoded_model(&mut self, model: ApuModel) {
        self.noise.set_decoded_model(model);
        self.dmc.set_decoded_model(model);
        self.frame_counter.set_model(model);
    }

    /// The model set by [`Apu::set_model`] (or [`Apu::set_decoded_model`]).
    pub fn model(&self) -> ApuModel {
        self.frame_counter.model()
    }

    /// The CPU clock in Hz, which the audio resampler converts from (NTSC's by default; the
    /// console, which owns the master clock, passes its own). Only the step per cycle changes: the sample phase and the
    /// filters run on. The clock already set, or one that is not a positive finite number,
    /// changes nothing, so a restored state's audio continues bit for bit. A console setting,
    /// not state: set it on a decoded APU before [`Apu::validate_state`], which checks the
    /// resampler's step against it.
    pub fn set_cpu_clock_hz(&mut self, hz: f64) {
        self.resampler.set_cpu_clock_hz(hz);
    }

    /// Late RP2A03G / RP2A03H DMC DMA timing (`true`: no gap between DMC DMAs) or the
    /// earlier 2A03s' (`false`, the default); see `Dmc::set_stale_reload_completes`. A
    /// console setting, not state.
    pub fn set_stale_reload_completes(&mut self, completes: bool) {
        self.dmc.set_stale_reload_completes(completes);
    }

    /// Set the output rate (0 turns audio off). Setting the rate already in use changes
    /// nothing: a host that sets its rate after loading a save state keeps the restored
    /// resampler, so the audio continues bit for bit instead of restarting its filters and
    /// its sample phase. Allocates the sample buffer (about a quarter second), so call it
    /// outside the frame loop.
    pub fn set_sample_rate(&mut self, hz: u32) {
        if Resampler::effective_rate(hz) == self.sample_rate() {
            return;
        }
        self.settle_silent_runs();
        let level = self.current_level();
        self.resampler.set_sample_rate(hz, self.cycle, level);
        self.touch();
    }

    /// Move the mono samples (-1.0..=1.0) completed so far to the end of `out`.
    /// Call about once per frame; the internal buffer holds a quarter second, beyond which
    /// the oldest audio is dropped.
    pub fn take_samples(&mut self, out: &mut Vec<f32>) {
        self.resampler.take_samples(self.cycle, out);
    }
}

#[cfg(test)]
mod tests;
