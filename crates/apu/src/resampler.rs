//! Band-limited resampling of the mixer output from the CPU clock to the output rate, plus the
//! NES's analog filter chain (NESdev "APU Mixer": high-pass 90 Hz, high-pass 440 Hz, low-pass
//! 14 kHz).
//!
//! Blip-buffer style: the mixer output is a step function that changes only at a few CPU
//! cycles, so instead of filtering 1.79 million samples per second we add, for each change, a
//! band-limited step (the change times the derivative of a windowed-sinc step, centred on the
//! exact sub-sample time) into a buffer of differences. Reading integrates the differences.
//! The cost is per change, not per cycle.

use std::f64::consts::PI;
use std::fmt;
use std::sync::LazyLock;

use borsh::io::{Error, ErrorKind, Read, Result as IoResult, Write};
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

/// NTSC CPU clock: 21.477272 MHz / 12 (the default; the console sets its own, see
/// `Apu::set_cpu_clock_hz`).
const CPU_CLOCK_HZ: f64 = 21_477_272.0 / 12.0;
/// Taps of the band-limited step; the output is delayed by half of this.
const KERNEL_TAPS: usize = 32;
/// Sub-sample positions of the kernel (log2).
const PHASE_BITS: u32 = 6;
const PHASES: usize = 1 << PHASE_BITS;
/// Kernel cutoff as a fraction of the output rate (Nyquist = 0.5).
const CUTOFF: f64 = 0.43;
/// Fixed-point fraction bits of sample positions.
const FRACTION_BITS: u32 = 32;
/// Buffer length in seconds of output: how long `take_samples` may be left uncalled before
/// changes are dropped.
const BUFFER_SECONDS_DIVISOR: u32 = 4;

/// One-pole filter state (NESdev "APU Mixer" describes the console's RC filters as first order).
#[derive(Clone, Copy, Debug, Default)]
struct OnePole {
    coefficient: f32,
    previous_input: f32,
    previous_output: f32,
}

impl OnePole {
    fn high_pass(cutoff_hz: f64, sample_rate: f64) -> OnePole {
        let rc = 1.0 / (2.0 * PI * cutoff_hz);
        let dt = 1.0 / sample_rate;
        OnePole {
            coefficient: (rc / (rc + dt)) as f32,
            ..OnePole::default()
        }
    }

    fn low_pass(cutoff_hz: f64, sample_rate: f64) -> OnePole {
        let rc = 1.0 / (2.0 * PI * cutoff_hz);
        let dt = 1.0 / sample_rate;
        OnePole {
            coefficient: (dt / (rc + dt)) as f32,
            ..OnePole::default()
        }
    }

    #[inline]
    fn run_high_pass(&mut self, input: f32) -> f32 {
        let output = self.coefficient * (self.previous_output + input - self.previous_input);
        self.previous_input = input;
        self.previous_output = output;
        output
    }

    #[inline]
    fn run_low_pass(&mut self, input: f32) -> f32 {
        self.previous_output += self.coefficient * (input - self.previous_output);
        self.previous_output
    }
}

/// The band-limited steps, shared by every resampler: they depend on nothing but constants.
static KERNEL: LazyLock<Vec<f32>> = LazyLock::new(build_kernel);

/// Blackman-windowed sinc steps: `PHASES` rows of `KERNEL_TAPS` differences, each row summing
/// to 1 so a step of height h adds exactly h once integrated.
fn build_kernel() -> Vec<f32> {
    let mut kernel = vec![0.0f32; PHASES * KERNEL_TAPS];
    let half = (KERNEL_TAPS / 2) as f64;
    for (phase, row) in kernel.chunks_exact_mut(KERNEL_TAPS).enumerate() {
        let fraction = phase as f64 / PHASES as f64;
        // The step happens at `half - 1 + fraction` samples into the row.
        let centre = half - 1.0 + fraction;
        let mut values = [0.0f64; KERNEL_TAPS];
        for (tap, value) in values.iter_mut().enumerate() {
            let x = tap as f64 - centre;
            let sinc = if x.abs() < 1e-9 {
                2.0 * CUTOFF
            } else {
                (2.0 * PI * CUTOFF * x).sin() / (PI * x)
            };
            // Blackman window spanning [-half, half] around the centre.
            let w = (x + half) / (2.0 * half);
            let window = if (0.0..=1.0).contains(&w) {
                0.42 - 0.5 * (2.0 * PI * w).cos() + 0.08 * (4.0 * PI * w).cos()
            } else {
                0.0
            };
            *value = sinc * window;
        }
        let sum: f64 = values.iter().sum();
        for (out, value) in row.iter_mut().zip(values) {
            *out = (value / sum) as f32;
        }
    }
    kernel
}

