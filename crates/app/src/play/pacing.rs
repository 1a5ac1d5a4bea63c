//! Timing: when to run the next emulated frame, and how to keep the audio queue at its target
//! without crackles (queue empty) or growing latency (queue overfull).
//!
//! Frames are paced by a steady clock at exactly the console's rate (60.0988 frames per second
//! at normal speed), so every frame takes the same wall time and video does not stutter on a
//! 60 Hz or 144 Hz display. The audio device runs on its own clock, which never quite agrees
//! with ours: dynamic rate control ([`RateControl`]) watches how full the audio queue is and
//! resamples the console's audio by a tiny ratio (at most ±0.5%, far below what the ear
//! notices as pitch) so the device's clock, not ours, decides how much audio there is. The
//! queue then stays at its target level indefinitely.

use std::time::{Duration, Instant};

/// The NTSC console's frame rate: a 21.477272 MHz master clock, 4 master cycles per PPU dot,
/// and 341 x 262 - 0.5 dots per frame (the skipped dot of odd frames) = 39375000 / 655171.
pub const NES_FRAME_RATE: f64 = 39_375_000.0 / 655_171.0;

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
    speed: Speed,
    /// When the next frame is due (throttled speeds).
    next_frame: Instant,
}

impl FramePacer {
    pub fn new(now: Instant) -> FramePacer {
        FramePacer {
            speed: Speed::Throttled(1.0),
            next_frame: now,
        }
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
            Speed::Throttled(multiplier) => {
                Some(Duration::from_secs_f64(1.0 / (NES_FRAME_RATE * multiplier)))
            }
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
            let mut pacer = FramePacer::new(start);
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
        let mut pacer = FramePacer::new(start);
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
        let mut pacer = FramePacer::new(start);
        assert_eq!(pacer.frames_due(start), 1);
        // A 2-frame hiccup is caught up...
        let period = pacer.period().unwrap();
        assert_eq!(pacer.frames_due(start + period * 2 + period / 2), 2);
        // ...a 1-second stall is not.
        assert_eq!(pacer.frames_due(start + Duration::from_secs(1)), 1);
        let next = pacer.next_deadline().unwrap();
        assert!(next > start + Duration::from_secs(1));
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

    /// A device whose clock runs 0.3% slower or faster than ours: with rate control the
    /// queue settles near the target and never runs dry or grows without bound.
    #[test]
    fn rate_control_absorbs_clock_drift_without_underruns() {
        for device_clock in [0.997, 1.003] {
            let rate = 48_000.0;
            let target = 3072;
            let control = RateControl::new(target, 0.005);
            let mut resampler = DriftResampler::default();
            let mut queued = target as f64;
            let mut min_queued = f64::MAX;
            let input = vec![0.25f32; (rate / NES_FRAME_RATE) as usize + 1];
            let mut fractional_input = 0.0;
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
                // The device plays a frame's worth of its own clock.
                queued -= rate * device_clock / NES_FRAME_RATE;
                if frame > 60 * 10 {
                    min_queued = min_queued.min(queued);
                }
            }
            let error = (queued - target as f64).abs() / target as f64;
            assert!(error < 0.7, "clock {device_clock}: queue at {queued}");
            assert!(min_queued > 0.0, "clock {device_clock}: ran dry");
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
