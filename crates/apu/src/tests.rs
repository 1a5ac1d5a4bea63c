//! Whole-APU tests through the public interface, with the console's timing contract:
//! an access on cycle N happens before `tick()` for cycle N.

use super::*;

/// A PAL console's CPU clock (its master clock, 26.601712 MHz, over 16; the console owns the
/// figure and passes it through `Apu::set_cpu_clock_hz`).
const PAL_CPU_HZ: f64 = 26_601_712.0 / 16.0;

/// Tick until `apu.cycle == cycle`.
fn run_to(apu: &mut Apu, cycle: u64) {
    while apu.cycle < cycle {
        apu.tick();
    }
}

/// Align so the next access happens on a get (`true`) or put cycle.
fn align(apu: &mut Apu, get: bool) {
    if Apu::is_get_cycle(apu.cycle) != get {
        apu.tick();
    }
}

/// Cycles from an access on cycle `write_cycle` to the first access that sees the frame IRQ.
fn cycles_until_frame_irq(apu: &mut Apu, write_cycle: u64) -> u64 {
    for _ in 0..100_000 {
        if apu.peek_status() & 0x40 != 0 {
            return apu.cycle - write_cycle;
        }
        apu.tick();
    }
    panic!("frame IRQ never set");
}

#[test]
fn power_on_state() {
    let apu = Apu::new();
    assert_eq!(apu.peek_status(), 0);
    assert!(!apu.irq_line());
    assert_eq!(apu.dmc_dma_address(), None);
}

#[test]
fn power_on_acts_as_if_4017_written_before_first_instruction() {
    // blargg apu_reset/4017_timing and 09.reset_timing: the first instruction starts at cycle 7
    // (after the reset sequence) and the IRQ flag must appear as if $00 had been written to
    // $4017 9-12 cycles earlier. A write at cycle W is seen 29831 cycles later (get alignment).
    let mut apu = Apu::new();
    let seen = cycles_until_frame_irq(&mut apu, 0);
    let virtual_write = seen as i64 - 29831;
    let delay_before_first_instruction = 7 - virtual_write;
    assert!(
        (9..=12).contains(&delay_before_first_instruction),
        "delay {delay_before_first_instruction}"
    );
    // The line follows the flag one cycle later (it shows the state of the cycle's access).
    assert!(!apu.irq_line());
    apu.tick();
    assert!(apu.irq_line());
}

#[test]
fn frame_irq_after_4017_write_on_put_cycle() {
    let mut apu = Apu::new();
    run_to(&mut apu, 1000);
    align(&mut apu, false);
    let write_cycle = apu.cycle;
    apu.write_register(0x4017, 0x00);
    // blargg 6-irq_flag_timing / 07.irq_flag_timing: set 29831 clocks after the write;
    // AccuracyCoin "Frame Counter IRQ" A/B: on a put cycle (relative to OAM DMA).
    assert_eq!(cycles_until_frame_irq(&mut apu, write_cycle), 29831);
}

#[test]
fn frame_irq_after_4017_write_on_get_cycle_is_one_later() {
    // AccuracyCoin "Frame Counter IRQ" C/D: a write on a get cycle restarts the sequencer a
    // cycle later.
    let mut apu = Apu::new();
    run_to(&mut apu, 1000);
    align(&mut apu, true);
    let write_cycle = apu.cycle;
    apu.write_register(0x4017, 0x00);
    assert_eq!(cycles_until_frame_irq(&mut apu, write_cycle), 29832);
}

#[test]
fn frame_irq_flag_is_set_on_three_consecutive_cycles() {
    // AccuracyCoin "Frame Counter IRQ" E-H: with S the first access that sees the flag, a
    // $4015 read at S-1, S or S+1 does not clear it (the sequencer sets it again on the
    // clearing tick); a read at S+2 does.
    for (read_offset, cleared) in [(-1i64, false), (0, false), (1, false), (2, true)] {
        let mut apu = Apu::new();
        run_to(&mut apu, 100);
        align(&mut apu, true);
        let write = apu.cycle;
        apu.write_register(0x4017, 0x00);
        let first_seen = write + 29832;
        let read_at = first_seen.checked_add_signed(read_offset).unwrap();
        run_to(&mut apu, read_at);
        let status = apu.read_status();
        assert_eq!(status & 0x40 != 0, read_offset >= 0, "offset {read_offset}");
        run_to(&mut apu, read_at + 4);
        assert_eq!(
            apu.peek_status() & 0x40 == 0,
            cleared,
            "read at offset {read_offset}"
        );
    }
    // Periodic: the next frame's flag comes 29830 cycles after the first.
    let mut apu = Apu::new();
    run_to(&mut apu, 100);
    align(&mut apu, false);
    let write = apu.cycle;
    apu.write_register(0x4017, 0x00);
    run_to(&mut apu, write + 29831 + 3);
    apu.read_status();
    run_to(&mut apu, write + 29831 + 29830 - 1);
    assert_eq!(apu.peek_status() & 0x40, 0);
    apu.tick();
    assert_ne!(apu.peek_status() & 0x40, 0);
}

#[test]
fn status_read_clears_frame_irq_at_the_next_get_cycle() {
    // AccuracyCoin "Frame Counter IRQ" 6/7: two reads on consecutive cycles (SLO $4015,X).
    for (first_read_on_get, second_sees_flag) in [(false, false), (true, true)] {
        let mut apu = Apu::new();
        run_to(&mut apu, 40_000);
        align(&mut apu, first_read_on_get);
        assert_ne!(apu.read_status() & 0x40, 0);
        apu.tick();
        assert_eq!(apu.read_status() & 0x40 != 0, second_sees_flag);
        apu.tick();
        apu.tick();
        assert_eq!(apu.peek_status() & 0x40, 0);
    }
}

#[test]
fn inhibited_frame_flag_is_visible_for_two_cycles_without_irq() {
    // AccuracyCoin "Frame Counter IRQ" I-M.
    let mut apu = Apu::new();
    run_to(&mut apu, 100);
    align(&mut apu, false);
    let write = apu.cycle;
    apu.write_register(0x4017, 0x40);
    let mut seen = Vec::new();
    for offset in 29828..29834 {
        run_to(&mut apu, write + offset);
        if apu.peek_status() & 0x40 != 0 {
            seen.push(offset);
        }
        assert!(!apu.irq_line(), "inhibited: no IRQ at offset {offset}");
    }
    assert_eq!(seen, [29831, 29832]);
}

#[test]
fn reading_status_clears_frame_irq_but_peek_does_not() {
    let mut apu = Apu::new();
    run_to(&mut apu, 40_000);
    align(&mut apu, false);
    assert!(apu.irq_line());
    assert_ne!(apu.peek_status() & 0x40, 0);
    assert_ne!(apu.peek_status() & 0x40, 0);
    assert_ne!(apu.read_status() & 0x40, 0);
    assert!(apu.irq_line(), "the line drops after the clearing tick");
    apu.tick();
    assert_eq!(apu.read_status() & 0x40, 0);
    apu.tick();
    assert!(!apu.irq_line());
}

#[test]
fn irq_inhibit_and_five_step_mode() {
    // 3-irq_flag: no flag in modes $40, $80, $C0; writing $40/$C0 clears it; $00/$80 do not.
    for mode in [0x40u8, 0x80, 0xC0] {
        let mut apu = Apu::new();
        apu.write_register(0x4017, mode);
        run_to(&mut apu, 120_000);
        assert_eq!(apu.peek_status() & 0x40, 0, "mode {mode:02X}");
    }
    let mut apu = Apu::new();
    run_to(&mut apu, 30_000);
    apu.write_register(0x4017, 0x00);
    apu.write_register(0x4017, 0x80);
    assert_ne!(apu.peek_status() & 0x40, 0);
    apu.write_register(0x4017, 0xC0);
    assert_eq!(apu.peek_status() & 0x40, 0);
}

/// Pulse 1 with a loaded length counter (index 3 = 2) and halt clear.
fn apu_with_pulse_length(length_index: u8) -> Apu {
    apu_of_with_pulse_length(ApuModel::Rp2a03, length_index)
}

/// An APU of `model` with pulse 1 enabled, unhalted, its length loaded from `length_index`.
fn apu_of_with_pulse_length(model: ApuModel, length_index: u8) -> Apu {
    let mut apu = Apu::new();
    apu.set_model(model);
    apu.write_register(0x4015, 0x01);
    apu.write_register(0x4000, 0x10);
    apu.write_register(0x4003, length_index << 3);
    apu.tick();
    apu
}

