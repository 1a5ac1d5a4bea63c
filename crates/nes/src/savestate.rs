//! Save states: the whole console as bytes, and back.
//!
//! Layout (integers little-endian):
//!
//! | offset | size | content |
//! |---|---|---|
//! | 0 | 8 | magic `NESSTATE` |
//! | 8 | 4 | format version ([`STATE_FORMAT_VERSION`]) |
//! | 12 | 20 | SHA-1 of the ROM's PRG+CHR data (the state only loads into that ROM) |
//! | 32 | 8 | payload length |
//! | 40 | 4 | CRC-32 of the payload |
//! | 44 | … | payload |
//!
//! The payload is the chips in a fixed order, each serialised field by field (borsh: fixed
//! width, no padding): CPU, bus (CPU RAM, controllers, open bus, pending DMA and strobe), PPU,
//! APU, cartridge (bank tables, PRG RAM, CHR RAM, nametable RAM, board registers, PPU A12 as
//! the board saw it), then the console's frame and lag counts and its region (a byte: 0 NTSC,
//! 1 PAL, 2 Dendy; a state only loads into a console of its region). ROM data is never
//! stored, nor are the console's settings (its hardware revisions, the cartridge's board
//! options such as the MMC3 revision): a state loads into the console's own.
//!
//! Loading checks everything before changing anything: magic, version, ROM, length and
//! checksum first, then every chip is decoded into a new value and checked against the
//! ranges its fields can have (a state that passes the checksum is still untrusted input:
//! states are shared, and edited); the console is only overwritten once the whole payload
//! decoded and checked cleanly. Each chip checks its own fields (`Ppu::validate_state`,
//! `Apu::validate_state`, the cartridge as it reads its part, `BusState::validate_state`);
//! the CPU's registers and counters are valid at any value.

use borsh::{BorshDeserialize, BorshSerialize};
use nes_apu::Apu;
use nes_cpu::Cpu;
use nes_ppu::Ppu;
use nes_state::InvalidState;
use thiserror::Error;

use crate::clock::MAX_CPU_CYCLES;
use crate::hardware::variant_name;
use crate::motherboard::BusState;
use crate::{Nes, Region};

const MAGIC: [u8; 8] = *b"NESSTATE";

/// Version of the payload layout. Any change to a serialised chip's fields (they are stored in
/// declaration order) must bump it: old states are then refused with a clear error instead of
/// being misread. The state-size test in this module catches most forgotten bumps.
pub const STATE_FORMAT_VERSION: u32 = 5;

const HEADER_LEN: usize = 44;

/// The most lag frames a state may count: as many frames as a PPU state may have completed
/// (2^48, see `Ppu::validate_state`), so counting on from it cannot overflow.
const MAX_LAG_COUNT: u64 = 1 << 48;

