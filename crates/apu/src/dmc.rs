//! Delta modulation channel (NESdev "APU DMC", "DMA").
//!
//! The DMC does not read memory itself: it raises a request (`dma_address`) that the CPU's DMA
//! unit serves by halting the CPU and reading the byte, then hands it back (`dma_complete`).

use crate::channel_state::{table_index, DmcState};
use crate::model::{same_index, ApuModel};
use crate::{check_consistent, check_range};
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

#[derive(Clone, Debug, BorshSerialize, BorshDeserialize)]
pub(crate) struct Dmc {
    irq_enabled: bool,
    looping: bool,
    /// Timer period in CPU cycles; the timer is scheduled by the Apu.
    rate: u16,
    /// Whose rate table `$4010` selects from (a setting, not state).
    #[borsh(skip)]
    model: ApuModel,
    /// 7-bit output level (the DAC input).
    output_level: u8,
    /// The last $4011 value (7 bits), for debuggers: FCEUX's Lua `sound.get` reports it as
    /// `dmcseed`. The hardware keeps no such latch, so save states leave it out (FCEUX's leave
    /// it out too); a loaded state shows 0 until the next $4011 write.
    #[borsh(skip)]
    last_direct_load: u8,
    sample_start: u16,
    sample_length: u16,
    current_address: u16,
    bytes_remaining: u16,
    sample_buffer: u8,
    sample_buffer_full: bool,
    shift_register: u8,
    bits_remaining: u8,
    silence: bool,
    pub(crate) irq_flag: bool,
    /// The memory reader wants a byte fetched: a "reload" request (an output cycle began and
    /// emptied the buffer) or a "load" request (an enabling $4015 write found the buffer
    /// empty; `load_armed` until the write reaches the reader).
    dma_request: bool,
    load_armed: bool,
    /// A reload request raised on the stale byte count right after the last byte's fetch:
    /// it lasts one cycle, long enough for the DMA unit to halt the CPU but not to fetch
    /// (AccuracyCoin "Implicit DMA Abort": a one-cycle DMA). Cleared by `end_phantom_request`.
    phantom_request: bool,
    /// Late RP2A03G and RP2A03H: no gap separates one DMC DMA from the next, so a fetch that
    /// completes on the APU cycle in which the output unit started a cycle with an empty
    /// buffer still feeds that cycle, and the reload it asks for follows at once; when that
    /// fetch ended the sample, the reload fetches its last byte again (NESdev wiki "DMA",
    /// bugs: an unexpected reload DMA; MesenCE pull request 80: the byte plays twice). A
    /// console setting, not state: a loaded state keeps the console's.
    #[borsh(skip)]
    stale_reload_completes: bool,
    /// The memory reader's copy of the $4015 enable bit. It follows $4015 writes with the
    /// same delay as the load DMA (see `Apu::write_status`); while it is clear no DMA is
    /// requested, and clearing it withdraws a pending request (explicit DMA abort).
    dma_gate: bool,
    /// `dma_request & dma_gate`, kept up to date by every method that changes either: the
    /// console asks for it before every CPU read cycle, so it is one load there.
    dma_wanted: bool,
}

impl Dmc {
    /// Selects rates from `model`'s table from now on; the current rate keeps its `$4010`
    /// index.
    pub(crate) fn set_model(&mut self, model: ApuModel) {
        self.rate = same_index(self.model.dmc_rates(), model.dmc_rates(), self.rate);
        self.model = model;
    }

    /// Sets the model of a channel decoded from a save state, whose rate is already the
    /// model's.
    pub(crate) fn set_decoded_model(&mut self, model: ApuModel) {
        self.model = model;
    }

    pub(crate) fn new() -> Dmc {
        Dmc {
            irq_enabled: false,
            looping: false,
            rate: ApuModel::default().dmc_rates()[0],
            model: ApuModel::default(),
            output_level: 0,
            last_direct_load: 0,
            sample_start: 0xC000,
            sample_length: 1,
            current_address: 0xC000,
            bytes_remaining: 0,
            sample_buffer: 0,
            sample_buffer_full: false,
            shift_register: 0,
            bits_remaining: 8,
            silence: true,
            irq_flag: false,
            dma_request: false,
            load_armed: false,
            phantom_request: false,
            stale_reload_completes: false,
            dma_gate: false,
            dma_wanted: false,
        }
    }