#[test]
fn writing_80_to_4017_clocks_length_immediately() {
    let mut apu = apu_with_pulse_length(3); // length 2
    align(&mut apu, false);
    apu.write_register(0x4017, 0x80);
    apu.tick();
    apu.tick();
    assert_eq!(apu.pulse1.length.value(), 2);
    apu.tick();
    assert_eq!(apu.pulse1.length.value(), 1, "clocked on the 3rd tick");
    // Writing $00 does not clock.
    let mut apu = apu_with_pulse_length(3);
    apu.write_register(0x4017, 0x00);
    for _ in 0..10 {
        apu.tick();
    }
    assert_eq!(apu.pulse1.length.value(), 2);
}

/// The first three length clocks after a put-cycle `$4017` write of each mode, in cycles from
/// the write.
fn length_clocks_after_4017(model: ApuModel, mode: u8) -> Vec<u64> {
    let mut apu = apu_of_with_pulse_length(model, 1); // 254
    run_to(&mut apu, 10);
    align(&mut apu, false);
    let write = apu.cycle;
    apu.write_register(0x4017, mode);
    let mut clocks = Vec::new();
    let mut last = apu.pulse1.length.value();
    while clocks.len() < 3 {
        apu.tick();
        let now = apu.pulse1.length.value();
        if now != last {
            // The tick just executed was cycle `apu.cycle - 1`.
            clocks.push(apu.cycle - 1 - write);
            last = now;
        }
    }
    clocks
}

#[test]
fn length_clock_cycles_in_both_modes() {
    // 5-len_timing: mode 0 half frames at +14915 and +29831 after a put-cycle write, mode 1 at
    // +2 (the tick the write takes effect), +14915, +37283.
    assert_eq!(
        length_clocks_after_4017(ApuModel::Rp2a03, 0x00),
        [14915, 29831, 29830 + 14915]
    );
    assert_eq!(
        length_clocks_after_4017(ApuModel::Rp2a03, 0x80),
        [2, 14915, 37283]
    );
}

/// A halt-bit change written just before (`clock - 1`) or on the tick `clock` of the first
/// length clock after a `$4017 = $00` write applies after the clock (blargg
/// 10.len_halt_timing): halted before it is not clocked, halted on it is; unhalted before it is
/// clocked, unhalted on it is not.
fn check_halt_change_around_the_length_clock(model: ApuModel, clock: u64) {
    for (halt_write_offset, initial, new, expect_clocked) in [
        (clock - 1, 0x10u8, 0x30u8, false),
        (clock, 0x10, 0x30, true),
        (clock - 1, 0x30, 0x10, true),
        (clock, 0x30, 0x10, false),
    ] {
        let mut apu = apu_of_with_pulse_length(model, 1);
        apu.write_register(0x4000, initial);
        apu.tick();
        align(&mut apu, false);
        let write = apu.cycle;
        apu.write_register(0x4017, 0x00);
        run_to(&mut apu, write + halt_write_offset);
        let before = apu.pulse1.length.value();
        apu.write_register(0x4000, new);
        run_to(&mut apu, write + clock + 1);
        let clocked = apu.pulse1.length.value() != before;
        assert_eq!(
            clocked, expect_clocked,
            "{model:?} offset {halt_write_offset} {initial:02X}->{new:02X}"
        );
    }
}

#[test]
fn length_halt_change_takes_effect_after_the_clock() {
    // The length clock is on tick write+14915.
    check_halt_change_around_the_length_clock(ApuModel::Rp2a03, 14915);
}

#[test]
fn length_reload_during_clock_is_ignored_when_nonzero() {
    // blargg 11.len_reload_timing.
    for (offset, start_index, expected) in [
        (14914u64, 1u8, 6u8 - 1), // just before the clock: reload (index 5 = 4?) then clocked
        (14915, 1, 253),          // during the clock, counter non-zero: reload ignored
        (14916, 1, 4),            // just after: reload works
    ] {
        let mut apu = apu_with_pulse_length(start_index);
        align(&mut apu, false);
        let write = apu.cycle;
        apu.write_register(0x4017, 0x00);
        run_to(&mut apu, write + offset);
        apu.write_register(0x4003, 5 << 3); // LENGTH_TABLE[5] = 4
        run_to(&mut apu, write + 14917);
        let expected = if offset == 14914 { 3 } else { expected };
        assert_eq!(apu.pulse1.length.value(), expected, "offset {offset}");
    }
    // Counter zero: a reload during the clock works.
    let mut apu = Apu::new();
    apu.write_register(0x4015, 0x01);
    align(&mut apu, false);
    let write = apu.cycle;
    apu.write_register(0x4017, 0x00);
    run_to(&mut apu, write + 14915);
    apu.write_register(0x4003, 5 << 3);
    run_to(&mut apu, write + 14917);
    assert_eq!(apu.pulse1.length.value(), 4);
}

#[test]
fn status_write_enables_and_disables_channels() {
    let mut apu = Apu::new();
    apu.write_register(0x4015, 0x0F);
    apu.write_register(0x4003, 0x08);
    apu.write_register(0x4007, 0x08);
    apu.write_register(0x400B, 0x08);
    apu.write_register(0x400F, 0x08);
    apu.tick();
    assert_eq!(apu.peek_status() & 0x1F, 0x0F);
    apu.write_register(0x4015, 0x05);
    assert_eq!(
        apu.peek_status() & 0x1F,
        0x05,
        "disabling clears the length counters"
    );
    apu.write_register(0x4007, 0x08);
    apu.tick();
    assert_eq!(
        apu.peek_status() & 0x1F,
        0x05,
        "disabled channel does not reload"
    );
    // Writes to unrelated addresses are ignored.
    apu.write_register(0x4014, 0xFF);
    apu.write_register(0x4016, 0xFF);
    apu.write_register(0x4018, 0xFF);
    assert_eq!(apu.peek_status() & 0x1F, 0x05);
}

/// Start a DMC sample of `length_reg` (bytes = length_reg * 16 + 1) at $C000 and serve its
/// first DMA.
fn start_dmc(apu: &mut Apu, control: u8, length_reg: u8) {
    apu.write_register(0x4010, control);
    apu.write_register(0x4012, 0x00);
    apu.write_register(0x4013, length_reg);
    apu.write_register(0x4015, 0x10);
    for _ in 0..10 {
        apu.tick();
        if apu.dmc_dma_address().is_some() {
            apu.dmc_dma_complete(0xAA);
            return;
        }
    }
    panic!("no load DMA");
}

#[test]
fn dmc_load_dma_delay_depends_on_alignment() {
    for (get, expected_ticks) in [(true, 4u64), (false, 3)] {
        let mut apu = Apu::new();
        run_to(&mut apu, 50);
        align(&mut apu, get);
        apu.write_register(0x4013, 0x01);
        let write = apu.cycle;
        apu.write_register(0x4015, 0x10);
        assert_eq!(apu.peek_status() & 0x10, 0x10);
        while apu.dmc_dma_address().is_none() {
            apu.tick();
            assert!(apu.cycle - write <= 10);
        }
        assert_eq!(apu.cycle - write, expected_ticks, "get write: {get}");
        // The halt is attempted on the next cycle, which must be a get cycle.
        assert!(Apu::is_get_cycle(apu.cycle));
        assert_eq!(apu.dmc_dma_address(), Some(0xC000));
    }
}

#[test]
fn dmc_enable_reaches_the_memory_reader_like_the_load_dma() {
    // AccuracyCoin "Delta Modulation Channel" L-N: a sample disabled with its buffer full is
    // re-enabled just before the output cycle ends. The reload request that the emptied
    // buffer raises waits until the enabling write reaches the memory reader, the same
    // 3 or 4 cycles as a load DMA.
    for get in [true, false] {
        let mut apu = Apu::new();
        start_dmc(&mut apu, 0x4F, 0x00); // looping 1-byte sample, fastest rate
        apu.write_register(0x4015, 0x00);
        // Let the disable land, and advance to 1 cycle before an output cycle ends.
        while apu.dmc.bits_remaining_for_test() != 1 || apu.cycle + 1 < apu.dmc_next {
            apu.tick();
        }
        while apu.cycle + 2 < apu.dmc_next {
            apu.tick();
        }
        align(&mut apu, get);
        let write = apu.cycle;
        apu.write_register(0x4015, 0x10);
        let mut first_seen = None;
        for _ in 0..8 {
            apu.tick();
            if apu.dmc_dma_address().is_some() && first_seen.is_none() {
                first_seen = Some(apu.cycle - write);
            }
        }
        let expected = if get { 4 } else { 3 };
        assert_eq!(first_seen, Some(expected), "write on a get cycle: {get}");
    }
}

