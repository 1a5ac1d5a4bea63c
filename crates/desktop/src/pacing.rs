//! Timing: when to run the next emulated frame, and how to keep the audio queue at its target
//! without crackles (queue empty) or growing latency (queue overfull).
//!
//! The audio device's clock is the master: the console runs at exactly its frame rate (60.0988
//! frames per second on NTSC, 50.007 on PAL and Dendy) *of audio time*, so a frame's worth of
//! sound (sample rate / frame rate samples) is made in the time the device takes to play it, and sound neither runs dry nor piles up. The
//! device's clock never quite agrees with the computer's (sound-card crystals are off by up to
//! a few tenths of a percent), so:
//!
//! - [`AudioClock`] measures the device's true speed from how many samples it has taken over
//!   the last half minute, and the [`FramePacer`] schedules frames by the computer's steady
//!   clock scaled by that speed. Frames stay evenly spaced (each one the same wall time), so
//!   video does not stutter on a 60 Hz or 144 Hz display, and their rate follows the device.
//! - Dynamic rate control ([`RateControl`]) absorbs what the measurement cannot see (its lag,
//!   scheduling jitter): it watches the audio queue and resamples the console's audio by a tiny
//!   ratio (at most ±0.5%, far below what the ear notices as pitch) to keep the queue at its
//!   target level.
//!
//! Without an audio device, the computer's clock alone paces the frames.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The NTSC console's frame rate: a 21.477272 MHz master clock, 4 master cycles per PPU dot,
/// and 341 x 262 - 0.5 dots per frame (the skipped dot of odd frames) = 39375000 / 655171.
/// Other regions pace at their own rate (`nes::Region::frame_rate_hz`: PAL 50.007).
#[cfg(test)]
const NES_FRAME_RATE: f64 = 39_375_000.0 / 655_171.0;

/// How fast emulation runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// Throttled to this multiple of the console's speed (1.0 = normal).
    Throttled(f64),
    /// As fast as the machine can.
    Unthrottled,
}

impl Speed {
    /// From a config value: 0 means unthrottled.
    pub fn from_multiplier(multiplier: f64) -> Speed {
        if multiplier <= 0.0 {
            Speed::Unthrottled
        } else {
            Speed::Throttled(multiplier)
        }
    }

    pub fn is_normal(self) -> bool {
        self == Speed::Throttled(1.0)
    }
}

/// When a falling-behind pacer gives up catching up: after a stall (window dragged, machine
/// suspended) it resumes from now instead of racing through the missed frames.
const MAX_FRAMES_BEHIND: u32 = 4;

/// Decides when frames run.
#[derive(Debug, Clone)]
pub struct FramePacer {
    /// The console's frames per second at normal speed.
    frame_rate: f64,
    speed: Speed,
    /// Audio-device seconds per steady-clock second ([`AudioClock::speed`]); 1.0 without audio.
    clock_speed: f64,
    /// When the next frame is due (throttled speeds).
    next_frame: Instant,
}

impl FramePacer {
    /// A pacer for a console of `frame_rate` frames per second.
    pub fn new(now: Instant, frame_rate: f64) -> FramePacer {
        FramePacer {
            frame_rate,
            speed: Speed::Throttled(1.0),
            clock_speed: 1.0,
            next_frame: now,
        }
    }

    /// Pace a console of `frame_rate` frames per second from now on (another ROM's region).
    pub fn set_frame_rate(&mut self, frame_rate: f64) {
        self.frame_rate = frame_rate;
    }

    /// Follow the audio device's clock: frames run `clock_speed` times as fast as the steady
    /// clock says, so that 60.0988 of them take one second of the device's time.
    pub fn set_clock_speed(&mut self, clock_speed: f64) {
        self.clock_speed = clock_speed;
    }

    pub fn speed(&self) -> Speed {
        self.speed
    }

    /// Change speed; the next frame is due one new period after now at the latest.
    pub fn set_speed(&mut self, speed: Speed, now: Instant) {
        if speed != self.speed {
            self.speed = speed;
            if let Some(period) = self.period() {
                self.next_frame = self.next_frame.min(now + period);
            }
        }
    }

