//! The cartridge's memory and the bank tables that every bus access goes through.
//!
//! All chips (PRG ROM, PRG RAM, CHR ROM/RAM, the console's nametable RAM) live in one byte
//! vector. Each CPU 8 KiB slot and each PPU 1 KiB page holds a base offset into that vector for
//! reads and another for writes. An unmapped window holds [`UNMAPPED`], which is so large that
//! `Vec::get` fails for it: open bus on reads, ignored writes, and no branch on the mapping kind.
//! Boards rewrite the tables only when their registers change.

use borsh::io::{Read, Result as IoResult, Write};
use borsh::{BorshDeserialize, BorshSerialize};

use crate::header::Mirroring;

/// Base offset of a window that nothing drives. Adding a window offset to it cannot overflow.
pub(crate) const UNMAPPED: usize = usize::MAX / 2;

const KIB: usize = 1024;
const PRG_BANK: usize = 8 * KIB;
const CHR_PAGE: usize = KIB;

/// The PPU's address space ($0000-$3FFF) as its sixteen 1 KiB pages are mapped for reads at
/// one moment: what [`Memory::ppu_read`] returns, with the page's place looked up once
/// instead of on every read (a line of rendering makes about 150 reads).
#[derive(Debug, Clone, Copy)]
pub struct PpuPages<'a>([&'a [u8; CHR_PAGE]; 16]);

impl PpuPages<'_> {
    /// The byte at `addr` (mirrored into $0000-$3FFF).
    #[inline(always)]
    pub fn read(&self, addr: u16) -> u8 {
        self.0[usize::from(addr >> 10) & 15][usize::from(addr) & (CHR_PAGE - 1)]
    }
}

/// A chip's place inside [`Memory::data`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Region {
    pub start: usize,
    pub len: usize,
}