#[test]
fn dmc_reload_dma_requested_before_put_cycles() {
    let mut apu = Apu::new();
    start_dmc(&mut apu, 0x0F, 0x10);
    let mut requests = 0;
    for _ in 0..20_000 {
        apu.tick();
        if let Some(address) = apu.dmc_dma_address() {
            assert!(
                !Apu::is_get_cycle(apu.cycle),
                "reload DMA halts on a put cycle"
            );
            assert_eq!(address, 0xC001 + requests);
            apu.dmc_dma_complete(0);
            requests += 1;
        }
    }
    // Rate $F = 54 CPU cycles per bit, 8 bits per byte.
    assert!((44..=48).contains(&requests), "{requests}");
}

#[test]
fn dmc_status_irq_and_restart_rules() {
    let mut apu = Apu::new();
    start_dmc(&mut apu, 0x8F, 0x00); // IRQ on, 1 byte: finished by the load DMA
    assert_eq!(apu.peek_status() & 0x10, 0);
    assert_ne!(apu.peek_status() & 0x80, 0);
    apu.tick();
    assert!(apu.irq_line());
    // Reading doesn't clear the DMC IRQ; writing $4015 does.
    apu.read_status();
    assert_ne!(apu.peek_status() & 0x80, 0);
    apu.write_register(0x4015, 0x00);
    assert_eq!(apu.peek_status() & 0x80, 0);
    apu.tick();
    assert!(!apu.irq_line());

    // Enabling while a sample plays does not restart it; disabling stops it.
    let mut apu = Apu::new();
    start_dmc(&mut apu, 0x0F, 0x01);
    assert_eq!(apu.peek_status() & 0x10, 0x10);
    apu.write_register(0x4015, 0x10);
    assert_eq!(apu.peek_status() & 0x10, 0x10);
    apu.write_register(0x4015, 0x00);
    // The memory reader sees the disable 3 or 4 cycles after the write: a $4015 read in the
    // next instruction already finds the sample stopped.
    for _ in 0..4 {
        apu.tick();
    }
    assert_eq!(apu.peek_status() & 0x10, 0);
    assert_eq!(apu.dmc_dma_address(), None);
}

#[test]
fn dmc_direct_load_changes_output() {
    let mut apu = Apu::new();
    apu.set_sample_rate(44_100);
    apu.write_register(0x4011, 0x7F);
    let mut samples = Vec::new();
    for _ in 0..2000 {
        apu.tick();
    }
    apu.take_samples(&mut samples);
    let peak = samples.iter().cloned().fold(0.0f32, f32::max);
    assert!(peak > 0.2, "a $4011 step is audible: {peak}");
}

#[test]
fn reset_clears_status_and_reapplies_4017() {
    let mut apu = Apu::new();
    apu.write_register(0x4015, 0x1F);
    apu.write_register(0x4008, 0xFF); // triangle halted
    apu.write_register(0x400B, 0xF8);
    apu.write_register(0x4010, 0x8F);
    apu.write_register(0x4017, 0x80);
    run_to(&mut apu, 10);
    apu.reset();
    assert_eq!(apu.peek_status(), 0);
    assert!(!apu.irq_line());
    run_to(&mut apu, 200_000);
    assert_eq!(apu.peek_status() & 0x40, 0, "still 5-step mode after reset");

    // After a reset in 4-step mode the IRQ timing is as at power-on.
    let mut apu = Apu::new();
    run_to(&mut apu, 12_346);
    apu.reset();
    let start = apu.cycle;
    let seen = cycles_until_frame_irq(&mut apu, start);
    let mut fresh = Apu::new();
    let fresh_seen = cycles_until_frame_irq(&mut fresh, 0);
    assert!(seen.abs_diff(fresh_seen) <= 1, "{seen} vs {fresh_seen}");

    // Halt flags survive reset (apu_reset/len_ctrs_enabled: "triangle unaffected").
    let mut apu = Apu::new();
    apu.write_register(0x4008, 0xFF);
    apu.reset();
    apu.write_register(0x4017, 0x00);
    apu.write_register(0x4015, 0x0F);
    apu.write_register(0x4003, 0x18);
    apu.write_register(0x400B, 0x18);
    let target = apu.cycle + 29830 * 2;
    run_to(&mut apu, target);
    assert_eq!(apu.peek_status() & 0x0F, 0x04);
}

/// An APU with audio at 48 kHz playing pulse 1, run to `cycle`, and a copy of it that
/// `adjust` changed; both run on to cycle 40,000 and their audio is returned.
fn run_with_copy(cycle: u64, adjust: impl FnOnce(&mut Apu)) -> (Apu, Apu, Vec<f32>, Vec<f32>) {
    let mut apu = Apu::new();
    apu.set_sample_rate(48_000);
    apu.write_register(0x4015, 0x0F);
    apu.write_register(0x4000, 0xBF);
    apu.write_register(0x4002, 0x80);
    apu.write_register(0x4003, 0x08);
    run_to(&mut apu, cycle);
    let mut copy = apu.clone();
    adjust(&mut copy);
    run_to(&mut apu, 40_000);
    run_to(&mut copy, 40_000);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    apu.take_samples(&mut a);
    copy.take_samples(&mut b);
    (apu, copy, a, b)
}

#[test]
fn cloned_apu_runs_identically() {
    let (apu, copy, a, b) = run_with_copy(5000, |_| {});
    assert_eq!(a, b);
    assert_eq!(apu.peek_status(), copy.peek_status());
}

#[test]
fn setting_the_rate_in_use_keeps_the_resampler_running() {
    // A host sets its rate again after loading a state (`nes run --load-state --wav`): the
    // audio must continue as if nothing happened, not restart filters and sample phase.
    let (_, _, a, b) = run_with_copy(5_001, |copy| copy.set_sample_rate(48_000));
    assert_eq!(a, b);
}

// ---------------------------------------------------------------------------------------
// Audio output

const CPU_HZ: f64 = NTSC_CPU_HZ;

/// Render `seconds` of pulse 1 at `period` / `duty` through take_samples, once per frame.
fn render_pulse(period: u16, duty: u8, seconds: f64, rate: u32) -> Vec<f32> {
    let mut apu = Apu::new();
    apu.set_sample_rate(rate);
    apu.write_register(0x4015, 0x01);
    apu.write_register(0x4000, (duty << 6) | 0x30 | 0x0F); // halt, constant volume 15
    apu.write_register(0x4001, 0x08); // sweep off, negate so the target never mutes
    apu.write_register(0x4002, (period & 0xFF) as u8);
    apu.write_register(0x4003, (period >> 8) as u8 & 7);
    let total = (seconds * CPU_HZ) as u64;
    let mut samples = Vec::new();
    while apu.cycle < total {
        let frame_end = (apu.cycle + 29_781).min(total);
        run_to(&mut apu, frame_end);
        apu.take_samples(&mut samples);
    }
    samples
}

/// Render `seconds` of audio after `setup` programmed the registers.
fn render(setup: impl FnOnce(&mut Apu), seconds: f64, rate: u32) -> Vec<f32> {
    let mut apu = Apu::new();
    apu.set_sample_rate(rate);
    setup(&mut apu);
    let total = (seconds * CPU_HZ) as u64;
    let mut samples = Vec::new();
    while apu.cycle < total {
        let frame_end = (apu.cycle + 29_781).min(total);
        run_to(&mut apu, frame_end);
        apu.take_samples(&mut samples);
    }
    samples
}

/// Magnitude of the Hann-windowed DFT of `samples` at `frequency`.
fn dft_magnitude(samples: &[f32], rate: f64, frequency: f64) -> f64 {
    let n = samples.len() as f64;
    let (mut re, mut im) = (0.0f64, 0.0f64);
    let step = 2.0 * std::f64::consts::PI * frequency / rate;
    for (i, &s) in samples.iter().enumerate() {
        let window = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / n).cos();
        let x = f64::from(s) * window;
        re += x * (step * i as f64).cos();
        im -= x * (step * i as f64).sin();
    }
    (re * re + im * im).sqrt()
}

