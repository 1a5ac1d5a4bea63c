//! `sound`: the APU's channels as FCEUX reports them.
//!
//! `sound.get()` returns `{rp2a03 = {square1, square2, triangle, noise, dpcm}}`, the values
//! FCEUX 2.6.5 computes from its APU state at the moment of the call (measured against it with
//! tests/fceux/lua/sound.lua):
//!
//! - `volume`: 0..1. Pulse and noise: the envelope output / 15, or 0 when the length counter
//!   is 0 (pulse also when the sweep unit mutes it). Triangle: 1 unless the length or linear
//!   counter is 0. DPCM: 1 while the output unit plays sample bits, else 0.
//! - `frequency`: Hz from the CPU clock. Pulse `clock / 16 / (period + 1)`, triangle
//!   `clock / 32 / (period + 1)`, noise `clock / period in cycles` (then / 93 in short mode,
//!   the loop length), DPCM `clock / rate in cycles`. Silent channels keep theirs.
//! - `midikey`: `69 + 12 * log2(frequency / 440)`, fractional.
//! - `duty` (pulse, 0-3), `short` (noise mode flag), `regs.frequency`: the period register
//!   (pulse: as the sweep unit has changed it; noise and DPCM: the 4-bit index).
//! - DPCM `dmcaddress`, `dmcsize` (the $4012/$4013 latches as address and byte count),
//!   `dmcloop` and `dmcseed` (the last $4011 value).
//!
//! The fields are set in FCEUX's order, so that `pairs` (and `tostring`) visit them in its
//! order too: Lua 5.1's table layout depends on the insertion order.

use std::f64::consts::LN_2;

use nes::Nes;

use super::*;

pub(super) fn sound_table(lua: &Lua, _shared: &SharedRef) -> mlua::Result<Table> {
    let sound = lua.create_table()?;
    sound.set(
        "get",
        lua.create_function(|lua, ()| {
            let at = location(lua);
            with_machine::<Table>(lua, move |lua, machine| {
                let nes = console(machine, &at, "sound.get()")?;
                let table = channels_table(lua, nes)?;
                Ok(MultiValue::from_vec(vec![Value::Table(table)]))
            })
        })?,
    )?;
    Ok(sound)
}

fn channels_table(lua: &Lua, nes: &Nes) -> mlua::Result<Table> {
    let apu = nes.apu_channels();
    let rp2a03 = lua.create_table()?;
    for (name, pulse) in [("square1", apu.pulse1), ("square2", apu.pulse2)] {
        let audible = !pulse.sweep_muted && pulse.length_counter != 0;
        let channel = tone(
            lua,
            gated(audible, envelope(pulse.envelope_volume)),
            pulse.frequency_hz(),
        )?;
        channel.set("duty", pulse.duty)?;
        set_regs(lua, &channel, pulse.period)?;
        rp2a03.set(name, channel)?;
    }

    let triangle = apu.triangle;
    let audible = triangle.length_counter != 0 && triangle.linear_counter != 0;
    let channel = tone(lua, gated(audible, 1.0), triangle.frequency_hz())?;
    set_regs(lua, &channel, triangle.period)?;
    rp2a03.set("triangle", channel)?;

    let noise = apu.noise;
    let channel = lua.create_table()?;
    channel.set(
        "volume",
        gated(noise.length_counter != 0, envelope(noise.envelope_volume)),
    )?;
    channel.set("short", noise.short_mode)?;
    let mut frequency = noise.clock_hz();
    if noise.short_mode {
        // The short sequence repeats every 93 clocks (NESdev "APU Noise"): that is its pitch.
        frequency /= 93.0;
    }
    set_frequency(&channel, frequency)?;
    set_regs(lua, &channel, u16::from(noise.period_index))?;
    rp2a03.set("noise", channel)?;

    let dmc = apu.dmc;
    let channel = tone(lua, gated(dmc.playing, 1.0), dmc.bit_rate_hz())?;
    channel.set("dmcaddress", dmc.sample_address)?;
    channel.set("dmcsize", dmc.sample_length)?;
    channel.set("dmcloop", dmc.looping)?;
    channel.set("dmcseed", dmc.direct_load)?;
    set_regs(lua, &channel, u16::from(dmc.rate_index))?;
    rp2a03.set("dpcm", channel)?;

    let sound = lua.create_table()?;
    sound.set("rp2a03", rp2a03)?;
    Ok(sound)
}

/// An envelope output (0-15) as a 0..1 volume.
fn envelope(level: u8) -> f64 {
    f64::from(level) / 15.0
}

fn gated(audible: bool, volume: f64) -> f64 {
    if audible {
        volume
    } else {
        0.0
    }
}

/// A channel table with `volume`, `frequency` and `midikey`, in that order.
fn tone(lua: &Lua, volume: f64, frequency: f64) -> mlua::Result<Table> {
    let channel = lua.create_table()?;
    channel.set("volume", volume)?;
    set_frequency(&channel, frequency)?;
    Ok(channel)
}

/// `frequency` and its `midikey` (A4 = 440 Hz = key 69, 12 keys an octave), computed in
/// FCEUX's order of operations so that every bit agrees.
fn set_frequency(channel: &Table, frequency: f64) -> mlua::Result<()> {
    channel.set("frequency", frequency)?;
    channel.set("midikey", (frequency / 440.0).ln() * 12.0 / LN_2 + 69.0)
}

fn set_regs(lua: &Lua, channel: &Table, frequency: u16) -> mlua::Result<()> {
    let regs = lua.create_table()?;
    regs.set("frequency", frequency)?;
    channel.set("regs", regs)
}