#[derive(Clone)]
pub(crate) struct Resampler {
    sample_rate: u32,
    /// Output samples per CPU cycle, 32.32 fixed point.
    samples_per_cycle: u64,
    /// Differences of the band-limited output; index 0 is the first sample not yet taken.
    deltas: Vec<f32>,
    /// CPU cycle at which sample position `frame_start_fraction` (in 32.32) of `deltas` lies.
    frame_start_cycle: u64,
    frame_start_fraction: u64,
    /// Mixer level already accounted for in `deltas`.
    level: f32,
    integrator: f32,
    high_pass_90: OnePole,
    high_pass_440: OnePole,
    low_pass_14k: OnePole,
    /// The CPU clock the input is sampled at (a console setting, not state).
    cpu_hz: f64,
}

impl fmt::Debug for Resampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resampler")
            .field("sample_rate", &self.sample_rate)
            .field("buffered_len", &self.deltas.len())
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

/// Floats go into save states as their bit patterns: exact, and NaN-proof.
fn write_f32<W: Write>(value: f32, writer: &mut W) -> IoResult<()> {
    value.to_bits().serialize(writer)
}

fn read_f32<R: Read>(reader: &mut R) -> IoResult<f32> {
    Ok(f32::from_bits(u32::deserialize_reader(reader)?))
}

impl BorshSerialize for OnePole {
    fn serialize<W: Write>(&self, writer: &mut W) -> IoResult<()> {
        write_f32(self.coefficient, writer)?;
        write_f32(self.previous_input, writer)?;
        write_f32(self.previous_output, writer)
    }
}

impl BorshDeserialize for OnePole {
    fn deserialize_reader<R: Read>(reader: &mut R) -> IoResult<Self> {
        Ok(OnePole {
            coefficient: read_f32(reader)?,
            previous_input: read_f32(reader)?,
            previous_output: read_f32(reader)?,
        })
    }
}

/// A save state keeps the resampler's phase, filter memories and the differences not yet
/// turned into samples, so a restored console produces the same audio. Only the used prefix of
/// the difference buffer is stored (it is zero beyond the latest change): a frame's worth, not
/// the quarter second the buffer can hold.
impl BorshSerialize for Resampler {
    fn serialize<W: Write>(&self, writer: &mut W) -> IoResult<()> {
        self.sample_rate.serialize(writer)?;
        self.samples_per_cycle.serialize(writer)?;
        self.frame_start_cycle.serialize(writer)?;
        self.frame_start_fraction.serialize(writer)?;
        write_f32(self.level, writer)?;
        write_f32(self.integrator, writer)?;
        self.high_pass_90.serialize(writer)?;
        self.high_pass_440.serialize(writer)?;
        self.low_pass_14k.serialize(writer)?;
        let used = self
            .deltas
            .iter()
            .rposition(|delta| delta.to_bits() != 0)
            .map_or(0, |last| last + 1);
        u32::try_from(used)
            .map_err(|_| Error::new(ErrorKind::InvalidData, "audio buffer too long"))?
            .serialize(writer)?;
        for delta in &self.deltas[..used] {
            write_f32(*delta, writer)?;
        }
        Ok(())
    }
}