#[test]
fn pulse_fundamental_frequency_and_duty() {
    let rate = 44_100.0;
    let period = 200u16;
    let expected = CPU_HZ / (16.0 * f64::from(period + 1));
    let samples = render_pulse(period, 1, 0.5, 44_100);
    assert!((samples.len() as f64 - rate * 0.5).abs() < 2.0);
    // Skip the filter start-up; find the strongest frequency between 100 Hz and 2 kHz.
    let body = &samples[2000..];
    let mut best = (0.0, 0.0);
    let mut frequency = 100.0;
    while frequency < 2000.0 {
        let magnitude = dft_magnitude(body, rate, frequency);
        if magnitude > best.1 {
            best = (frequency, magnitude);
        }
        frequency += 1.0;
    }
    let error = (best.0 - expected).abs() / expected;
    assert!(
        error < 0.01,
        "measured {} Hz, expected {expected:.1} Hz",
        best.0
    );

    // Duty 25%: harmonic n has amplitude |sin(pi n / 4)| / n, so h4 = 0 and h2/h1 = 0.707.
    let h = |n: f64| dft_magnitude(body, rate, expected * n);
    let (h1, h2, h3, h4) = (h(1.0), h(2.0), h(3.0), h(4.0));
    assert!(
        h4 < 0.05 * h2,
        "25% duty has no 4th harmonic: h2 {h2} h4 {h4}"
    );
    let ratio = h2 / h1;
    assert!((0.6..0.85).contains(&ratio), "h2/h1 {ratio}");
    assert!(h3 > 0.2 * h1);

    // Duty 50%: no even harmonics.
    let samples = render_pulse(period, 2, 0.5, 44_100);
    let body = &samples[2000..];
    let h = |n: f64| dft_magnitude(body, rate, expected * n);
    assert!(h(2.0) < 0.05 * h(1.0) && h(4.0) < 0.05 * h(3.0));
    // Duty 12.5%: the 8th harmonic vanishes, the 4th does not.
    let samples = render_pulse(period, 0, 0.5, 44_100);
    let body = &samples[2000..];
    let h = |n: f64| dft_magnitude(body, rate, expected * n);
    assert!(h(8.0) < 0.05 * h(4.0));
}

#[test]
fn high_note_has_little_aliased_energy() {
    let rate = 44_100.0;
    let period = 20u16; // ~5.33 kHz, 12.5% duty: strong harmonics far above Nyquist
    let fundamental = CPU_HZ / (16.0 * f64::from(period + 1));
    let samples = render_pulse(period, 0, 0.3, 44_100);
    let body = &samples[2000..];
    let (mut harmonic_energy, mut other_energy) = (0.0, 0.0);
    let mut frequency = 200.0;
    while frequency < 20_000.0 {
        let magnitude = dft_magnitude(body, rate, frequency);
        let nearest = (frequency / fundamental).round() * fundamental;
        if (frequency - nearest).abs() < 60.0 {
            harmonic_energy += magnitude * magnitude;
        } else {
            other_energy += magnitude * magnitude;
        }
        frequency += 20.0;
    }
    let ratio = other_energy / harmonic_energy;
    println!("aliased/harmonic energy {ratio:e}");
    assert!(ratio < 1e-3, "aliased/harmonic energy {ratio:e}");
}

#[test]
fn no_output_work_with_sample_rate_zero() {
    let mut apu = Apu::new();
    apu.write_register(0x4015, 0x01);
    apu.write_register(0x4000, 0xBF);
    apu.write_register(0x4003, 0x08);
    run_to(&mut apu, 100_000);
    let mut samples = Vec::new();
    apu.take_samples(&mut samples);
    assert!(samples.is_empty());
    apu.set_sample_rate(48_000);
    run_to(&mut apu, 200_000);
    apu.take_samples(&mut samples);
    assert!(!samples.is_empty());
    apu.set_sample_rate(0);
    run_to(&mut apu, 300_000);
    samples.clear();
    apu.take_samples(&mut samples);
    assert!(samples.is_empty());
}

/// Rough speed check: `cargo test -p nes-apu --release -- --ignored --nocapture`.
#[test]
#[ignore]
fn tick_speed() {
    let mut apu = Apu::new();
    apu.write_register(0x4015, 0x0F);
    apu.write_register(0x4000, 0xBF);
    apu.write_register(0x4002, 0xFD);
    apu.write_register(0x4003, 0x08);
    apu.write_register(0x4008, 0xFF);
    apu.write_register(0x400A, 0x80);
    apu.write_register(0x400B, 0x08);
    apu.write_register(0x400C, 0x3F);
    apu.write_register(0x400E, 0x05);
    apu.write_register(0x400F, 0x08);
    let mut out = Vec::with_capacity(4096);
    let frames: u32 = std::env::var("APU_SPEED_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let rate: u32 = std::env::var("APU_SPEED_RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48_000);
    apu.set_sample_rate(rate);
    let start = std::time::Instant::now();
    for _ in 0..frames {
        for _ in 0..29_781 {
            apu.tick();
        }
        out.clear();
        apu.take_samples(&mut out);
    }
    let elapsed = start.elapsed();
    let per_tick = elapsed.as_secs_f64() * 1e9 / (f64::from(frames) * 29_781.0);
    println!("{per_tick:.2} ns per tick");
}

#[test]
fn triangle_plays_at_its_frequency() {
    let rate = 48_000.0;
    // ~1 kHz, where the console's 90/440 Hz high-passes barely change the harmonic ratios.
    let period = 55u16;
    let expected = CPU_HZ / (32.0 * f64::from(period + 1));
    let samples = render(
        |apu| {
            apu.write_register(0x4015, 0x04);
            apu.write_register(0x4008, 0xFF); // control set: linear counter holds
            apu.write_register(0x400A, (period & 0xFF) as u8);
            apu.write_register(0x400B, (period >> 8) as u8);
        },
        0.5,
        48_000,
    );
    let body = &samples[2000..];
    let at = |f: f64| dft_magnitude(body, rate, f);
    assert!(
        at(expected) > 20.0 * at(expected * 1.5),
        "fundamental dominates"
    );
    // A triangle has only odd harmonics, falling as 1/n^2; the DAC's compressive curve adds a
    // small second harmonic.
    let second = at(expected * 2.0) / at(expected);
    assert!(second < 0.08, "h2/h1 {second}");
    let third = at(expected * 3.0) / at(expected);
    assert!((0.09..0.15).contains(&third), "h3/h1 {third} (ideal 1/9)");
}

#[test]
fn everything_at_full_volume_stays_in_range() {
    let samples = render(
        |apu| {
            apu.write_register(0x4015, 0x1F);
            for (addr, value) in [
                (0x4000u16, 0xBF),
                (0x4002, 0x10),
                (0x4003, 0x08),
                (0x4004, 0x7F),
                (0x4006, 0x08),
                (0x4007, 0x08),
                (0x4008, 0xFF),
                (0x400A, 0x20),
                (0x400B, 0x08),
                (0x400C, 0x3F),
                (0x400E, 0x00),
                (0x400F, 0x08),
                (0x4010, 0x4F),
                (0x4011, 0x7F),
                (0x4013, 0xFF),
            ] {
                apu.write_register(addr, value);
            }
        },
        0.3,
        44_100,
    );
    assert!(samples.len() > 13_000);
    assert!(samples
        .iter()
        .all(|s| s.is_finite() && (-1.0..=1.0).contains(s)));
    let energy: f32 = samples.iter().map(|s| s * s).sum();
    assert!(energy > 1.0, "audible: {energy}");
}

// ---------------------------------------------------------------------------------------
// Channel state snapshot (`channel_state`)

/// Tick through one quarter-frame clock of the 4-step sequence (about 7457 cycles).
fn run_quarter_frame(apu: &mut Apu) {
    for _ in 0..7_460 {
        apu.tick();
    }
}

