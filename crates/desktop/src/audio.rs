//! Audio output through cpal: a queue of mono samples the device callback drains, with volume
//! and mute applied on the way out.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, SizedSample};

/// The samples waiting for the device, kept near a target level.
#[derive(Debug)]
struct SampleQueue {
    samples: VecDeque<f32>,
    target: usize,
}

impl SampleQueue {
    fn new(target: usize) -> SampleQueue {
        SampleQueue {
            samples: VecDeque::with_capacity(target * 4 + 1),
            target,
        }
    }

    /// Queue samples; beyond four times the target the oldest are dropped (only after a
    /// long stall of the audio device), so latency can never build up.
    fn push(&mut self, samples: &[f32]) {
        if self.samples.len() < self.target / 4 {
            // The queue ran (nearly) dry: at start, after a pause, a state load or a stall.
            // Re-prime it with silence to the full latency, rather than crackle for the many
            // seconds the ±0.5% rate control would take to refill it.
            let primed = self
                .target
                .saturating_sub(samples.len())
                .max(self.samples.len());
            self.samples.resize(primed, 0.0);
        }
        self.samples.extend(samples);
        let limit = self.target * 4;
        if self.samples.len() > limit {
            let excess = self.samples.len() - limit;
            self.samples.drain(..excess);
        }
    }
}

/// State shared with the audio callback.
#[derive(Debug)]
struct Shared {
    queue: Mutex<SampleQueue>,
    /// Volume 0.0-1.0 as f32 bits (an atomic so the callback never waits for it).
    volume: AtomicU32,
    muted: AtomicBool,
    /// Sample frames the device has taken since it started: the audio clock.
    played: AtomicU64,
}

/// An open audio device, playing whatever is queued.
pub struct AudioOutput {
    shared: Arc<Shared>,
    sample_rate: u32,
    /// Queue level kept for the latency asked for, in samples.
    target: usize,
    // Dropping the stream stops playback; kept last so it goes after nothing it uses.
    _stream: cpal::Stream,
}

impl std::fmt::Debug for AudioOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AudioOutput")
            .field("sample_rate", &self.sample_rate)
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl AudioOutput {
    /// Open the default output device. Any failure (no device, device busy, no sound card)
    /// is returned as a message; the caller then runs silently.
    pub fn open(latency_ms: u32) -> Result<AudioOutput, String> {
        let host = cpal::default_host();
        let device = host
            .default_output_device()
            .ok_or_else(|| "no audio output device".to_owned())?;
        let supported = device
            .default_output_config()
            .map_err(|e| format!("the audio device is not available ({e})"))?;
        let sample_rate = supported.sample_rate();
        let config = supported.config();
        let target = (u64::from(sample_rate) * u64::from(latency_ms) / 1000) as usize;
        let shared = Arc::new(Shared {
            queue: Mutex::new(SampleQueue::new(target)),
            volume: AtomicU32::new(1.0f32.to_bits()),
            muted: AtomicBool::new(false),
            played: AtomicU64::new(0),
        });
        let stream = match supported.sample_format() {
            cpal::SampleFormat::F32 => build::<f32>(&device, &config, &shared),
            cpal::SampleFormat::I16 => build::<i16>(&device, &config, &shared),
            cpal::SampleFormat::U16 => build::<u16>(&device, &config, &shared),
            cpal::SampleFormat::I32 => build::<i32>(&device, &config, &shared),
            other => return Err(format!("unsupported audio sample format {other:?}")),
        }?;
        stream
            .play()
            .map_err(|e| format!("cannot start audio playback ({e})"))?;
        Ok(AudioOutput {
            shared,
            sample_rate,
            target,
            _stream: stream,
        })
    }

    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// The queue level the rate control aims at.
    pub fn target(&self) -> usize {
        self.target
    }

    /// Sample frames the device has played (or been given silence for) since it started:
    /// the device's own clock, which paces the emulation (see `pacing::AudioClock`).
    pub fn played(&self) -> u64 {
        self.shared.played.load(Ordering::Relaxed)
    }

    /// Samples queued and not yet played.
    pub fn queued(&self) -> usize {
        self.shared
            .queue
            .lock()
            .map(|q| q.samples.len())
            .unwrap_or(0)
    }

    /// Queue samples for the device (see [`SampleQueue::push`]).
    pub fn push(&self, samples: &[f32]) {
        if let Ok(mut queue) = self.shared.queue.lock() {
            queue.push(samples);
        }
    }

    /// Drop everything queued (after a state load or rewind, so old sound is not heard).
    pub fn clear(&self) {
        if let Ok(mut queue) = self.shared.queue.lock() {
            queue.samples.clear();
        }
    }

    pub fn set_volume(&self, percent: u8) {
        let volume = f32::from(percent.min(100)) / 100.0;
        self.shared
            .volume
            .store(volume.to_bits(), Ordering::Relaxed);
    }

    pub fn set_muted(&self, muted: bool) {
        self.shared.muted.store(muted, Ordering::Relaxed);
    }
}

fn build<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    shared: &Arc<Shared>,
) -> Result<cpal::Stream, String>
where
    T: SizedSample + FromSample<f32>,
{
    let channels = usize::from(config.channels).max(1);
    let shared = Arc::clone(shared);
    let mut last = 0.0f32;
    device
        .build_output_stream::<T, _, _>(
            *config,
            move |data: &mut [T], _| {
                let volume = if shared.muted.load(Ordering::Relaxed) {
                    0.0
                } else {
                    f32::from_bits(shared.volume.load(Ordering::Relaxed))
                };
                shared
                    .played
                    .fetch_add((data.len() / channels) as u64, Ordering::Relaxed);
                let mut queue = shared.queue.lock().ok();
                for frame in data.chunks_mut(channels) {
                    // When the queue runs dry (paused, or a hiccup) hold the last level
                    // decaying to silence instead of jumping to zero, which would click.
                    let sample = match queue.as_mut().and_then(|q| q.samples.pop_front()) {
                        Some(sample) => sample,
                        None => last * 0.995,
                    };
                    last = sample;
                    let value = T::from_sample(sample * volume);
                    for out in frame.iter_mut() {
                        *out = value;
                    }
                }
            },
            |error| eprintln!("audio: {error}"),
            None,
        )
        .map_err(|e| format!("cannot open an audio stream ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dry_queue_is_primed_with_silence_to_the_target() {
        let mut queue = SampleQueue::new(1000);
        queue.push(&[0.5; 100]);
        assert_eq!(queue.samples.len(), 1000);
        assert_eq!(queue.samples[899], 0.0);
        assert_eq!(queue.samples[900], 0.5);
        // A healthy queue is not padded.
        queue.push(&[0.25; 100]);
        assert_eq!(queue.samples.len(), 1100);
        // Drained below a quarter: primed again, keeping what is left in front.
        queue.samples.drain(..900);
        queue.push(&[0.75; 10]);
        assert_eq!(queue.samples.len(), 1000);
        assert_eq!((queue.samples[0], queue.samples[199]), (0.5, 0.25));
        assert_eq!((queue.samples[200], queue.samples[989]), (0.0, 0.0));
        assert_eq!(queue.samples[990], 0.75);
    }

    #[test]
    fn an_overfull_queue_drops_the_oldest_samples() {
        let mut queue = SampleQueue::new(100);
        for value in 0..50 {
            queue.push(&[value as f32; 10]);
        }
        assert_eq!(queue.samples.len(), 400);
        assert_eq!(queue.samples.back(), Some(&49.0));
        assert_eq!(queue.samples.front(), Some(&10.0));
    }
}