impl Region {
    /// Base offset of bank `bank` of `size` bytes, wrapping like unconnected high address lines.
    #[inline]
    fn bank_base(&self, bank: usize, size: usize) -> usize {
        let count = self.len / size;
        if count == 0 {
            UNMAPPED
        } else {
            self.start + (bank % count) * size
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Memory {
    pub data: Vec<u8>,
    tables: BankTables,
    pub prg_rom: Region,
    pub prg_ram: Region,
    pub chr: Region,
    pub chr_is_ram: bool,
    /// 2 KiB of console CIRAM, plus 2 KiB more when the board has four-screen VRAM.
    pub ciram: Region,
}

/// Where each CPU and PPU window currently reads and writes: offsets into [`Memory::data`].
#[derive(Debug, Clone, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct BankTables {
    /// CPU $0000-$FFFF in eight 8 KiB slots (slots 0-2 stay unmapped: not cartridge space).
    cpu_read: [usize; 8],
    cpu_write: [usize; 8],
    /// PPU $0000-$3FFF in sixteen 1 KiB pages (8-11 nametables, 12-15 their mirror).
    ppu_read: [usize; 16],
    ppu_write: [usize; 16],
}

impl BankTables {
    /// Every window open bus.
    fn unmapped() -> BankTables {
        BankTables {
            cpu_read: [UNMAPPED; 8],
            cpu_write: [UNMAPPED; 8],
            ppu_read: [UNMAPPED; 16],
            ppu_write: [UNMAPPED; 16],
        }
    }
}

/// The cartridge memory a save state holds: the bank tables and the contents of every chip a
/// program can change (PRG RAM, CHR RAM, nametable RAM). ROM is not stored: a state only loads
/// into the same ROM.
#[derive(Debug)]
pub(crate) struct MemoryState {
    pub tables: BankTables,
    writable: Vec<u8>,
}

/// Repeats `chip` until it fills a whole number of `unit`s (at least one), as a smaller chip
/// repeats in a larger window because its upper address lines are not connected.
fn padded(chip: &[u8], unit: usize) -> Vec<u8> {
    let len = chip.len().div_ceil(unit).max(1) * unit;
    if chip.is_empty() {
        return vec![0; len];
    }
    chip.iter().copied().cycle().take(len).collect()
}

impl Memory {
    pub fn new(
        prg_rom: &[u8],
        prg_ram_len: usize,
        chr_rom: &[u8],
        chr_ram_len: usize,
        four_screen: bool,
    ) -> Memory {
        let prg = padded(prg_rom, PRG_BANK);
        let chr_is_ram = chr_rom.is_empty();
        let chr = if chr_is_ram {
            vec![0; chr_ram_len.div_ceil(CHR_PAGE).max(1) * CHR_PAGE]
        } else {
            padded(chr_rom, CHR_PAGE)
        };
        // PRG RAM is kept a multiple of 8 KiB so a mapped window never reads past it. A
        // smaller chip (rare) therefore shows as 8 KiB rather than mirrored.
        let ram_len = prg_ram_len.div_ceil(PRG_BANK) * PRG_BANK;
        let ciram_len = if four_screen { 4 * KIB } else { 2 * KIB };

        let prg_rom_region = Region {
            start: 0,
            len: prg.len(),
        };
        let prg_ram_region = Region {
            start: prg.len(),
            len: ram_len,
        };
        let chr_region = Region {
            start: prg_ram_region.start + ram_len,
            len: chr.len(),
        };
        let ciram = Region {
            start: chr_region.start + chr.len(),
            len: ciram_len,
        };

        let mut data = prg;
        data.resize(prg_ram_region.start + ram_len, 0);
        data.extend_from_slice(&chr);
        data.resize(ciram.start + ciram_len, 0);

        Memory {
            data,
            tables: BankTables::unmapped(),
            prg_rom: prg_rom_region,
            prg_ram: prg_ram_region,
            chr: chr_region,
            chr_is_ram,
            ciram,
        }
    }

    /// The chips a program can change, in save-state order.
    fn writable_regions(&self) -> impl Iterator<Item = Region> {
        let chr_ram = self.chr_is_ram.then_some(self.chr);
        [Some(self.prg_ram), chr_ram, Some(self.ciram)]
            .into_iter()
            .flatten()
    }

    pub fn writable_len(&self) -> usize {
        self.writable_regions().map(|region| region.len).sum()
    }

    pub fn save_state<W: Write>(&self, writer: &mut W) -> IoResult<()> {
        self.tables.serialize(writer)?;
        for region in self.writable_regions() {
            writer.write_all(&self.data[region.start..region.start + region.len])?;
        }
        Ok(())
    }

    /// Reads what [`Memory::save_state`] wrote, sized for this memory. The bank tables are
    /// only decoded here: whether they are a mapping the board can select is the board's to
    /// check (`Board::validate_state`), before [`Memory::restore_state`].
    pub fn read_state<R: Read>(&self, reader: &mut R) -> IoResult<MemoryState> {
        let tables = BankTables::deserialize_reader(reader)?;
        let mut writable = vec![0; self.writable_len()];
        reader.read_exact(&mut writable)?;
        Ok(MemoryState { tables, writable })
    }

    /// This memory's layout (chip regions) with nothing mapped and none of its bytes: what
    /// the mapping functions below need, to work out a board's bank tables on the side.
    pub fn layout(&self) -> Memory {
        Memory {
            data: Vec::new(),
            tables: BankTables::unmapped(),
            ..*self
        }
    }

    /// The bank tables as they stand.
    #[cfg(test)]
    pub fn tables(&self) -> &BankTables {
        &self.tables
    }

    /// Whether the bank tables are `tables`.
    pub fn has_tables(&self, tables: &BankTables) -> bool {
        self.tables == *tables
    }

    pub fn restore_state(&mut self, state: MemoryState) {
        self.tables = state.tables;
        let mut source = &state.writable[..];
        for region in self.writable_regions().collect::<Vec<_>>() {
            let (chip, rest) = source.split_at(region.len.min(source.len()));
            self.data[region.start..region.start + chip.len()].copy_from_slice(chip);
            source = rest;
        }
    }

    #[inline]
    pub fn cpu_read(&self, addr: u16) -> Option<u8> {
        let base = self.tables.cpu_read[usize::from(addr >> 13)];
        self.data.get(base + usize::from(addr & 0x1FFF)).copied()
    }

    /// Stores into whatever RAM is mapped at `addr`; returns whether anything took the value.
    #[inline]
    pub fn cpu_write(&mut self, addr: u16, value: u8) -> bool {
        let base = self.tables.cpu_write[usize::from(addr >> 13)];
        match self.data.get_mut(base + usize::from(addr & 0x1FFF)) {
            Some(cell) => {
                *cell = value;
                true
            }
            None => false,
        }
    }

    #[inline(always)]
    pub fn ppu_read(&self, addr: u16) -> u8 {
        let base = self.tables.ppu_read[usize::from(addr >> 10) & 15];
        self.data
            .get(base + usize::from(addr & 0x3FF))
            .copied()
            .unwrap_or(0)
    }

    /// The PPU's read mapping as it stands, for many reads (see [`PpuPages`]); an unmapped
    /// page reads as zeros, as in [`Memory::ppu_read`]. `None` if a mapped page does not lie
    /// wholly inside the memory, which every chip being padded to whole pages rules out.
    pub fn ppu_pages(&self) -> Option<PpuPages<'_>> {
        static UNMAPPED_PAGE: [u8; CHR_PAGE] = [0; CHR_PAGE];
        let mut pages = [&UNMAPPED_PAGE; 16];
        for (page, &base) in pages.iter_mut().zip(&self.tables.ppu_read) {
            if base < self.data.len() {
                *page = self.data.get(base..base + CHR_PAGE)?.try_into().ok()?;
            }
        }
        Some(PpuPages(pages))
    }

    #[inline(always)]
    pub fn ppu_write(&mut self, addr: u16, value: u8) {
        let base = self.tables.ppu_write[usize::from(addr >> 10) & 15];
        if let Some(cell) = self.data.get_mut(base + usize::from(addr & 0x3FF)) {
            *cell = value;
        }
    }

    pub fn prg_rom_banks_8k(&self) -> usize {
        self.prg_rom.len / PRG_BANK
    }

    /// Maps 8 KiB PRG ROM bank `bank` at CPU $8000 + `slot` * $2000 (slot 0-3). ROM ignores writes.
    pub fn map_prg_8k(&mut self, slot: usize, bank: usize) {
        let index = 4 + (slot & 3);
        self.tables.cpu_read[index] = self.prg_rom.bank_base(bank, PRG_BANK);
        self.tables.cpu_write[index] = UNMAPPED;
    }

    /// Maps 16 KiB bank `bank` at $8000 (`half` 0) or $C000 (`half` 1).
    pub fn map_prg_16k(&mut self, half: usize, bank: usize) {
        let slot = (half & 1) * 2;
        self.map_prg_8k(slot, bank.wrapping_mul(2));
        self.map_prg_8k(slot + 1, bank.wrapping_mul(2).wrapping_add(1));
    }

    /// Maps 32 KiB bank `bank` at $8000-$FFFF.
    pub fn map_prg_32k(&mut self, bank: usize) {
        for slot in 0..4 {
            self.map_prg_8k(slot, bank.wrapping_mul(4).wrapping_add(slot));
        }
    }

    /// Maps 8 KiB PRG RAM bank `bank` at $6000-$7FFF, readable and (if `writable`) writable;
    /// without PRG RAM the window stays open bus.
    pub fn map_prg_ram(&mut self, bank: usize, writable: bool) {
        let base = self.prg_ram.bank_base(bank, PRG_BANK);
        self.tables.cpu_read[3] = base;
        self.tables.cpu_write[3] = if writable { base } else { UNMAPPED };
    }

    /// Disconnects $6000-$7FFF (RAM disabled: reads are open bus, writes are lost).
    pub fn unmap_prg_ram(&mut self) {
        self.tables.cpu_read[3] = UNMAPPED;
        self.tables.cpu_write[3] = UNMAPPED;
    }

    /// Maps 1 KiB CHR bank `bank` at PPU `page` * $400 (page 0-7).
    pub fn map_chr_1k(&mut self, page: usize, bank: usize) {
        let base = self.chr.bank_base(bank, CHR_PAGE);
        let page = page & 7;
        self.tables.ppu_read[page] = base;
        self.tables.ppu_write[page] = if self.chr_is_ram { base } else { UNMAPPED };
    }

    pub fn map_chr_2k(&mut self, page: usize, bank: usize) {
        for i in 0..2 {
            self.map_chr_1k(page + i, bank.wrapping_mul(2).wrapping_add(i));
        }
    }

    /// Maps 4 KiB CHR bank `bank` at $0000 (`half` 0) or $1000 (`half` 1).
    pub fn map_chr_4k(&mut self, half: usize, bank: usize) {
        for i in 0..4 {
            self.map_chr_1k((half & 1) * 4 + i, bank.wrapping_mul(4).wrapping_add(i));
        }
    }

    pub fn map_chr_8k(&mut self, bank: usize) {
        for i in 0..8 {
            self.map_chr_1k(i, bank.wrapping_mul(8).wrapping_add(i));
        }
    }

    /// Points nametable `table` (0-3, i.e. $2000/$2400/$2800/$2C00 and their $3xxx mirrors) at
    /// 1 KiB page `page` of CIRAM (0-1, or 0-3 with four-screen VRAM).
    pub fn map_nametable(&mut self, table: usize, page: usize) {
        let base = self.ciram.bank_base(page, KIB);
        let table = table & 3;
        for index in [8 + table, 12 + table] {
            self.tables.ppu_read[index] = base;
            self.tables.ppu_write[index] = base;
        }
    }

    /// Wires CIRAM A10 (or the four-screen VRAM) for one of the standard arrangements.
    pub fn set_mirroring(&mut self, mirroring: Mirroring) {
        let pages = match mirroring {
            Mirroring::Horizontal => [0, 0, 1, 1],
            Mirroring::Vertical => [0, 1, 0, 1],
            Mirroring::SingleScreenLower => [0, 0, 0, 0],
            Mirroring::SingleScreenUpper => [1, 1, 1, 1],
            Mirroring::FourScreen => [0, 1, 2, 3],
        };
        for (table, page) in pages.into_iter().enumerate() {
            self.map_nametable(table, page);
        }
    }

    /// Which 1 KiB CIRAM page each nametable shows (for tests and debuggers).
    #[cfg(test)]
    pub fn nametable_pages(&self) -> [usize; 4] {
        core::array::from_fn(|t| (self.tables.ppu_read[8 + t] - self.ciram.start) / KIB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_chips_repeat_to_fill_banks() {
        let prg: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
        let mut mem = Memory::new(&prg, 0, &[], 8192, false);
        assert_eq!(mem.prg_rom.len, 8192);
        mem.map_prg_8k(0, 0);
        assert_eq!(mem.cpu_read(0x8000 + 4096 + 7), Some(prg[7]));
        assert_eq!(mem.cpu_read(0x6000), None, "no PRG RAM mapped");
        mem.map_prg_ram(0, true);
        assert_eq!(mem.cpu_read(0x6000), None, "no PRG RAM exists");
        assert!(!mem.cpu_write(0x6000, 1));
    }

    #[test]
    fn writes_only_land_in_ram() {
        let mut mem = Memory::new(&[0xAA; 16384], 8192, &[0x55; 8192], 0, false);
        mem.map_prg_16k(0, 0);
        mem.map_prg_ram(0, true);
        mem.map_chr_8k(0);
        mem.set_mirroring(Mirroring::Vertical);
        assert!(!mem.cpu_write(0x8000, 1));
        assert_eq!(mem.cpu_read(0x8000), Some(0xAA));
        assert!(mem.cpu_write(0x7FFF, 9));
        assert_eq!(mem.cpu_read(0x7FFF), Some(9));
        mem.ppu_write(0x0000, 1);
        assert_eq!(mem.ppu_read(0x0000), 0x55, "CHR ROM is read-only");
        mem.ppu_write(0x2400, 7);
        assert_eq!(mem.ppu_read(0x2C00), 7);
        assert_eq!(mem.ppu_read(0x3400), 7, "$3000-$3EFF mirrors $2000-$2EFF");
        mem.map_prg_ram(0, false);
        assert!(!mem.cpu_write(0x6000, 3));
        assert_eq!(mem.cpu_read(0x7FFF), Some(9));
        mem.unmap_prg_ram();
        assert_eq!(mem.cpu_read(0x7FFF), None);
    }

    /// Every address read through the pages as `ppu_read` reads it.
    fn assert_pages_read_as_ppu_read(mem: &Memory, what: &str) {
        let pages = mem.ppu_pages().expect("whole pages");
        for addr in 0..=0xFFFFu16 {
            assert_eq!(pages.read(addr), mem.ppu_read(addr), "{what}: ${addr:04X}");
        }
    }

    #[test]
    fn pages_read_what_ppu_read_reads() {
        let chr: Vec<u8> = (0..32 * 1024u32)
            .map(|i| (i * 7 + i / 1024) as u8)
            .collect();
        let mut mem = Memory::new(&[0; 16384], 0, &chr, 0, true);
        assert_pages_read_as_ppu_read(&mem, "nothing mapped");
        mem.map_chr_1k(3, 17);
        mem.map_nametable(2, 3);
        assert_pages_read_as_ppu_read(&mem, "some pages mapped");
        for (bank, mirroring) in [
            (1, Mirroring::Vertical),
            (3, Mirroring::SingleScreenUpper),
            (2, Mirroring::FourScreen),
        ] {
            mem.map_chr_8k(bank);
            mem.set_mirroring(mirroring);
            for addr in 0x2000..0x3000u16 {
                mem.ppu_write(addr, (addr >> 3) as u8 ^ bank as u8);
            }
            assert_pages_read_as_ppu_read(&mem, &format!("bank {bank}, {mirroring:?}"));
        }
        let mut ram = Memory::new(&[0; 16384], 0, &[], 8192, false);
        ram.map_chr_4k(1, 0);
        ram.set_mirroring(Mirroring::Horizontal);
        for addr in 0..0x3000u16 {
            ram.ppu_write(addr, addr as u8 ^ (addr >> 8) as u8);
        }
        assert_pages_read_as_ppu_read(&ram, "CHR RAM");
    }
}