#[test]
fn channel_state_at_power_on() {
    let state = Apu::new().channel_state();
    assert_eq!(
        state.pulse1,
        PulseState {
            sweep_muted: true, // period 0 < 8
            ..PulseState::default()
        }
    );
    assert_eq!(state.pulse2, state.pulse1);
    assert_eq!(state.triangle, TriangleState::default());
    assert_eq!(
        state.noise,
        NoiseState {
            period: 4,
            ..NoiseState::default()
        }
    );
    assert_eq!(
        state.dmc,
        DmcState {
            rate: 428,
            sample_address: 0xC000,
            sample_length: 1,
            ..DmcState::default()
        }
    );
}

#[test]
fn channel_state_shows_register_writes_at_once() {
    let mut apu = Apu::new();
    apu.write_register(0x4015, 0x0F);
    apu.write_register(0x4000, 0xBA); // duty 2, halt, constant volume 10
    apu.write_register(0x4001, 0x08); // negate: the target never mutes
    apu.write_register(0x4002, 0xFD);
    apu.write_register(0x4003, 0x08); // length index 1 = 254, period high 0
    let pulse = apu.channel_state().pulse1;
    // The length load commits at the end of the cycle's tick; the snapshot shows it already.
    assert_eq!(
        pulse,
        PulseState {
            period: 253,
            duty: 2,
            envelope_volume: 10,
            length_counter: 254,
            sweep_muted: false,
        }
    );
    apu.tick();
    assert_eq!(apu.channel_state().pulse1, pulse);

    apu.write_register(0x4006, 0x07);
    assert!(apu.channel_state().pulse2.sweep_muted, "period < 8");
    apu.write_register(0x4006, 0x08);
    assert!(!apu.channel_state().pulse2.sweep_muted);
    apu.write_register(0x4007, 0x04); // period $408: target $810 with shift 0
    assert!(apu.channel_state().pulse2.sweep_muted, "target > $7FF");
    assert_eq!(apu.channel_state().pulse2.length_counter, 10);

    apu.write_register(0x4008, 0x85);
    apu.write_register(0x400A, 0x34);
    apu.write_register(0x400B, 0x1A); // length index 3 = 2, period high 2
    assert_eq!(
        apu.channel_state().triangle,
        TriangleState {
            period: 0x234,
            length_counter: 2,
            linear_counter: 0,
        }
    );
    run_quarter_frame(&mut apu);
    assert_eq!(apu.channel_state().triangle.linear_counter, 5, "reloaded");

    apu.write_register(0x400C, 0x03); // envelope decay, period 3
    apu.write_register(0x400E, 0x8A);
    apu.write_register(0x400F, 0x00);
    let noise = apu.channel_state().noise;
    assert_eq!(
        noise,
        NoiseState {
            period_index: 10,
            period: 380,
            short_mode: true,
            envelope_volume: 0,
            length_counter: 10,
        }
    );
    run_quarter_frame(&mut apu);
    assert_eq!(
        apu.channel_state().noise.envelope_volume,
        15,
        "envelope restarted"
    );
}

#[test]
fn channel_state_sees_the_sweep_change_the_period() {
    let mut apu = Apu::new();
    apu.write_register(0x4015, 0x01);
    apu.write_register(0x4000, 0x30);
    apu.write_register(0x4002, 0x00);
    apu.write_register(0x4003, 0x01); // period $100
    apu.write_register(0x4001, 0x89); // enabled, divider 0, negate, shift 1
                                      // Two quarter clocks reach the first half-frame clock: $100 - $80 - 1 (pulse 1).
    run_quarter_frame(&mut apu);
    run_quarter_frame(&mut apu);
    assert_eq!(apu.channel_state().pulse1.period, 0x7F);
}

#[test]
fn channel_state_names_every_noise_and_dmc_index() {
    let mut apu = Apu::new();
    for index in 0..16u8 {
        apu.write_register(0x400E, index);
        apu.write_register(0x4010, 0x40 | index);
        let state = apu.channel_state();
        assert_eq!(state.noise.period_index, index);
        assert!(!state.noise.short_mode);
        assert_eq!(state.dmc.rate_index, index);
        assert!(state.dmc.looping);
    }
    let state = apu.channel_state();
    assert_eq!((state.noise.period, state.dmc.rate), (4068, 54));
}

#[test]
fn channel_state_dmc_latches_direct_load_and_playing() {
    let mut apu = Apu::new();
    apu.write_register(0x4011, 0xC0); // 7 bits: $40
    apu.write_register(0x4012, 0xFF);
    apu.write_register(0x4013, 0xFF);
    let dmc = apu.channel_state().dmc;
    assert_eq!(
        (
            dmc.direct_load,
            dmc.output_level,
            dmc.sample_address,
            dmc.sample_length
        ),
        (0x40, 0x40, 0xFFC0, 0xFF1)
    );
    assert!(!dmc.playing);

    // A sample of $FF bytes (every bit raises the level by 2) at the fastest rate.
    start_dmc(&mut apu, 0x0F, 0x01);
    let mut played = false;
    for _ in 0..2_000 {
        apu.tick();
        if apu.dmc_dma_address().is_some() {
            apu.dmc_dma_complete(0xFF);
        }
        played |= apu.channel_state().dmc.playing;
    }
    let dmc = apu.channel_state().dmc;
    assert!(played);
    assert!(
        dmc.output_level > 0x40,
        "the level moved: {}",
        dmc.output_level
    );
    assert_eq!(dmc.direct_load, 0x40, "the $4011 value stays");
    assert_eq!((dmc.sample_address, dmc.sample_length), (0xC000, 17));
    // The sample ends; the output unit falls silent once its buffer is spent.
    for _ in 0..20_000 {
        apu.tick();
        if apu.dmc_dma_address().is_some() {
            apu.dmc_dma_complete(0xFF);
        }
    }
    let dmc = apu.channel_state().dmc;
    assert_eq!(dmc.bytes_remaining, 0);
    assert!(!dmc.playing);
}

#[test]
fn channel_state_frequencies() {
    let pulse = PulseState {
        period: 253,
        ..PulseState::default()
    };
    // FCEUX's sound.get gives the same doubles (tests/fceux/logs/lua-sound.log).
    assert_eq!(
        pulse.frequency_hz().to_bits(),
        440.396_832_498_210_5_f64.to_bits()
    );
    let triangle = TriangleState {
        period: 64,
        ..TriangleState::default()
    };
    assert_eq!(
        triangle.frequency_hz().to_bits(),
        860.467_657_342_657_4_f64.to_bits()
    );
    let noise = NoiseState {
        period: 4,
        ..NoiseState::default()
    };
    assert_eq!(noise.clock_hz(), NTSC_CPU_HZ / 4.0);
    let dmc = DmcState {
        rate: 54,
        ..DmcState::default()
    };
    assert_eq!(
        dmc.bit_rate_hz().to_bits(),
        33_143.939_393_939_39_f64.to_bits()
    );
    // A period no register can hold (a corrupt save state) gives a number, not a panic.
    let wild = PulseState {
        period: u16::MAX,
        ..PulseState::default()
    };
    assert!(wild.frequency_hz() > 0.0);
    assert!(NoiseState::default().clock_hz().is_infinite());
}

/// An APU with every channel playing (sweeps, envelopes, the DMC looping a sample served by
/// a stand-in DMA unit) and audio on, run `cycles` cycles.
fn busy_apu(cycles: u64) -> Apu {
    busy_apu_of(ApuModel::default(), cycles)
}

/// `busy_apu` of `model`, at that model's CPU clock.
fn busy_apu_of(model: ApuModel, cycles: u64) -> Apu {
    let mut apu = Apu::new();
    if model != ApuModel::default() {
        apu.set_model(model);
        apu.set_cpu_clock_hz(PAL_CPU_HZ);
    }
    apu.set_sample_rate(44_100);
    for (addr, value) in [
        (0x4015, 0x1F),
        (0x4000, 0x9F),
        (0x4001, 0xA3),
        (0x4002, 0x40),
        (0x4003, 0x09),
        (0x4004, 0x5A),
        (0x4005, 0x8A),
        (0x4006, 0x90),
        (0x4007, 0x02),
        (0x4008, 0x81),
        (0x400A, 0x30),
        (0x400B, 0x01),
        (0x400C, 0x28),
        (0x400E, 0x83),
        (0x400F, 0x10),
        (0x4010, 0x4E),
        (0x4012, 0x10),
        (0x4013, 0x02),
        (0x4017, 0x80),
    ] {
        apu.write_register(addr, value);
        apu.tick();
    }
    for _ in 0..cycles {
        if apu.dmc_dma_address().is_some() {
            apu.dmc_dma_complete((apu.cycle as u8).wrapping_mul(41));
        }
        apu.tick();
    }
    apu
}