/// Why a save state could not be loaded. The console is unchanged in every case.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum StateError {
    #[error("not a save state (no NESSTATE signature)")]
    NotAState,
    #[error(
        "save state format version {found} is not supported (this build reads version {supported})"
    )]
    UnsupportedVersion { found: u32, supported: u32 },
    #[error(
        "the save state is for another ROM (SHA-1 {state_rom}); the loaded ROM is {loaded_rom}"
    )]
    WrongRom {
        state_rom: String,
        loaded_rom: String,
    },
    #[error("the save state is truncated: {actual} of {expected} bytes")]
    Truncated { expected: u64, actual: u64 },
    #[error("the save state is corrupt (checksum mismatch)")]
    Corrupt,
    /// Decoded, but holding something no console could be in (each chip's check, or bytes
    /// that do not decode).
    #[error("the save state is malformed: {0}")]
    Malformed(#[from] InvalidState),
    #[error("the save state is from a {state} console; this console is {console}")]
    WrongRegion {
        state: &'static str,
        console: &'static str,
    },
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Fills in a state's length and checksum from the payload after its header.
fn seal(state: &mut [u8]) {
    let payload_len = (state.len() - HEADER_LEN) as u64;
    let checksum = crc32fast::hash(&state[HEADER_LEN..]);
    state[32..40].copy_from_slice(&payload_len.to_le_bytes());
    state[40..44].copy_from_slice(&checksum.to_le_bytes());
}

impl Nes {
    /// Bytes before a save state's payload (see the module documentation).
    pub const STATE_HEADER_LEN: usize = HEADER_LEN;

    /// A save state for this console's ROM made of `payload` (a state's bytes after its
    /// first [`Nes::STATE_HEADER_LEN`]): the header (signature, version, ROM hash, length,
    /// checksum) is this console's, so [`Nes::load_state`] judges the payload itself. For
    /// fuzzers and tools that edit payloads.
    pub fn state_with_payload(&self, payload: &[u8]) -> Vec<u8> {
        let mut state = Vec::with_capacity(HEADER_LEN + payload.len());
        self.write_header(&mut state);
        state.extend_from_slice(payload);
        seal(&mut state);
        state
    }

    /// The header with its length and checksum still zero (see `seal`).
    fn write_header(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&STATE_FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&self.rom_info().prg_chr_sha1);
        out.extend_from_slice(&[0; 12]);
    }

    /// The console's complete state (see the module documentation for the format).
    pub fn save_state(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.save_state_into(&mut out);
        out
    }

    /// [`Nes::save_state`] into a reused buffer (replacing its content): taking a state every
    /// frame then allocates nothing once the buffer has grown.
    pub fn save_state_into(&self, out: &mut Vec<u8>) {
        out.clear();
        self.write_header(out);
        // Writing into a Vec cannot fail, and no field is a float borsh would refuse (the APU
        // stores its floats as bit patterns).
        let written = self.write_payload(out);
        debug_assert!(
            written.is_ok(),
            "serialising into memory failed: {written:?}"
        );
        seal(out);
    }

    fn write_payload(&self, out: &mut Vec<u8>) -> std::io::Result<()> {
        self.cpu.serialize(out)?;
        self.board.bus_state().serialize(out)?;
        self.board.ppu.serialize(out)?;
        self.board.apu.serialize(out)?;
        self.board.cart.save_state(out)?;
        self.frame_count_offset.serialize(out)?;
        self.lag_count.serialize(out)?;
        self.region().state_code().serialize(out)
    }

    /// Restore a state made by [`Nes::save_state`] for the same ROM, frame and lag counts
    /// included (as FCEUX restores them). On any error the console is left exactly as it
    /// was. Settings of the host are not part of a state and stay as they are: the audio
    /// output rate (the resampler restarts if the state used another) and how the console
    /// starts at its next power cycle or reset.
    pub fn load_state(&mut self, state: &[u8]) -> Result<(), StateError> {
        let payload = self.check_header(state)?;
        let mut reader = payload;
        let malformed =
            |error: std::io::Error| StateError::from(InvalidState::impossible(error.to_string()));
        let cpu = Cpu::deserialize_reader(&mut reader).map_err(malformed)?;
        let bus = BusState::deserialize_reader(&mut reader).map_err(malformed)?;
        let mut ppu = Ppu::deserialize_reader(&mut reader).map_err(malformed)?;
        let mut apu = Apu::deserialize_reader(&mut reader).map_err(malformed)?;
        let cart = self.board.cart.read_state(&mut reader)?;
        let frame_count_offset = u64::deserialize_reader(&mut reader).map_err(malformed)?;
        let lag_count = u64::deserialize_reader(&mut reader).map_err(malformed)?;
        let region_code = u8::deserialize_reader(&mut reader).map_err(malformed)?;
        if !reader.is_empty() {
            return Err(StateError::Malformed(InvalidState::impossible(format!(
                "{} unexpected bytes after the console state",
                reader.len()
            ))));
        }
        let region = Region::from_state_code(region_code).ok_or_else(|| {
            StateError::Malformed(InvalidState::impossible(format!(
                "region code {region_code} is unknown"
            )))
        })?;
        if region != self.region() {
            return Err(StateError::WrongRegion {
                state: variant_name(region),
                console: variant_name(self.region()),
            });
        }
        // The chips' models are console settings a state does not carry: this console's.
        ppu.set_decoded_model(region.ppu_model());
        apu.set_decoded_model(region.apu_model());
        apu.set_cpu_clock_hz(region.cpu_hz());
        // Every value in range before any is used (the cartridge checked its own part as it
        // read it, against this cartridge).
        ppu.validate_state().map_err(StateError::Malformed)?;
        apu.validate_state().map_err(StateError::Malformed)?;
        if apu.cycle() > MAX_CPU_CYCLES {
            return Err(StateError::Malformed(InvalidState::impossible(format!(
                "CPU cycle count {} is out of range 0..={MAX_CPU_CYCLES}",
                apu.cycle()
            ))));
        }
        bus.validate_state(apu.cycle())
            .map_err(StateError::Malformed)?;
        if lag_count > MAX_LAG_COUNT {
            return Err(StateError::Malformed(InvalidState::impossible(format!(
                "lag count {lag_count} is out of range 0..={MAX_LAG_COUNT}"
            ))));
        }

        // The instruction count is no machine state: it runs on, as FCEUX's does.
        let instruction_count = self.instruction_count();
        self.cpu = cpu;
        self.cpu.set_instructions(instruction_count);
        self.board.restore_bus_state(bus);
        self.board.ppu = ppu;
        self.board.apu = apu;
        self.board.cart.restore_state(cart);
        self.apply_hardware();
        self.frame_count_offset = frame_count_offset;
        self.lag_count = lag_count;
        if self.board.apu.sample_rate() != self.audio_sample_rate {
            self.board.apu.set_sample_rate(self.audio_sample_rate);
        }
        // The PPU's dot count restarts from the restored cycle count, and its next catch-up
        // is scheduled from its restored position.
        self.board.restart_ppu_clock();
        Ok(())
    }

    /// Checks magic, version, ROM, length and checksum; returns the payload.
    fn check_header<'a>(&self, state: &'a [u8]) -> Result<&'a [u8], StateError> {
        let magic_len = state.len().min(MAGIC.len());
        if state.is_empty() || state[..magic_len] != MAGIC[..magic_len] {
            return Err(StateError::NotAState);
        }
        if state.len() < HEADER_LEN {
            return Err(StateError::Truncated {
                expected: HEADER_LEN as u64,
                actual: state.len() as u64,
            });
        }
        let field = |range: std::ops::Range<usize>| &state[range];
        let version = u32::from_le_bytes(field(8..12).try_into().unwrap_or_default());
        if version != STATE_FORMAT_VERSION {
            return Err(StateError::UnsupportedVersion {
                found: version,
                supported: STATE_FORMAT_VERSION,
            });
        }
        let loaded_rom = &self.rom_info().prg_chr_sha1;
        if field(12..32) != loaded_rom {
            return Err(StateError::WrongRom {
                state_rom: hex(field(12..32)),
                loaded_rom: hex(loaded_rom),
            });
        }
        let payload_len = u64::from_le_bytes(field(32..40).try_into().unwrap_or_default());
        let actual = (state.len() - HEADER_LEN) as u64;
        if actual < payload_len {
            return Err(StateError::Truncated {
                expected: HEADER_LEN as u64 + payload_len,
                actual: state.len() as u64,
            });
        }
        if actual > payload_len {
            return Err(StateError::Malformed(InvalidState::impossible(format!(
                "{} bytes after the end of the state",
                actual - payload_len
            ))));
        }
        let payload = &state[HEADER_LEN..];
        let checksum = u32::from_le_bytes(field(40..44).try_into().unwrap_or_default());
        if crc32fast::hash(payload) != checksum {
            return Err(StateError::Corrupt);
        }
        Ok(payload)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::hash::{DefaultHasher, Hash, Hasher};

    use super::*;
    use crate::test_programs::{board_rom, busy_rom, BOARDS};
    use crate::Buttons;

    fn busy_console() -> Nes {
        let mut nes = Nes::from_ines(&busy_rom()).unwrap();
        nes.set_audio_sample_rate(44_100);
        nes
    }

    /// Runs `frames` frames with changing input and hashes every picture, CPU RAM, PRG RAM
    /// and all audio produced.
    fn run_and_hash(nes: &mut Nes, frames: u32) -> u64 {
        let mut hasher = DefaultHasher::new();
        let mut audio = Vec::new();
        for frame in 0..frames {
            nes.set_buttons(0, Buttons::from_bits_retain(frame.wrapping_mul(13) as u8));
            nes.run_frame();
            nes.frame_buffer().hash(&mut hasher);
            (0..0x800u16)
                .map(|addr| nes.peek(addr))
                .for_each(|b| b.hash(&mut hasher));
            nes.peek(0x6000).hash(&mut hasher);
            audio.clear();
            nes.take_audio_samples(&mut audio);
            audio.iter().for_each(|s| s.to_bits().hash(&mut hasher));
            nes.cpu_registers().hash(&mut hasher);
        }
        hasher.finish()
    }

    /// Save at the current moment, run on, then load (into this console and into a freshly
    /// powered-on one) and check both replays match the original run exactly.
    fn assert_replays_identically(nes: &mut Nes, what: &str) {
        let state = nes.save_state();
        let original = run_and_hash(nes, 20);
        nes.load_state(&state).unwrap();
        assert_eq!(
            nes.save_state(),
            state,
            "{what}: a loaded state saves back identically"
        );
        assert_eq!(
            run_and_hash(nes, 20),
            original,
            "{what}: replay after loading"
        );
        let mut fresh = busy_console();
        fresh.load_state(&state).unwrap();
        assert_eq!(
            run_and_hash(&mut fresh, 20),
            original,
            "{what}: replay in a fresh console"
        );
    }

    /// Steps instructions until `found` holds (within a frame budget).
    fn step_until(nes: &mut Nes, found: impl Fn(&Nes) -> bool) {
        let limit = nes.frame_count() + 10;
        while !found(nes) {
            assert!(nes.frame_count() < limit, "moment not reached");
            nes.step_instruction();
        }
    }

    #[test]
    fn state_at_a_frame_boundary_replays_identically() {
        let mut nes = busy_console();
        run_and_hash(&mut nes, 30);
        assert_replays_identically(&mut nes, "frame boundary");
    }

    #[test]
    fn state_mid_frame_replays_identically() {
        let mut nes = busy_console();
        run_and_hash(&mut nes, 12);
        step_until(&mut nes, |nes| nes.ppu_position().0 == 100);
        assert_replays_identically(&mut nes, "mid-frame (scanline 100)");
    }

    #[test]
    fn state_with_an_oam_dma_pending_replays_identically() {
        let mut nes = busy_console();
        run_and_hash(&mut nes, 12);
        step_until(&mut nes, |nes| nes.pending_dma().0);
        assert_replays_identically(&mut nes, "OAM DMA requested");
    }

    #[test]
    fn state_with_a_dmc_fetch_pending_replays_identically() {
        let mut nes = busy_console();
        run_and_hash(&mut nes, 12);
        step_until(&mut nes, |nes| nes.pending_dma().1);
        assert_replays_identically(&mut nes, "DMC fetch requested");
    }

    #[test]
    fn state_taken_during_fceux_start_up_replays_identically() {
        // Parked in the first inactive frame, mid-frame: the park and FCEUX's frame timing
        // are part of the PPU's state.
        let cart = crate::Cartridge::from_ines(&busy_rom()).unwrap();
        let mut nes = Nes::with_power_on(cart, crate::PowerOn::FCEUX);
        nes.set_audio_sample_rate(44_100);
        for _ in 0..5_000 {
            nes.step_instruction();
        }
        assert_replays_identically(&mut nes, "FCEUX start-up");
    }

    #[test]
    fn audio_rate_is_the_hosts_setting() {
        let mut nes = busy_console();
        run_and_hash(&mut nes, 5);
        let state = nes.save_state();
        let mut silent = Nes::from_ines(&busy_rom()).unwrap();
        silent.load_state(&state).unwrap();
        let mut samples = Vec::new();
        silent.run_frame();
        silent.take_audio_samples(&mut samples);
        assert!(samples.is_empty(), "a console with audio off stays silent");
    }

    fn expect_rejected(nes: &mut Nes, state: &[u8]) -> StateError {
        let before = nes.save_state();
        let error = nes.load_state(state).unwrap_err();
        assert_eq!(
            nes.save_state(),
            before,
            "{error}: the console must be untouched"
        );
        error
    }

    /// Rewrites the length and checksum after editing a payload.
    fn reseal(state: &mut [u8]) {
        seal(state);
    }

    #[test]
    fn bad_states_are_rejected_with_clear_errors() {
        let mut nes = busy_console();
        run_and_hash(&mut nes, 3);
        let good = nes.save_state();
        run_and_hash(&mut nes, 2);

        assert_eq!(expect_rejected(&mut nes, b"hello"), StateError::NotAState);
        assert_eq!(expect_rejected(&mut nes, b""), StateError::NotAState);

        for cut in [10, HEADER_LEN, good.len() / 2, good.len() - 1] {
            let error = expect_rejected(&mut nes, &good[..cut]);
            assert!(
                matches!(error, StateError::Truncated { .. }),
                "cut at {cut}: {error}"
            );
            assert!(error.to_string().contains("truncated"));
        }

        let mut newer = good.clone();
        newer[8..12].copy_from_slice(&(STATE_FORMAT_VERSION + 1).to_le_bytes());
        let error = expect_rejected(&mut nes, &newer);
        assert_eq!(
            error.to_string(),
            format!(
                "save state format version {} is not supported (this build reads version {})",
                STATE_FORMAT_VERSION + 1,
                STATE_FORMAT_VERSION
            )
        );

        let mut flipped = good.clone();
        let middle = good.len() / 2;
        flipped[middle] ^= 0x40;
        assert_eq!(expect_rejected(&mut nes, &flipped), StateError::Corrupt);

        let mut longer = good.clone();
        longer.push(0);
        assert!(matches!(
            expect_rejected(&mut nes, &longer),
            StateError::Malformed(_)
        ));

        // Sealed again (length and checksum right) but with bytes left over inside.
        let mut padded = good.clone();
        padded.extend_from_slice(&[0; 3]);
        reseal(&mut padded);
        let error = expect_rejected(&mut nes, &padded);
        assert!(error.to_string().contains("unexpected bytes"), "{error}");

        let mut other_rom = busy_rom();
        other_rom[16] = 0x18; // a different first PRG byte: another ROM
        let mut other = Nes::from_ines(&other_rom).unwrap();
        let error = expect_rejected(&mut other, &good);
        assert!(matches!(error, StateError::WrongRom { .. }), "{error}");
        assert!(error.to_string().contains("another ROM"));

        // After all that, the good state still loads.
        nes.load_state(&good).unwrap();
    }

    /// Where each chip's part of `nes`'s state starts: the payload is the chips in order,
    /// each as long as it serialises.
    struct Layout {
        cpu: usize,
        bus: usize,
        ppu: usize,
        apu: usize,
        cart: usize,
    }

    fn layout(nes: &Nes) -> Layout {
        let len = |bytes: borsh::io::Result<Vec<u8>>| bytes.map_or(0, |bytes| bytes.len());
        let cpu = HEADER_LEN;
        let bus = cpu + len(borsh::to_vec(&nes.cpu));
        let ppu = bus + len(borsh::to_vec(&nes.board.bus_state()));
        let apu = ppu + len(borsh::to_vec(&nes.board.ppu));
        let cart = apu + len(borsh::to_vec(&nes.board.apu));
        Layout {
            cpu,
            bus,
            ppu,
            apu,
            cart,
        }
    }

    /// Inside the APU's part (nes_apu's field order, borsh widths): pulse 1 and 2 (25 bytes
    /// each: negate adjustment u16, duty, sequencer position, period u16, envelope 6, length
    /// counter 6, sweep 7), the triangle (13: period u16, step, control, linear reload and
    /// counter, reload flag, length counter 6), the noise (17: mode, period u16, shift
    /// register u16, envelope 6, length counter 6), the DMC (24), then the frame counter:
    /// its five-step flag, and its step as a u64.
    const APU_FRAME_COUNTER_STEP: usize = 2 * 25 + 13 + 17 + 24 + 1;

    /// After the cartridge's board come its CPU cycle, the frame count offset and the lag
    /// count, each a u64, and the region byte.
    const TRAILER_LEN: usize = 3 * 8 + 1;

    /// `state` with `bytes` written at `at`, sealed again.
    fn edited(state: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
        let mut state = state.to_vec();
        state[at..at + bytes.len()].copy_from_slice(bytes);
        reseal(&mut state);
        state
    }

    fn assert_malformed(nes: &mut Nes, state: &[u8], message: &str) {
        let error = expect_rejected(nes, state);
        assert!(matches!(error, StateError::Malformed(_)), "{error:?}");
        assert_eq!(
            error.to_string(),
            format!("the save state is malformed: {message}")
        );
    }

    #[test]
    fn a_frame_counter_step_out_of_range_is_refused() {
        // The reported crash: this byte edit (sealed again) loaded, and the first frames
        // indexed the frame counter's step tables out of bounds.
        let mut nes = busy_console();
        run_and_hash(&mut nes, 5);
        let state = nes.save_state();
        let at = layout(&nes).apu + APU_FRAME_COUNTER_STEP;
        let step = u64::from_le_bytes(state[at..at + 8].try_into().unwrap());
        assert!(step <= 5, "a real step lies at {at}: {step}");
        let crafted = edited(&state, at, &131_075u64.to_le_bytes());
        let error = expect_rejected(&mut nes, &crafted);
        assert_eq!(
            error.to_string(),
            "the save state is malformed: APU frame counter step 131075 is out of range 0..=5"
        );
    }

    #[test]
    fn fields_out_of_range_in_each_chip_are_refused() {
        let mut nes = busy_console();
        run_and_hash(&mut nes, 5);
        let state = nes.save_state();
        let at = layout(&nes);
        // PPU: its position comes first, scanline then dot (u16 each).
        assert_malformed(
            &mut nes,
            &edited(&state, at.ppu, &300u16.to_le_bytes()),
            "PPU scanline 300 is out of range 0..=261",
        );
        assert_malformed(
            &mut nes,
            &edited(&state, at.ppu + 2, &341u16.to_le_bytes()),
            "PPU dot 341 is out of range 0..=340",
        );
        // APU: its cycle count, the first field after the frame counter equal to it.
        let cycle = nes.board.apu.cycle().to_le_bytes();
        let cycle_at = at.apu
            + APU_FRAME_COUNTER_STEP
            + state[at.apu + APU_FRAME_COUNTER_STEP..]
                .windows(8)
                .position(|bytes| bytes == cycle)
                .unwrap();
        assert_malformed(
            &mut nes,
            &edited(&state, cycle_at, &(u64::MAX - 9).to_le_bytes()),
            "APU cycle 18446744073709551606 is out of range 0..=4611686018427387904",
        );
        // Cartridge: its bank tables come first, eight-byte offsets: CPU reads in slots 0-7,
        // then CPU writes. A write window onto the PRG ROM at $8000 (slot 4).
        let rom = state[at.cart + 4 * 8..at.cart + 5 * 8].to_vec();
        assert_malformed(
            &mut nes,
            &edited(&state, at.cart + (8 + 4) * 8, &rom),
            "the cartridge bank tables are not a mapping the NROM board can select",
        );
        // The console's lag count, the state's last u64.
        assert_malformed(
            &mut nes,
            &edited(&state, state.len() - 9, &u64::MAX.to_le_bytes()),
            "lag count 18446744073709551615 is out of range 0..=281474976710656",
        );
        assert_malformed(
            &mut nes,
            &edited(&state, state.len() - 1, &[3]),
            "region code 3 is unknown",
        );
        // A board register: the MMC1's shift count, after the enum tag and the shift register
        // (its board is 1 + 20 bytes: six registers, the last write's cycle u64, then seven
        // one-byte wiring fields).
        let mut mmc1 = Nes::from_ines(&board_rom(1, 8, 0)).unwrap();
        run_and_hash(&mut mmc1, 5);
        let state = mmc1.save_state();
        let shift_count_at = state.len() - TRAILER_LEN - 21 + 2;
        assert!(state[shift_count_at] <= 4);
        assert_malformed(
            &mut mmc1,
            &edited(&state, shift_count_at, &[9]),
            "MMC1 shift count 9 is out of range 0..=4",
        );
    }

    #[test]
    fn huge_cpu_cycle_counts_load_and_run() {
        // The CPU's cycle count is valid at any value (debuggers set it) and wraps: a state
        // with it about to wrap loads and runs.
        let mut nes = busy_console();
        run_and_hash(&mut nes, 3);
        let state = nes.save_state();
        // After A, X, Y, S, PC (u16) and P.
        let cycles_at = layout(&nes).cpu + 7;
        let near_wrap = edited(&state, cycles_at, &(u64::MAX - 5).to_le_bytes());
        nes.load_state(&near_wrap).unwrap();
        assert_eq!(nes.cpu_registers().cycles, u64::MAX - 5);
        run_and_hash(&mut nes, 3);
        assert!(nes.cpu_registers().cycles < 100_000, "wrapped");
    }

    #[test]
    fn sealed_garbage_never_panics() {
        // A state with a valid checksum but edited content (a crafted file) must load or be
        // refused with the console untouched; one that loads must run, and what it then
        // saves must load back and save the same. Every board, at a frame's end and mid-frame.
        let mut seed = 0x1234_5678_9ABC_DEF0u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut loaded, mut refused) = (0, 0);
        for (name, mapper, prg_16k, chr_8k) in BOARDS {
            let rom = board_rom(mapper, prg_16k, chr_8k);
            let fresh = || {
                let mut nes = Nes::from_ines(&rom).unwrap();
                nes.set_audio_sample_rate(44_100);
                nes
            };
            let mut nes = fresh();
            run_and_hash(&mut nes, 4);
            let at_frame_end = nes.save_state();
            for _ in 0..3_000 {
                nes.step_instruction();
            }
            let mid_frame = nes.save_state();
            // Memory is most of a state and takes any value: the PPU's picture (its last
            // field), CPU RAM (the bus's first) and the cartridge's RAM (after its 384 bytes
            // of bank tables, up to its board, at most 40 bytes, and the trailer). Edits go
            // elsewhere 15 times in 16.
            let at = layout(&nes);
            let memory = [
                at.apu - 2 * nes_ppu::FRAME_WIDTH * nes_ppu::FRAME_HEIGHT..at.apu,
                at.bus..at.bus + 0x800,
                at.cart + 384..mid_frame.len() - TRAILER_LEN - 40,
            ];
            for round in 0..150 {
                let mut state = [&at_frame_end, &mid_frame][round % 2].clone();
                for _ in 0..1 + round % 8 {
                    let mut random = next();
                    let position = loop {
                        let position = HEADER_LEN + random as usize % (state.len() - HEADER_LEN);
                        let in_memory = memory.iter().any(|range| range.contains(&position));
                        if random >> 60 == 0 || !in_memory {
                            break position;
                        }
                        random = next();
                    };
                    state[position] = match (random >> 32) % 4 {
                        0 => 0,
                        1 => 0xFF,
                        _ => (random >> 40) as u8,
                    };
                }
                reseal(&mut state);
                let mut console = fresh();
                let before = console.save_state();
                if console.load_state(&state).is_err() {
                    assert_eq!(console.save_state(), before, "{name}: a refusal changed it");
                    refused += 1;
                    continue;
                }
                loaded += 1;
                console.run_frame();
                console.run_frame();
                let saved = console.save_state();
                let mut again = fresh();
                if let Err(error) = again.load_state(&saved) {
                    panic!("{name} round {round}: a state it saved is refused: {error}");
                }
                assert_eq!(again.save_state(), saved, "{name} round {round}");
                again.run_frame();
            }
        }
        assert!(
            loaded > 300 && refused > 300,
            "{loaded} loaded, {refused} refused"
        );
    }

    #[test]
    fn state_size_is_pinned_to_the_format_version() {
        // The payload layout is part of the file format: if this size changes, a field was
        // added or removed, and STATE_FORMAT_VERSION must be bumped along with this number.
        // (Audio off: with audio on, the not-yet-output part of the resampler adds a varying
        // number of bytes.)
        let nes = Nes::from_ines(&busy_rom()).unwrap();
        assert_eq!(nes.save_state().len(), 145_041, "bump STATE_FORMAT_VERSION");
    }
}