impl BorshDeserialize for Resampler {
    fn deserialize_reader<R: Read>(reader: &mut R) -> IoResult<Self> {
        let mut resampler = Resampler::new();
        let sample_rate = u32::deserialize_reader(reader)?;
        if sample_rate != 0 {
            // Sizes the buffer and checks the rate is one `set_sample_rate` accepts.
            resampler.set_sample_rate(sample_rate, 0, 0.0);
            if resampler.sample_rate != sample_rate {
                return Err(Error::new(ErrorKind::InvalidData, "audio sample rate"));
            }
        }
        resampler.samples_per_cycle = u64::deserialize_reader(reader)?;
        resampler.frame_start_cycle = u64::deserialize_reader(reader)?;
        resampler.frame_start_fraction = u64::deserialize_reader(reader)?;
        resampler.level = read_f32(reader)?;
        resampler.integrator = read_f32(reader)?;
        resampler.high_pass_90 = OnePole::deserialize_reader(reader)?;
        resampler.high_pass_440 = OnePole::deserialize_reader(reader)?;
        resampler.low_pass_14k = OnePole::deserialize_reader(reader)?;
        let used = u32::deserialize_reader(reader)? as usize;
        let Some(live) = resampler.deltas.get_mut(..used) else {
            return Err(Error::new(ErrorKind::InvalidData, "audio buffer length"));
        };
        for delta in live {
            *delta = read_f32(reader)?;
        }
        Ok(resampler)
    }
}

impl Resampler {
    pub(crate) fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    pub(crate) fn new() -> Resampler {
        Resampler {
            sample_rate: 0,
            samples_per_cycle: 0,
            deltas: Vec::new(),
            frame_start_cycle: 0,
            frame_start_fraction: 0,
            level: 0.0,
            integrator: 0.0,
            high_pass_90: OnePole::default(),
            high_pass_440: OnePole::default(),
            low_pass_14k: OnePole::default(),
            cpu_hz: CPU_CLOCK_HZ,
        }
    }

    /// The input is at `hz` CPU cycles per second from now on: only the step per cycle
    /// changes (the sample phase and the filters run on), and nothing at all when `hz` is
    /// the clock already set, so a restored state's audio continues bit for bit.
    pub(crate) fn set_cpu_clock_hz(&mut self, hz: f64) {
        if hz.to_bits() == self.cpu_hz.to_bits() || !(hz.is_finite() && hz > 0.0) {
            return;
        }
        self.cpu_hz = hz;
        if self.enabled() {
            self.samples_per_cycle = self.samples_per_cycle_at(self.sample_rate);
        }
    }

    #[inline]
    pub(crate) fn enabled(&self) -> bool {
        self.sample_rate != 0
    }

    /// The rate `set_sample_rate(hz)` configures: 0 (off), or `hz` kept in a range where
    /// the buffer size and filters stay sensible.
    pub(crate) fn effective_rate(hz: u32) -> u32 {
        if hz == 0 {
            0
        } else {
            hz.clamp(4_000, 384_000)
        }
    }

    /// (Re)configure; `now` is the current CPU cycle and `level` the current mixer output.
    pub(crate) fn set_sample_rate(&mut self, hz: u32, now: u64, level: f32) {
        let hz = Self::effective_rate(hz);
        self.sample_rate = hz;
        if hz == 0 {
            self.deltas = Vec::new();
            return;
        }
        self.samples_per_cycle = self.samples_per_cycle_at(hz);
        self.deltas = vec![0.0; (hz / BUFFER_SECONDS_DIVISOR) as usize + KERNEL_TAPS];
        self.frame_start_cycle = now;
        self.frame_start_fraction = 0;
        self.level = level;
        self.integrator = level;
        [self.high_pass_90, self.high_pass_440, self.low_pass_14k] = Self::filters_at(hz);
        // Start the filters settled on the current level so enabling audio does not click.
        self.high_pass_90.previous_input = level;
        self.low_pass_14k.previous_output = 0.0;
    }

    /// Output samples per CPU cycle (32.32) at `hz` samples per second.
    fn samples_per_cycle_at(&self, hz: u32) -> u64 {
        (f64::from(hz) / self.cpu_hz * (1u64 << FRACTION_BITS) as f64) as u64
    }

    /// The filter chain at `hz` samples per second, with cleared memories.
    fn filters_at(hz: u32) -> [OnePole; 3] {
        let rate = f64::from(hz);
        [
            OnePole::high_pass(90.0, rate),
            OnePole::high_pass(440.0, rate),
            OnePole::low_pass(14_000.0, rate),
        ]
    }