    pub(crate) fn write(&mut self, register: u16, value: u8) {
        match register & 3 {
            0 => {
                self.irq_enabled = value & 0x80 != 0;
                if !self.irq_enabled {
                    self.irq_flag = false;
                }
                self.looping = value & 0x40 != 0;
                self.rate = self.model.dmc_rates()[usize::from(value & 0x0F)];
            }
            1 => {
                self.output_level = value & 0x7F;
                self.last_direct_load = self.output_level;
            }
            2 => self.sample_start = 0xC000 | (u16::from(value) << 6),
            _ => self.sample_length = (u16::from(value) << 4) | 1,
        }
    }

    /// Bit 4 of a $4015 write. A restart (enabling with no bytes left) reloads the address and
    /// length at once; a disable only takes effect when it reaches the memory reader
    /// (`set_dma_gate`), a few cycles later, which is still before a $4015 read in the next
    /// instruction can see it.
    pub(crate) fn set_enabled(&mut self, enabled: bool) {
        self.irq_flag = false;
        if enabled && self.bytes_remaining == 0 {
            self.restart_sample();
            self.load_armed = !self.sample_buffer_full;
        } else if !enabled {
            self.load_armed = false;
        }
    }

    /// Checks the DMC decoded from a save state (see `Apu::validate_state`): the rate is one
    /// of the table's, the level 7-bit, the sample registers what $4012/$4013 can set, the
    /// memory reader inside $8000-$FFFF with at most one whole sample left, the bit counter
    /// 1-8 (it is decremented before its test for 0), and the DMA request flag the AND of
    /// its inputs.
    pub(crate) fn validate_state(&self) -> Result<(), InvalidState> {
        let rates = self.model.dmc_rates();
        if !rates.contains(&self.rate) {
            return Err(InvalidState::impossible(format!(
                "APU DMC rate {} is not one of the channel's rates {rates:?}",
                self.rate
            )));
        }
        check_range("APU DMC output level", self.output_level, 0..=0x7F)?;
        if self.sample_start < 0xC000 || self.sample_start & 0x3F != 0 {
            return Err(InvalidState::impossible(format!(
                "APU DMC sample address ${:04X} is not one $4012 can set ($C000-$FFC0 in \
                 steps of $40)",
                self.sample_start
            )));
        }
        let longest = (0xFF << 4) | 1;
        if self.sample_length > longest || self.sample_length & 0xF != 1 {
            return Err(InvalidState::impossible(format!(
                "APU DMC sample length {} is not one $4013 can set (1-{longest} in steps of \
                 16)",
                self.sample_length
            )));
        }
        check_range(
            "APU DMC sample address",
            self.current_address,
            0x8000..=0xFFFF,
        )?;
        check_range("APU DMC bytes remaining", self.bytes_remaining, 0..=longest)?;
        check_range("APU DMC bits remaining", self.bits_remaining, 1..=8)?;
        check_consistent(
            self.dma_wanted == (self.dma_request & self.dma_gate),
            "APU DMC DMA request",
        )
    }

    fn restart_sample(&mut self) {
        self.current_address = self.sample_start;
        self.bytes_remaining = self.sample_length;
    }

    /// A fetched byte waits in the sample buffer.
    #[inline]
    pub(crate) fn sample_buffer_full(&self) -> bool {
        self.sample_buffer_full
    }

    #[inline]
    pub(crate) fn is_active(&self) -> bool {
        self.bytes_remaining != 0
    }