#[test]
fn states_of_a_running_apu_validate() {
    let mut apu = busy_apu(0);
    for round in 0..400 {
        assert_eq!(apu.validate_state(), Ok(()), "round {round}");
        for _ in 0..997 {
            if apu.dmc_dma_address().is_some() {
                apu.dmc_dma_complete(round as u8);
            }
            apu.tick();
        }
        if round % 50 == 25 {
            apu.write_register(0x4017, (round as u8) << 1 & 0xC0);
            apu.read_status();
            apu.write_register(0x4015, 0x0F | (round as u8 & 0x10));
        }
    }
    assert_eq!(Apu::new().validate_state(), Ok(()));
    let mut reset = busy_apu(5_000);
    reset.reset();
    assert_eq!(reset.validate_state(), Ok(()));
}

/// `apu` edited by `edit` must be refused with `message`.
fn refused(edit: impl FnOnce(&mut Apu), message: &str) {
    let mut apu = busy_apu(20_000);
    edit(&mut apu);
    assert_eq!(
        apu.validate_state().map_err(|e| e.to_string()),
        Err(message.to_string())
    );
}

#[test]
fn a_frame_counter_step_out_of_range_is_refused_at_its_byte_in_a_state() {
    // The reported crash: a state whose frame counter step (a borsh u64 after the channels
    // and the five-step flag) was edited to 131075 indexed the step tables out of bounds.
    let apu = busy_apu(20_000);
    let channels = [
        borsh::to_vec(&apu.pulse1).unwrap().len(),
        borsh::to_vec(&apu.pulse2).unwrap().len(),
        borsh::to_vec(&apu.triangle).unwrap().len(),
        borsh::to_vec(&apu.noise).unwrap().len(),
        borsh::to_vec(&apu.dmc).unwrap().len(),
    ];
    let step_at = channels.iter().sum::<usize>() + 1;
    let mut bytes = borsh::to_vec(&apu).unwrap();
    let step = u64::from_le_bytes(bytes[step_at..step_at + 8].try_into().unwrap());
    assert!(step <= 5, "a real step is at {step_at}: {step}");
    bytes[step_at..step_at + 8].copy_from_slice(&131_075u64.to_le_bytes());
    let edited: Apu = borsh::from_slice(&bytes).unwrap();
    assert_eq!(
        edited.validate_state().map_err(|e| e.to_string()),
        Err("APU frame counter step 131075 is out of range 0..=5".to_string())
    );
}

#[test]
fn timers_and_counters_out_of_range_are_refused() {
    let now = busy_apu(20_000).cycle;
    refused(
        |apu| apu.cycle = u64::MAX - 3,
        "APU cycle 18446744073709551612 is out of range 0..=4611686018427387904",
    );
    refused(
        |apu| apu.dmc_next = now + 100_000,
        &format!(
            "APU DMC timer tick {} is out of range (unscheduled, or 0..={})",
            now + 100_000,
            now + MAX_TIMER_LEAD
        ),
    );
    refused(
        |apu| apu.next_event = NEVER,
        &format!(
            "APU next event tick {NEVER} is out of range 0..={}",
            busy_apu(20_000).next_event
        ),
    );
    refused(
        |apu| apu.dmc_fetch_tick = u64::MAX,
        &format!(
            "APU last DMC fetch tick {} is out of range 0..={now}",
            u64::MAX
        ),
    );
}

#[test]
fn a_channel_out_of_range_is_refused_by_the_apus_check() {
    // The channels check themselves (see their modules); the APU's check runs them all.
    let mut apu = busy_apu(20_000);
    apu.write_register(0x4003, 0);
    let mut bytes = borsh::to_vec(&apu).unwrap();
    // Pulse 1 starts the state: its negate adjustment (u16) and duty (u8) come first.
    bytes[2] = 7;
    let edited: Apu = borsh::from_slice(&bytes).unwrap();
    assert_eq!(
        edited.validate_state().map_err(|e| e.to_string()),
        Err("APU pulse 1 duty 7 is out of range 0..=3".to_string())
    );
}

/// A powered-on PAL APU.
fn pal_apu() -> Apu {
    let mut apu = Apu::new();
    apu.set_model(ApuModel::Rp2a07);
    apu
}

#[test]
fn pal_frame_irq_comes_33255_cycles_after_a_4017_write() {
    // blargg pal_apu_tests 07.irq_flag_timing: the flag is set 33255 cycles after the write
    // (NTSC 29831), with the same one-cycle jitter by parity.
    for (get, expected) in [(false, 33255), (true, 33256)] {
        let mut apu = pal_apu();
        run_to(&mut apu, 1000);
        align(&mut apu, get);
        let write_cycle = apu.cycle;
        apu.write_register(0x4017, 0x00);
        assert_eq!(cycles_until_frame_irq(&mut apu, write_cycle), expected);
    }
}

#[test]
fn pal_power_on_sequencer_and_dmc_timer_use_the_pal_periods() {
    let mut ntsc = Apu::new();
    let mut pal = pal_apu();
    let ntsc_seen = cycles_until_frame_irq(&mut ntsc, 0);
    let pal_seen = cycles_until_frame_irq(&mut pal, 0);
    assert_eq!(pal_seen - ntsc_seen, 33255 - 29831);
    assert_eq!(pal.model(), ApuModel::Rp2a07);
}

#[test]
fn pal_noise_and_dmc_registers_select_the_pal_periods() {
    let mut apu = pal_apu();
    apu.write_register(0x400E, 0x02);
    apu.write_register(0x4010, 0x00);
    let state = apu.channel_state();
    assert_eq!(state.noise.period, 14, "NTSC would give 16");
    assert_eq!(state.noise.period_index, 2);
    assert_eq!(state.dmc.rate, 398, "NTSC would give 428");
    // A model change keeps the registers' indexes.
    apu.set_model(ApuModel::Rp2a03);
    assert_eq!(apu.channel_state().noise.period, 16);
    assert_eq!(apu.channel_state().noise.period_index, 2);
    // A decoded PAL state keeps its PAL periods and validates as PAL.
    let mut pal = pal_apu();
    pal.write_register(0x400E, 0x0F);
    let mut decoded = Apu::deserialize_reader(&mut &borsh::to_vec(&pal).unwrap()[..]).unwrap();
    assert!(decoded.validate_state().is_err(), "3778 is no NTSC period");
    decoded.set_decoded_model(ApuModel::Rp2a07);
    assert_eq!(decoded.validate_state(), Ok(()));
    assert_eq!(decoded.channel_state().noise.period, 3778);
}

// ---------------------------------------------------------------------------------------
// The 2A07 (PAL): blargg's pal_apu_tests, whose readme gives each count from the $4017 write
// (NTSC's in brackets).

/// Pulse 1 of a PAL APU with a loaded length counter and halt clear (see
/// `apu_with_pulse_length`).
fn pal_apu_with_pulse_length(length_index: u8) -> Apu {
    apu_of_with_pulse_length(ApuModel::Rp2a07, length_index)
}

#[test]
fn pal_frame_irq_flag_is_set_on_three_consecutive_cycles() {
    // 07.irq_flag_timing: "set three times in a row 33255 clocks after writing $4017 with $00"
    // (29831); a write on a get cycle is seen one cycle later.
    for (read_offset, cleared) in [(-1i64, false), (0, false), (1, false), (2, true)] {
        let mut apu = pal_apu();
        run_to(&mut apu, 100);
        align(&mut apu, true);
        let write = apu.cycle;
        apu.write_register(0x4017, 0x00);
        let first_seen = write + 33256;
        let read_at = first_seen.checked_add_signed(read_offset).unwrap();
        run_to(&mut apu, read_at);
        let status = apu.read_status();
        assert_eq!(status & 0x40 != 0, read_offset >= 0, "offset {read_offset}");
        run_to(&mut apu, read_at + 4);
        assert_eq!(
            apu.peek_status() & 0x40 == 0,
            cleared,
            "read at offset {read_offset}"
        );
    }
    // Periodic: the next frame's flag comes 33254 cycles after the first (29830).
    let mut apu = pal_apu();
    run_to(&mut apu, 100);
    align(&mut apu, false);
    let write = apu.cycle;
    apu.write_register(0x4017, 0x00);
    run_to(&mut apu, write + 33255 + 3);
    apu.read_status();
    run_to(&mut apu, write + 33255 + 33254 - 1);
    assert_eq!(apu.peek_status() & 0x40, 0);
    apu.tick();
    assert_ne!(apu.peek_status() & 0x40, 0);
}