    /// Wall time of one frame at the current speed (`None` when unthrottled).
    pub fn period(&self) -> Option<Duration> {
        match self.speed {
            Speed::Throttled(multiplier) => Some(Duration::from_secs_f64(
                1.0 / (self.frame_rate * multiplier * self.clock_speed),
            )),
            Speed::Unthrottled => None,
        }
    }

    /// How many frames to run now. Unthrottled, this is 1 (the caller runs frames until its
    /// time slice for this wake-up is used up).
    pub fn frames_due(&mut self, now: Instant) -> u32 {
        let Some(period) = self.period() else {
            self.next_frame = now;
            return 1;
        };
        if now < self.next_frame {
            return 0;
        }
        let behind = now.duration_since(self.next_frame).as_secs_f64() / period.as_secs_f64();
        if behind >= f64::from(MAX_FRAMES_BEHIND) {
            self.next_frame = now + period;
            return 1;
        }
        let due = behind as u32 + 1;
        self.next_frame += period * due;
        due
    }

    /// When to wake up for the next frame (`None`: run again right away).
    pub fn next_deadline(&self) -> Option<Instant> {
        self.period().map(|_| self.next_frame)
    }

    /// Restart the schedule from now (after a pause, so paused time is not made up).
    pub fn restart(&mut self, now: Instant) {
        self.next_frame = now;
    }
}

/// How far the measured audio clock may be from the steady clock. Real devices are within a
/// few tenths of a percent; a larger figure means the device stalled (suspend, a busy sound
/// server), which rate control and the queue's re-priming handle better than a speed change.
const MAX_CLOCK_DEVIATION: f64 = 0.01;
/// The device's speed is measured over this long (long enough that the device taking samples
/// in bursts of a few milliseconds does not matter).
const CLOCK_WINDOW: Duration = Duration::from_secs(30);
/// No measurement before this much device time: starting streams take a burst to fill the
/// device's buffer.
const CLOCK_WARM_UP: Duration = Duration::from_secs(1);
/// A measurement is taken this often.
const CLOCK_MARK_INTERVAL: Duration = Duration::from_millis(500);
/// A device that takes no samples for this long has stalled.
const CLOCK_STALL: Duration = Duration::from_millis(250);
/// Shortest span a speed is computed over.
const CLOCK_MIN_SPAN: Duration = Duration::from_secs(2);

/// The audio device's clock measured against the steady clock: the device's count of samples
/// taken, sampled every half second over a sliding window.
#[derive(Debug, Clone)]
pub struct AudioClock {
    sample_rate: f64,
    started: Instant,
    /// (steady time, samples played), oldest first, spanning at most [`CLOCK_WINDOW`].
    marks: VecDeque<(Instant, u64)>,
    /// When the sample count last changed, and to what.
    last_change: Option<(Instant, u64)>,
}

impl AudioClock {
    pub fn new(sample_rate: u32, now: Instant) -> AudioClock {
        AudioClock {
            sample_rate: f64::from(sample_rate.max(1)),
            started: now,
            marks: VecDeque::new(),
            last_change: None,
        }
    }

    /// Note the device's sample count (`AudioOutput::played`) at `now`; cheap to call often.
    pub fn observe(&mut self, now: Instant, played: u64) {
        if now < self.started + CLOCK_WARM_UP {
            return;
        }
        if let Some((changed_at, last_played)) = self.last_change {
            if played == last_played {
                if now.duration_since(changed_at) > CLOCK_STALL {
                    // The device stopped taking samples (a running one does every few
                    // milliseconds): an outage, not a slow clock. Measure afresh after it.
                    self.marks.clear();
                }
                return;
            }
            if played < last_played {
                // The device restarted its count.
                self.marks.clear();
            }
        }
        self.last_change = Some((now, played));
        if let Some(&(last, _)) = self.marks.back() {
            if now < last + CLOCK_MARK_INTERVAL {
                return;
            }
        }
        self.marks.push_back((now, played));
        while self
            .marks
            .front()
            .is_some_and(|&(time, _)| now.duration_since(time) > CLOCK_WINDOW)
        {
            self.marks.pop_front();
        }
    }

