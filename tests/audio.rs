//! Audio through the whole console: a synthetic ROM programs the APU through its registers,
//! and the WAV-bound samples are checked for pitch and for aliasing.

use nes::Nes;
use nes_workspace_tests::{ines_image, nrom_program};

const SAMPLE_RATE: u32 = 44_100;
const CPU_HZ: f64 = 1_789_773.0;

/// A program that starts pulse 1 at 50% duty, constant volume 15, timer period `period`, then
/// loops forever.
fn pulse_rom(period: u16, duty: u8) -> Vec<u8> {
    let [lo, hi] = period.to_le_bytes();
    #[rustfmt::skip]
    let code = [
        0xA9, 0x01, 0x8D, 0x15, 0x40,               // LDA #$01 ; STA $4015 (pulse 1 on)
        0xA9, 0x30 | (duty << 6) | 0x0F, 0x8D, 0x00, 0x40, // duty, halt, constant volume 15
        0xA9, 0x08, 0x8D, 0x01, 0x40,               // sweep off (negate set, shift 0)
        0xA9, lo, 0x8D, 0x02, 0x40,                 // timer low
        0xA9, 0x08 | (hi & 7), 0x8D, 0x03, 0x40,    // timer high + length
        0x4C, 0x19, 0x80,                           // JMP *
    ];
    ines_image(0, &nrom_program(&code), &[0; 0x2000])
}

fn render(image: &[u8], frames: u32) -> Vec<f32> {
    let mut nes = Nes::from_ines(image).unwrap();
    nes.set_audio_sample_rate(SAMPLE_RATE);
    let mut samples = Vec::new();
    for _ in 0..frames {
        nes.run_frame();
        nes.take_audio_samples(&mut samples);
    }
    samples
}

/// Power of `samples` at `freq` (Goertzel over a Hann-windowed block).
fn power_at(samples: &[f32], freq: f64) -> f64 {
    let n = samples.len() as f64;
    let omega = 2.0 * std::f64::consts::PI * freq / f64::from(SAMPLE_RATE);
    let coeff = 2.0 * omega.cos();
    let (mut s1, mut s2) = (0.0f64, 0.0f64);
    for (i, &x) in samples.iter().enumerate() {
        let window = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / n).cos();
        let s0 = f64::from(x) * window + coeff * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    (s1 * s1 + s2 * s2 - coeff * s1 * s2) / (n * n)
}

/// The frequency near `around` with the most power, searched in 0.25 Hz steps.
fn peak_near(samples: &[f32], around: f64, span: f64) -> f64 {
    let steps = (2.0 * span / 0.25) as i32;
    (0..=steps)
        .map(|k| around - span + f64::from(k) * 0.25)
        .max_by(|a, b| power_at(samples, *a).total_cmp(&power_at(samples, *b)))
        .unwrap()
}

#[test]
fn pulse_plays_its_programmed_pitch() {
    let period = 253;
    let expected = CPU_HZ / (16.0 * f64::from(period + 1));
    let samples = render(&pulse_rom(period, 2), 90);
    // Skip the first half second: the console's high-pass filters settle.
    let steady = &samples[samples.len() - SAMPLE_RATE as usize..];
    let peak = peak_near(steady, expected, 20.0);
    assert!(
        (peak - expected).abs() / expected < 0.01,
        "fundamental {peak:.2} Hz, expected {expected:.2} Hz"
    );
    // A 50% square wave has odd harmonics only: the 2nd is far below the 3rd.
    let second = power_at(steady, 2.0 * expected);
    let third = power_at(steady, 3.0 * expected);
    assert!(third > 20.0 * second, "2nd {second:e}, 3rd {third:e}");
}

#[test]
fn high_note_has_no_aliasing() {
    // About 3.3 kHz at 12.5% duty: harmonics run far past the 22.05 kHz Nyquist limit, so a
    // resampler without a band limit folds them back between the harmonics as hiss.
    let period = 33;
    let f0 = CPU_HZ / (16.0 * f64::from(period + 1));
    let samples = render(&pulse_rom(period, 0), 90);
    let steady = &samples[samples.len() - SAMPLE_RATE as usize..];
    let mut harmonic = 0.0;
    let mut between = 0.0;
    let mut k = 1.0;
    while (k + 0.5) * f0 < 20_000.0 {
        harmonic += power_at(steady, k * f0);
        between += power_at(steady, (k + 0.5) * f0);
        k += 1.0;
    }
    assert!(
        between < harmonic * 1e-3,
        "energy between harmonics {between:e} vs on them {harmonic:e}"
    );
}

#[test]
fn silence_when_nothing_plays() {
    let image = ines_image(0, &nrom_program(&[0x4C, 0x00, 0x80]), &[0; 0x2000]);
    let samples = render(&image, 30);
    assert!(samples.len() > SAMPLE_RATE as usize / 3);
    assert!(samples.iter().all(|s| s.abs() < 1e-3));
}

#[test]
fn audio_output_survives_a_power_cycle() {
    let mut nes = Nes::from_ines(&pulse_rom(253, 2)).unwrap();
    nes.set_audio_sample_rate(SAMPLE_RATE);
    nes.run_frame();
    nes.power_cycle();
    let mut samples = Vec::new();
    nes.run_frame();
    nes.take_audio_samples(&mut samples);
    assert!(
        samples.len() > 600,
        "{} samples after a power cycle",
        samples.len()
    );
}