#[test]
fn pal_inhibited_frame_flag_is_visible_for_two_cycles_without_irq() {
    let mut apu = pal_apu();
    run_to(&mut apu, 100);
    align(&mut apu, false);
    let write = apu.cycle;
    apu.write_register(0x4017, 0x40);
    let mut seen = Vec::new();
    for offset in 33252..33258 {
        run_to(&mut apu, write + offset);
        if apu.peek_status() & 0x40 != 0 {
            seen.push(offset);
        }
        assert!(!apu.irq_line(), "inhibited: no IRQ at offset {offset}");
    }
    assert_eq!(seen, [33255, 33256]);
}

#[test]
fn pal_irq_line_rises_as_many_cycles_later_as_the_flag() {
    // 08.irq_timing: the handler runs at least 33257 cycles after the write (29833). The line
    // follows the flag by one cycle on both models, so PAL's IRQ is NTSC's moved by the
    // 33255 - 29831 cycles its flag is.
    let mut rises = Vec::new();
    for mut apu in [Apu::new(), pal_apu()] {
        run_to(&mut apu, 1000);
        align(&mut apu, false);
        let write = apu.cycle;
        apu.write_register(0x4017, 0x00);
        let flag = cycles_until_frame_irq(&mut apu, write);
        assert!(!apu.irq_line());
        apu.tick();
        assert!(apu.irq_line());
        rises.push((flag, apu.cycle - write));
    }
    assert_eq!(rises, [(29831, 29832), (33255, 33256)]);
    assert_eq!(rises[1].1 - rises[0].1, 33257 - 29833);
}

#[test]
fn pal_irq_flag_modes_and_length_counter_basics() {
    // 03.irq_flag and 01.len_ctr: no flag in modes $40, $80, $C0; $80 clocks length at once,
    // $00 does not.
    for mode in [0x40u8, 0x80, 0xC0] {
        let mut apu = pal_apu();
        apu.write_register(0x4017, mode);
        run_to(&mut apu, 140_000);
        assert_eq!(apu.peek_status() & 0x40, 0, "mode {mode:02X}");
    }
    let mut apu = pal_apu_with_pulse_length(3); // length 2
    align(&mut apu, false);
    apu.write_register(0x4017, 0x80);
    apu.tick();
    apu.tick();
    assert_eq!(apu.pulse1.length.value(), 2);
    apu.tick();
    assert_eq!(apu.pulse1.length.value(), 1, "clocked on the 3rd tick");
    let mut apu = pal_apu_with_pulse_length(3);
    apu.write_register(0x4017, 0x00);
    let end = apu.cycle + 16_000;
    run_to(&mut apu, end);
    assert_eq!(apu.pulse1.length.value(), 2);
}

#[test]
fn pal_length_clock_cycles_in_both_modes() {
    // 05.len_timing_mode0 / 06.len_timing_mode1, from the readme's table: mode 0 half frames
    // at +16629 and +33255 (14915, 29831) after a put-cycle write, then a frame (33254) on;
    // mode 1 at +2 (the tick the write takes effect), +16629, +41567 (37283).
    assert_eq!(
        length_clocks_after_4017(ApuModel::Rp2a07, 0x00),
        [16629, 33255, 33254 + 16629]
    );
    assert_eq!(
        length_clocks_after_4017(ApuModel::Rp2a07, 0x80),
        [2, 16629, 41567]
    );
}

#[test]
fn pal_length_halt_change_takes_effect_after_the_clock() {
    // 10.len_halt_timing: the clock is on write + 16629 (NTSC 14915).
    check_halt_change_around_the_length_clock(ApuModel::Rp2a07, 16629);
}

#[test]
fn pal_length_reload_during_clock_is_ignored_when_nonzero() {
    // 11.len_reload_timing, with the clock on write + 16629 (14915).
    for (offset, expected) in [
        (16628u64, 3u8), // just before the clock: reloaded to 4, then clocked
        (16629, 253),    // during the clock, counter non-zero: reload ignored
        (16630, 4),      // just after: reload works
    ] {
        let mut apu = pal_apu_with_pulse_length(1);
        align(&mut apu, false);
        let write = apu.cycle;
        apu.write_register(0x4017, 0x00);
        run_to(&mut apu, write + offset);
        apu.write_register(0x4003, 5 << 3); // LENGTH_TABLE[5] = 4
        run_to(&mut apu, write + 16631);
        assert_eq!(apu.pulse1.length.value(), expected, "offset {offset}");
    }
    // Counter zero: a reload during the clock works.
    let mut apu = pal_apu();
    apu.write_register(0x4015, 0x01);
    align(&mut apu, false);
    let write = apu.cycle;
    apu.write_register(0x4017, 0x00);
    run_to(&mut apu, write + 16629);
    apu.write_register(0x4003, 5 << 3);
    run_to(&mut apu, write + 16631);
    assert_eq!(apu.pulse1.length.value(), 4);
}

/// Ticks between successive expiries of the timer `next` reads, over `cycles` cycles.
fn timer_intervals(apu: &mut Apu, cycles: u64, next: fn(&Apu) -> u64) -> Vec<u64> {
    let mut expiries = Vec::new();
    let mut scheduled = next(apu);
    let end = apu.cycle + cycles;
    while apu.cycle < end {
        apu.tick();
        if next(apu) != scheduled {
            expiries.push(apu.cycle - 1);
            scheduled = next(apu);
        }
    }
    expiries.windows(2).map(|pair| pair[1] - pair[0]).collect()
}

#[test]
fn noise_periods_per_model() {
    // NESdev "APU Noise", in CPU cycles.
    let tables: [(ApuModel, [u64; 16]); 2] = [
        (
            ApuModel::Rp2a03,
            [
                4, 8, 16, 32, 64, 96, 128, 160, 202, 254, 380, 508, 762, 1016, 2034, 4068,
            ],
        ),
        (
            ApuModel::Rp2a07,
            [
                4, 8, 14, 30, 60, 88, 118, 148, 188, 236, 354, 472, 708, 944, 1890, 3778,
            ],
        ),
    ];
    for (model, periods) in tables {
        for (index, &period) in periods.iter().enumerate() {
            let mut apu = Apu::new();
            apu.set_model(model);
            apu.set_sample_rate(44_100);
            apu.write_register(0x4015, 0x08);
            apu.write_register(0x400C, 0x3F);
            apu.write_register(0x400E, index as u8);
            apu.write_register(0x400F, 0x08);
            assert_eq!(apu.channel_state().noise.period, period as u16);
            // The shift register is clocked every `period` cycles.
            // (The first interval is from the tick that armed the timer.)
            let intervals = timer_intervals(&mut apu, period * 5 + 10, |apu| apu.noise_next);
            assert!(intervals.len() >= 4, "{model:?} index {index}");
            assert!(
                intervals[1..].iter().all(|&interval| interval == period),
                "{model:?} index {index}: {intervals:?}"
            );
        }
    }
}

#[test]
fn dmc_rates_per_model() {
    // NESdev "APU DMC", in CPU cycles.
    let tables: [(ApuModel, [u64; 16]); 2] = [
        (
            ApuModel::Rp2a03,
            [
                428, 380, 340, 320, 286, 254, 226, 214, 190, 160, 142, 128, 106, 84, 72, 54,
            ],
        ),
        (
            ApuModel::Rp2a07,
            [
                398, 354, 316, 298, 276, 236, 210, 198, 176, 148, 132, 118, 98, 78, 66, 50,
            ],
        ),
    ];
    for (model, rates) in tables {
        // The timer free-runs from power-on at the model's rate 0.
        let mut apu = Apu::new();
        apu.set_model(model);
        let intervals = timer_intervals(&mut apu, rates[0] * 3 + 10, |apu| apu.dmc_next);
        assert_eq!(intervals, [rates[0], rates[0]], "{model:?} at power-on");
        for (index, &rate) in rates.iter().enumerate() {
            apu.write_register(0x4010, index as u8);
            assert_eq!(apu.channel_state().dmc.rate, rate as u16);
            // The new rate applies from the next expiry on.
            let intervals = timer_intervals(&mut apu, rates[0] + rate * 3 + 10, |apu| apu.dmc_next);
            assert!(
                intervals[1..].iter().all(|&interval| interval == rate),
                "{model:?} index {index}: {intervals:?}"
            );
        }
    }
    // A playing sample fetches a byte every 8 output cycles: PAL rate $F = 50 cycles a bit.
    let mut apu = pal_apu();
    start_dmc(&mut apu, 0x0F, 0x10);
    let mut requests = 0;
    for _ in 0..20_000 {
        apu.tick();
        if apu.dmc_dma_address().is_some() {
            assert!(!Apu::is_get_cycle(apu.cycle));
            apu.dmc_dma_complete(0);
            requests += 1;
        }
    }
    assert!((48..=52).contains(&requests), "{requests}");
}