    /// Device seconds per steady second: 1.0 until measured, then within ±1%.
    pub fn speed(&self) -> f64 {
        let (Some(&(first, first_played)), Some(&(last, last_played))) =
            (self.marks.front(), self.marks.back())
        else {
            return 1.0;
        };
        let span = last.duration_since(first);
        if span < CLOCK_MIN_SPAN {
            return 1.0;
        }
        let device_seconds = (last_played - first_played) as f64 / self.sample_rate;
        (device_seconds / span.as_secs_f64())
            .clamp(1.0 - MAX_CLOCK_DEVIATION, 1.0 + MAX_CLOCK_DEVIATION)
    }
}

/// Dynamic rate control: the resampling ratio (output samples per input sample) that steers
/// the audio queue towards its target fill level.
#[derive(Debug, Clone, Copy)]
pub struct RateControl {
    /// Queue level aimed at, in samples.
    target: f64,
    /// Largest ratio change (0.005 = ±0.5%).
    max_adjustment: f64,
}

impl RateControl {
    pub fn new(target_samples: usize, max_adjustment: f64) -> RateControl {
        RateControl {
            target: target_samples.max(1) as f64,
            max_adjustment,
        }
    }

    /// Output samples to make per input sample, given the samples now queued: fewer when the
    /// queue is fuller than the target, more when it is emptier, in proportion to the error.
    pub fn ratio(&self, queued: usize) -> f64 {
        let error = ((queued as f64 - self.target) / self.target).clamp(-1.0, 1.0);
        1.0 - self.max_adjustment * error
    }
}

/// A fractional-ratio resampler (linear interpolation) for the small corrections of
/// [`RateControl`]; the console's own resampler has already band-limited the audio.
#[derive(Debug, Clone, Default)]
pub struct DriftResampler {
    /// Position of the next output sample, in input samples after `previous`.
    position: f64,
    /// The last input sample of the previous call (interpolation needs one sample of history).
    previous: f32,
}

