//! NES cartridges: iNES 1.0 / NES 2.0 image parsing and the boards (mappers).
//!
//! Interface contract used by the console (`nes` crate). Everything on the CPU and PPU
//! access paths is called once per bus access, so it must be cheap: reads resolve through
//! bank tables that boards update when their registers are written.
//!
//! ```text
//! Cartridge::from_ines(bytes) -> Result<Cartridge, CartridgeError>
//! Cartridge::from_ines_with(bytes, BoardOptions { mmc3: Some(Mmc3Revision::A) }) // choices the header leaves
//! cart.info() -> &RomInfo                 // header facts, the image's identity (hashes), recognised title
//! cart.cpu_read(addr) -> Option<u8>        // $4020-$FFFF; None = nothing drives the bus (open bus)
//! cart.cpu_peek(addr) -> Option<u8>        // same without side effects (debuggers, Lua, runners)
//! cart.cpu_write(addr, value, cpu_cycle)   // $4020-$FFFF; cpu_cycle lets MMC1 ignore back-to-back writes
//! cart.ppu_read(addr, || cpu_cycle) -> u8  // $0000-$3EFF: CHR and nametables (CIRAM lives here, wired by the board)
//! cart.ppu_read_watched(addr, || cpu_cycle) -> u8 // ppu_read for a caller that knows watches_a12()
//! cart.ppu_peek(addr) -> u8
//! cart.ppu_write(addr, value, || cpu_cycle)
//! cart.ppu_address_changed(addr, || cpu_cycle) // PPU drove addr without a read/write (A12 watchers)
//! cart.watches_a12() -> bool               // PPU reads have effects: the board watches A12
//! cart.cpu_mapping_follows_a12() -> bool   // CPU reads depend on PPU A12 (MMC1 boards): catch the PPU up before every access
//! cart.dots_until_irq_possible() -> u32    // how far the PPU may run unobserved before the IRQ can rise
//! cart.irq_line() -> bool
//! cart.power_cycle()                       // power off-on (battery RAM survives, options kept)
//! cart.battery_ram() / load_battery_ram(&[u8])
//! cart.rom_byte(offset) / patch_rom(offset, value) // the ROM image as a debugger sees and patches it
//! ```
//!
//! The PPU accesses take the CPU cycle they happen in as a closure: boards watching A12 time
//! its changes in CPU (M2) cycles, and the cycle is worked out only when A12 changes. None of
//! the boards here sees the console's reset line, so a reset leaves the cartridge alone.
//!
//! Memory map decisions: iNES 1.0 images always get 8 KiB of PRG RAM at $6000 (blargg's ROMs
//! report there); NES 2.0 images get what they declare (none = open bus). $4020-$5FFF is open
//! bus on every board here. Bytes after the declared PRG/CHR ROM (title blocks, NES 2.0 misc
//! ROM) are ignored.
//!
//! Boards implemented: NROM (0), MMC1/SxROM (1), UxROM (2), CNROM (3), MMC3/TxROM (4),
//! AxROM (7), Color Dreams (11), BNROM and NINA-001 (34), GxROM (66).

mod boards;
mod error;
mod header;
mod memory;

pub use boards::{BoardOptions, Mmc3Revision};
pub use error::CartridgeError;
pub use header::{file_md5, ines_image, HeaderTiming, Mirroring, RomFormat, RomInfo};
pub use memory::PpuPages;

use std::io::{self, Read, Write};

use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

use boards::{A12Filter, Board, CpuWrite, Mapper};
use memory::{Memory, MemoryState, Region};

/// A cartridge's part of a save state, read and checked against a cartridge by
/// [`Cartridge::read_state`] but not applied yet (see [`Cartridge::restore_state`]).
#[derive(Debug)]
pub struct CartridgeState {
    memory: MemoryState,
    board: Board,
    a12: A12Filter,
}

/// A cartridge: its memory chips, the console's nametable RAM, and the board logic.
#[derive(Debug, Clone)]
pub struct Cartridge {
    info: RomInfo,
    /// The choices the board was built with, for power cycles and state checks.
    options: BoardOptions,
    mem: Memory,
    board: Board,
    /// Part of PRG RAM kept alive by the battery (empty without a battery).
    battery: Region,
    /// The board watches PPU A12 (MMC3's IRQ counter, MMC1 boards using the spare CHR lines):
    /// the board's answer, fixed at construction, kept here for the PPU's fetch path.
    watches_a12: bool,
    /// PPU A12 as the board has seen it (tracked only when the board watches it).
    a12: A12Filter,
}