#[test]
fn pal_audio_runs_at_the_pal_cpu_clock() {
    // Half a second of PAL cycles gives half a second of samples, and pulse 1 sounds at
    // PAL_CPU_HZ / (16 * (period + 1)), not NTSC's pitch.
    let rate = 44_100.0;
    let period = 200u16;
    let mut apu = pal_apu();
    apu.set_cpu_clock_hz(PAL_CPU_HZ);
    apu.set_sample_rate(44_100);
    apu.write_register(0x4015, 0x01);
    apu.write_register(0x4000, 0x40 | 0x30 | 0x0F);
    apu.write_register(0x4001, 0x08);
    apu.write_register(0x4002, (period & 0xFF) as u8);
    apu.write_register(0x4003, (period >> 8) as u8 & 7);
    let total = (0.5 * PAL_CPU_HZ) as u64;
    let mut samples = Vec::new();
    while apu.cycle < total {
        let frame_end = (apu.cycle + 33_247).min(total);
        run_to(&mut apu, frame_end);
        apu.take_samples(&mut samples);
    }
    assert!(
        (samples.len() as f64 - rate * 0.5).abs() < 2.0,
        "{}",
        samples.len()
    );
    let expected = PAL_CPU_HZ / (16.0 * f64::from(period + 1));
    let body = &samples[2000..];
    let mut best = (0.0, 0.0);
    let mut frequency = 400.0;
    while frequency < 700.0 {
        let magnitude = dft_magnitude(body, rate, frequency);
        if magnitude > best.1 {
            best = (frequency, magnitude);
        }
        frequency += 1.0;
    }
    let error = (best.0 - expected).abs() / expected;
    assert!(
        error < 0.01,
        "measured {} Hz, expected {expected:.1} Hz",
        best.0
    );
}

#[test]
fn setting_the_cpu_clock_in_use_keeps_the_resampler_running() {
    // The console sets its clock again after loading a state: the audio must continue bit for
    // bit (like `set_sample_rate` with the rate in use).
    let (_, _, a, b) = run_with_copy(5_001, |copy| {
        copy.set_cpu_clock_hz(21_477_272.0 / 12.0);
        copy.set_cpu_clock_hz(f64::NAN);
        copy.set_cpu_clock_hz(0.0);
    });
    assert_eq!(a, b);
    // A different clock changes only the step per cycle: the output goes on from the same
    // phase and filter memories (no restart click), just at another pitch.
    let (_, copy, a, b) = run_with_copy(5_001, |copy| copy.set_cpu_clock_hz(PAL_CPU_HZ));
    assert_ne!(a, b);
    assert!(
        b.len() > a.len(),
        "fewer cycles a sample at the slower clock"
    );
    assert_eq!(copy.validate_state(), Ok(()));
}

#[test]
fn pal_states_of_a_running_apu_validate_and_resume_exactly() {
    let mut apu = busy_apu_of(ApuModel::Rp2a07, 0);
    for round in 0..400 {
        assert_eq!(apu.validate_state(), Ok(()), "round {round}");
        for _ in 0..997 {
            if apu.dmc_dma_address().is_some() {
                apu.dmc_dma_complete(round as u8);
            }
            apu.tick();
        }
        if round % 50 == 25 {
            apu.write_register(0x4017, (round as u8) << 1 & 0xC0);
            apu.read_status();
            apu.write_register(0x4015, 0x0F | (round as u8 & 0x10));
        }
    }
    let mut reset = busy_apu_of(ApuModel::Rp2a07, 5_000);
    reset.reset();
    assert_eq!(reset.validate_state(), Ok(()));
    // A state right after a $4017 write (the next step 8313 cycles away, past any NTSC step)
    // decodes as PAL once the console sets the model and clock, and plays on bit for bit.
    let mut pal = busy_apu_of(ApuModel::Rp2a07, 20_000);
    pal.write_register(0x4017, 0x00);
    for _ in 0..5 {
        pal.tick();
    }
    let bytes = borsh::to_vec(&pal).unwrap();
    let mut decoded: Apu = borsh::from_slice(&bytes).unwrap();
    assert_eq!(
        decoded.model(),
        ApuModel::Rp2a03,
        "the model is not in the state"
    );
    assert!(decoded.validate_state().is_err());
    decoded.set_decoded_model(ApuModel::Rp2a07);
    decoded.set_cpu_clock_hz(PAL_CPU_HZ);
    assert_eq!(decoded.validate_state(), Ok(()));
    decoded.set_sample_rate(44_100);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for apu in [&mut pal, &mut decoded] {
        for _ in 0..60_000 {
            if apu.dmc_dma_address().is_some() {
                apu.dmc_dma_complete((apu.cycle as u8).wrapping_mul(41));
            }
            apu.tick();
        }
    }
    pal.take_samples(&mut a);
    decoded.take_samples(&mut b);
    assert!(!a.is_empty());
    assert_eq!(a, b);
    assert_eq!(pal.peek_status(), decoded.peek_status());
    assert_eq!(pal.channel_state(), decoded.channel_state());
}

/// Silent runs (`silent_run_steps`) against stepping every timer expiry on its own tick: the
/// same samples, bit for bit, and the same sequencer positions and shift register at every
/// register write, over random writes (muted and audible volumes, short periods, both noise
/// modes, $4015 and $4017) at random times.
#[test]
fn silent_runs_match_stepping_every_expiry() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut batched = Apu::new();
    let mut reference = Apu::new();
    reference.every_expiry = true;
    for apu in [&mut batched, &mut reference] {
        apu.set_sample_rate(48_000);
        apu.write_register(0x4015, 0x0F);
    }
    let (mut batched_samples, mut reference_samples) = (Vec::new(), Vec::new());
    let mut runs_seen = 0;
    for _ in 0..4000 {
        let register = match random() % 8 {
            0 => 0x4000,
            1 => 0x4002,
            2 => 0x4004 + (random() % 4) as u16,
            3 => 0x400C,
            4 => 0x400E,
            5 => 0x400F,
            6 => 0x4015,
            _ => 0x4017,
        };
        // Volumes 0 (muted) half the time, periods often short.
        let value = match register {
            0x4000 | 0x4004 | 0x400C if random() % 2 == 0 => (random() as u8 & 0xE0) | 0x10,
            0x4002 | 0x4006 => (random() % 24) as u8,
            0x4015 => 0x0F & random() as u8 | 0x04,
            0x4017 => (random() as u8) & 0xC0,
            _ => random() as u8,
        };
        let gap = random() % 3000;
        for apu in [&mut batched, &mut reference] {
            run_to(apu, apu.cycle + gap);
        }
        // A run in progress, which the write must settle.
        runs_seen += usize::from(
            batched.noise_steps > 1 || batched.pulse1_steps > 1 || batched.pulse2_steps > 1,
        );
        for apu in [&mut batched, &mut reference] {
            apu.write_register(register, value);
        }
        assert_eq!(batched.noise.state(), reference.noise.state());
        assert_eq!(
            batched.noise.shift_register(),
            reference.noise.shift_register()
        );
        assert_eq!(
            (batched.pulse1.position(), batched.pulse2.position()),
            (reference.pulse1.position(), reference.pulse2.position())
        );
        batched.take_samples(&mut batched_samples);
        reference.take_samples(&mut reference_samples);
        assert_eq!(batched_samples, reference_samples);
    }
    assert!(
        runs_seen > 100,
        "silent runs were exercised {runs_seen} times"
    );
    assert!(batched_samples.iter().any(|&sample| sample != 0.0));
}