impl DriftResampler {
    /// Resample `input` by `ratio` (output samples per input sample), appending to `out`.
    pub fn process(&mut self, input: &[f32], ratio: f64, mut out: impl FnMut(f32)) {
        let step = 1.0 / ratio;
        let len = input.len() as f64;
        // Input sample i is at position i + 1 (position 0 is `previous`).
        while self.position < len {
            let index = self.position as usize;
            let fraction = (self.position - index as f64) as f32;
            let left = if index == 0 {
                self.previous
            } else {
                input[index - 1]
            };
            let right = input[index];
            out(left + (right - left) * fraction);
            self.position += step;
        }
        self.position -= len;
        if let Some(&last) = input.last() {
            self.previous = last;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_rate_is_the_ntsc_console_s() {
        assert!(
            (NES_FRAME_RATE - 60.0988).abs() < 0.0001,
            "{NES_FRAME_RATE}"
        );
    }

    /// Simulated wake-ups every `step` for `seconds`; returns the frames run.
    fn run_for(pacer: &mut FramePacer, start: Instant, step: Duration, seconds: f64) -> u64 {
        let mut frames = 0u64;
        let mut now = start;
        while now < start + Duration::from_secs_f64(seconds) {
            frames += u64::from(pacer.frames_due(now));
            now += step;
        }
        frames
    }

    #[test]
    fn normal_speed_runs_60_0988_frames_a_second_whatever_the_wakeups() {
        for wakeup_hz in [60.0, 144.0, 1000.0] {
            let start = Instant::now();
            let mut pacer = FramePacer::new(start, NES_FRAME_RATE);
            let step = Duration::from_secs_f64(1.0 / wakeup_hz);
            let frames = run_for(&mut pacer, start, step, 100.0);
            assert!(
                (frames as f64 - NES_FRAME_RATE * 100.0).abs() <= 2.0,
                "{frames} frames in 100 s at {wakeup_hz} Hz wake-ups"
            );
        }
    }

    #[test]
    fn speed_multiplies_the_rate_and_unthrottled_always_runs() {
        let start = Instant::now();
        let mut pacer = FramePacer::new(start, NES_FRAME_RATE);
        pacer.set_speed(Speed::Throttled(2.0), start);
        let frames = run_for(&mut pacer, start, Duration::from_millis(1), 10.0);
        assert!(
            (frames as f64 - NES_FRAME_RATE * 20.0).abs() <= 2.0,
            "{frames}"
        );
        pacer.set_speed(Speed::Unthrottled, start);
        assert_eq!(pacer.next_deadline(), None);
        assert_eq!(pacer.frames_due(start), 1);
        assert_eq!(Speed::from_multiplier(0.0), Speed::Unthrottled);
    }

    #[test]
    fn a_stall_is_not_made_up_with_a_burst() {
        let start = Instant::now();
        let mut pacer = FramePacer::new(start, NES_FRAME_RATE);
        assert_eq!(pacer.frames_due(start), 1);
        // A 2-frame hiccup is caught up...
        let period = pacer.period().unwrap();
        assert_eq!(pacer.frames_due(start + period * 2 + period / 2), 2);
        // ...a 1-second stall is not.
        assert_eq!(pacer.frames_due(start + Duration::from_secs(1)), 1);
        let next = pacer.next_deadline().unwrap();
        assert!(next > start + Duration::from_secs(1));
    }

    /// A device taking 0.3% more samples than nominal, in bursts of 512 at irregular times.
    #[test]
    fn the_audio_clock_measures_the_device_s_true_speed() {
        let start = Instant::now();
        let rate = 48_000u32;
        let mut clock = AudioClock::new(rate, start);
        assert_eq!(clock.speed(), 1.0, "nothing measured yet");
        let device_speed = 1.003;
        let mut played = 0u64;
        let mut owed = 0.0f64;
        let mut now = start;
        let mut step = 0u64;
        while now < start + Duration::from_secs(40) {
            // Wake-ups every 3-13 ms, like a busy event loop.
            step += 1;
            let dt = Duration::from_micros(3_000 + (step * 7919) % 10_000);
            now += dt;
            owed += dt.as_secs_f64() * f64::from(rate) * device_speed;
            while owed >= 512.0 {
                played += 512;
                owed -= 512.0;
            }
            clock.observe(now, played);
        }
        let measured = clock.speed();
        assert!(
            (measured - device_speed).abs() < 0.0002,
            "measured {measured}"
        );
        // The pacer then runs 60.0988 frames per second of the device's time.
        let mut pacer = FramePacer::new(now, NES_FRAME_RATE);
        pacer.set_clock_speed(measured);
        let frames = run_for(&mut pacer, now, Duration::from_millis(1), 100.0);
        let per_device_second = frames as f64 / (100.0 * device_speed);
        assert!(
            (per_device_second - NES_FRAME_RATE).abs() < 0.02,
            "{per_device_second} frames per device second"
        );
    }

    #[test]
    fn a_stalled_or_restarted_device_does_not_skew_the_clock() {
        let start = Instant::now();
        let mut clock = AudioClock::new(48_000, start);
        let mut played = 0u64;
        for tenth in 10..200u64 {
            played += 4_800;
            clock.observe(start + Duration::from_millis(tenth * 100), played);
        }
        assert!((clock.speed() - 1.0).abs() < 1e-9, "{}", clock.speed());
        // The device stops for five seconds (the sound server hiccups): not a slow clock.
        for tenth in 200..250u64 {
            clock.observe(start + Duration::from_millis(tenth * 100), played);
        }
        assert_eq!(clock.speed(), 1.0);
        for tenth in 250..300u64 {
            played += 4_800 * 101 / 100;
            clock.observe(start + Duration::from_millis(tenth * 100), played);
        }
        assert!((clock.speed() - 1.01).abs() < 1e-9, "{}", clock.speed());
        // A restarted device counts from zero: measured afresh, not as a huge negative speed.
        clock.observe(start + Duration::from_secs(31), 100);
        assert_eq!(clock.speed(), 1.0);
    }

    #[test]
    fn rate_control_steers_towards_the_target() {
        let control = RateControl::new(3000, 0.005);
        assert_eq!(control.ratio(3000), 1.0);
        assert!(control.ratio(4000) < 1.0);
        assert!(control.ratio(2000) > 1.0);
        assert_eq!(control.ratio(0), 1.005);
        assert_eq!(control.ratio(100_000), 0.995);
    }

    /// A device whose clock runs 0.3% slower or faster than ours. Frames paced by our clock
    /// alone: rate control keeps the queue from running dry or growing, at the price of a
    /// 0.3% pitch shift. Frames paced by the measured audio clock: the queue stays at its
    /// target with the ratio at 1 (no pitch shift at all).
    #[test]
    fn rate_control_absorbs_clock_drift_without_underruns() {
        for device_clock in [0.997, 1.003] {
            for audio_paced in [false, true] {
                let rate = 48_000.0;
                let target = 3072;
                let control = RateControl::new(target, 0.005);
                let mut resampler = DriftResampler::default();
                let mut queued = target as f64;
                let mut min_queued = f64::MAX;
                let input = vec![0.25f32; (rate / NES_FRAME_RATE) as usize + 1];
                let mut fractional_input = 0.0;
                let pacer_clock = if audio_paced { device_clock } else { 1.0 };
                for frame in 0..60 * 600 {
                    // The console makes rate / 60.0988 samples a frame.
                    fractional_input += rate / NES_FRAME_RATE;
                    let count = fractional_input as usize;
                    fractional_input -= count as f64;
                    let mut made = 0usize;
                    resampler.process(&input[..count], control.ratio(queued as usize), |_| {
                        made += 1
                    });
                    queued += made as f64;
                    // The device plays for the frame's wall time, at its own clock.
                    queued -= rate * device_clock / (NES_FRAME_RATE * pacer_clock);
                    if frame > 60 * 10 {
                        min_queued = min_queued.min(queued);
                    }
                }
                let context = format!("clock {device_clock}, audio paced: {audio_paced}");
                let error = (queued - target as f64).abs() / target as f64;
                assert!(error < 0.7, "{context}: queue at {queued}");
                assert!(min_queued > 0.0, "{context}: ran dry");
                let ratio = control.ratio(queued as usize);
                if audio_paced {
                    assert!((ratio - 1.0).abs() < 1e-4, "{context}: ratio {ratio}");
                } else {
                    assert!(
                        (ratio - device_clock).abs() < 5e-4,
                        "{context}: ratio {ratio}"
                    );
                }
            }
        }
    }

    #[test]
    fn resampler_makes_ratio_times_the_samples_and_keeps_levels() {
        let mut resampler = DriftResampler::default();
        let input = vec![0.5f32; 800];
        let mut out = Vec::new();
        for _ in 0..100 {
            resampler.process(&input, 1.004, |s| out.push(s));
        }
        let expected = 80_000.0 * 1.004;
        assert!((out.len() as f64 - expected).abs() <= 1.0, "{}", out.len());
        // Outputs before input position 1 blend in the silence before the first call; after
        // them the level is unchanged.
        assert!(out[2..].iter().all(|&s| (s - 0.5).abs() < 1e-6));
    }

    #[test]
    fn resampler_interpolates_across_calls() {
        let mut resampler = DriftResampler::default();
        let mut out = Vec::new();
        let ramp: Vec<f32> = (0..8).map(|i| i as f32).collect();
        resampler.process(&ramp[..4], 2.0, |s| out.push(s));
        resampler.process(&ramp[4..], 2.0, |s| out.push(s));
        // Half-sample steps along the ramp, continuous at the seam (starts from silence).
        let expected: Vec<f32> = (0..16).map(|i| (i as f32 / 2.0 - 1.0).max(0.0)).collect();
        assert_eq!(out, expected);
    }
}