impl Cartridge {
    /// Parses an iNES 1.0 / NES 2.0 image and powers the board on, with the board choices
    /// the header makes (see [`Cartridge::from_ines_with`]).
    pub fn from_ines(bytes: &[u8]) -> Result<Cartridge, CartridgeError> {
        Cartridge::from_ines_with(bytes, BoardOptions::default())
    }

    /// Parses an iNES 1.0 / NES 2.0 image and powers the board on, with `options` deciding
    /// what they name (the header decides what they leave `None`).
    pub fn from_ines_with(
        bytes: &[u8],
        options: BoardOptions,
    ) -> Result<Cartridge, CartridgeError> {
        let parsed = header::parse(bytes)?;
        let mut info = parsed.info;
        let prg_ram_total = info.prg_ram_len + info.prg_nvram_len;
        let chr_ram_total = info.chr_ram_len + info.chr_nvram_len;
        let mut mem = Memory::new(
            parsed.prg_rom,
            prg_ram_total,
            parsed.chr_rom,
            chr_ram_total,
            info.mirroring == Mirroring::FourScreen,
        );
        if let Some(trainer) = parsed.trainer {
            // The trainer belongs at $7000-$71FF, i.e. offset $1000 of the first RAM bank.
            let start = mem.prg_ram.start + 0x1000;
            if let Some(dest) = mem.data.get_mut(start..start + trainer.len()) {
                dest.copy_from_slice(trainer);
            }
        }
        // Volatile RAM first, battery-backed RAM after it (SOROM's second chip has the battery).
        let battery = if info.battery && info.prg_nvram_len > 0 {
            Region {
                start: mem.prg_ram.start + info.prg_ram_len,
                len: info.prg_nvram_len,
            }
        } else {
            Region { start: 0, len: 0 }
        };
        let board = Board::new(&info, &options, &mut mem)?;
        info.board_name = board.name(&info);
        let watches_a12 = board.watches_a12();
        Ok(Cartridge {
            info,
            options,
            mem,
            board,
            battery,
            watches_a12,
            a12: A12Filter::POWER_ON,
        })
    }

    pub fn info(&self) -> &RomInfo {
        &self.info
    }

    /// CPU read of $4020-$FFFF. `None` means no chip drives the data bus (open bus).
    #[inline]
    pub fn cpu_read(&mut self, addr: u16) -> Option<u8> {
        self.mem.cpu_read(addr)
    }

    /// Same as [`Cartridge::cpu_read`] without side effects (none of the boards here has
    /// read side effects, so the two agree).
    #[inline]
    pub fn cpu_peek(&self, addr: u16) -> Option<u8> {
        self.mem.cpu_read(addr)
    }

    /// CPU write of $4020-$FFFF on CPU cycle `cpu_cycle` (MMC1 ignores a write on the cycle
    /// right after another one).
    #[inline]
    pub fn cpu_write(&mut self, addr: u16, value: u8, cpu_cycle: u64) {
        self.mem.cpu_write(addr, value);
        let write = CpuWrite {
            addr,
            value,
            cpu_cycle,
            ppu_a12: self.a12.is_high(),
        };
        self.board.cpu_write(&mut self.mem, write);
    }

    /// A PPU fetch from $0000-$3EFF (pattern tables, nametables and their $3000 mirror)
    /// during CPU cycle `cpu_cycle()`, which is only asked for when a board watching A12 sees
    /// it change.
    #[inline(always)]
    pub fn ppu_read(&mut self, addr: u16, cpu_cycle: impl FnOnce() -> u64) -> u8 {
        self.ppu_address_changed(addr, cpu_cycle);
        self.mem.ppu_read(addr)
    }

    /// [`Cartridge::ppu_read`] for a caller that has already found [`Cartridge::watches_a12`]
    /// true (a board's answer never changes): the console's timed PPU path, which would
    /// otherwise test it again on every fetch.
    #[inline(always)]
    pub fn ppu_read_watched(&mut self, addr: u16, cpu_cycle: impl FnOnce() -> u64) -> u8 {
        debug_assert!(self.watches_a12);
        self.drive_a12(addr, cpu_cycle);
        self.mem.ppu_read(addr)
    }