    /// A $4015 write's enable bit reaches the memory reader. Opening the gate after a restart
    /// with an empty buffer raises the "load" DMA request; closing it stops the sample and
    /// withdraws every request, so a DMA not yet committed is abandoned.
    pub(crate) fn set_dma_gate(&mut self, open: bool) {
        self.dma_gate = open;
        if !open {
            self.bytes_remaining = 0;
            self.dma_request = false;
            self.phantom_request = false;
        } else if self.load_armed && !self.sample_buffer_full && self.bytes_remaining != 0 {
            self.dma_request = true;
        }
        self.load_armed = false;
        self.update_dma_wanted();
    }

    #[inline(always)]
    fn update_dma_wanted(&mut self) {
        self.dma_wanted = self.dma_request & self.dma_gate;
    }

    /// A DMA fetch is wanted now (the request and the gate are both set).
    #[inline(always)]
    pub(crate) fn dma_wanted(&self) -> bool {
        self.dma_wanted
    }

    #[cfg(test)]
    pub(crate) fn bits_remaining_for_test(&self) -> u8 {
        self.bits_remaining
    }

    #[inline]
    pub(crate) fn phantom_request_pending(&self) -> bool {
        self.phantom_request
    }

    /// The cycle after a phantom request was raised: the byte count has caught up.
    #[inline]
    pub(crate) fn end_phantom_request(&mut self) {
        if self.phantom_request {
            self.phantom_request = false;
            self.dma_request = false;
            self.update_dma_wanted();
        }
    }

    /// CPU cycles between timer expiries.
    #[inline]
    pub(crate) fn timer_period(&self) -> u64 {
        u64::from(self.rate)
    }

    /// Timer expiry. Returns true when the output level changed. `just_fetched`: the last DMA
    /// fetch was a cycle or two ago, and the memory reader still sees the byte count from
    /// before it.
    pub(crate) fn clock_output_unit(&mut self, just_fetched: bool) -> bool {
        let level_before = self.output_level;
        if !self.silence {
            if self.shift_register & 1 != 0 {
                if self.output_level <= 125 {
                    self.output_level += 2;
                }
            } else if self.output_level >= 2 {
                self.output_level -= 2;
            }
        }
        self.shift_register >>= 1;
        self.bits_remaining -= 1;
        if self.bits_remaining == 0 {
            // End of an output cycle: start the next one from the sample buffer.
            self.bits_remaining = 8;
            if self.sample_buffer_full {
                self.silence = false;
                self.shift_register = self.sample_buffer;
                self.sample_buffer_full = false;
                // The emptied buffer makes the memory reader request a "reload" DMA. Right
                // after the last byte's fetch the reader still counts that byte as remaining:
                // the request is raised and dropped a cycle later.
                if self.bytes_remaining != 0 {
                    self.dma_request = true;
                } else if just_fetched {
                    self.dma_request = true;
                    self.phantom_request = true;
                }
                self.update_dma_wanted();
            } else {
                self.silence = true;
            }
        }
        self.output_level != level_before
    }

    #[inline]
    pub(crate) fn dma_address(&self) -> Option<u16> {
        if !self.dma_wanted {
            None
        } else if self.repeat_fetch() {
            Some(self.previous_address())
        } else {
            Some(self.current_address)
        }
    }

    /// The pending request is the late 2A03s' repeated fetch of the sample's last byte: the
    /// only request that stands with no bytes left and is not the one-cycle phantom (loads
    /// and reloads need bytes left; a fetch or a disable withdraws the request).
    fn repeat_fetch(&self) -> bool {
        self.dma_request && self.bytes_remaining == 0 && !self.phantom_request
    }

    /// The address the last fetch read (the reader wraps from $FFFF to $8000).
    fn previous_address(&self) -> u16 {
        if self.current_address == 0x8000 {
            0xFFFF
        } else {
            self.current_address - 1
        }
    }

    /// Whether a fetch completing on the APU cycle in which the output unit started a cycle
    /// with an empty buffer still feeds that cycle and asks for the next byte at once (late
    /// RP2A03G, RP2A03H), or waits in the buffer (earlier 2A03s: the default).
    pub(crate) fn set_stale_reload_completes(&mut self, completes: bool) {
        self.stale_reload_completes = completes;
    }

