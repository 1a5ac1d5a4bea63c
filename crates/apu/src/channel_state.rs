//! A read-only snapshot of the five channels' register-derived state, for debuggers and
//! scripts (the Lua host's `sound.get`). Taking it costs a few field copies; nothing here runs
//! on the APU's per-cycle path.

use crate::NTSC_CPU_HZ;

/// What each channel is set to play right now: periods, volumes and the counters that gate
/// them. A register written during the current cycle already shows, including a length load,
/// which the APU only commits at the end of the cycle's tick (see `length_counter.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelState {
    pub pulse1: PulseState,
    pub pulse2: PulseState,
    pub triangle: TriangleState,
    pub noise: NoiseState,
    pub dmc: DmcState,
}

/// A pulse channel (NESdev "APU Pulse").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PulseState {
    /// The 11-bit timer period: $4002/$4003 as the sweep unit has since changed it. The tone is
    /// `CPU clock / (16 * (period + 1))`.
    pub period: u16,
    /// Duty cycle index 0-3 (bits 6-7 of $4000): 12.5 %, 25 %, 50 %, 75 % (negated 25 %).
    pub duty: u8,
    /// The envelope's output 0-15: the constant volume, or the decay level.
    pub envelope_volume: u8,
    /// Length counter; 0 silences the channel.
    pub length_counter: u8,
    /// The sweep unit silences the channel: period < 8, or its target period > $7FF (checked
    /// whether or not the sweep is enabled).
    pub sweep_muted: bool,
}

/// The triangle channel (NESdev "APU Triangle").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TriangleState {
    /// The 11-bit timer period ($400A/$400B). The tone is `CPU clock / (32 * (period + 1))`.
    pub period: u16,
    /// Length counter; 0 stops the sequencer.
    pub length_counter: u8,
    /// Linear counter; 0 stops the sequencer.
    pub linear_counter: u8,
}

/// The noise channel (NESdev "APU Noise").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoiseState {
    /// Period index 0-15 (bits 0-3 of $400E).
    pub period_index: u8,
    /// The timer period that index selects, in CPU cycles.
    pub period: u16,
    /// Mode flag (bit 7 of $400E): the 93-step sequence instead of the 32767-step one.
    pub short_mode: bool,
    /// The envelope's output 0-15: the constant volume, or the decay level.
    pub envelope_volume: u8,
    /// Length counter; 0 silences the channel.
    pub length_counter: u8,
}

/// The delta modulation channel (NESdev "APU DMC").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmcState {
    /// Rate index 0-15 (bits 0-3 of $4010).
    pub rate_index: u8,
    /// The output unit's period that index selects, in CPU cycles per sample bit.
    pub rate: u16,
    /// Loop flag (bit 6 of $4010).
    pub looping: bool,
    /// Sample start address, `$C000 + $40 * ($4012)`.
    pub sample_address: u16,
    /// Sample length in bytes, `$10 * ($4013) + 1`.
    pub sample_length: u16,
    /// The last value written to $4011 (7 bits), which the output level started from. Not
    /// part of save states: hardware keeps no such latch (see `Dmc::last_direct_load`).
    pub direct_load: u8,
    /// The 7-bit output level, the DAC input.
    pub output_level: u8,
    /// The output unit is playing sample bits (its current output cycle began with a byte in
    /// the sample buffer) rather than holding the level silently.
    pub playing: bool,
    /// Bytes of the sample the memory reader has still to fetch ($4015 bit 4).
    pub bytes_remaining: u16,
}

/// The index at which `table` holds `value` (0 if it holds none). The noise and DMC tables'
/// entries are all different, so the period a channel keeps names its register index: looking
/// it up keeps the save-state layout, which stores the period.
pub(crate) fn table_index(table: &[u16; 16], value: u16) -> u8 {
    table
        .iter()
        .position(|&entry| entry == value)
        .map_or(0, |index| index as u8)
}

impl PulseState {
    /// The tone's frequency in Hz: the sequencer steps every `period + 1` APU cycles and a
    /// duty cycle has 8 steps.
    pub fn frequency_hz(&self) -> f64 {
        NTSC_CPU_HZ / 16.0 / (f64::from(self.period) + 1.0)
    }
}

impl TriangleState {
    /// The tone's frequency in Hz: the sequencer steps every `period + 1` CPU cycles through
    /// 32 steps.
    pub fn frequency_hz(&self) -> f64 {
        NTSC_CPU_HZ / 32.0 / (f64::from(self.period) + 1.0)
    }
}

impl NoiseState {
    /// How often the shift register is clocked, in Hz.
    pub fn clock_hz(&self) -> f64 {
        NTSC_CPU_HZ / f64::from(self.period)
    }
}

impl DmcState {
    /// How often the output unit takes a sample bit, in Hz.
    pub fn bit_rate_hz(&self) -> f64 {
        NTSC_CPU_HZ / f64::from(self.rate)
    }
}