    /// What PPU reads return as long as the CPU does not write to the cartridge (only its
    /// writes change a board's banks), for a board whose PPU reads have no side effect:
    /// `None` for one that watches A12 (its reads must go through [`Cartridge::ppu_read`]).
    pub fn ppu_pages(&self) -> Option<PpuPages<'_>> {
        if self.watches_a12 {
            return None;
        }
        self.mem.ppu_pages()
    }

    /// [`Cartridge::ppu_read`] without side effects: what the PPU would fetch.
    #[inline]
    pub fn ppu_peek(&self, addr: u16) -> u8 {
        self.mem.ppu_read(addr)
    }

    /// A PPU write ($2007) to $0000-$3EFF during CPU cycle `cpu_cycle()` (see
    /// [`Cartridge::ppu_read`]): CHR RAM or nametable RAM; CHR ROM ignores it.
    #[inline(always)]
    pub fn ppu_write(&mut self, addr: u16, value: u8, cpu_cycle: impl FnOnce() -> u64) {
        self.ppu_address_changed(addr, cpu_cycle);
        self.mem.ppu_write(addr, value);
    }

    /// The PPU drove `addr` on its bus during CPU cycle `cpu_cycle()` (see
    /// [`Cartridge::ppu_read`]), with or without a read or write (e.g. `$2006`, `$2007`
    /// increments). A board watching A12 sees its changes; for the others it is a no-op.
    /// Both such boards (MMC1, MMC3) react to changes of A12 only, so the per-access work is
    /// one compare while A12 holds.
    #[inline(always)]
    pub fn ppu_address_changed(&mut self, addr: u16, cpu_cycle: impl FnOnce() -> u64) {
        if self.watches_a12 {
            self.drive_a12(addr, cpu_cycle);
        }
    }

    /// `addr` on the PPU bus, for a board watching A12: the filter passes its edges on.
    #[inline(always)]
    fn drive_a12(&mut self, addr: u16, cpu_cycle: impl FnOnce() -> u64) {
        if let Some(edge) = self.a12.drive(addr, cpu_cycle) {
            self.board.ppu_a12_changed(&mut self.mem, edge);
        }
    }

    /// Whether the board watches PPU A12: then PPU reads have effects (use
    /// [`Cartridge::ppu_read`], not [`Cartridge::ppu_peek`]) and need their CPU cycle.
    #[inline]
    pub fn watches_a12(&self) -> bool {
        self.watches_a12
    }

    /// Whether what the CPU reads from the board follows PPU A12 right now (MMC1 boards
    /// selecting PRG or RAM with CHR bank bits, while the two CHR registers disagree in
    /// them): then the console must keep the PPU in step with the CPU cycle by cycle.
    /// Changes only with [`Cartridge::cpu_write`] (and power cycles, state loads). The
    /// console catches the PPU up before every access to $4020-$5FFF (board registers) but
    /// not before reads of $6000-$FFFF: a board whose memory there depends on the PPU in any
    /// other way must say so here too.
    #[inline]
    pub fn cpu_mapping_follows_a12(&self) -> bool {
        self.board.cpu_mapping_follows_a12()
    }

    /// How many PPU dots may run, from the next one, before the board's IRQ output can rise
    /// (1 = on the next dot), assuming the CPU touches neither the board nor the PPU meanwhile;
    /// `u32::MAX` if it cannot. A console that runs the PPU lazily catches it up at least this
    /// often, and recomputes this after every such access, to see the IRQ on the right cycle.
    #[inline]
    pub fn dots_until_irq_possible(&self) -> u32 {
        self.board.dots_until_irq_possible()
    }

    /// The board's IRQ output (active high: true = asserting /IRQ).
    #[inline]
    pub fn irq_line(&self) -> bool {
        self.board.irq_line()
    }

    /// Power the cartridge off and on: registers return to their power-on state and volatile
    /// RAM (PRG RAM without battery, CHR RAM, nametable RAM) is cleared; battery RAM survives.
    /// The board is built again with the same options.
    pub fn power_cycle(&mut self) {
        let battery = self.battery.start..self.battery.start + self.battery.len;
        let prg_ram = self.mem.prg_ram.start..self.mem.prg_ram.start + self.mem.prg_ram.len;
        for (offset, byte) in self
            .mem
            .data
            .iter_mut()
            .enumerate()
            .skip(prg_ram.start)
            .take(prg_ram.len())
        {
            if !battery.contains(&offset) {
                *byte = 0;
            }
        }
        if self.mem.chr_is_ram {
            let chr = self.mem.chr;
            self.mem.data[chr.start..chr.start + chr.len].fill(0);
        }
        let ciram = self.mem.ciram;
        self.mem.data[ciram.start..ciram.start + ciram.len].fill(0);
        // Board::new only fails on sizes, which were accepted when this cartridge was made.
        if let Ok(board) = Board::new(&self.info, &self.options, &mut self.mem) {
            self.board = board;
        }
        self.a12 = A12Filter::POWER_ON;
    }

    /// The byte at `offset` into the ROM image: PRG ROM, then CHR ROM, as an iNES file has
    /// them after its header and trainer; a board without CHR ROM has its CHR RAM there
    /// instead (as FCEUX's `rom.readbyte` shows it). `None` past the end. Reads what the chips
    /// hold now, patches and CHR RAM writes included.
    pub fn rom_byte(&self, offset: usize) -> Option<u8> {
        let (chip, index, _) = self.rom_location(offset)?;
        self.mem.data.get(chip.start + index).copied()
    }

    /// Change the byte at `offset` of the ROM image (as [`Cartridge::rom_byte`] counts): the
    /// CPU and the PPU read the new value from then on, wherever the board maps the byte.
    /// Returns whether `offset` named a byte (nothing changes past the end). ROM lives in the
    /// cartridge's own memory, not shared with anything, so a patch is one store per copy of
    /// the byte (chips smaller than a bank repeat in it). It survives resets and power cycles
    /// (only RAM is cleared) and state loads (states hold no ROM); a patch of CHR RAM is a
    /// RAM write like any other. The ROM's identity ([`RomInfo`] hashes) does not change.
    pub fn patch_rom(&mut self, offset: usize, value: u8) -> bool {
        let Some((chip, index, len)) = self.rom_location(offset) else {
            return false;
        };
        for copy in (index..chip.len).step_by(len) {
            self.mem.data[chip.start + copy] = value;
        }
        true
    }

    /// Where ROM-image offset `offset` lives: the chip's region, the index in the chip, and
    /// the chip's own length (its region may hold several copies of it).
    fn rom_location(&self, offset: usize) -> Option<(Region, usize, usize)> {
        let prg_len = self.info.prg_rom_len;
        if offset < prg_len {
            return Some((self.mem.prg_rom, offset, prg_len));
        }
        let offset = offset - prg_len;
        let chr_len = if self.mem.chr_is_ram {
            self.mem.chr.len
        } else {
            self.info.chr_rom_len
        };
        (offset < chr_len).then_some((self.mem.chr, offset, chr_len))
    }

    /// Writes the cartridge's state for a save state: the bank tables, the contents of PRG
    /// RAM, CHR RAM and nametable RAM (not the ROM), the board's registers, and PPU A12 as
    /// the board saw it.
    pub fn save_state<W: Write>(&self, writer: &mut W) -> io::Result<()> {
        self.mem.save_state(writer)?;
        self.board.serialize(writer)?;
        self.a12.serialize(writer)
    }

    /// Reads a state written by [`Cartridge::save_state`] for this same ROM. Nothing changes
    /// until [`Cartridge::restore_state`], so a bad state leaves the cartridge untouched.
    pub fn read_state<R: Read>(&self, reader: &mut R) -> Result<CartridgeState, InvalidState> {
        let undecodable = |error: io::Error| InvalidState::impossible(error.to_string());
        let memory = self.mem.read_state(reader).map_err(undecodable)?;
        let board = Board::deserialize_reader(reader).map_err(undecodable)?;
        // Any level and fall time is one A12 can have (its timing counts wrap).
        let a12 = A12Filter::deserialize_reader(reader).map_err(undecodable)?;
        let board = board.validate_loaded(
            &self.info,
            &self.options,
            &self.mem,
            &memory.tables,
            a12.is_high(),
        )?;
        Ok(CartridgeState { memory, board, a12 })
    }

    /// Applies a state read by [`Cartridge::read_state`].
    pub fn restore_state(&mut self, state: CartridgeState) {
        self.mem.restore_state(state.memory);
        self.board = state.board;
        self.a12 = state.a12;
    }

    /// The battery-backed RAM, when the header declares a battery.
    pub fn battery_ram(&self) -> Option<&[u8]> {
        if self.battery.len == 0 {
            return None;
        }
        self.mem
            .data
            .get(self.battery.start..self.battery.start + self.battery.len)
    }

    /// Restores saved battery RAM. A size different from [`Cartridge::battery_ram`]'s is an
    /// error and leaves the cartridge untouched.
    pub fn load_battery_ram(&mut self, data: &[u8]) -> Result<(), CartridgeError> {
        if self.battery.len == 0 {
            return Err(CartridgeError::NoBatteryRam);
        }
        if data.len() != self.battery.len {
            return Err(CartridgeError::BatteryRamSize {
                expected: self.battery.len,
                actual: data.len(),
            });
        }
        let range = self.battery.start..self.battery.start + self.battery.len;
        if let Some(dest) = self.mem.data.get_mut(range) {
            dest.copy_from_slice(data);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boards::tests::{cart, image, image_nes2};

    #[test]
    fn pages_are_for_boards_whose_ppu_reads_have_no_effect() {
        // NROM, MMC1 (a board whose registers ignore A12), UxROM, CNROM and AxROM read as
        // `ppu_peek` through their pages; the MMC3 watches A12, so its reads must go through
        // `ppu_read`.
        for (mapper, prg_16k, chr_8k) in [(0, 2, 1), (1, 8, 2), (2, 4, 0), (3, 2, 4), (7, 4, 0)] {
            let mut c = cart(mapper, 0, prg_16k, chr_8k);
            c.cpu_write(0x8000, 0x11, 0);
            for addr in 0..0x3000u16 {
                c.ppu_write(addr, addr as u8 ^ (addr >> 8) as u8, || 0);
            }
            let pages = c.ppu_pages().expect("pages");
            for addr in 0..0x4000u16 {
                assert_eq!(
                    pages.read(addr),
                    c.ppu_peek(addr),
                    "mapper {mapper}: ${addr:04X}"
                );
            }
        }
        assert!(cart(4, 0, 2, 2).ppu_pages().is_none());
    }

    #[test]
    fn unsupported_mapper_names_number_and_submapper() {
        let err = Cartridge::from_ines(&image(5, 0, 2, 1)).unwrap_err();
        assert_eq!(
            err,
            CartridgeError::UnsupportedMapper {
                mapper: 5,
                submapper: 0
            }
        );
        assert_eq!(err.to_string(), "unsupported mapper 5 (submapper 0)");
        let mut bytes = image_nes2(0x55, 3, 0, 2, 1, 0, 0);
        bytes[8] |= 0x02; // mapper 0x255 = 597
        let err = Cartridge::from_ines(&bytes).unwrap_err();
        assert_eq!(err.to_string(), "unsupported mapper 597 (submapper 3)");
    }

    #[test]
    fn ines_always_has_prg_ram_and_nes2_follows_header() {
        let mut c = cart(0, 0, 1, 1);
        c.cpu_write(0x6000, 0x12, 0);
        c.cpu_write(0x7FFF, 0x34, 0);
        assert_eq!(
            (c.cpu_read(0x6000), c.cpu_read(0x7FFF)),
            (Some(0x12), Some(0x34))
        );
        assert_eq!(c.cpu_read(0x5000), None, "$4020-$5FFF is open bus");
        assert_eq!(c.battery_ram(), None);
        let c = Cartridge::from_ines(&image_nes2(0, 0, 0, 1, 1, 0, 0)).unwrap();
        assert_eq!(c.cpu_peek(0x6000), None);
        // A 2 KiB NES 2.0 RAM is given a whole 8 KiB window (no mirroring inside it).
        let mut c = Cartridge::from_ines(&image_nes2(0, 0, 0, 1, 1, 5, 0)).unwrap();
        assert_eq!(c.info().prg_ram_len, 2048);
        c.cpu_write(0x7FFF, 0x99, 0);
        assert_eq!(c.cpu_read(0x7FFF), Some(0x99));
    }

    #[test]
    fn trainer_is_mapped_at_7000() {
        let bytes = image(0, 0x04, 1, 1);
        let with_trainer = {
            let mut b = bytes[..16].to_vec();
            b.extend((0..512).map(|i| (i % 256) as u8 ^ 0x5A));
            b.extend(&bytes[16..]);
            b
        };
        let c = Cartridge::from_ines(&with_trainer).unwrap();
        assert!(c.info().trainer);
        assert_eq!(c.cpu_peek(0x7000), Some(0x5A));
        assert_eq!(c.cpu_peek(0x71FF), Some(0xFF ^ 0x5A));
        assert_eq!(c.cpu_peek(0x7200), Some(0));
        assert_eq!(c.cpu_peek(0x8000), cart(0, 0, 1, 1).cpu_peek(0x8000));
    }

    #[test]
    fn four_screen_has_four_nametables() {
        let mut c = cart(0, 0x08, 1, 1);
        for t in 0..4u16 {
            c.ppu_write(0x2000 + t * 0x400, t as u8 + 1, || 0);
        }
        for t in 0..4u16 {
            assert_eq!(c.ppu_read(0x2000 + t * 0x400, || 0), t as u8 + 1);
            assert_eq!(c.ppu_read(0x3000 + t * 0x400, || 0), t as u8 + 1);
        }
    }

    #[test]
    fn battery_ram_round_trip_and_wrong_size() {
        let mut c = cart(1, 0x02, 8, 0);
        assert!(c.info().battery);
        c.cpu_write(0x6100, 0xAB, 0);
        let saved = c.battery_ram().unwrap().to_vec();
        assert_eq!((saved.len(), saved[0x100]), (8192, 0xAB));
        let mut fresh = cart(1, 0x02, 8, 0);
        fresh.load_battery_ram(&saved).unwrap();
        assert_eq!(fresh.cpu_read(0x6100), Some(0xAB));
        let err = fresh.load_battery_ram(&saved[..100]).unwrap_err();
        assert_eq!(
            err,
            CartridgeError::BatteryRamSize {
                expected: 8192,
                actual: 100
            }
        );
        assert_eq!(
            err.to_string(),
            "battery RAM is 8192 bytes on this cartridge, but 100 bytes were given"
        );
        assert_eq!(
            fresh.cpu_read(0x6100),
            Some(0xAB),
            "state untouched after an error"
        );
        let mut no_battery = cart(0, 0, 1, 1);
        assert_eq!(
            no_battery.load_battery_ram(&saved),
            Err(CartridgeError::NoBatteryRam)
        );
    }

    #[test]
    fn power_cycle_keeps_battery_ram_only() {
        let mut c = cart(1, 0x02, 8, 0);
        c.cpu_write(0x6000, 0x42, 0);
        c.ppu_write(0x0000, 0x43, || 0);
        c.ppu_write(0x2000, 0x44, || 0);
        for i in 0..5 {
            c.cpu_write(0xE000, 1, 10 + i * 10); // PRG bank 31 -> 16K bank 15 at $8000
        }
        assert_eq!(boards::tests::prg_bank_at(&c, 0x8000), 14);
        c.power_cycle();
        assert_eq!(boards::tests::prg_bank_at(&c, 0x8000), 0);
        assert_eq!(
            (
                c.cpu_read(0x6000),
                c.ppu_read(0, || 0),
                c.ppu_read(0x2000, || 0)
            ),
            (Some(0x42), 0, 0)
        );
        let mut c = cart(0, 0, 1, 0);
        c.cpu_write(0x6000, 0x42, 0);
        c.power_cycle();
        assert_eq!(c.cpu_read(0x6000), Some(0));
    }

    #[test]
    fn rom_patches_are_what_the_cpu_and_ppu_read() {
        // UxROM, 2 x 16 KiB PRG (bank 1 fixed at $C000), CHR RAM.
        let mut c = cart(2, 0, 2, 0);
        let last_prg = 0x8000 - 1;
        assert_eq!(c.rom_byte(0x4000), c.cpu_peek(0xC000));
        assert!(c.patch_rom(0x4000, 0xA5));
        assert_eq!(
            (c.rom_byte(0x4000), c.cpu_read(0xC000)),
            (Some(0xA5), Some(0xA5))
        );
        // The switchable bank follows the board: bank 0 at $8000 now, bank 1 after a write.
        // (UxROM has bus conflicts: the write goes where the patched ROM byte has bit 0 set,
        // so the conflict, which sees the patch too, keeps the 1.)
        assert!(c.patch_rom(0x0010, 0x11));
        assert_eq!(c.cpu_read(0x8010), Some(0x11));
        c.cpu_write(0x8010, 1, 0);
        assert_eq!(c.cpu_read(0x8000), Some(0xA5));
        // CHR RAM follows PRG, and a patch of it is what the PPU fetches.
        assert!(c.patch_rom(last_prg + 1 + 0x1234, 0x5A));
        assert_eq!(c.ppu_read(0x1234, || 0), 0x5A);
        c.ppu_write(0x0001, 0x77, || 0);
        assert_eq!(c.rom_byte(last_prg + 2), Some(0x77));
        assert_eq!(
            c.rom_byte(last_prg + 1 + 0x2000),
            None,
            "past the 8 KiB of CHR RAM"
        );
        assert!(!c.patch_rom(last_prg + 1 + 0x2000, 1));
        // PRG patches survive a power cycle and a state load; CHR RAM is RAM.
        let mut state = Vec::new();
        c.save_state(&mut state).unwrap();
        assert!(c.patch_rom(0x4001, 0x42));
        c.power_cycle();
        assert_eq!(
            (c.cpu_read(0xC000), c.cpu_read(0xC001)),
            (Some(0xA5), Some(0x42))
        );
        assert_eq!(c.ppu_read(0x1234, || 0), 0);
        let loaded = c.read_state(&mut &state[..]).unwrap();
        c.restore_state(loaded);
        assert_eq!(c.cpu_read(0xC001), Some(0x42));
        assert_eq!(c.info().prg_chr_sha1, cart(2, 0, 2, 0).info().prg_chr_sha1);
    }

    #[test]
    fn chr_rom_patches_show_in_every_window() {
        // CNROM, 16 KiB PRG mirrored at $8000 and $C000, 2 x 8 KiB CHR ROM.
        let mut c = cart(3, 0, 1, 2);
        assert!(c.patch_rom(0x10, 0x99));
        assert_eq!(
            (c.cpu_read(0x8010), c.cpu_read(0xC010)),
            (Some(0x99), Some(0x99))
        );
        // CHR ROM follows PRG in the image: bank 0 is mapped at power-on.
        let chr = 0x4000;
        assert_eq!(c.rom_byte(chr + 0x0005), Some(c.ppu_peek(0x0005)));
        assert!(c.patch_rom(chr + 0x2005, 0x3C));
        assert_ne!(c.ppu_read(0x0005, || 0), 0x3C, "bank 0 is mapped");
        // Bank 1 (CNROM has bus conflicts: write where the patched ROM byte has bit 0 set).
        c.cpu_write(0x8010, 1, 0);
        assert_eq!(c.ppu_read(0x0005, || 0), 0x3C);
        assert_eq!(c.rom_byte(chr + 0x4000), None);
        // A chip smaller than a bank repeats in it: every copy takes the patch.
        let image = crate::ines_image(0, &[0xEA; 0x4000], &[]);
        let mut small = Cartridge::from_ines(&image).unwrap();
        small.mem.prg_rom.len = 0x2000; // as `Memory::new` lays out a 4 KiB chip
        small.info.prg_rom_len = 0x1000;
        assert!(small.patch_rom(0x0FFF, 0x60));
        assert_eq!(small.mem.data[0x0FFF], 0x60);
        assert_eq!(small.mem.data[0x1FFF], 0x60);
    }

    /// One cartridge of every board (and MMC1 wiring) this crate has.
    fn every_board() -> Vec<Cartridge> {
        vec![
            cart(0, 0, 2, 1),
            cart(1, 0, 16, 0),
            Cartridge::from_ines(&boards::tests::image_nes2(1, 0, 0, 8, 0, 9, 7)).unwrap(),
            cart(1, 0, 32, 0),
            cart(2, 0, 8, 0),
            cart(3, 0, 2, 4),
            cart(4, 0, 8, 8),
            cart(4, 0x08, 8, 0),
            cart(7, 0, 8, 0),
            cart(11, 0, 4, 8),
            cart(34, 0, 4, 0),
            cart(34, 0, 4, 8),
            cart(66, 0, 4, 2),
        ]
    }

    #[test]
    fn the_states_of_every_board_validate_and_forged_bank_tables_are_refused() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for mut c in every_board() {
            let board = c.info().board_name;
            for round in 0..300u64 {
                // Register writes anywhere (with MMC1's serial writes apart), and A12 changes.
                let addr = 0x6000 + (next() % 0xA000) as u16;
                c.cpu_write(addr, next() as u8, round * 2);
                c.ppu_address_changed(next() as u16 & 0x1FFF, || 0);
                let mut state = Vec::new();
                c.save_state(&mut state).unwrap();
                if let Err(error) = c.read_state(&mut &state[..]) {
                    panic!("{board} round {round}: a state it saved is refused: {error}");
                }
            }
            // A write window onto PRG ROM ($8000: CPU write entry 4 given CPU read entry 4).
            let refusal = boards::tests::reload_edited(&c, |_, bytes| {
                let rom = boards::tests::table_entry(bytes, 4).to_vec();
                boards::tests::table_entry(bytes, 8 + 4).copy_from_slice(&rom);
            })
            .unwrap_err();
            assert!(refusal.contains("bank tables"), "{board}: {refusal}");
            // A CHR page one byte off its bank.
            let refusal = boards::tests::reload_edited(&c, |_, bytes| {
                let page = boards::tests::table_entry(bytes, 16);
                let base = u64::from_le_bytes(page.try_into().unwrap());
                page.copy_from_slice(&(base + 1).to_le_bytes());
            })
            .unwrap_err();
            assert!(refusal.contains("bank tables"), "{board}: {refusal}");
        }
    }

    #[test]
    fn a_state_for_another_board_or_wiring_is_refused() {
        let nrom = cart(0, 0, 2, 1);
        let mut state = Vec::new();
        cart(3, 0, 2, 1).save_state(&mut state).unwrap();
        assert_eq!(
            nrom.read_state(&mut &state[..]).unwrap_err().to_string(),
            "the state is for another kind of board"
        );
        // UxROM with bus conflicts (iNES) and the NES 2.0 submapper without them.
        let conflicts = cart(2, 0, 8, 0);
        let without =
            Cartridge::from_ines(&boards::tests::image_nes2(2, 1, 0, 8, 0, 7, 7)).unwrap();
        let mut state = Vec::new();
        without.save_state(&mut state).unwrap();
        assert_eq!(
            conflicts
                .read_state(&mut &state[..])
                .unwrap_err()
                .to_string(),
            "the UNROM board's bus conflicts do not match this cartridge's"
        );
    }

    #[test]
    fn clone_is_independent() {
        let mut a = cart(0, 0, 1, 0);
        let b = a.clone();
        a.ppu_write(0x0000, 7, || 0);
        assert_eq!((a.ppu_peek(0), b.ppu_peek(0)), (7, 0));
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A cheap deterministic fuzz: random headers over random bodies, then random accesses.
        let mut state = 0x1234_5678_9ABC_DEF0u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..400 {
            let len = 16 + (next() % 70_000) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            bytes[..4].copy_from_slice(b"NES\x1A");
            bytes[4] = (next() % 5) as u8;
            bytes[5] = (next() % 4) as u8;
            bytes[6] =
                [0x00, 0x10, 0x20, 0x30, 0x40, 0x70, 0xB0][round % 7] | (next() as u8 & 0x0F);
            bytes[7] = if round % 2 == 0 {
                0x08 | (next() as u8 & 0x23)
            } else {
                next() as u8 & 0x23
            };
            bytes[9] = if round % 5 == 0 { 0xFF } else { 0 };
            let Ok(mut c) = Cartridge::from_ines(&bytes) else {
                continue;
            };
            for i in 0..2000u64 {
                let addr = next() as u16;
                let value = next() as u8;
                c.cpu_write(addr.max(0x4020), value, i * 3);
                let _ = c.cpu_read(addr.max(0x4020));
                c.ppu_write(addr & 0x3EFF, value, || 0);
                let _ = c.ppu_read(addr & 0x3EFF, || 0);
                c.ppu_address_changed(addr & 0x3FFF, || 0);
            }
            let _ = c.irq_line();
        }
    }
}