    /// The DMA unit fetched the requested byte. A fetch is committed once its halt and dummy
    /// cycles are done, so the byte is taken even if the DMC was disabled since.
    pub(crate) fn dma_complete(&mut self, value: u8, output_just_starved: bool) {
        let repeated = self.repeat_fetch();
        let feeds_starved_cycle = self.stale_reload_completes
            && output_just_starved
            && !repeated
            && self.silence
            && self.bits_remaining == 8;
        self.dma_request = false;
        self.update_dma_wanted();
        self.sample_buffer = value;
        self.sample_buffer_full = true;
        if repeated {
            // The last byte again: the reader's address and count stay where they are.
            return;
        }
        self.current_address = if self.current_address == 0xFFFF {
            0x8000
        } else {
            self.current_address + 1
        };
        if self.bytes_remaining == 0 {
            // Disabled while the fetch was in flight: nothing left to count down.
            return;
        }
        self.bytes_remaining -= 1;
        if self.bytes_remaining == 0 {
            if self.looping {
                self.restart_sample();
            } else if self.irq_enabled {
                self.irq_flag = true;
            }
        }
        if feeds_starved_cycle {
            // The output cycle that just began silent takes the byte after all, emptying
            // the buffer again: a reload is wanted at once (with no bytes left, of the same
            // byte: see `repeat_fetch`).
            self.silence = false;
            self.shift_register = value;
            self.sample_buffer_full = false;
            self.dma_request = true;
            self.update_dma_wanted();
        }
    }

    #[inline]
    pub(crate) fn output(&self) -> u8 {
        self.output_level
    }

    pub(crate) fn state(&self) -> DmcState {
        DmcState {
            rate_index: table_index(self.model.dmc_rates(), self.rate),
            rate: self.rate,
            looping: self.looping,
            sample_address: self.sample_start,
            sample_length: self.sample_length,
            direct_load: self.last_direct_load,
            output_level: self.output_level,
            playing: !self.silence,
            bytes_remaining: self.bytes_remaining,
        }
    }