    /// Checks a resampler decoded from a save state against the APU's cycle `now` (see
    /// `Apu::validate_state`). Off, it holds nothing that is used (turning it on sets every
    /// field). On, its rate and the values derived from the rate (the step per cycle, the
    /// filter coefficients) must agree, its position must be a fraction of a sample at a
    /// cycle that has passed, and every float must be finite: a NaN or infinity would spread
    /// through every later sample.
    pub(crate) fn validate_state(&self, now: u64) -> Result<(), InvalidState> {
        if self.sample_rate == 0 {
            return Ok(());
        }
        let consistent = |holds: bool, what: &str| {
            if holds {
                Ok(())
            } else {
                Err(InvalidState::impossible(format!(
                    "APU resampler {what} does not match its rate of {} Hz",
                    self.sample_rate
                )))
            }
        };
        consistent(
            self.samples_per_cycle == self.samples_per_cycle_at(self.sample_rate),
            "step per cycle",
        )?;
        let filters = [self.high_pass_90, self.high_pass_440, self.low_pass_14k];
        let expected = Self::filters_at(self.sample_rate);
        consistent(
            filters.iter().zip(&expected).all(|(filter, expected)| {
                filter.coefficient.to_bits() == expected.coefficient.to_bits()
            }),
            "filter coefficient",
        )?;
        crate::check_range(
            "APU resampler sample fraction",
            self.frame_start_fraction,
            0..=(1u64 << FRACTION_BITS) - 1,
        )?;
        crate::check_range("APU resampler start cycle", self.frame_start_cycle, 0..=now)?;
        let memories = filters
            .iter()
            .flat_map(|filter| [filter.previous_input, filter.previous_output]);
        let all_finite = [self.level, self.integrator]
            .into_iter()
            .chain(memories)
            .chain(self.deltas.iter().copied())
            .all(f32::is_finite);
        if all_finite {
            Ok(())
        } else {
            Err(InvalidState::impossible(
                "APU resampler holds a value that is not a finite number",
            ))
        }
    }

    /// Position of CPU cycle `cycle` in 32.32 output samples from the buffer start.
    #[inline]
    fn position(&self, cycle: u64) -> u64 {
        cycle
            .saturating_sub(self.frame_start_cycle)
            .saturating_mul(self.samples_per_cycle)
            .saturating_add(self.frame_start_fraction)
    }

    /// The mixer output became `level` at CPU cycle `cycle`.
    #[inline]
    pub(crate) fn set_level(&mut self, cycle: u64, level: f32) {
        let delta = level - self.level;
        if delta == 0.0 {
            return;
        }
        self.level = level;
        let position = self.position(cycle);
        let index = usize::try_from(position >> FRACTION_BITS).unwrap_or(usize::MAX);
        let phase = ((position >> (FRACTION_BITS - PHASE_BITS)) as usize) & (PHASES - 1);
        let (Some(slots), Some(row)) = (
            self.deltas
                .get_mut(index..index.saturating_add(KERNEL_TAPS)),
            KERNEL.get(phase * KERNEL_TAPS..(phase + 1) * KERNEL_TAPS),
        ) else {
            // Buffer full (take_samples not called for a long time): the change is lost;
            // the high-pass filters absorb the resulting offset.
            return;
        };
        for (slot, tap) in slots.iter_mut().zip(row) {
            *slot += tap * delta;
        }
    }