#[cfg(test)]
mod holy_mapperel_tests {
    use super::*;
    use std::path::PathBuf;

    /// `$NES_TEST_ROMS`, else `shared/test-roms` beside the workspace.
    fn rom_root() -> PathBuf {
        match std::env::var_os("NES_TEST_ROMS") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/test-roms"),
        }
    }

    /// Each file name encodes the board: M<mapper>_P<prg>K_C<chr ROM>K or CR<chr RAM>K, then
    /// W<n>K (work RAM) or S<n>K (battery RAM).
    #[test]
    fn loads_every_holy_mapperel_rom() {
        let root = rom_root();
        let dir = root.join("mapper/holy-mapperel");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            // Skipped loudly on a machine without the test ROMs; CI must never pass vacuously.
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but {} is missing",
                dir.display()
            );
            eprintln!("skipped: {} is absent", dir.display());
            return;
        };
        // The MMC3 boards sit in the stretch-goal folder.
        let mmc3_entries = std::fs::read_dir(root.join("beyond/holy-mapperel"))
            .into_iter()
            .flatten();
        let mut loaded = 0;
        for entry in entries.chain(mmc3_entries).flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "nes") {
                continue;
            }
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            let cart = Cartridge::from_ines(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            let info = cart.info();
            assert_eq!(info.format, RomFormat::Nes2, "{name}");
            let mut prg_ram = 0;
            let mut battery = 0;
            for (i, field) in name.split('_').enumerate() {
                let kib = |s: &str| s.trim_end_matches('K').parse::<usize>().unwrap() * 1024;
                match field.as_bytes()[0] {
                    b'M' if i == 0 => {
                        assert_eq!(info.mapper, field[1..].parse::<u16>().unwrap(), "{name}")
                    }
                    b'P' => assert_eq!(info.prg_rom_len, kib(&field[1..]), "{name}"),
                    b'C' if field.starts_with("CR") => {
                        assert_eq!(
                            (info.chr_rom_len, info.chr_ram_len),
                            (0, kib(&field[2..])),
                            "{name}"
                        )
                    }
                    b'C' => assert_eq!(info.chr_rom_len, kib(&field[1..]), "{name}"),
                    b'W' => prg_ram = kib(&field[1..]),
                    b'S' => battery = kib(&field[1..]),
                    b'H' => assert_eq!(info.mirroring, Mirroring::Horizontal, "{name}"),
                    b'V' => assert_eq!(info.mirroring, Mirroring::Vertical, "{name}"),
                    _ => panic!("{name}: unexpected field {field}"),
                }
            }
            assert_eq!(
                (info.prg_ram_len, info.prg_nvram_len),
                (prg_ram, battery),
                "{name}"
            );
            assert_eq!(info.battery, battery > 0, "{name}");
            assert_eq!(cart.battery_ram().map_or(0, <[u8]>::len), battery, "{name}");
            assert_eq!(
                cart.cpu_peek(0x6000).is_some(),
                prg_ram + battery > 0,
                "{name}: $6000 RAM"
            );
            // The reset vector points into ROM and some bank is visible at $FFFC.
            assert!(cart.cpu_peek(0xFFFC).is_some(), "{name}");
            println!("{name}: mapper {} board {}", info.mapper, info.board_name);
            loaded += 1;
        }
        assert!(
            loaded >= 19,
            "found only {loaded} ROMs in {}",
            dir.display()
        );
    }
}