    /// Reset button: the output level keeps only bit 0 (NESdev "CPU power up state"), and the
    /// output unit and memory reader restart.
    pub(crate) fn reset(&mut self) {
        self.output_level &= 1;
        self.sample_buffer_full = false;
        self.bits_remaining = 8;
        self.silence = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// $4015 bit 4 set, and the write seen by the memory reader.
    fn enable(dmc: &mut Dmc) {
        dmc.set_enabled(true);
        dmc.set_dma_gate(true);
    }

    #[test]
    fn dma_wanted_tracks_request_and_gate() {
        let mut dmc = Dmc::new();
        dmc.write(3, 1); // 17-byte sample
        enable(&mut dmc);
        run_until_request(&mut dmc);
        assert!(dmc.dma_wanted());
        dmc.dma_complete(0x55, false);
        assert!(!dmc.dma_wanted(), "the fetch satisfied the request");
        run_until_request(&mut dmc);
        assert!(dmc.dma_wanted());
        dmc.set_dma_gate(false);
        assert!(!dmc.dma_wanted(), "closing the gate withdraws it");
        assert_eq!(dmc.dma_address(), None);
    }

    /// Run APU cycles until the DMC requests a byte (bounded).
    fn run_until_request(dmc: &mut Dmc) -> usize {
        for cycle in 0..100_000 {
            if dmc.dma_address().is_some() {
                return cycle;
            }
            dmc.clock_output_unit(false);
        }
        panic!("no DMA request");
    }

    #[test]
    fn enable_requests_load_after_delay_and_reads_sequential_addresses() {
        let mut dmc = Dmc::new();
        dmc.write(2, 0x01); // $C040
        dmc.write(3, 0x01); // 17 bytes
        dmc.set_enabled(true);
        assert!(dmc.is_active(), "the restart shows in $4015 at once");
        assert_eq!(
            dmc.dma_address(),
            None,
            "the reader has not seen the write yet"
        );
        dmc.set_dma_gate(true);
        assert_eq!(dmc.dma_address(), Some(0xC040));
        dmc.dma_complete(0xFF, false);
        assert_eq!(dmc.dma_address(), None, "buffer full");
        run_until_request(&mut dmc);
        assert_eq!(dmc.dma_address(), Some(0xC041));
    }

    #[test]
    fn address_wraps_to_8000() {
        let mut dmc = Dmc::new();
        dmc.write(2, 0xFF); // $FFC0
        dmc.write(3, 0x04); // 65 bytes
        enable(&mut dmc);
        for expected in 0xFFC0..=0xFFFFu16 {
            assert_eq!(dmc.dma_address(), Some(expected));
            dmc.dma_complete(0, false);
            run_until_request(&mut dmc);
        }
        assert_eq!(dmc.dma_address(), Some(0x8000));
    }

    #[test]
    fn output_unit_adds_and_subtracts_two_with_clamping() {
        let mut dmc = Dmc::new();
        dmc.write(1, 124);
        dmc.write(3, 0);
        enable(&mut dmc);
        dmc.dma_complete(0b0000_0111, false);
        // Finish the current silent output cycle so the byte moves into the shift register.
        for _ in 0..8 {
            dmc.clock_output_unit(false);
        }
        assert_eq!(dmc.output(), 124);
        dmc.clock_output_unit(false);
        assert_eq!(dmc.output(), 126);
        dmc.clock_output_unit(false);
        assert_eq!(dmc.output(), 126, "127 would overflow: unchanged");
        dmc.clock_output_unit(false);
        assert_eq!(dmc.output(), 126);
        dmc.clock_output_unit(false);
        assert_eq!(dmc.output(), 124);
        dmc.write(1, 1);
        dmc.clock_output_unit(false);
        assert_eq!(dmc.output(), 1, "cannot go below 0");
    }

    #[test]
    fn irq_at_end_of_sample_and_cleared_by_disabling_irq() {
        let mut dmc = Dmc::new();
        dmc.write(0, 0x8F);
        dmc.write(3, 0); // 1 byte
        enable(&mut dmc);
        assert!(!dmc.irq_flag);
        dmc.dma_complete(0, false);
        assert!(dmc.irq_flag);
        assert!(!dmc.is_active());
        dmc.write(0, 0x0F);
        assert!(!dmc.irq_flag);
    }

    #[test]
    fn looping_sample_restarts_without_irq() {
        let mut dmc = Dmc::new();
        dmc.write(0, 0xC0 | 0x0F);
        dmc.write(2, 0x00);
        dmc.write(3, 0); // 1 byte
        enable(&mut dmc);
        for _ in 0..5 {
            assert_eq!(dmc.dma_address(), Some(0xC000));
            dmc.dma_complete(0, false);
            assert!(!dmc.irq_flag);
            assert!(dmc.is_active());
            run_until_request(&mut dmc);
        }
    }

    #[test]
    fn disable_reaches_the_reader_late_and_enable_does_not_restart_playing_sample() {
        let mut dmc = Dmc::new();
        dmc.write(3, 2); // 33 bytes
        enable(&mut dmc);
        dmc.dma_complete(0, false);
        run_until_request(&mut dmc);
        assert_eq!(dmc.dma_address(), Some(0xC001));
        dmc.set_enabled(true);
        assert_eq!(dmc.dma_address(), Some(0xC001), "still playing: no restart");
        dmc.set_enabled(false);
        assert!(
            dmc.is_active(),
            "not stopped before the reader sees the write"
        );
        assert_eq!(dmc.dma_address(), Some(0xC001));
        dmc.set_dma_gate(false);
        assert_eq!(dmc.dma_address(), None, "request withdrawn: DMA abort");
        assert!(!dmc.is_active());
    }

    #[test]
    fn committed_fetch_after_disable_still_fills_the_buffer() {
        let mut dmc = Dmc::new();
        dmc.write(0, 0x8F); // IRQ enabled
        dmc.write(3, 0); // 1 byte
        enable(&mut dmc);
        dmc.set_enabled(false);
        dmc.set_dma_gate(false);
        // The DMA unit was past its dummy cycle: the byte arrives anyway.
        dmc.dma_complete(0x55, false);
        assert!(dmc.sample_buffer_full);
        assert!(!dmc.irq_flag, "no sample was playing: no end-of-sample IRQ");
        assert_eq!(dmc.dma_address(), None);
    }

    #[test]
    fn output_cycle_right_after_the_last_fetch_raises_a_one_cycle_request() {
        let mut dmc = Dmc::new();
        dmc.write(3, 0); // 1 byte, no loop
        enable(&mut dmc);
        dmc.dma_complete(0x00, false); // the sample's only byte: nothing remains
        assert!(!dmc.is_active());
        // Finish the silent output cycle: the buffer empties into the shift register.
        for _ in 0..7 {
            dmc.clock_output_unit(false);
        }
        dmc.clock_output_unit(true);
        assert_eq!(
            dmc.dma_address(),
            Some(0xC001),
            "stale byte count: phantom request"
        );
        assert!(dmc.phantom_request_pending());
        dmc.end_phantom_request();
        assert_eq!(dmc.dma_address(), None);
        // Long after the fetch the count is current: no request at all.
        let mut dmc = Dmc::new();
        dmc.write(3, 0);
        enable(&mut dmc);
        dmc.dma_complete(0x00, false);
        for _ in 0..8 {
            dmc.clock_output_unit(false);
        }
        assert_eq!(dmc.dma_address(), None);
    }

    #[test]
    fn request_raised_while_the_gate_is_closed_waits_for_it() {
        let mut dmc = Dmc::new();
        dmc.write(3, 0); // 1 byte
                         // Restarted with an empty buffer but the reader has not seen the enable yet.
        dmc.set_enabled(true);
        for _ in 0..8 {
            dmc.clock_output_unit(false);
        }
        assert_eq!(dmc.dma_address(), None);
        dmc.set_dma_gate(true);
        assert_eq!(dmc.dma_address(), Some(0xC000));
    }

    #[test]
    fn rate_table() {
        let mut dmc = Dmc::new();
        assert_eq!(dmc.timer_period(), 428);
        dmc.write(0, 0x0F);
        assert_eq!(dmc.timer_period(), 54);
        dmc.write(0, 0x09);
        assert_eq!(dmc.timer_period(), 160);
    }

    #[test]
    fn state_fields_out_of_range_are_refused() {
        let mut dmc = Dmc::new();
        for (register, value) in [(0, 0x4F), (1, 0x40), (2, 0x10), (3, 0x02)] {
            dmc.write(register, value);
        }
        dmc.set_enabled(true);
        assert_eq!(dmc.validate_state(), Ok(()));
        type Edit = fn(&mut Dmc);
        let cases: [(Edit, &str); 6] = [
            // Decremented before its test for 0: 0 would underflow.
            (
                |d| d.bits_remaining = 0,
                "APU DMC bits remaining 0 is out of range 1..=8",
            ),
            (
                |d| d.current_address = 0x2007,
                "APU DMC sample address 8199 is out of range 32768..=65535",
            ),
            (
                |d| d.rate = 0,
                "APU DMC rate 0 is not one of the channel's rates [428, 380, 340, 320, 286, \
                 254, 226, 214, 190, 160, 142, 128, 106, 84, 72, 54]",
            ),
            (
                |d| d.sample_start = 0xC001,
                "APU DMC sample address $C001 is not one $4012 can set ($C000-$FFC0 in steps \
                 of $40)",
            ),
            (
                |d| d.output_level = 200,
                "APU DMC output level 200 is out of range 0..=127",
            ),
            (
                |d| d.dma_wanted = !d.dma_wanted,
                "APU DMC DMA request is inconsistent",
            ),
        ];
        for (edit, message) in cases {
            let mut edited = dmc.clone();
            edit(&mut edited);
            assert_eq!(
                edited.validate_state().map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
    }
}