    /// Move the samples complete at CPU cycle `now` into `out`.
    pub(crate) fn take_samples(&mut self, now: u64, out: &mut Vec<f32>) {
        if self.sample_rate == 0 {
            return;
        }
        let position = self.position(now);
        let available = usize::try_from(position >> FRACTION_BITS).unwrap_or(usize::MAX);
        let capacity = self.deltas.len() - KERNEL_TAPS;
        let count = available.min(capacity);
        out.reserve(count);
        for &delta in &self.deltas[..count] {
            self.integrator += delta;
            let mut sample = self.high_pass_90.run_high_pass(self.integrator);
            sample = self.high_pass_440.run_high_pass(sample);
            sample = self.low_pass_14k.run_low_pass(sample);
            out.push(sample.clamp(-1.0, 1.0));
        }
        // Keep the tail that later samples still need, and clear what was consumed.
        self.deltas.copy_within(count..count + KERNEL_TAPS, 0);
        self.deltas[KERNEL_TAPS..count + KERNEL_TAPS].fill(0.0);
        if available > capacity {
            // Overrun: drop the excess time rather than grow the buffer.
            self.frame_start_fraction = 0;
        } else {
            self.frame_start_fraction = position & ((1u64 << FRACTION_BITS) - 1);
        }
        self.frame_start_cycle = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_rows_sum_to_one() {
        let kernel = build_kernel();
        for row in kernel.chunks_exact(KERNEL_TAPS) {
            let sum: f32 = row.iter().sum();
            assert!((sum - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn sample_count_tracks_the_clock() {
        let mut resampler = Resampler::new();
        resampler.set_sample_rate(44_100, 0, 0.0);
        let mut out = Vec::new();
        // One second of CPU cycles in uneven chunks.
        let mut now = 0u64;
        let second = CPU_CLOCK_HZ.round() as u64;
        while now < second {
            now = (now + 29_781).min(second);
            resampler.take_samples(now, &mut out);
        }
        assert!((out.len() as i64 - 44_100).abs() <= 1, "{}", out.len());
    }

    #[test]
    fn step_settles_and_high_pass_returns_to_zero() {
        let mut resampler = Resampler::new();
        resampler.set_sample_rate(48_000, 0, 0.0);
        resampler.set_level(100, 0.5);
        let mut out = Vec::new();
        resampler.take_samples(1_789_773 / 100, &mut out);
        let peak = out.iter().cloned().fold(0.0f32, f32::max);
        assert!(peak > 0.3, "step passes through: {peak}");
        let mut tail = Vec::new();
        resampler.take_samples(1_789_773 / 2, &mut tail);
        let last = *tail.last().unwrap();
        assert!(last.abs() < 0.01, "DC removed: {last}");
    }

    #[test]
    fn overrun_drops_without_panicking() {
        let mut resampler = Resampler::new();
        resampler.set_sample_rate(44_100, 0, 0.0);
        for cycle in 0..2_000_000u64 {
            if cycle % 1000 == 0 {
                resampler.set_level(cycle * 1000, if cycle % 2000 == 0 { 0.2 } else { 0.0 });
            }
        }
        let mut out = Vec::new();
        resampler.take_samples(u64::MAX / 2, &mut out);
        assert!(out.len() <= 44_100 / 4);
        assert!(out.iter().all(|s| s.is_finite()));
    }

    #[test]
    fn state_fields_out_of_range_are_refused() {
        let mut resampler = Resampler::new();
        resampler.set_sample_rate(44_100, 1_000, 0.25);
        resampler.set_level(1_200, 0.5);
        assert_eq!(resampler.validate_state(1_500), Ok(()));
        type Edit = fn(&mut Resampler);
        let cases: [(Edit, &str); 5] = [
            (
                |r| r.integrator = f32::NAN,
                "APU resampler holds a value that is not a finite number",
            ),
            (
                |r| r.deltas[3] = f32::INFINITY,
                "APU resampler holds a value that is not a finite number",
            ),
            (
                |r| r.samples_per_cycle += 1,
                "APU resampler step per cycle does not match its rate of 44100 Hz",
            ),
            (
                |r| r.low_pass_14k.coefficient = 2.0,
                "APU resampler filter coefficient does not match its rate of 44100 Hz",
            ),
            (
                |r| r.frame_start_fraction = 1 << 40,
                "APU resampler sample fraction 1099511627776 is out of range 0..=4294967295",
            ),
        ];
        for (edit, message) in cases {
            let mut edited = resampler.clone();
            edit(&mut edited);
            assert_eq!(
                edited.validate_state(1_500).map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
        let mut future = resampler.clone();
        future.frame_start_cycle = 2_000;
        assert_eq!(
            future.validate_state(1_500).map_err(|e| e.to_string()),
            Err("APU resampler start cycle 2000 is out of range 0..=1500".to_string())
        );
        // Off, nothing in it is used.
        let mut off = resampler;
        off.set_sample_rate(0, 1_500, 0.0);
        off.integrator = f32::NAN;
        assert_eq!(off.validate_state(1_500), Ok(()));
    }
}
